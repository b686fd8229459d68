//! The host description `hello` reports: operating system, architecture, kernel release,
//! and the confinement backends (none yet).
//!
//! Reads `/proc/sys/kernel/osrelease`, or runs `uname -r` where that file does not exist;
//! touches nothing else.

use serde::Serialize;
use std::process::Command;

/// What `hello` says about the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Environment {
    /// The operating system (`linux`, `macos`, ...).
    pub os: &'static str,
    /// The CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: &'static str,
    /// The kernel release, when it can be read.
    pub kernel: Option<String>,
    /// The Landlock ABI in force: none yet.
    pub landlock_abi: Option<u32>,
    /// The fence backend in force: none yet.
    pub fence_backend: Option<String>,
    /// The plane's posture at start, when the implementation declares `fence`
    /// (PROTO-HELLO-4); filled in by [`super::fence::declare`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posture: Option<super::fence::WirePosture>,
}

/// The kernel release, from `/proc` or `uname -r`.
pub fn kernel_release() -> Option<String> {
    let from_proc = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok();
    let text = from_proc.or_else(|| {
        let out = Command::new("uname").arg("-r").output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })?;
    let release = text.trim();
    (!release.is_empty()).then(|| release.to_string())
}

impl Environment {
    /// Describes the running host.
    pub fn detect() -> Self {
        Environment {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            kernel: kernel_release(),
            landlock_abi: None,
            fence_backend: None,
            posture: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_this_host() {
        let env = Environment::detect();
        assert_eq!(env.os, std::env::consts::OS);
        if cfg!(target_os = "linux") {
            assert!(env.kernel.is_some());
        }
        let json = serde_json::to_value(&env).unwrap();
        assert!(json["landlock_abi"].is_null());
        assert!(json["fence_backend"].is_null());
    }
}
