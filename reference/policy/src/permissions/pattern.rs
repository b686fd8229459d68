//! One permission pattern (PERM-PAT-1 to -5, PERM-LOAD-1, -2): a tool-name glob, optionally followed by
//! argument conditions `:key=value-glob`, all of which must hold.
//!
//! Pure text processing: parsing touches nothing, matching reads only the call's input.
//! A `:` starts a new condition only when a key name and `=` follow it
//! (`[A-Za-z_][A-Za-z0-9_]*=`); any other `:` is an ordinary character of the value, so
//! `shell:cmd=curl http://host:8080/*` has one condition.

use super::glob::{fold_text, Glob, GlobError, GlobProblem};
use std::fmt;

/// One `key=glob` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The argument's name, as written (matched exactly, case-sensitively: argument names
    /// are identifiers of the tool's schema).
    pub key: String,
    /// The glob its value must match.
    pub value: Glob,
}

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    /// The tool-name glob.
    pub tool: Glob,
    /// Every condition, in the order written.
    pub conditions: Vec<Condition>,
}

/// Why a pattern cannot be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternProblem {
    /// The pattern is empty.
    Empty,
    /// Nothing before the first `:`.
    EmptyTool,
    /// A `:` not followed by `key=`.
    NotACondition,
    /// A glob that cannot be compiled.
    Glob(GlobProblem),
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternProblem::Empty => f.write_str("the pattern is empty"),
            PatternProblem::EmptyTool => f.write_str("the tool name before `:` is empty"),
            PatternProblem::NotACondition => {
                f.write_str("after the tool name, `:` must start a condition `key=value`")
            }
            PatternProblem::Glob(g) => g.fmt(f),
        }
    }
}

/// A pattern that cannot be parsed, with the 1-based character position of the fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("position {position}: {problem}")]
pub struct PatternError {
    /// What is wrong.
    pub problem: PatternProblem,
    /// Where, in characters from 1.
    pub position: usize,
}

impl From<GlobError> for PatternError {
    fn from(e: GlobError) -> Self {
        PatternError {
            problem: PatternProblem::Glob(e.problem),
            position: e.position,
        }
    }
}

/// The length in characters of a key name at the start of `s` followed by `=`, if any.
fn key_at(s: &[char]) -> Option<usize> {
    let first = *s.first()?;
    if !(first == '_' || first.is_ascii_alphabetic()) {
        return None;
    }
    let len = s
        .iter()
        .take_while(|c| **c == '_' || c.is_ascii_alphanumeric())
        .count();
    (s.get(len) == Some(&'=')).then_some(len)
}

impl Pattern {
    /// Parses `source`.
    pub fn parse(source: &str) -> Result<Pattern, PatternError> {
        let chars: Vec<char> = source.chars().collect();
        if chars.is_empty() {
            return Err(PatternError {
                problem: PatternProblem::Empty,
                position: 1,
            });
        }
        // The tool glob ends at the first unescaped `:`.
        let mut i = 0;
        while i < chars.len() && chars[i] != ':' {
            i += if chars[i] == '\\' { 2 } else { 1 };
        }
        let tool_end = i.min(chars.len());
        if tool_end == 0 {
            return Err(PatternError {
                problem: PatternProblem::EmptyTool,
                position: 1,
            });
        }
        let tool_text: String = chars[..tool_end].iter().collect();
        let tool = Glob::compile(&tool_text, 0)?;
        let mut conditions = Vec::new();
        let mut at = tool_end;
        while at < chars.len() {
            // chars[at] is the `:` that starts a condition.
            let Some(klen) = key_at(&chars[at + 1..]) else {
                return Err(PatternError {
                    problem: PatternProblem::NotACondition,
                    position: at + 1,
                });
            };
            let key: String = chars[at + 1..at + 1 + klen].iter().collect();
            let value_start = at + 2 + klen;
            // The value runs to the next `:` that starts a condition (unescaped).
            let mut j = value_start;
            while j < chars.len() {
                if chars[j] == '\\' {
                    j += 2;
                    continue;
                }
                if chars[j] == ':' && key_at(&chars[j + 1..]).is_some() {
                    break;
                }
                j += 1;
            }
            let end = j.min(chars.len());
            let value_text: String = chars[value_start..end].iter().collect();
            let value = Glob::compile(&value_text, value_start)?;
            conditions.push(Condition { key, value });
            at = end;
        }
        Ok(Pattern {
            source: source.to_string(),
            tool,
            conditions,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the tool-name glob matches `tool` (case-insensitively).
    pub fn matches_tool(&self, tool: &str) -> bool {
        self.tool.matches_folded(&fold_text(tool))
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn conds(p: &str) -> Vec<(String, String)> {
        Pattern::parse(p)
            .unwrap()
            .conditions
            .into_iter()
            .map(|c| (c.key, c.value.as_str().to_string()))
            .collect()
    }

    #[test]
    fn tool_only() {
        let p = Pattern::parse("read_*").unwrap();
        assert!(p.conditions.is_empty());
        assert!(p.matches_tool("READ_file"));
        assert!(!p.matches_tool("write_file"));
    }

    #[rstest]
    #[case("shell:cmd=rm*", &[("cmd", "rm*")])]
    #[case("edit_file:path=/home/user/safe/*", &[("path", "/home/user/safe/*")])]
    #[case("shell:cmd=curl http://h:8080/*", &[("cmd", "curl http://h:8080/*")])]
    #[case("t:a=1:b=2", &[("a", "1"), ("b", "2")])]
    #[case("t:a=x:9=y", &[("a", "x:9=y")])]
    #[case("t:a=x\\:b=y", &[("a", "x\\:b=y")])]
    #[case("t:a=", &[("a", "")])]
    #[case("t:a=x::b=y", &[("a", "x:"), ("b", "y")])]
    fn conditions_split_only_at_key_equals(#[case] p: &str, #[case] expected: &[(&str, &str)]) {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(conds(p), expected);
    }

    #[rstest]
    #[case("", PatternProblem::Empty, 1)]
    #[case(":cmd=x", PatternProblem::EmptyTool, 1)]
    #[case("shell:", PatternProblem::NotACondition, 6)]
    #[case("shell:rm*", PatternProblem::NotACondition, 6)]
    #[case("shell:=x", PatternProblem::NotACondition, 6)]
    #[case("shell:cmd=[rm", PatternProblem::Glob(GlobProblem::UnclosedClass), 11)]
    #[case("she[ll", PatternProblem::Glob(GlobProblem::UnclosedClass), 4)]
    #[case("t:a=1:b=[z-a]", PatternProblem::Glob(GlobProblem::BackwardRange), 10)]
    fn errors_name_the_position(
        #[case] p: &str,
        #[case] problem: PatternProblem,
        #[case] position: usize,
    ) {
        assert_eq!(
            Pattern::parse(p).unwrap_err(),
            PatternError { problem, position }
        );
    }
}
