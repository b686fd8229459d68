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
//! Folders, bottom up: [`model`] (data: the policy, what is guarded and protected, the
//! host, the coverage, the posture, the error), [`runtime`] (the plan, the probe, the
//! listings, launching with a deadline, the shared mount points), [`terminal`] (a terminal
//! for the command and what of its output may act on it), [`backends`] (native `jail`,
//! `bwrap`, `seatbelt`), and [`prepared`] (a backend chosen, probed and ready: the fence a
//! caller holds). Each module is also re-exported here under its own name
//! (`fence::plan`, `fence::jail`, ...). The kernel calls are [`crate::sys`]'s.
pub mod backends;
pub mod model;
pub mod prepared;
pub mod runtime;
pub mod terminal;

pub use backends::{bwrap, jail, seatbelt};
pub use model::{coverage, error, guarded, host, policy, posture, protect};
pub use runtime::{launch, listing, mount_points, plan, probe, user_dir};
pub use terminal::{control_strings, tty};

pub use coverage::{Coverage, REQUIRED};
pub use error::FenceError;
pub use host::Host;
pub use jail::{EXIT_SETUP_FAILED, PLAN_ENV};
pub use mount_points::MountPoints;
pub use mount_points::{missing_protected, tidy_protected};
pub use plan::{Abi, Action, Enforcement, LandlockReport, LandlockRules, Plan, Step};
pub use policy::{BackendChoice, FenceOptions, Policy};
pub use posture::{BackendKind, Layer, Posture, PostureChoices};
pub use prepared::{current_posture, Checked, Fence, Kind, PendingListener};
