//! The merged rule set (PERM-SRC-1 to -3, PERM-PAT-5): allow, ask and deny patterns
//! from every source, and what they say about one call.
//!
//! Merging is a union: a deny from any source wins over every allow; an allow from any
//! source approves when nothing denies. Within a list the first matching pattern in load
//! order is the one reported, but which list decides never depends on the order.
//!
//! Pure: reads only the call's input.

use super::glob::fold_text;
use super::pattern::{Pattern, PatternError};
use super::shell::Readings;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;

/// One of the three lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum List {
    /// Approves when nothing denies.
    Allow,
    /// Asks.
    Ask,
    /// Refuses, whatever else matches.
    Deny,
}

impl List {
    /// The list's name in the files.
    pub fn name(self) -> &'static str {
        match self {
            List::Allow => "allow",
            List::Ask => "ask",
            List::Deny => "deny",
        }
    }
}

/// Where a pattern came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum Source {
    /// The agent file (its author's rules).
    AgentFile(PathBuf),
    /// The person's settings file.
    Settings(PathBuf),
    /// Added in the session itself by the person.
    Session,
}

impl Source {
    /// Whether the patterns are the person's own (settings or session), not an author's.
    pub fn is_persons(&self) -> bool {
        !matches!(self, Source::AgentFile(_))
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::AgentFile(p) => write!(f, "agent file {}", p.display()),
            Source::Settings(p) => write!(f, "settings {}", p.display()),
            Source::Session => f.write_str("session"),
        }
    }
}

/// One loaded pattern with its provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The pattern.
    pub pattern: Pattern,
    /// Its list.
    pub list: List,
    /// Its source.
    pub source: Source,
    /// Its 0-based place in that source's list.
    pub index: usize,
}

/// A pattern that failed to load: names the file, the list entry, the pattern and the
/// position (PERM-LOAD-1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: permissions.{list}[{index}] {pattern:?}: {error}", list = .list.name())]
pub struct LoadError {
    /// Where the pattern was written.
    pub origin: Source,
    /// Its list.
    pub list: List,
    /// Its 0-based place in the list.
    pub index: usize,
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong and where.
    pub error: PatternError,
}

/// The patterns of one source, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternLists {
    /// Allow patterns.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Ask patterns.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Deny patterns.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// A pattern that matched, for the decision and the audit record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleMatch {
    /// The list.
    pub list: List,
    /// The pattern as written.
    pub pattern: String,
    /// Its source.
    pub source: Source,
    /// Its place in the source's list.
    pub index: usize,
}

impl RuleMatch {
    fn of(rule: &Rule) -> RuleMatch {
        RuleMatch {
            list: rule.list,
            pattern: rule.pattern.as_str().to_string(),
            source: rule.source.clone(),
            index: rule.index,
        }
    }
}

/// What the rules say about one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// The first deny pattern that matched.
    pub deny: Option<RuleMatch>,
    /// The allow pattern that approved (every part of a shell line matched one).
    pub allow: Option<RuleMatch>,
    /// The first ask pattern of the person's own (settings, session) that matched.
    pub persons_ask: Option<RuleMatch>,
    /// The first ask pattern of the agent file's author that matched.
    pub authors_ask: Option<RuleMatch>,
}

/// Every pattern of every source, indexed by tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Rules whose tool glob is a plain name, by that (folded) name.
    by_tool: std::collections::HashMap<String, Vec<usize>>,
    /// Rules whose tool glob has a wildcard.
    wild: Vec<usize>,
    /// For each plain name, every rule that applies to it (its own and the wildcard ones
    /// matching it) in load order: computed when rules are added, not per call.
    merged: std::collections::HashMap<String, Vec<usize>>,
}

/// The tool whose `cmd` argument is a command line read as in [`Readings`].
pub const SHELL_TOOL: &str = "shell";
/// The argument of [`SHELL_TOOL`] that holds the line.
pub const SHELL_KEY: &str = "cmd";

impl RuleSet {
    /// An empty set.
    pub fn new() -> RuleSet {
        RuleSet::default()
    }

