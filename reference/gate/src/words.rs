//! Reading a command line: the metacharacter scan (GATE-META-1), POSIX word splitting with
//! quote removal (GATE-READ-5) and a lenient reader for the dangerous-list scan. Where a
//! line splits into commands and which words are redirections is [`super::syntax`]'s.
//!
//! Pure text processing over the line it is given: this module touches no file, no
//! environment and no clock. It never expands anything: globs, `~`, variables and
//! substitutions are only noticed, never performed.

use std::borrow::Cow;

/// The characters that end the auto-safe route wherever they appear, quoted or not
/// (GATE-META-1).
pub const METACHARACTERS: &[u8] = b";&|\n\r<>${}`";

/// The metacharacters that chain commands (GATE-CHAIN-1).
pub const CHAIN_CHARACTERS: &[u8] = b";&|\n\r";

/// A byte class table: bit 0 for a metacharacter, bit 1 for a chaining one.
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < METACHARACTERS.len() {
        table[METACHARACTERS[i] as usize] |= 1;
        i += 1;
    }
    let mut i = 0;
    while i < CHAIN_CHARACTERS.len() {
        table[CHAIN_CHARACTERS[i] as usize] |= 2;
        i += 1;
    }
    table
};

/// Whether the byte `b` is a metacharacter.
pub fn is_metacharacter(b: u8) -> bool {
    CLASS[b as usize] & 1 != 0
}

/// Whether `line` holds a metacharacter anywhere, inside quotes or not.
pub fn has_metacharacter(line: &str) -> bool {
    line.bytes().any(is_metacharacter)
}

/// Whether `line` holds a character that chains commands.
pub fn is_chained(line: &str) -> bool {
    line.bytes().any(|b| CLASS[b as usize] & 2 != 0)
}

/// Whether `line` has nothing to run: empty, or only spaces and tabs (GATE-READ-4).
pub fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ' || b == b'\t')
}

/// One word of a command line after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'a> {
    /// The word's text after quote removal.
    pub text: Cow<'a, str>,
    /// The word holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// The word begins with an unquoted `~`.
    pub tilde: bool,
}

impl Word<'_> {
    /// The word's text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// A line the gate cannot word-split: an unterminated quote, a trailing backslash, or a
/// NUL byte (no command line can carry one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the line cannot be read as words: {0}")]
pub struct Unreadable(pub &'static str);

/// An iterator over the words of a line.
///
/// The strict reader ([`Words::strict`]) yields an error and stops at the first thing it
/// cannot read; the lenient reader ([`Words::lenient`]) closes an unterminated quote at
/// the end of the line and drops a trailing backslash, and never fails.
#[derive(Debug, Clone)]
pub struct Words<'a> {
    line: &'a str,
    pos: usize,
    lenient: bool,
}

impl<'a> Words<'a> {
    /// Reads `line` strictly, per GATE-READ-5.
    pub fn strict(line: &'a str) -> Self {
        Words {
            line,
            pos: 0,
            lenient: false,
        }
    }

    /// Reads `line` leniently, for the dangerous-list scan.
    pub fn lenient(line: &'a str) -> Self {
        Words {
            line,
            pos: 0,
            lenient: true,
        }
    }

    fn fail(&mut self, what: &'static str) -> Option<Result<Word<'a>, Unreadable>> {
        self.pos = self.line.len();
        Some(Err(Unreadable(what)))
    }
}

/// The length in bytes of the UTF-8 character that starts with `lead`.
fn char_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = Result<Word<'a>, Unreadable>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.line;
        let b = line.as_bytes();
        let n = b.len();
        let mut i = self.pos;
        while i < n && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i >= n {
            self.pos = n;
            return None;
        }
        let start = i;
        let tilde = b[start] == b'~';
        let mut glob = false;
        // `owned` is created at the first quote or backslash; until then the word is a
        // plain slice of the line. `run` is the start of literal text not yet copied.
        let mut owned: Option<String> = None;
        let mut run = start;
        while i < n {
            match b[i] {
                b' ' | b'\t' => break,
                b'\0' if !self.lenient => return self.fail("a NUL byte"),
                b'*' | b'?' | b'[' => {
                    glob = true;
                    i += 1;
                }
                b'\'' => {
                    let buf = owned.get_or_insert_with(String::new);
                    buf.push_str(&line[run..i]);
                    match b[i + 1..].iter().position(|&c| c == b'\'') {
                        Some(len) => {
                            buf.push_str(&line[i + 1..i + 1 + len]);
                            i += len + 2;
                        }
                        None if self.lenient => {
                            buf.push_str(&line[i + 1..]);
                            i = n;
                        }
                        None => return self.fail("an unterminated single quote"),
                    }
                    run = i;
                }
                b'"' => {
                    let buf = owned.get_or_insert_with(String::new);
                    buf.push_str(&line[run..i]);
                    i += 1;
                    run = i;
                    loop {
                        if i >= n {
                            if self.lenient {
                                buf.push_str(&line[run..]);
                                run = n;
                                break;
                            }
                            return self.fail("an unterminated double quote");
                        }
                        match b[i] {
                            b'"' => {
                                buf.push_str(&line[run..i]);
                                i += 1;
                                run = i;
                                break;
                            }
                            b'\\'
                                if i + 1 < n && matches!(b[i + 1], b'"' | b'\\' | b'$' | b'`') =>
                            {
                                buf.push_str(&line[run..i]);
                                run = i + 1;
                                i += 2;
                            }
                            b'\\' if i + 1 < n && b[i + 1] == b'\n' => {
                                buf.push_str(&line[run..i]);
                                i += 2;
                                run = i;
                            }
                            b'\0' if !self.lenient => return self.fail("a NUL byte"),
                            _ => i += 1,
                        }
                    }
                }
                b'\\' => {
                    let buf = owned.get_or_insert_with(String::new);
                    buf.push_str(&line[run..i]);
                    if i + 1 >= n {
                        if self.lenient {
                            i = n;
                            run = n;
                            continue;
                        }
                        return self.fail("a trailing backslash");
                    }
                    if b[i + 1] == b'\n' {
                        i += 2;
                        run = i;
                    } else {
                        if b[i + 1] == b'\0' && !self.lenient {
                            return self.fail("a NUL byte");
                        }
                        run = i + 1;
                        i += 1 + char_len(b[i + 1]);
                    }
                }
                _ => i += 1,
            }
        }
        self.pos = i;
        let text = match owned {
            Some(mut buf) => {
                buf.push_str(&line[run..i]);
                Cow::Owned(buf)
            }
            None => Cow::Borrowed(&line[start..i]),
        };
        Some(Ok(Word { text, glob, tilde }))
    }
}

