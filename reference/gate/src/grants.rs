//! The grant table (sections 7, 8 and 12): exact-line and family grants in one ordered
//! table, listed from 1, revoked by key or by number.
//!
//! In-memory data with serde for persistence; touches no file itself.

use super::tool::Tool;
use serde::{Deserialize, Serialize};

/// The two kinds of standing permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantKind {
    /// This exact line, byte for byte (GATE-EXACT-1).
    Exact,
    /// Every line whose first word is the key (GATE-FAMILY-1).
    Family,
}

fn is_shell(tool: &Tool) -> bool {
    *tool == Tool::Shell
}

/// One saved grant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Exact line or family.
    pub kind: GrantKind,
    /// The line (exact) or the first word (family), byte for byte.
    pub key: String,
    /// The tool the grant was saved for (GATE-EXACT-3); families are always `shell`.
    #[serde(default, skip_serializing_if = "is_shell")]
    pub tool: Tool,
}

impl Grant {
    /// An exact-line grant for `tool`.
    pub fn exact(tool: Tool, key: impl Into<String>) -> Self {
        Grant {
            kind: GrantKind::Exact,
            key: key.into(),
            tool,
        }
    }

    /// A family grant (for `shell`).
    pub fn family(key: impl Into<String>) -> Self {
        Grant {
            kind: GrantKind::Family,
            key: key.into(),
            tool: Tool::Shell,
        }
    }
}

/// The ordered table of saved grants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GrantTable {
    entries: Vec<Grant>,
}

impl GrantTable {
    /// An empty table.
    pub fn new() -> Self {
        GrantTable::default()
    }

    /// Saves `grant` at the end; saving one already in the table changes nothing
    /// (GATE-REVOKE-1). Returns whether it was added.
    pub fn add(&mut self, grant: Grant) -> bool {
        if self.entries.contains(&grant) {
            return false;
        }
        self.entries.push(grant);
        true
    }

    /// The grants in the order they were saved; the listing numbers them from 1.
    pub fn list(&self) -> &[Grant] {
        &self.entries
    }

    /// How many grants the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether an exact grant for `tool` holds `line` byte for byte (GATE-EXACT-1, -3).
    pub fn has_exact(&self, tool: Tool, line: &str) -> bool {
        self.entries
            .iter()
            .any(|g| g.kind == GrantKind::Exact && g.tool == tool && g.key == line)
    }

    /// Whether a family grant with key `first_word` is saved (GATE-FAMILY-1). Whether it
    /// may cover a given line is the decision's business (GATE-FAMILY-2 to -5).
    pub fn has_family(&self, first_word: &str) -> bool {
        self.entries
            .iter()
            .any(|g| g.kind == GrantKind::Family && g.tool == Tool::Shell && g.key == first_word)
    }

    /// Takes grants back (GATE-REVOKE-2, -4): a target made only of digits is a 1-based
    /// number in the listing (that one grant); anything else is a key (every grant with
    /// that key, of either kind). Returns what was taken back, possibly nothing.
    pub fn revoke(&mut self, target: &str) -> Vec<Grant> {
        if !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()) {
            let index = target.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
            return match index {
                Some(i) if i < self.entries.len() => vec![self.entries.remove(i)],
                _ => Vec::new(),
            };
        }
        let (revoked, kept) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|g| g.key == target);
        self.entries = kept;
        revoked
    }
}

impl FromIterator<Grant> for GrantTable {
    fn from_iter<I: IntoIterator<Item = Grant>>(iter: I) -> Self {
        let mut table = GrantTable::new();
        for grant in iter {
            table.add(grant);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> GrantTable {
        [
            Grant::exact(Tool::Shell, "npm run build && ./deploy.sh"),
            Grant::family("git"),
            Grant::exact(Tool::Shell, "git"),
            Grant::exact(Tool::ExecuteCode, "print(1)"),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn adding_twice_changes_nothing() {
        let mut t = table();
        assert!(!t.add(Grant::family("git")));
        assert_eq!(t.len(), 4);
        assert!(t.add(Grant::exact(Tool::ExecuteCode, "git")));
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn exact_is_byte_for_byte_and_per_tool() {
        let t = table();
        assert!(t.has_exact(Tool::Shell, "npm run build && ./deploy.sh"));
        assert!(!t.has_exact(Tool::Shell, "npm run build  && ./deploy.sh"));
        assert!(!t.has_exact(Tool::Shell, "npm run build"));
        assert!(!t.has_exact(Tool::ExecuteCode, "npm run build && ./deploy.sh"));
        assert!(t.has_exact(Tool::ExecuteCode, "print(1)"));
        assert!(!t.has_exact(Tool::Shell, "print(1)"));
    }

    #[test]
    fn revoke_by_key_takes_every_kind() {
        let mut t = table();
        let revoked = t.revoke("git");
        assert_eq!(
            revoked,
            [Grant::family("git"), Grant::exact(Tool::Shell, "git")]
        );
        assert_eq!(t.len(), 2);
        assert!(!t.has_family("git"));
    }

    #[test]
    fn revoke_by_number_takes_that_one() {
        let mut t = table();
        assert_eq!(t.revoke("2"), [Grant::family("git")]);
        assert_eq!(t.list()[1], Grant::exact(Tool::Shell, "git"));
    }

    #[test]
    fn revoke_nothing_is_empty() {
        let mut t = table();
        assert!(t.revoke("0").is_empty());
        assert!(t.revoke("9").is_empty());
        assert!(t.revoke("99999999999999999999999").is_empty());
        assert!(t.revoke("svn").is_empty());
        assert!(t.revoke("").is_empty());
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn serde_round_trip_omits_the_default_tool() {
        let t = table();
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.starts_with(r#"[{"kind":"exact","key":"npm run build && ./deploy.sh"},"#));
        assert!(json.contains(r#"{"kind":"exact","key":"print(1)","tool":"execute_code"}"#));
        let back: GrantTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }
}
