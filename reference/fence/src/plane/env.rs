//! The environment a tool sees, decided at spawn by an allow-list: `PATH`, `LANG`,
//! `LANGUAGE`, `LC_*`, `TERM`, `COLORTERM`, `NO_COLOR`, `TZ`, `USER`, `LOGNAME` pass, except
//! a name on the never-passes list (FENCE-ENV-8: `LC_API_KEY` is a secret however it is
//! prefixed); `HOME` and `TMPDIR` are the session's scratch home and scratch
//! temporary directory inside the fence; nothing else of the agent's environment ever
//! enters (provider keys, tokens, sockets of agents).
//!
//! The plane-wide opt-out hands tools the full environment (`HOME` and `TMPDIR` still point
//! into the scratch directory); the posture reports it so it is never silent.
//!
//! A fenced jail's `PATH` keeps only the entries the jail can read ([`fit_path`],
//! FENCE-ENV-12); the posture names every entry left out.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::fence::posture::BackendKind;
use crate::fence::Policy;

/// The port of the allow-list proxy on the jail's own `127.0.0.1` (FENCE-NET-7).
pub const PROXY_PORT: u16 = 3128;

/// The variables that point programs at the proxy, in both spellings programs read.
pub const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// The `allow-list` mode's environment (FENCE-NET-7): every proxy variable points at the
/// proxy, whatever the person passed or set, and `NO_PROXY` (either spelling) never
/// passes, so no host is reached around the proxy's judgement. Sorted afterwards.
pub fn point_at_proxy(env: &mut Vec<(String, String)>) {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    env.retain(|(k, _)| {
        !PROXY_VARIABLES.contains(&k.as_str()) && !k.eq_ignore_ascii_case("no_proxy")
    });
    env.extend(PROXY_VARIABLES.iter().map(|n| (n.to_string(), url.clone())));
    env.sort();
}

/// Variables passed through by name.
pub const PASSED: [&str; 9] = [
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
];
/// Prefixes passed through.
pub const PASSED_PREFIXES: [&str; 1] = ["LC_"];
/// `PATH` when the agent has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Parts of a name that mark it secret, compared without regard to case.
pub const NEVER_PARTS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "PRIVATE",
];
/// Prefixes of names that never pass, compared without regard to case.
pub const NEVER_PREFIXES: [&str; 19] = [
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "GCP_",
    "GCLOUD_",
    "ANTHROPIC_",
    "OPENAI_",
    "GEMINI_",
    "HF_",
    "GITHUB_",
    "GH_",
    "GITLAB_",
    "NPM_",
    "DOCKER_",
    "KUBE",
    "GATEHOUSE_",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
];
/// Whole names that never pass (credential services of the host).
pub const NEVER_NAMES: [&str; 2] = ["XDG_RUNTIME_DIR", "KRB5CCNAME"];

/// Whether `name` is on the never-passes list of the spec's environment section.
pub fn never_passes(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    NEVER_PARTS.iter().any(|p| upper.contains(p))
        || NEVER_PREFIXES.iter().any(|p| upper.starts_with(p))
        || NEVER_NAMES.contains(&upper.as_str())
}

/// Whether `name` passes the allow-list: listed (or `LC_*`) and not a secret's name.
pub fn passes(name: &str) -> bool {
    (PASSED.contains(&name) || PASSED_PREFIXES.iter().any(|p| name.starts_with(p)))
        && !never_passes(name)
}

/// The environment of a jailed command.
///
/// - `scrubbing`: apply the allow-list (false: the plane-wide opt-out, everything passes);
/// - `home`: the scratch home, always `HOME`;
/// - `tmpdir`: `TMPDIR`, the session's scratch temporary directory ([`Policy::tmpdir`]);
///   the plane passes it for every backend, a jail with a read-only `/tmp` included. `None`
///   leaves `TMPDIR` unset (the agent's own value never passes either way).
///
/// [`Policy::tmpdir`]: crate::fence::Policy::tmpdir
///
/// Names or values that are not UTF-8 are dropped (the plan travels as JSON).
pub fn jail_env<I>(
    parent: I,
    home: &Path,
    tmpdir: Option<&Path>,
    scrubbing: bool,
) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: Vec<(String, String)> = parent
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k != "HOME" && k != "TMPDIR" && (!scrubbing || passes(k)))
        .collect();
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    env.push(("HOME".into(), home.display().to_string()));
    if let Some(t) = tmpdir {
        env.push(("TMPDIR".into(), t.display().to_string()));
    }
    env.sort();
    env
}

