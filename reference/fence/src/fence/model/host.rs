//! What this host offers the fence, probed once: the kernel's Landlock ABI, whether user
//! namespaces are usable, whether bubblewrap is installed; then the emulation knobs applied
//! (a capped ABI, user namespaces declared absent). Ordered numbers, never version strings.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fence::policy::FenceOptions;
use crate::sys::landlock::Abi;

/// Where the bubblewrap backend expects Debian's `bwrap`.
pub const BWRAP: &str = "/usr/bin/bwrap";
/// Where the Seatbelt backend expects `sandbox-exec`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The host, as the fence sees it after emulation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// The Landlock ABI the kernel offers (`None`: no Landlock).
    pub kernel_landlock_abi: Option<Abi>,
    /// The ABI the fence will use: the kernel's, capped by `max_landlock_abi`.
    pub landlock_abi: Option<Abi>,
    /// Whether user namespaces can be used (false when emulated away).
    pub user_namespaces: bool,
    /// Why not, when they cannot.
    pub user_namespaces_reason: Option<String>,
    /// The bubblewrap executable, when installed.
    pub bwrap: Option<PathBuf>,
    /// The emulation in force, in words (empty: none).
    pub emulation: Vec<String>,
}

fn read_number(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl Host {
    /// Probe the host and apply the options' emulation.
    pub fn detect(options: &FenceOptions) -> Host {
        let kernel_landlock_abi = kernel_landlock_abi();
        let mut emulation = Vec::new();
        let landlock_abi = match (kernel_landlock_abi, options.max_landlock_abi) {
            (Some(k), Some(cap)) if cap < k.number() => {
                emulation.push(format!("Landlock capped at ABI {cap} (kernel has {k})"));
                Abi::from_number(cap)
            }
            (k, _) => k,
        };
        let (mut user_namespaces, mut reason) = user_namespaces();
        if options.no_user_namespaces {
            emulation.push("user namespaces treated as unavailable".into());
            user_namespaces = false;
            reason = Some("user namespaces unavailable (emulated)".into());
        }
        let bwrap = Path::new(BWRAP).exists().then(|| PathBuf::from(BWRAP));
        Host {
            kernel_landlock_abi,
            landlock_abi,
            user_namespaces,
            user_namespaces_reason: reason,
            bwrap,
            emulation,
        }
    }
}

fn kernel_landlock_abi() -> Option<Abi> {
    crate::sys::landlock::kernel_abi()
}

#[cfg(target_os = "linux")]
fn user_namespaces() -> (bool, Option<String>) {
    if read_number("/proc/sys/user/max_user_namespaces") == Some(0) {
        return (false, Some("user.max_user_namespaces is 0".into()));
    }
    let root = rustix::process::getuid().is_root();
    if !root && read_number("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return (false, Some("kernel.unprivileged_userns_clone is 0".into()));
    }
    if !root && read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
        return (
            false,
            Some("AppArmor restricts unprivileged user namespaces".into()),
        );
    }
    (true, None)
}

#[cfg(not(target_os = "linux"))]
fn user_namespaces() -> (bool, Option<String>) {
    let _ = read_number;
    (false, Some("no user namespaces on this platform".into()))
}
