//! The trust map: which paths a person has vouched for, consulted at every read and
//! every write (seed `004`, "Trusted directories").
//!
//! - An empty map trusts nothing ([`TrustMap::is_trusted`] is false for every key).
//! - Rules are keyed by whole-segment path prefixes in two namespaces that never meet:
//!   [`Namespace::Relative`] (under the working directory; its own rule is the empty
//!   prefix) and [`Namespace::Absolute`] (directories opened beside it). The longest
//!   matching prefix decides; both polarities nest; a later decision on the same key
//!   replaces the earlier one. Lookup hashes the key once and probes one flat table
//!   from the longest prefix down ([`trie`]).
//! - Writes follow the seed's table exactly ([`write`]); reconciliation marks the exact
//!   path written, never its parent.
//! - Rules are written only by gestures ([`gestures`], [`settings`]); the quarantined
//!   read prompt has its own rules ([`prompt`]); the map persists with the session
//!   record for `--resume` and is emptied by `/clear` ([`record`]).
//!
//! This module does no file-system access except resolving settings-named directories
//! ([`settings`]); reach itself is opened by [`crate::paths::Roots`], which
//! [`crate::workspace::Session`] keeps in step with [`TrustMap::reach`]. The keys are
//! [`TrustKey`]s (module `key`), the rules and reach live in [`TrustMap`] (module `map`).
//!
//! Choices where the seed is silent (each stated in `spec/trust-map.md`): when `/cd`
//! re-spells two rules onto one key the later decision is kept; `--add-dir` on the
//! command line grants reach only and writes no rule; a picture is recognised by its
//! extension ([`prompt::PICTURE_EXTENSIONS`], SVG is text and not a picture); an absolute
//! key inside the working directory is always kept and answered as the relative key.

pub mod gestures;
mod key;
mod map;
pub mod prompt;
pub mod record;
pub mod settings;
pub mod trie;
pub mod write;

pub use gestures::{Startup, TrustError};
pub use key::{Namespace, TrustKey};
pub use map::{Origin, Reach, ReachKind, ReachOrigin, StatusLine, Trust, TrustMap};
pub use prompt::{NotOffered, Offer};
pub use record::TrustRecord;
pub use settings::{SettingsQuestion, SettingsQuestions};
pub use write::{Destination, WriteEffect, WritePlan};
