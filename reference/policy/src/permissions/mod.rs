//! Permission patterns and safety modes (spec chapter `permissions.md`): allow, ask and
//! deny patterns from the agent file and the person's settings, merged so that a deny from
//! any source wins; the label of a call; the safety mode that decides what no pattern
//! decided, and which source of it is in force.
//!
//! One concern per file: [`glob`] compiles and matches globs, [`pattern`] parses one
//! pattern, [`shell`] reads a shell line the ways a deny must see it (from the gate's own
//! word reader), [`rules`] merges sources and judges a call, [`label`] labels it, [`mode`]
//! holds the mode table. Nothing here runs anything or writes anything; the order in which
//! these verdicts combine with the gate, hooks and the trust map is [`crate::order`]'s.

pub mod glob;
pub mod label;
pub mod mode;
pub mod pattern;
pub mod rules;
pub mod shell;

pub use label::{label_of, Label};
pub use mode::{Mode, ModeCandidates, ModeChoice, ModeSource, ModeVerdict};
pub use pattern::{Pattern, PatternError, PatternProblem};
pub use rules::{List, LoadError, PatternLists, RuleMatch, RuleSet, Source, Verdicts};
