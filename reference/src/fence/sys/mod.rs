//! Thin wrappers over the kernel interfaces the fence uses, one module per interface.
//!
//! `unsafe` is allowed only in these modules, each block with a `SAFETY:` comment; every
//! wrapper's doc names the kernel version it needs. Prefer `rustix` where it covers the call.

#[cfg(target_os = "linux")]
pub mod caps;
#[cfg(target_os = "linux")]
pub mod fs;
#[cfg(target_os = "linux")]
pub mod landlock;
pub mod legs;
#[cfg(target_os = "linux")]
pub mod mount;
#[cfg(target_os = "linux")]
pub mod ns;
#[cfg(target_os = "linux")]
pub mod seccomp;
