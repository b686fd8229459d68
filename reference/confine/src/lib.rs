//! Gatehouse's confinement floor: what the agent's file tools may reach, and what no tool
//! or command may write. From the bottom up:
//!
//! - [`protect`]: the protected paths of the workspace roots, one list and one rule for
//!   the fence (read-only inside the jail) and the file tools (`write` and `edit`
//!   refused);
//! - [`paths`]: path confinement, every file operation beneath its root;
//! - [`trust`]: the trust map, what the agent may read and write on whose word;
//! - [`workspace`]: a session's roots and trust map kept in lock-step, the file tools
//!   through them.
//!
//! It uses only the kernel layer (`gatehouse-sys`, reached here as `crate::sys`): no
//! runtime (tokio), no decision module. The execution floor (`gatehouse-fence`) and the
//! reference (`gatehouse`) sit above it and re-export each module under its old name
//! (`gatehouse::paths`, `gatehouse::fence::protect`, ...).
#![deny(missing_docs)]
// The kernel layer's `unsafe` lives in its own crate (`gatehouse-sys`); none here.
#![forbid(unsafe_code)]

pub mod paths;
pub mod protect;
pub mod trust;
pub mod workspace;
// `openat2` and the Linux resolver are the only users; elsewhere the walk needs none.
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use gatehouse_sys as sys;
