//! The glob of permission patterns (PERM-PAT-3, PERM-PAT-4): `*` any run of characters
//! (spaces included), `?` one character, `[abc]`, `[a-z]` and `[!a-z]` one character of a
//! class, `\` takes the next character literally; matched case-insensitively against the
//! whole text.
//!
//! Pure text processing: touches nothing. A glob is compiled once, when its file loads; a
//! glob that cannot be compiled is a [`GlobError`] carrying the 1-based character position,
//! never a pattern that silently matches nothing.

use std::fmt;

/// One compiled element of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// One character, already folded to lower case.
    Char(char),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters, the empty one included.
    Star,
    /// `[...]`: one character in (or, negated, not in) the ranges (lower-cased bounds).
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
    tokens: Vec<Token>,
    /// The literal text before the first wildcard, lower-cased: a cheap first test.
    prefix: String,
}

/// Why a glob cannot be compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GlobProblem {
    /// `[` with no closing `]`.
    #[error("a character class `[` is never closed")]
    UnclosedClass,
    /// `[]` or `[!]`.
    #[error("a character class is empty")]
    EmptyClass,
    /// `[z-a]`.
    #[error("a range in a character class runs backwards")]
    BackwardRange,
    /// A `\` at the very end.
    #[error("a backslash ends the pattern with nothing to escape")]
    TrailingBackslash,
}

/// A glob that cannot be compiled, at a 1-based character position of its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobError {
    /// What is wrong.
    pub problem: GlobProblem,
    /// The 1-based position, in characters, where it is.
    pub position: usize,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "position {}: {}", self.position, self.problem)
    }
}

impl std::error::Error for GlobError {}

/// Folds one character to lower case (its first lower-case character: the simple
/// folding, which keeps one character one character).
pub fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// Folds a whole text, as [`Glob::matches_folded`] expects it.
pub fn fold_text(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.chars().map(fold).collect()
    }
}

impl Glob {
    /// Compiles `source`; `offset` is added to reported positions (the glob's place in the
    /// pattern it came from, 0 for a glob on its own).
    pub fn compile(source: &str, offset: usize) -> Result<Glob, GlobError> {
        let chars: Vec<char> = source.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        let err = |problem, at: usize| GlobError {
            problem,
            position: offset + at + 1,
        };
        while i < chars.len() {
            match chars[i] {
                '*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                    i += 1;
                }
                '?' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                '\\' => {
                    let Some(&c) = chars.get(i + 1) else {
                        return Err(err(GlobProblem::TrailingBackslash, i));
                    };
                    tokens.push(Token::Char(fold(c)));
                    i += 2;
                }
                '[' => {
                    let open = i;
                    let mut j = i + 1;
                    let negated = matches!(chars.get(j), Some('!') | Some('^'));
                    if negated {
                        j += 1;
                    }
                    let mut ranges = Vec::new();
                    // A `]` right after the opening is the end of an empty class: refused,
                    // so that `[]]` cannot mean two different things to two readers.
                    loop {
                        let Some(&c) = chars.get(j) else {
                            return Err(err(GlobProblem::UnclosedClass, open));
                        };
                        if c == ']' {
                            break;
                        }
                        let (lo, next) = if c == '\\' {
                            match chars.get(j + 1) {
                                Some(&e) => (e, j + 2),
                                None => return Err(err(GlobProblem::UnclosedClass, open)),
                            }
                        } else {
                            (c, j + 1)
                        };
                        if chars.get(next) == Some(&'-')
                            && chars.get(next + 1).is_some_and(|&h| h != ']')
                        {
                            let hi = chars[next + 1];
                            let (lo, hi) = (fold(lo), fold(hi));
                            if hi < lo {
                                return Err(err(GlobProblem::BackwardRange, j));
                            }
                            ranges.push((lo, hi));
                            j = next + 2;
                        } else {
                            ranges.push((fold(lo), fold(lo)));
                            j = next;
                        }
                    }
                    if ranges.is_empty() {
                        return Err(err(GlobProblem::EmptyClass, open));
                    }
                    tokens.push(Token::Class { negated, ranges });
                    i = j + 1;
                }
                c => {
                    tokens.push(Token::Char(fold(c)));
                    i += 1;
                }
            }
        }
        let prefix = tokens
            .iter()
            .map_while(|t| match t {
                Token::Char(c) => Some(*c),
                _ => None,
            })
            .collect();
        Ok(Glob {
            source: source.to_string(),
            tokens,
            prefix,
        })
    }

    /// The folded text the glob matches exactly, when it has no wildcard.
    pub fn literal(&self) -> Option<&str> {
        (self.prefix.chars().count() == self.tokens.len()).then_some(self.prefix.as_str())
    }

    /// The first byte every text it matches starts with (folded), when its first element
    /// is a literal character.
    #[inline]
    pub fn first_byte(&self) -> Option<u8> {
        self.prefix.as_bytes().first().copied()
    }

    /// The text the glob was compiled from.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the glob matches all of `text`, ignoring case.
    pub fn matches(&self, text: &str) -> bool {
        self.matches_folded(&fold_text(text))
    }

    /// Whether the glob matches all of `folded`, a text already folded by [`fold_text`].
    #[inline]
    pub fn matches_folded(&self, folded: &str) -> bool {
        // Most texts differ from the literal prefix at its first byte: reject them here,
        // inlined at the caller, before any call (a deny list is tried against every
        // reading of every line).
        match self.prefix.as_bytes().first() {
            Some(first) if folded.as_bytes().first() != Some(first) => false,
            _ => self.matches_rest(folded),
        }
    }

    /// [`Glob::matches_folded`] past the first-byte test.
    fn matches_rest(&self, folded: &str) -> bool {
        if !folded.starts_with(self.prefix.as_str()) {
            return false;
        }
        // The classic two-pointer match with one backtrack point: the last `*` seen and
        // where in the text it was tried. Linear in practice, O(n*m) at worst.
        let text: &[u8] = folded.as_bytes();
        let tokens = &self.tokens;
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            let c = char_at(folded, t);
            let step = c.len_utf8();
            let advanced = match tokens.get(p) {
                Some(Token::Char(k)) if *k == c => true,
                Some(Token::One) => true,
                Some(Token::Class { negated, ranges }) => {
                    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
                }
                Some(Token::Star) => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                _ => false,
            };
            if advanced {
                t += step;
                p += 1;
            } else if let Some((sp, st)) = star {
                let skipped = char_at(folded, st).len_utf8();
                star = Some((sp, st + skipped));
                t = st + skipped;
                p = sp + 1;
            } else {
                return false;
            }
        }
        tokens[p..].iter().all(|t| *t == Token::Star)
    }
}

