//! Path confinement: every file operation of the reference goes through here.
//!
//! A [`Roots`] set holds one directory handle per root: the working directory and the
//! directories (or single dropped files) opened beside it. A path is validated before any
//! system call ([`validate`]), routed to one root ([`Roots::key`]), and resolved beneath
//! that root's handle by one of two backends ([`Backend`]): `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, or a component walk over a stack of
//! directory handles that never opens `..`. Every escape, whichever backend saw it, is
//! the single [`PathError::Escape`], translated in one place (`error.rs`).
//!
//! The confined operations carry the plain names: [`Roots::open_read`],
//! [`Roots::read_file`], [`Roots::list_dir`], [`Roots::write_file`],
//! [`Roots::edit_atomic`], [`Roots::search`], [`Roots::stat`]. There is no unconfined
//! variant in the public API.
//!
//! Strict choices made where the sources are silent:
//! - an absolute path outside every root is an [`PathError::Escape`], like `..` out;
//! - a write whose final name is a symlink is refused ([`PathError::FinalSymlink`]), or
//!   reported as [`PathError::Escape`] when following it would leave the root; writes
//!   never follow the final name;
//! - a trailing slash demands a directory; a write to such a path is
//!   [`PathError::IsDirectory`];
//! - roots are matched by their canonical absolute path only, never by another spelling;
//! - `.` and empty segments are dropped lexically; a `..` that climbs out by spelling is
//!   refused before any system call; otherwise `..` is never folded lexically: the
//!   directory it climbs to is found on the disk, and the key names it (PATH-KEY-6);
//! - writes and edits replace the name by `renameat`, never the inode.
//!
//! Modules: `validate` (before any system call), `roots` and `root` (the handles),
//! `key` (what a path is called), `resolve` (the dispatch and shared steps), `openat2` and
//! `walk` (the two backends, chosen in `backend`), `handle` (the open flags), one module
//! per operation (`read`, `list`, `write`, `edit`, `search`, `stat`) and `error` (the one
//! error, translated in one place). The system call itself is [`crate::sys::openat2`]'s.
//!
//! Known costs (not closable by any resolver): a hard link inside a root to an outside
//! file is read (a write replaces the name, so the outside file is never changed); a
//! directory moved out while its handle is held is still reached through that handle.

mod backend;
mod edit;
mod error;
mod handle;
mod key;
mod list;
mod openat2;
mod read;
mod resolve;
mod root;
mod roots;
mod search;
mod stat;
pub mod validate;
mod walk;
mod write;

pub use backend::Backend;
pub use error::PathError;
pub use key::{is_within, overlaps, Key, RootId};
pub use list::Entry;
pub use read::Readable;
pub use root::Root;
pub use roots::{RootRefusal, Roots};
pub use search::{Match, Search};
pub use stat::{Kind, Metadata};
pub use validate::{MAX_NAME, MAX_PATH};
