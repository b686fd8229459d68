//! The execution fence: what a tool's command can touch, enforced by the kernel, probed
//! before it is claimed, and reported as a posture that never fails open silently.
//!
//! Data first: a [`Policy`] (what is bound where) and [`FenceOptions`] (which backend, what
//! to emulate) become, for the probed [`Host`], a [`Plan`] of ordered steps that is
//! validated and then applied by one linear function in the re-executed helper
//! (`gatehouse __jail`, see [`crate::helper`] and [`jail::enter`]), or for a native
//! one-shot command by an init cloned straight from the launcher ([`jail::run_early`]) or a
//! helper forked from it ([`jail::run_forked`]).
//!
//! Backends: `native` (user, mount, PID, IPC, UTS and network namespaces with a fresh root,
//! every capability dropped, Landlock at the best ABI, seccomp), `bwrap` (the system's
//! bubblewrap with Landlock and seccomp applied inside), `seatbelt` (macOS), and `off`.
//! Without user namespaces the native backend is Landlock alone, which cannot stop
//! metadata changes (nor truncate before ABI 3): the default refuses, the degraded opt-in
//! runs and the posture names what is not covered.
//!
//! Modules: [`policy`] (what is bound where, the options), [`guarded`] (what no writable root may hold, wherever it lies), [`host`] (what this host
//! offers), [`coverage`] (the protections, by the chapter's codes), [`posture`] (what is
//! claimed and what is missing), [`plan`] (the ordered steps), [`prepared`] (a backend
//! chosen, probed and ready), [`probe`] (the two legs before any claim), [`jail`] (the
//! helper applying the plan), [`launch`] (running with a deadline), [`mount_points`] (the mount points of missing
//! protected paths, shared by the jails of one root and removed by the last one out), [`bwrap`] and
//! [`seatbelt`] (the external backends), [`tty`] (a terminal for the command, relayed
//! from outside), [`control_strings`] (what of its output a terminal may act on), [`error`] (the one error type). The kernel calls
//! are [`crate::sys`]'s.

pub mod bwrap;
pub mod control_strings;
pub mod coverage;
pub mod error;
pub mod guarded;
pub mod host;
pub mod jail;
pub mod launch;
pub mod listing;
pub mod mount_points;
pub mod plan;
pub mod policy;
pub mod posture;
pub mod prepared;
pub mod probe;
pub mod protect;
pub mod seatbelt;
pub mod tty;
pub mod user_dir;

pub use coverage::{Coverage, REQUIRED};
pub use error::FenceError;
pub use host::Host;
pub use jail::{EXIT_SETUP_FAILED, PLAN_ENV};
pub use mount_points::MountPoints;
pub use plan::{Abi, Action, Enforcement, LandlockReport, LandlockRules, Plan, Step};
pub use policy::{BackendChoice, FenceOptions, Policy};
pub use posture::{BackendKind, Layer, Posture, PostureChoices};
pub use prepared::{
    current_posture, missing_protected, tidy_protected, Checked, Fence, Kind, PendingListener,
};