/// Whether jailed code under `policy` can read `dir`, judged on the path as written: at or
/// below a system directory, an extra read-only path or a writable root (the workspaces,
/// the scratch directory), and not at or below a hidden path. A path holding `..` is never
/// judged readable (where it leads depends on the symlinks on its way).
fn readable_as_written(dir: &Path, roots: &[PathBuf], hidden: &[PathBuf]) -> bool {
    !dir.components().any(|c| c == Component::ParentDir)
        && roots.iter().any(|r| dir.starts_with(r))
        && !hidden.iter().any(|h| dir.starts_with(h))
}

/// Keep in the jail's `PATH` only the entries jailed code can read under `policy`
/// (FENCE-ENV-12), and return those left out, in order, each once. An absolute entry stays
/// when it is readable as written and, where it exists on this host, its real path is
/// readable too (a symlink in a workspace to the person's home leads nowhere in the jail);
/// a relative entry (the empty one included) names a directory below the working
/// directory, always inside a root, and stays. When no entry remains `PATH` is
/// [`DEFAULT_PATH`], as for an agent that has none. Linear in the entries times the roots.
///
/// Every backend needs it: in a mount tree of the jail's own such an entry does not
/// exist, and on the Landlock-only fence it is still there to look up but nothing below it
/// can be read or run, so a program that finds itself through `PATH` (a `python3` that
/// looks for its standard library beside the first `python3` in `PATH`) would look where
/// it cannot read.
///
/// The system directories are the policy's, or for `seatbelt` the ones its profile reads.
pub fn fit_path(
    env: &mut [(String, String)],
    policy: &Policy,
    backend: BackendKind,
) -> Vec<String> {
    let system: Vec<PathBuf> = if backend == BackendKind::Seatbelt {
        crate::fence::seatbelt::SYSTEM_READ
            .iter()
            .map(PathBuf::from)
            .collect()
    } else {
        policy.system_dirs.clone()
    };
    let mut roots: Vec<PathBuf> = Vec::new();
    for r in system
        .iter()
        .chain(policy.read_only.iter())
        .chain(policy.writable_roots().iter())
    {
        roots.push(r.clone());
        if let Ok(real) = std::fs::canonicalize(r) {
            if real != *r {
                roots.push(real);
            }
        }
    }
    let hidden = &policy.hidden;
    let Some(at) = env.iter().position(|(k, _)| k == "PATH") else {
        return Vec::new();
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    for entry in env[at].1.split(':') {
        let dir = Path::new(entry);
        let fits = !dir.is_absolute()
            || (readable_as_written(dir, &roots, hidden)
                && std::fs::canonicalize(dir)
                    .map(|real| readable_as_written(&real, &roots, hidden))
                    .unwrap_or(true));
        if fits {
            kept.push(entry);
        } else if !dropped.iter().any(|d| d == entry) {
            dropped.push(entry.to_string());
        }
    }
    if dropped.is_empty() {
        return dropped;
    }
    let path = if kept.is_empty() {
        DEFAULT_PATH.to_string()
    } else {
        kept.join(":")
    };
    env[at].1 = path;
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("TERM", "xterm"),
            ("TZ", "UTC"),
            ("HOME", "/root"),
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            ("LD_PRELOAD", "/evil.so"),
            ("LC_API_KEY", "sk-lc"),
            ("LC_MY_TOKEN", "tok"),
            ("lc_auth", "x"),
            ("USER", "person"),
            ("LOGNAME", "person"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
    }

    #[test]
    fn only_the_allow_list_passes_and_home_is_scratch() {
        let env = jail_env(parent(), Path::new("/s/home"), None, true);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "TERM", "TZ", "USER"]
        );
        assert!(env.contains(&("HOME".into(), "/s/home".into())));
    }

    #[test]
    fn opt_out_passes_everything_but_home() {
        let env = jail_env(
            parent(),
            Path::new("/s/home"),
            Some(Path::new("/s/tmp")),
            false,
        );
        assert!(env.iter().any(|(k, _)| k == "ANTHROPIC_API_KEY"));
        assert!(env.contains(&("HOME".into(), "/s/home".into())));
        assert!(env.contains(&("TMPDIR".into(), "/s/tmp".into())));
    }

    #[test]
    fn missing_path_gets_a_default() {
        let env = jail_env(Vec::new(), Path::new("/h"), None, true);
        assert!(env.contains(&("PATH".into(), DEFAULT_PATH.into())));
    }

    /// The one rule both the scrub and `--pass-env` apply (FENCE-ENV-8, FENCE-ENV-9):
    /// respelled in case, prefixed or as a part of a longer name.
    #[rstest::rstest]
    #[case("npm_token")]
    #[case("LC_API_KEY")]
    #[case("MY_PASSWORD")]
    #[case("AWS_REGION")]
    #[case("SSH_AUTH_SOCK")]
    #[case("xdg_runtime_dir")]
    fn respelled_secret_names_never_pass(#[case] name: &str) {
        assert!(never_passes(name), "{name}");
        assert!(!passes(name), "{name}");
    }

    fn policy_with(workspace: &str) -> Policy {
        let mut p = Policy::new(vec![PathBuf::from(workspace)], PathBuf::from("/s"));
        p.read_only = vec![PathBuf::from("/data/sdk")];
        p.hidden = vec![PathBuf::from("/w/private")];
        p
    }

    fn with_path(path: &str) -> Vec<(String, String)> {
        vec![("PATH".into(), path.into())]
    }

    /// FENCE-ENV-12: entries below the person's home (a pyenv or virtualenv layout), a
    /// hidden path, `..`, or the host's `/tmp` are left out, each named once, in order;
    /// system directories, extra read-only paths, workspaces, the scratch directory and
    /// relative entries stay.
    #[test]
    fn path_keeps_only_what_the_jail_reads() {
        let mut env = with_path(
            "/nonexistent-home/.pyenv/versions/3.11.7/bin:/usr/local/bin:/w/bin:/w/private/bin:\
             /data/sdk/bin:/s/home/.local/bin:/usr/bin/../../nonexistent-home/bin:/tmp/x:\
             :bin:/nonexistent-home/.pyenv/versions/3.11.7/bin:/bin",
        );
        let dropped = fit_path(&mut env, &policy_with("/w"), BackendKind::Native);
        assert_eq!(
            dropped,
            [
                "/nonexistent-home/.pyenv/versions/3.11.7/bin",
                "/w/private/bin",
                "/usr/bin/../../nonexistent-home/bin",
                "/tmp/x"
            ]
        );
        assert_eq!(
            env,
            with_path("/usr/local/bin:/w/bin:/data/sdk/bin:/s/home/.local/bin::bin:/bin")
        );
    }

    #[test]
    fn a_readable_path_is_left_alone() {
        let mut env = with_path("/usr/bin:/bin");
        assert!(fit_path(&mut env, &policy_with("/w"), BackendKind::Native).is_empty());
        assert_eq!(env, with_path("/usr/bin:/bin"));
    }

    #[test]
    fn nothing_left_is_the_default_path() {
        let mut env = with_path("/nonexistent-home/bin");
        assert_eq!(
            fit_path(&mut env, &policy_with("/w"), BackendKind::Native),
            ["/nonexistent-home/bin"]
        );
        assert_eq!(env, with_path(DEFAULT_PATH));
    }

    /// A readable-looking entry that is a symlink to a place the jail cannot read is
    /// judged by its real path too.
    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_a_root_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap().join("w");
        let out = ws.parent().unwrap().join("home/bin");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, ws.join("bin")).unwrap();
        std::fs::create_dir(ws.join("tools")).unwrap();
        let bin = ws.join("bin").display().to_string();
        let tools = ws.join("tools").display().to_string();
        let mut env = with_path(&format!("{bin}:{tools}:/usr/bin"));
        let dropped = fit_path(
            &mut env,
            &policy_with(&ws.display().to_string()),
            BackendKind::Native,
        );
        assert_eq!(dropped, [bin]);
        assert_eq!(env, with_path(&format!("{tools}:/usr/bin")));
    }
}
