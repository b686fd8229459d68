//! The kernel layer: thin wrappers over the kernel interfaces Gatehouse uses, one module
//! per interface. `paths`, `fence` and `plane` call down into it; it depends on no other
//! part of Gatehouse (the compiler keeps that: it is a crate of its own).
//!
//! - [`caps`]: capability sets and `no_new_privs`;
//! - [`ending`]: the terminating signals while a jail runs: the jail ended, the workspace
//!   put back, then the signal's death;
//! - [`fs`]: no-follow walks and descriptors named through `/proc/self/fd`;
//! - [`handoff`]: descriptors handed to the helper across exec, waiting with deadlines;
//! - [`ifaddrs`]: the addresses of this machine's interfaces (`getifaddrs`);
//! - [`landlock`]: the ordered [`landlock::Abi`], the kernel's ABI, rulesets;
//! - [`legs`]: the single raw calls the fence's probe makes (`truncate`, `chmod`);
//! - [`mark`]: timing marks of a diagnostic build (the `timing-marks` feature);
//! - [`mount`]: bind, tmpfs, proc, pivot_root, remounts;
//! - [`net`]: the jail's loopback, its listening socket handed out (`SCM_RIGHTS`);
//! - [`ns`]: namespaces, fork, reaping, process groups, descriptors;
//! - [`openat2`]: `openat2(2)` with `RESOLVE_BENEATH`;
//! - [`pty`]: pseudo-terminals, a controlling terminal for a command, the caller's
//!   terminal in raw mode;
//! - [`seccomp`]: the system-call filter.
//!
//! This is the crate `gatehouse-sys`: `unsafe` is allowed only here (the `gatehouse`
//! crate forbids it), each block with a `SAFETY:` comment; every wrapper's doc names the kernel version it
//! needs. Prefer `rustix` where it covers the call.
#![deny(missing_docs)]

#[cfg(target_os = "linux")]
pub mod caps;
#[cfg(unix)]
pub mod ending;
#[cfg(target_os = "linux")]
pub mod fs;
#[cfg(target_os = "linux")]
pub mod handoff;
#[cfg(unix)]
pub mod ifaddrs;
pub mod landlock;
pub mod legs;
pub mod mark;
#[cfg(target_os = "linux")]
pub mod mount;
#[cfg(target_os = "linux")]
pub mod net;
#[cfg(target_os = "linux")]
pub mod ns;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub mod openat2;
#[cfg(target_os = "linux")]
pub mod pty;
#[cfg(target_os = "linux")]
pub mod seccomp;
