//! What the runner observes itself, never asking the implementation: the planted secrets
//! ([`bait`], and the [`keyring`] bait), the filesystem before and after a step
//! ([`snapshot`]) and while it runs ([`watch`]), and the processes the implementation
//! leaves behind ([`reap`]). A step's `check` table (`crate::check`) reads them.

pub mod bait;
pub mod keyring;
pub mod reap;
pub(crate) mod snapshot;
pub(crate) mod watch;
