//! The Seatbelt profile for macOS `sandbox-exec`: deny by default, read the system, read and
//! write only the workspace roots and the scratch directory, protected paths write-denied
//! whether or not they exist, no signal to another process, no network.
//!
//! Weaker than the Linux fences by construction: no PID, IPC or UTS namespace, so host
//! processes stay visible; path metadata stays readable (path resolution needs it). Paths
//! are passed as `-D` parameters, never spliced into the profile text.

use std::ffi::OsString;
use std::path::Path;

use crate::fence::policy::Policy;

/// System locations readable inside the profile.
pub const SYSTEM_READ: [&str; 9] = [
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Apple",
    "/private/etc",
    "/private/var/db/dyld",
    "/opt/homebrew",
    "/dev",
];

/// The profile text and its `-D NAME=VALUE` parameters.
pub fn profile(policy: &Policy, helper: &Path) -> (String, Vec<(String, OsString)>) {
    let mut params: Vec<(String, OsString)> = Vec::new();
    let mut param = |prefix: &str, value: &Path| {
        let name = format!("{prefix}{}", params.len());
        params.push((name.clone(), value.as_os_str().to_os_string()));
        format!("(param \"{name}\")")
    };
    let mut p = String::from("(version 1)\n(deny default)\n");
    p.push_str("(allow process-fork)\n(allow process-exec)\n");
    // Signals only within the sandbox: host processes cannot be killed or signalled.
    p.push_str("(allow signal (target same-sandbox))\n");
    p.push_str("(allow sysctl-read)\n(allow file-read-metadata)\n");
    p.push_str("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))\n");
    p.push_str("(allow file-read* (literal \"/\")");
    for s in SYSTEM_READ {
        p.push_str(&format!(" (subpath \"{s}\")"));
    }
    p.push_str(")\n");
    p.push_str("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\"))\n");
    let helper_ref = param("HELPER", helper);
    p.push_str(&format!(
        "(allow file-read* process-exec (literal {helper_ref}))\n"
    ));
    for ro in &policy.read_only {
        let r = param("RO", ro);
        p.push_str(&format!("(allow file-read* (subpath {r}))\n"));
    }
    for rw in policy.writable_roots() {
        let r = param("RW", &rw);
        p.push_str(&format!("(allow file-read* file-write* (subpath {r}))\n"));
    }
    // Later rules win: protected paths are write-denied even where a root allows writes.
    for prot in policy.protected_paths() {
        let r = param("PROT", &prot.root.join(&prot.rel));
        p.push_str(&format!("(deny file-write* (literal {r}) (subpath {r}))\n"));
    }
    p.push_str("(deny network*)\n");
    (p, params)
}

/// The full argument list for `/usr/bin/sandbox-exec` before the command.
pub fn args(policy: &Policy, helper: &Path) -> Vec<OsString> {
    let (profile, params) = profile(policy, helper);
    let mut a: Vec<OsString> = Vec::new();
    for (name, value) in params {
        let mut kv = OsString::from(format!("{name}="));
        kv.push(value);
        a.push("-D".into());
        a.push(kv);
    }
    a.push("-p".into());
    a.push(profile.into());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_denies_by_default_and_names_no_path_inline() {
        let policy = Policy::new(vec!["/w/ws\"evil".into()], "/w/scratch".into());
        let (text, params) = profile(&policy, Path::new("/bin/gatehouse"));
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(!text.contains("evil"));
        assert!(params.iter().any(|(_, v)| v == "/w/ws\"evil"));
        assert!(text.contains("(deny network*)"));
        assert!(text.contains("(allow signal (target same-sandbox))"));
    }
}
