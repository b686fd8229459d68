//! The JSON shapes of capability `gate`: its requests as they arrive. Their answers are
//! [`super::Body`]'s `Decision`, `Answer`, `Grants`, `Revoked` and `Audit`.
//!
//! Pure data and serde: touches nothing.

use gatehouse::gate::Choice;
use serde::Deserialize;

/// The ops of `gate`.
pub const OPS: &[&str] = &["decide", "answer", "grants", "revoke", "audit"];

/// One request of `gate`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum GateRequest {
    /// Puts one call to the gate.
    Decide {
        /// The session's name.
        session: String,
        /// The tool's protocol name.
        tool: String,
        /// The line or code.
        input: String,
    },
    /// Answers the last card of the session.
    Answer {
        /// The session's name.
        session: String,
        /// What the person did.
        choice: Choice,
    },
    /// Lists the grant table.
    Grants {
        /// The session's name.
        session: String,
    },
    /// Takes grants back by key or number.
    Revoke {
        /// The session's name.
        session: String,
        /// A key, or a 1-based number.
        target: String,
    },
    /// Returns the audit trail.
    Audit {
        /// The session's name.
        session: String,
    },
}
