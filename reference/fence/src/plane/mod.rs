//! The execution plane: tools run in pooled out-of-process executors held by the fence, with
//! an environment scrubbed at spawn, and session logs kept out of the tools' reach.
//!
//! - [`env`]: the allow-list applied at spawn, and the plane-wide opt-out;
//! - [`choices`]: the person's per-session variables and extra paths, checked;
//! - [`protocol`]: the JSON-lines protocol between the broker and an executor;
//! - [`executor`]: the executor's loop, running inside the fence;
//! - [`broker`]: the tokio broker and pool, where a crash is an event;
//! - [`log`]: the session log;
//! - [`session`]: a session's plane behind blocking calls, with its runtime toggle;
//! - [`terminal`]: a run on a pseudo-terminal of its jail's own, relayed from here;
//! - [`relay`]: a piped command's streams copied to and from ours, in one `poll` loop;
//! - [`cli`]: `gatehouse info` and `gatehouse exec`, one command through the fence;
//! - [`toolchains`]: the common toolchains found where their installers put them;
//! - [`told`]: the notices `gatehouse exec` has said once per workspace, remembered.

pub mod broker;
pub mod choices;
pub mod cli;
pub mod env;
pub mod executor;
pub mod log;
pub mod protocol;
pub mod relay;
pub mod session;
pub mod terminal;
pub mod told;
pub mod toolchains;

pub use broker::{
    Broker, PlaneConfig, PlaneError, PlaneEvent, RunOutcome, RunRequest, CONFIRM_OFF,
};
pub use protocol::ExitInfo;
