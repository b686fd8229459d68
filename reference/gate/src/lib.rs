//! The approval gate (spec chapter `approval-gate.md`): decides, for every call to `shell`
//! and `execute_code` (and the card-only tools), whether it may run without asking the
//! person.
//!
//! One concern per file: [`words`] reads a line, [`syntax`] reads the shell syntax around
//! its words (splits, redirections, the command word), [`lists`] holds the fixed lists,
//! [`flags`] finds escape flags, [`jail`] resolves paths on the real filesystem,
//! [`danger`] finds recursive deletes, [`grants`] keeps the grant table, [`offers`] works
//! out what a card offers, [`card`] handles channels, windows, answers and the audit
//! trail, [`decision`] walks the order of section 2, and [`session`] bundles them for a
//! caller that talks to a person.
//!
//! ```no_run
//! use gatehouse_gate::{Gate, GateConfig, GrantTable, Tool, Verdict};
//!
//! let gate = Gate::new(GateConfig::new("/path/to/workspace")).unwrap();
//! let decision = gate.decide(Tool::Shell, "cat notes.txt", &GrantTable::new());
//! assert_eq!(decision.decision, Verdict::Allow);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod card;
pub mod codes;
pub mod danger;
pub mod decision;
pub mod flags;
pub mod grants;
pub mod jail;
pub mod lists;
pub mod offers;
pub mod session;
pub mod syntax;
pub mod tool;
pub mod words;
pub mod work;

pub use card::{
    Answer, AnswerOutcome, AuditOutcome, AuditRecord, CardError, CardSpec, CardWindows, Channel,
    Choice, PendingCard, SPEECH_WINDOW_MAX,
};
pub use codes::{Reason, Route, Verdict, Withheld};
pub use danger::is_dangerous;
pub use decision::{Asker, Decision, Gate, GateConfig, GateError, Host};
pub use grants::{Grant, GrantKind, GrantTable};
pub use jail::{Jail, JailError};
pub use offers::Offers;
pub use session::{NoCard, Session};
pub use tool::{Tool, UnknownTool};
