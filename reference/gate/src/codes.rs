//! The stable codes the gate reports (section 16): the decision, the route that took it,
//! the reason code and the withheld-key codes. Their spellings cross the wire and land in
//! audit trails, so they never change.
//!
//! Pure data: this module touches nothing.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What the gate decided for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Runs without asking.
    Allow,
    /// A card is shown.
    Ask,
    /// Refused without a card (no way to ask).
    Deny,
}

/// The stage of the decision order (section 2) that decided (GATE-ORDER-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// The installation's allow-list held the line byte for byte.
    AllowList,
    /// A saved exact-line grant held the line byte for byte.
    GrantExact,
    /// A saved family grant covered the line.
    GrantFamily,
    /// A plain read inside the working directory.
    AutoSafe,
    /// The gate asks the person through a card.
    Card,
    /// The gate would ask but has no way to: it denies.
    NoAsker,
}

/// The reason code of a decision (section 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Allowed by the allow-list.
    AllowList,
    /// Allowed by an exact-line grant.
    GrantExact,
    /// Allowed by a family grant.
    GrantFamily,
    /// Allowed as a plain read inside the working directory.
    AutoSafe,
    /// On the dangerous list.
    Dangerous,
    /// A shell line on a Windows host.
    WindowsHost,
    /// A tool without grant machinery.
    CardOnly,
    /// `execute_code`, never auto-safe.
    Code,
    /// Nothing to run.
    Empty,
    /// A metacharacter in the line.
    Metacharacter,
    /// The line cannot be word-split.
    Unreadable,
    /// The first word is not on the read list.
    NotReadList,
    /// An escape flag of a read command.
    EscapeFlag,
    /// An unquoted glob character.
    Glob,
    /// A path argument resolves outside the working directory.
    PathOutside,
}

/// Why a card withholds a standing permission (section 16, withheld-key codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Withheld {
    /// A recursive delete: neither key, ever.
    Dangerous,
    /// A shell line on Windows: neither key.
    WindowsHost,
    /// A card-only tool: no standing permission exists.
    CardOnly,
    /// Nothing to run, nothing to save.
    Empty,
    /// The line chains commands (`;` `&` `|` newline, carriage return).
    Chained,
    /// The line holds another metacharacter.
    Metacharacter,
    /// The family is an interpreter.
    Interpreter,
    /// The family is an exec wrapper.
    ExecWrapper,
    /// The family is a pager or an editor.
    PagerEditor,
    /// The family is a transfer tool.
    Transfer,
    /// The first word is not a command name.
    NotACommandName,
    /// `execute_code` has no family.
    Code,
}

macro_rules! display_as_serde {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // The serde spelling is the stable code; a unit variant always serializes
                // to a plain JSON string.
                match serde_json::to_value(self) {
                    Ok(serde_json::Value::String(s)) => f.write_str(&s),
                    _ => Err(fmt::Error),
                }
            }
        }
    )*};
}

display_as_serde!(Verdict, Route, Reason, Withheld);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_snake_case() {
        assert_eq!(Reason::NotReadList.to_string(), "not_read_list");
        assert_eq!(Reason::PathOutside.to_string(), "path_outside");
        assert_eq!(Withheld::NotACommandName.to_string(), "not_a_command_name");
        assert_eq!(Withheld::ExecWrapper.to_string(), "exec_wrapper");
        assert_eq!(Route::NoAsker.to_string(), "no_asker");
        assert_eq!(Verdict::Deny.to_string(), "deny");
    }
}