/// Reads every word of `line` strictly (GATE-READ-5).
pub fn read_words(line: &str) -> Result<Vec<Word<'_>>, Unreadable> {
    Words::strict(line).collect()
}

/// Reads only the first word of `line` strictly; `None` when the line has no word.
///
/// The first word can be read even when a later word cannot (`git commit -m 'oops`).
pub fn first_word(line: &str) -> Option<Result<Word<'_>, Unreadable>> {
    Words::strict(line).next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn texts(line: &str) -> Vec<String> {
        read_words(line)
            .unwrap()
            .into_iter()
            .map(|w| w.text.into_owned())
            .collect()
    }

    #[rstest]
    #[case("ls", &["ls"])]
    #[case("  ls \t -la  ", &["ls", "-la"])]
    #[case("cat 'a b'", &["cat", "a b"])]
    #[case("cat \"a b\"", &["cat", "a b"])]
    #[case("cat a\\ b", &["cat", "a b"])]
    #[case("echo 'a\\b'", &["echo", "a\\b"])]
    #[case("echo \"a\\b\"", &["echo", "a\\b"])]
    #[case("echo \"a\\\"b\"", &["echo", "a\"b"])]
    #[case("echo \"a\\\\b\"", &["echo", "a\\b"])]
    #[case("echo \\a", &["echo", "a"])]
    #[case("\"rm\" '-rf'", &["rm", "-rf"])]
    #[case("\\rm -rf", &["rm", "-rf"])]
    #[case("echo ''", &["echo", ""])]
    #[case("e'c'\"h\"o x", &["echo", "x"])]
    #[case("echo é'ü'\\ñ", &["echo", "éüñ"])]
    #[case("", &[])]
    #[case("   ", &[])]
    fn splits_words_posix_style(#[case] line: &str, #[case] expected: &[&str]) {
        assert_eq!(texts(line), expected);
    }

    #[rstest]
    #[case("echo 'abc")]
    #[case("echo \"abc")]
    #[case("echo abc\\")]
    #[case("echo \"a\\\"")]
    #[case("echo a\0b")]
    fn unreadable_lines(#[case] line: &str) {
        assert!(read_words(line).is_err());
    }

    #[rstest]
    #[case("*", true)]
    #[case("a?", true)]
    #[case("[ab]", true)]
    #[case("'*'", false)]
    #[case("\"a?\"", false)]
    #[case("\\*", false)]
    #[case("a'*'b", false)]
    #[case("a'*'*", true)]
    #[case("plain", false)]
    fn notices_unquoted_globs(#[case] word: &str, #[case] glob: bool) {
        let w = first_word(word).unwrap().unwrap();
        assert_eq!(w.glob, glob);
    }

    #[rstest]
    #[case("~", true)]
    #[case("~/x", true)]
    #[case("'~'", false)]
    #[case("\\~", false)]
    #[case("a~", false)]
    fn notices_leading_unquoted_tilde(#[case] word: &str, #[case] tilde: bool) {
        let w = first_word(word).unwrap().unwrap();
        assert_eq!(w.tilde, tilde);
    }

    #[test]
    fn plain_words_borrow_the_line() {
        let words = read_words("cat notes.txt").unwrap();
        assert!(words.iter().all(|w| matches!(w.text, Cow::Borrowed(_))));
    }

    #[test]
    fn first_word_survives_a_later_unreadable_word() {
        assert_eq!(
            first_word("git commit -m 'oops").unwrap().unwrap().as_str(),
            "git"
        );
        assert!(first_word("'git").unwrap().is_err());
        assert!(first_word("  ").is_none());
    }

    #[rstest]
    #[case("echo 'a;b'")]
    #[case("ls | wc")]
    #[case("a & b")]
    #[case("a\nb")]
    #[case("a\rb")]
    #[case("cat < x")]
    #[case("echo > x")]
    #[case("echo $HOME")]
    #[case("echo {a,b}")]
    #[case("echo `id`")]
    #[case("echo }")]
    fn metacharacters_are_found_quoted_or_not(#[case] line: &str) {
        assert!(has_metacharacter(line));
    }

    #[test]
    fn plain_line_has_no_metacharacter() {
        assert!(!has_metacharacter("grep -r 'a*b' notes.txt ~ [x] ? *"));
    }

    #[test]
    fn lenient_reader_never_fails() {
        let words: Vec<String> = Words::lenient("rm -rf 'x y")
            .map(|w| w.unwrap().text.into_owned())
            .collect();
        assert_eq!(words, ["rm", "-rf", "x y"]);
        let words: Vec<String> = Words::lenient("rm -rf x\\")
            .map(|w| w.unwrap().text.into_owned())
            .collect();
        assert_eq!(words, ["rm", "-rf", "x"]);
    }
}