    /// Adds the lists of one source; every pattern is parsed, and the first that fails is
    /// the error (nothing of that source is added then).
    pub fn add(&mut self, source: Source, lists: &PatternLists) -> Result<(), LoadError> {
        let mut parsed = Vec::new();
        for (list, patterns) in [
            (List::Deny, &lists.deny),
            (List::Allow, &lists.allow),
            (List::Ask, &lists.ask),
        ] {
            for (index, text) in patterns.iter().enumerate() {
                let pattern = Pattern::parse(text).map_err(|error| LoadError {
                    origin: source.clone(),
                    list,
                    index,
                    pattern: text.clone(),
                    error,
                })?;
                parsed.push(Rule {
                    pattern,
                    list,
                    source: source.clone(),
                    index,
                });
            }
        }
        for rule in parsed {
            self.push(rule);
        }
        self.reindex();
        Ok(())
    }

    fn push(&mut self, rule: Rule) {
        let i = self.rules.len();
        match rule.pattern.tool.literal() {
            Some(name) => self.by_tool.entry(name.to_string()).or_default().push(i),
            None => self.wild.push(i),
        }
        self.rules.push(rule);
    }

    /// Recomputes [`RuleSet::merged`] once the rules of a source are in.
    fn reindex(&mut self) {
        let merged = self
            .by_tool
            .keys()
            .map(|name| (name.clone(), self.indices_for(name)))
            .collect();
        self.merged = merged;
    }

    /// The indices of the rules whose tool glob matches the folded tool name, in load
    /// order, computed afresh.
    fn indices_for(&self, folded_tool: &str) -> Vec<usize> {
        let named = self
            .by_tool
            .get(folded_tool)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut idx: Vec<usize> = named.to_vec();
        idx.extend(
            self.wild
                .iter()
                .copied()
                .filter(|&i| self.rules[i].pattern.tool.matches_folded(folded_tool)),
        );
        idx.sort_unstable();
        idx
    }

    /// The rules whose tool glob matches the folded tool name, in load order.
    fn for_tool<'a>(&'a self, folded_tool: &str) -> Vec<&'a Rule> {
        match self.merged.get(folded_tool) {
            Some(idx) => idx.iter().map(|&i| &self.rules[i]).collect(),
            None => self
                .indices_for(folded_tool)
                .into_iter()
                .map(|i| &self.rules[i])
                .collect(),
        }
    }

    /// Adds one pattern from the session itself.
    pub fn add_session(&mut self, list: List, text: &str) -> Result<(), LoadError> {
        let index = self
            .rules
            .iter()
            .filter(|r| r.source == Source::Session && r.list == list)
            .count();
        let pattern = Pattern::parse(text).map_err(|error| LoadError {
            origin: Source::Session,
            list,
            index,
            pattern: text.to_string(),
            error,
        })?;
        self.push(Rule {
            pattern,
            list,
            source: Source::Session,
            index,
        });
        self.reindex();
        Ok(())
    }

    /// Every rule, in load order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The patterns added in the session, as `(list, pattern)`, for the session record.
    pub fn session_rules(&self) -> Vec<(List, String)> {
        self.rules
            .iter()
            .filter(|r| r.source == Source::Session)
            .map(|r| (r.list, r.pattern.as_str().to_string()))
            .collect()
    }

    /// What the rules say about a call to `tool` with `input` (a JSON object of
    /// arguments).
    pub fn judge(&self, tool: &str, input: &Value) -> Verdicts {
        let folded_tool = fold_text(tool);
        let rules = self.for_tool(&folded_tool);
        let readings = (tool == SHELL_TOOL)
            .then(|| {
                input
                    .get(SHELL_KEY)
                    .and_then(Value::as_str)
                    .map(Readings::of)
            })
            .flatten();
        let firsts = readings.as_ref().map(FirstBytes::of);
        let mut v = Verdicts::default();
        for rule in &rules {
            let slot = match (rule.list, rule.source.is_persons()) {
                (List::Deny, _) => &mut v.deny,
                (List::Ask, true) => &mut v.persons_ask,
                (List::Ask, false) => &mut v.authors_ask,
                (List::Allow, _) => continue,
            };
            if slot.is_none()
                && firsts.as_ref().map_or(true, |f| f.may_match(&rule.pattern))
                && matches_any(&rule.pattern, input, readings.as_ref())
            {
                *slot = Some(RuleMatch::of(rule));
            }
        }
        let allows: Vec<&Rule> = rules
            .into_iter()
            .filter(|r| r.list == List::Allow)
            .collect();
        v.allow = allow(&allows, input, readings.as_ref());
        v
    }
}