fn char_at(s: &str, i: usize) -> char {
    let b = s.as_bytes()[i];
    if b < 0x80 {
        b as char
    } else {
        s[i..].chars().next().unwrap_or('\u{fffd}')
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case("rm*", "rm -rf x", true)]
    #[case("rm*", "RM -rf x", true)]
    #[case("rm*", "echo rm", false)]
    #[case("echo*", "echo", true)]
    #[case("*", "", true)]
    #[case("a*b*c", "a  b c", true)]
    #[case("a*b*c", "a  b d", false)]
    #[case("?", "é", true)]
    #[case("??", "é", false)]
    #[case("[abc]x", "bx", true)]
    #[case("[a-c]x", "Cx", true)]
    #[case("[!a-c]x", "dx", true)]
    #[case("[!a-c]x", "ax", false)]
    #[case("\\*", "*", true)]
    #[case("\\*", "x", false)]
    #[case("git push*", "git push --force origin", true)]
    #[case("git push*", "git pushy", true)]
    #[case("/home/user/safe/*", "/home/user/safe/a/b", true)]
    #[case("ÄB*", "äbc", true)]
    #[case("*x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false)]
    fn matches_whole_text_case_insensitively(
        #[case] glob: &str,
        #[case] text: &str,
        #[case] expected: bool,
    ) {
        assert_eq!(
            Glob::compile(glob, 0).unwrap().matches(text),
            expected,
            "{glob} ~ {text}"
        );
    }

    #[rstest]
    #[case("[abc", GlobProblem::UnclosedClass, 1)]
    #[case("ab[]", GlobProblem::EmptyClass, 3)]
    #[case("x[!]", GlobProblem::EmptyClass, 2)]
    #[case("a[z-a]", GlobProblem::BackwardRange, 3)]
    #[case("abc\\", GlobProblem::TrailingBackslash, 4)]
    fn bad_globs_name_their_position(
        #[case] glob: &str,
        #[case] problem: GlobProblem,
        #[case] position: usize,
    ) {
        assert_eq!(
            Glob::compile(glob, 0).unwrap_err(),
            GlobError { problem, position }
        );
    }

    #[test]
    fn offset_moves_the_position() {
        assert_eq!(Glob::compile("[", 10).unwrap_err().position, 11);
    }

    proptest! {
        #[test]
        fn a_literal_glob_matches_only_itself(s in "[a-z0-9 ._/-]{0,20}", t in "[a-z0-9 ._/-]{0,20}") {
            let g = Glob::compile(&s, 0).unwrap();
            prop_assert!(g.matches(&s));
            prop_assert_eq!(g.matches(&t), s == t);
        }

        #[test]
        fn a_star_suffix_is_a_prefix_test(s in "[a-z ]{0,8}", t in "[a-z ]{0,20}") {
            let g = Glob::compile(&format!("{s}*"), 0).unwrap();
            prop_assert_eq!(g.matches(&t), t.starts_with(&s));
        }

        #[test]
        fn surrounding_stars_are_a_substring_test(s in "[a-z]{0,5}", t in "[a-z ]{0,20}") {
            let g = Glob::compile(&format!("*{s}*"), 0).unwrap();
            prop_assert_eq!(g.matches(&t), t.contains(&s));
        }
    }
}
