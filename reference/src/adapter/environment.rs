//! The translator of `hello`'s host description: operating system, architecture, kernel
//! release, and (with capability `fence`) the fence this host has.
//!
//! Reads `/proc/sys/kernel/osrelease`, or runs `uname -r` where that file does not exist;
//! touches nothing else.

use std::process::Command;

use gatehouse::fence::Host;

use super::fence::{host_posture, operator_options};
use super::wire::Environment;

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

/// Describes the running host, without any fence.
pub fn detect() -> Environment {
    Environment {
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        kernel: kernel_release(),
        landlock_abi: None,
        fence_backend: None,
        posture: None,
    }
}

/// The host as `hello` reports it with `fence` declared: the Landlock ABI, the backend and
/// the posture this host actually has (PROTO-HELLO-4). Where the default builds no fence
/// (no user namespaces: refused), the Landlock ABI is still the host's, after the
/// operator's cap: it is what a session with the degraded opt-in would use, and what the
/// runner selects kernel-dependent scenarios by.
pub fn with_fence() -> Environment {
    let posture = host_posture().clone();
    let host_abi = || {
        Host::detect(&operator_options())
            .landlock_abi
            .map(|a| u32::from(a.number()))
    };
    let landlock_abi = match (posture.landlock_abi, posture.backend) {
        (Some(a), _) => Some(u32::from(a.number())),
        (None, None) => host_abi(),
        (None, Some(_)) => None,
    };
    Environment {
        landlock_abi,
        fence_backend: posture.backend.map(str::to_string),
        posture: Some(posture),
        ..detect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_this_host() {
        let env = detect();
        assert_eq!(env.os, std::env::consts::OS);
        if cfg!(target_os = "linux") {
            assert!(env.kernel.is_some());
        }
        let json = serde_json::to_value(&env).unwrap();
        assert!(json["landlock_abi"].is_null());
        assert!(json["fence_backend"].is_null());
    }
}