/// The first bytes of every reading of a shell line: a deny or ask pattern whose `cmd`
/// glob starts with a literal byte none of them starts with cannot match, and is passed
/// over without trying each reading (the order is run for every call).
struct FirstBytes {
    set: [u64; 4],
    too_deep: bool,
}

impl FirstBytes {
    fn of(r: &Readings) -> FirstBytes {
        let mut set = [0u64; 4];
        for t in &r.any {
            if let Some(&b) = t.as_bytes().first() {
                set[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        }
        FirstBytes {
            set,
            too_deep: r.too_deep,
        }
    }

    fn may_match(&self, pattern: &Pattern) -> bool {
        self.too_deep
            || pattern.conditions.iter().all(|c| {
                c.key != SHELL_KEY
                    || c.value.first_byte().map_or(true, |b| {
                        self.set[usize::from(b >> 6)] & (1 << (b & 63)) != 0
                    })
            })
    }
}

/// The allow verdict: for a shell line read in parts, every part must match some allow
/// pattern (PERM-SHELL-6); otherwise the first allow pattern that matches.
fn allow(allows: &[&Rule], input: &Value, readings: Option<&Readings>) -> Option<RuleMatch> {
    match readings {
        None => allows
            .iter()
            .find(|r| conditions_hold(&r.pattern, input, None))
            .map(|r| RuleMatch::of(r)),
        Some(readings) => {
            // A pattern without a `cmd` condition approves the call whole.
            if let Some(r) = allows.iter().find(|r| {
                r.pattern.conditions.iter().all(|c| c.key != SHELL_KEY)
                    && conditions_hold(&r.pattern, input, None)
            }) {
                return Some(RuleMatch::of(r));
            }
            if readings.too_deep || readings.hidden_code || readings.every.is_empty() {
                return None;
            }
            let mut first = None;
            for part in &readings.every {
                let found = allows
                    .iter()
                    .find(|r| conditions_hold(&r.pattern, input, Some(part)))?;
                first.get_or_insert(*found);
            }
            first.map(RuleMatch::of)
        }
    }
}

/// Whether every condition holds with the `cmd` value read as `part` (allow), or, when
/// `part` is `None`, as its literal value.
fn conditions_hold(pattern: &Pattern, input: &Value, part: Option<&str>) -> bool {
    pattern.conditions.iter().all(|c| {
        if c.key == SHELL_KEY {
            if let Some(part) = part {
                return c.value.matches_folded(part);
            }
        }
        value_text(input, &c.key).is_some_and(|t| c.value.matches(&t))
    })
}

/// Whether a deny or ask pattern matches: every condition holds, a `cmd` condition of a
/// shell call by any reading (PERM-SHELL-1 to -3).
fn matches_any(pattern: &Pattern, input: &Value, readings: Option<&Readings>) -> bool {
    pattern.conditions.iter().all(|c| match readings {
        Some(r) if c.key == SHELL_KEY => {
            r.too_deep || r.any.iter().any(|t| c.value.matches_folded(t))
        }
        _ => value_text(input, &c.key).is_some_and(|t| c.value.matches(&t)),
    })
}

/// The text a condition is matched against: a string as it is, a number or a boolean as
/// JSON writes it; anything else (or a missing argument) matches nothing (PERM-PAT-5).
fn value_text(input: &Value, key: &str) -> Option<String> {
    match input.get(key)? {
        Value::String(s) => Some(s.clone()),
        v @ (Value::Number(_) | Value::Bool(_)) => Some(v.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn seed() -> RuleSet {
        let mut set = RuleSet::new();
        set.add(
            Source::AgentFile("guarded.yaml".into()),
            &PatternLists {
                allow: vec!["shell:cmd=echo*".into()],
                deny: vec!["shell:cmd=rm*".into()],
                ask: vec![],
            },
        )
        .unwrap();
        set
    }

    fn shell(line: &str) -> Value {
        json!({ "cmd": line })
    }

    #[rstest]
    #[case("echo hi", false, true)]
    #[case("rm -rf work/m101-nothing", true, false)]
    #[case("pwd", false, false)]
    #[case("echo hi && rm -rf x", true, false)]
    #[case("echo hi && echo there", false, true)]
    #[case("echo hi && pwd", false, false)]
    #[case("nice rm -rf x", true, false)]
    #[case("/usr/bin/rm x", true, false)]
    #[case("/usr/bin/echo x", false, false)]
    #[case("sh -c 'rm -rf x'", true, false)]
    #[case("ECHO hi", false, true)]
    fn the_seeds_two_patterns(#[case] line: &str, #[case] denied: bool, #[case] allowed: bool) {
        let v = seed().judge("shell", &shell(line));
        assert_eq!(v.deny.is_some(), denied, "{line}");
        assert_eq!(v.allow.is_some(), allowed, "{line}");
    }

    #[test]
    fn a_deny_from_either_source_wins() {
        let mut set = seed();
        set.add(
            Source::Settings("config.yaml".into()),
            &PatternLists {
                deny: vec!["shell:cmd=echo secret*".into()],
                ..Default::default()
            },
        )
        .unwrap();
        let v = set.judge("shell", &shell("echo secret"));
        assert!(v.allow.is_some());
        let deny = v.deny.unwrap();
        assert_eq!(deny.source, Source::Settings("config.yaml".into()));
        assert_eq!(deny.pattern, "shell:cmd=echo secret*");
    }

    #[test]
    fn several_conditions_all_hold() {
        let mut set = RuleSet::new();
        set.add(
            Source::Session,
            &PatternLists {
                deny: vec!["edit_file:path=/home/*:mode=overwrite".into()],
                ..Default::default()
            },
        )
        .unwrap();
        let hit = json!({"path": "/home/x", "mode": "overwrite"});
        let miss = json!({"path": "/home/x", "mode": "append"});
        let absent = json!({"path": "/home/x"});
        assert!(set.judge("edit_file", &hit).deny.is_some());
        assert!(set.judge("edit_file", &miss).deny.is_none());
        assert!(set.judge("edit_file", &absent).deny.is_none());
        assert!(set.judge("read_file", &hit).deny.is_none());
    }

    #[test]
    fn a_bad_pattern_is_a_load_error_naming_everything() {
        let mut set = RuleSet::new();
        let err = set
            .add(
                Source::AgentFile("a.yaml".into()),
                &PatternLists {
                    deny: vec!["shell:cmd=rm*".into(), "shell:cmd=[rm".into()],
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "agent file a.yaml: permissions.deny[1] \"shell:cmd=[rm\": position 11: a character class `[` is never closed"
        );
        assert!(set.rules().is_empty());
    }

    #[test]
    fn asks_are_told_apart_by_source() {
        let mut set = RuleSet::new();
        set.add(
            Source::AgentFile("a.yaml".into()),
            &PatternLists {
                ask: vec!["shell:cmd=git*".into()],
                ..Default::default()
            },
        )
        .unwrap();
        set.add_session(List::Ask, "shell:cmd=git push*").unwrap();
        let v = set.judge("shell", &shell("git status"));
        assert!(v.authors_ask.is_some() && v.persons_ask.is_none());
        let v = set.judge("shell", &shell("git push"));
        assert!(v.authors_ask.is_some() && v.persons_ask.is_some());
    }

    #[test]
    fn numbers_and_booleans_match_as_json_text() {
        let mut set = RuleSet::new();
        set.add(
            Source::Session,
            &PatternLists {
                deny: vec!["t:n=4?:b=true".into()],
                ..Default::default()
            },
        )
        .unwrap();
        assert!(set.judge("t", &json!({"n": 42, "b": true})).deny.is_some());
        assert!(set
            .judge("t", &json!({"n": [42], "b": true}))
            .deny
            .is_none());
    }
}
