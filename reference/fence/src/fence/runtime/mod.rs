//! From a policy to a running command, before any backend: the ordered steps ([`plan`]),
//! the two legs run before any claim ([`probe`]), the host's listings the plan reads
//! ([`listing`]), running with a deadline ([`launch`]), this user's shared directory
//! ([`user_dir`]) and the mount points of missing protected paths, shared by the jails of
//! one root and removed by the last one out ([`mount_points`]). Uses the [`super::model`].

pub mod launch;
pub mod listing;
pub mod mount_points;
pub mod plan;
pub mod probe;
pub mod user_dir;
