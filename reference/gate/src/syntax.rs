//! The one reader of the shell syntax around words (GATE-READ-6): where a line splits into
//! simple commands (chains, pipes, groupings, substitutions), which words of a simple
//! command are redirections and their targets, and which word is its command. The
//! dangerous list ([`super::danger`]), the permission patterns
//! (`gatehouse::permissions::shell`), the redirections planned in the trust map
//! (`gatehouse::order::redirect`) and the `argv` hooks are told (`gatehouse::hooks::input`)
//! all read a line through this module, so they cannot disagree about where a command
//! starts.
//!
//! - **Splitting** is quote-blind: a line splits at `;` `&` `|` newline, carriage return,
//!   `(` `)` `{` `}` and backticks wherever they stand, so that a substitution inside
//!   double quotes is read, and a split inside a harmless quoted argument can only make
//!   the readers ask more. It does **not** split inside a redirection operator: the `&` of
//!   `>&` and `<&` (`2>&1`, `>&2`, `2>&-`, `<&0`), the `|` of `>|`, the braces of a named
//!   descriptor (`{fd}>log`) and the `{}` a `find` or `xargs` splices names into. `&>`
//!   is read both ways: `bash` reads `a &>f b` as one command, `dash` as `a &` and then
//!   `>f b`, and both command words are kept ([`command_starts`]).
//! - **Tokens** follow the shell's rules for operators: an unquoted `<` or `>` ends a word
//!   (`echo hi>out` is `echo hi` and `>out`), and a redirection is an optional descriptor
//!   (digits, or `{name}`), an operator of [`OPS`], and a target attached or in the next
//!   word. A quoted operator (`">"`) is a word.
//! - **Unsure:** a redirection operator with no target in its simple command (and not
//!   before a process substitution's `(`) is something no shell runs as the reader would
//!   read it; [`Part::unsure`] reports it and the dangerous list asks (GATE-DANGER-9).
//!
//! Pure text processing: touches nothing.

use super::words::{Word, Words};
use super::work::tick;
use std::borrow::Cow;

/// The bytes at which [`parts`] splits a line (less the operator exceptions).
const BOUNDARIES: &[u8] = b";&|\n\r(){}`";

/// A redirection operator of POSIX sh and bash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Out,
    /// `>>`
    Append,
    /// `>|` (overrides noclobber)
    Clobber,
    /// `<`
    In,
    /// `<>` (opens for reading and writing)
    ReadWrite,
    /// `>&` (duplicates a descriptor; in bash, `>&file` also writes a file)
    DupOut,
    /// `<&`
    DupIn,
    /// `<<` (a here-document)
    HereDoc,
    /// `<<-` (a here-document, leading tabs stripped)
    HereDocStrip,
    /// `<<<` (a here-string, bash)
    HereString,
    /// `&>` (stdout and stderr, bash)
    OutErr,
    /// `&>>` (stdout and stderr, appended, bash)
    AppendErr,
}

/// Every operator, longest first where one is a prefix of another.
pub const OPS: [(&str, Op); 12] = [
    ("&>>", Op::AppendErr),
    ("&>", Op::OutErr),
    ("<<<", Op::HereString),
    ("<<-", Op::HereDocStrip),
    ("<<", Op::HereDoc),
    ("<>", Op::ReadWrite),
    ("<&", Op::DupIn),
    ("<", Op::In),
    (">>", Op::Append),
    (">|", Op::Clobber),
    (">&", Op::DupOut),
    (">", Op::Out),
];

impl Op {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        OPS.iter()
            .find(|(_, op)| *op == self)
            .map_or("", |(text, _)| text)
    }

    /// Whether the operator, with `target`, opens a file for writing (ORDER-REDIR-1):
    /// `>`, `>>`, `>|`, `<>`, `&>`, `&>>`, and `>&` with a target that is neither a
    /// descriptor number nor `-` (bash writes `>&file` to the file).
    pub fn writes(self, target: &str) -> bool {
        match self {
            Op::Out | Op::Append | Op::Clobber | Op::ReadWrite | Op::OutErr | Op::AppendErr => true,
            Op::DupOut => {
                !(target == "-"
                    || (!target.is_empty() && target.bytes().all(|b| b.is_ascii_digit())))
            }
            _ => false,
        }
    }
}

/// One simple command of a line, as [`parts`] splits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part<'a> {
    /// Its text, as written.
    pub text: &'a str,
    /// A pipe (`|`, `|&`), a here-string, a here-document or a process substitution
    /// feeds it.
    pub fed: bool,
    /// It ends at the `(` of a process substitution (`<(`, `>(`): a trailing `<` or `>`
    /// is that operator, not a redirection without a target.
    pub before_substitution: bool,
    /// It starts inside a double-quoted string (`" > out` of `echo "$(cat a)" > out`):
    /// a reader that wants the shell's tokens reads it with that quote open.
    pub opens_quoted: bool,
}

impl<'a> Part<'a> {
    /// Its tokens ([`tokens`]).
    pub fn tokens(&self) -> Vec<Token<'a>> {
        tokens(self.text)
    }

    /// Whether the reader cannot be sure how a shell reads it: a redirection operator
    /// with no target (`2>` at its end, `>>>x`).
    pub fn unsure(&self, tokens: &[Token<'_>]) -> bool {
        tokens.iter().enumerate().any(|(i, t)| {
            t.redirect.as_ref().is_some_and(|r| {
                r.attached.is_none()
                    && match tokens.get(i + 1) {
                        None => !self.before_substitution,
                        Some(next) => next.redirect.is_some(),
                    }
            })
        })
    }
}

/// Whether the byte at `i` is escaped by an odd run of backslashes before it.
fn escaped(b: &[u8], i: usize) -> bool {
    b[..i].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
}

fn is_name_byte(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// If a named descriptor `{name}` followed by an unescaped `<` or `>` opens at `i`: the
/// index of its `}`.
fn named_descriptor(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    if i > 0
        && !matches!(
            b[i - 1],
            b' ' | b'\t' | b';' | b'&' | b'|' | b'\n' | b'(' | b')'
        )
    {
        return None;
    }
    let len = b[i + 1..].iter().take_while(|&&c| is_name_byte(c)).count();
    let close = i + 1 + len;
    let first_ok = b
        .get(i + 1)
        .is_some_and(|c| c == &b'_' || c.is_ascii_alphabetic());
    (len > 0
        && first_ok
        && b.get(close) == Some(&b'}')
        && matches!(b.get(close + 1), Some(b'<' | b'>')))
    .then_some(close)
}

/// Splits `line` into its simple commands (see the module's documentation).
pub fn parts(line: &str) -> Vec<Part<'_>> {
    let b = line.as_bytes();
    // The braces of named descriptors, which are not groupings (one flag per byte, so
    // that a line of many is still read in linear time).
    let mut kept_braces = vec![false; b.len()];
    let mut i = 0;
    while i < b.len() {
        tick(1);
        if let Some(close) = named_descriptor(b, i) {
            kept_braces[i] = true;
            kept_braces[close] = true;
            i = close;
        }
        i += 1;
    }
    let quoted = double_quoted(b);
    let mut out = Vec::new();
    let mut start = 0;
    let mut piped = false;
    for i in 0..=b.len() {
        if i < b.len() && !BOUNDARIES.contains(&b[i]) {
            continue;
        }
        if i < b.len() && keeps(b, i, &kept_braces) {
            continue;
        }
        let text = &line[start..i];
        let before_substitution =
            i < b.len() && b[i] == b'(' && text.trim_end().ends_with(['<', '>']);
        out.push(Part {
            text,
            fed: piped || before_substitution || text.contains("<<"),
            before_substitution,
            opens_quoted: quoted.get(start).copied().unwrap_or(false),
        });
        // A single `|` or `|&` feeds the next command; `||` does not.
        piped = i < b.len()
            && ((b[i] == b'|' && (i == 0 || b[i - 1] != b'|') && b.get(i + 1) != Some(&b'|'))
                || (b[i] == b'&' && i > 0 && b[i - 1] == b'|'));
        start = i + 1;
    }
    out
}

/// For each byte of `b`, whether the shell reads it inside a double-quoted string (the
/// innermost of nested `"`, `$(`, `(` and backticks being a `"`).
fn double_quoted(b: &[u8]) -> Vec<bool> {
    #[derive(PartialEq)]
    enum Ctx {
        Double,
        Paren,
        Backtick,
    }
    let mut stack: Vec<Ctx> = Vec::new();
    let mut out = vec![false; b.len()];
    let mut i = 0;
    while i < b.len() {
        let in_double = stack.last() == Some(&Ctx::Double);
        out[i] = in_double;
        match b[i] {
            b'\\' => {
                if let Some(next) = out.get_mut(i + 1) {
                    *next = in_double;
                }
                i += 1;
            }
            b'\'' if !in_double => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |p| i + 1 + p);
                i = end;
            }
            b'"' if in_double => {
                stack.pop();
            }
            b'"' => stack.push(Ctx::Double),
            b'(' if !in_double || (i > 0 && b[i - 1] == b'$') => stack.push(Ctx::Paren),
            b')' if stack.last() == Some(&Ctx::Paren) => {
                stack.pop();
            }
            b'`' if stack.last() == Some(&Ctx::Backtick) => {
                stack.pop();
            }
            b'`' => stack.push(Ctx::Backtick),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the boundary byte at `i` belongs to an operator or a word and splits nothing.
fn keeps(b: &[u8], i: usize, kept_braces: &[bool]) -> bool {
    tick(1);
    match b[i] {
        // `{}` is a word (the name `find` and `xargs -I{}` splice in), never a group.
        b'{' => b.get(i + 1) == Some(&b'}') || kept_braces[i],
        b'}' => (i > 0 && b[i - 1] == b'{') || kept_braces[i],
        // `>&`, `<&`: a duplication, not a background job; `&>`, `&>>`: bash's
        // redirection of both streams (dash's `&` then `>` is read by `command_starts`).
        b'&' => {
            (i > 0 && matches!(b[i - 1], b'<' | b'>') && !escaped(b, i - 1))
                || (b.get(i + 1) == Some(&b'>')
                    && !escaped(b, i)
                    && (i == 0 || !matches!(b[i - 1], b'&' | b'|')))
        }
        // `>|`: a clobbering `>`, not a pipe.
        b'|' => i > 0 && b[i - 1] == b'>' && !escaped(b, i - 1),
        _ => false,
    }
}

/// The texts of the simple commands of `line` ([`parts`]).
pub fn simple_commands(line: &str) -> impl Iterator<Item = &str> {
    parts(line).into_iter().map(|p| p.text)
}

/// A redirection token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The descriptor as written (`2`, `{fd}`), empty when none.
    pub fd: String,
    /// The operator.
    pub op: Op,
    /// The target attached to the operator (`>log`, `2>&1`), quotes removed; `None` when
    /// the target is the next word.
    pub attached: Option<String>,
}

/// One token of a simple command: a word, a redirection (its operator and any attached
/// target as one word) or the target word of the redirection before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// The token's text after quote removal.
    pub word: Word<'a>,
    /// For a redirection, what it is.
    pub redirect: Option<Redirect>,
    /// The token is the target of the redirection before it.
    pub target: bool,
}

impl Token<'_> {
    /// Whether this token is a word of the command (not a redirection or its target).
    pub fn is_word(&self) -> bool {
        self.redirect.is_none() && !self.target
    }
}

/// The end of the word that starts at `i`: the first unquoted blank or `<` `>`.
fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'<' | b'>' => return i,
            b'\\' => i += 2,
            b'\'' => {
                i = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |p| i + p + 2)
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// If a redirection starts at `i`: the end of its descriptor, its operator and the end of
/// the operator.
fn operator_at(b: &[u8], i: usize) -> Option<(usize, Op, usize)> {
    let mut j = i;
    if b[j].is_ascii_digit() {
        j += b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    } else if b[j] == b'{' {
        let len = b[j + 1..].iter().take_while(|&&c| is_name_byte(c)).count();
        if len > 0 && b.get(j + 1 + len) == Some(&b'}') {
            j += len + 2;
        }
    }
    let rest = &b[j..];
    let (text, op) = OPS.iter().find(|(t, _)| rest.starts_with(t.as_bytes()))?;
    if op_is_amp(*op) && j != i {
        return None;
    }
    Some((j, *op, j + text.len()))
}

fn op_is_amp(op: Op) -> bool {
    matches!(op, Op::OutErr | Op::AppendErr)
}

/// The word `Words` reads from `text` (one span, so at most one word), or an empty one.
fn one_word(text: &str) -> Word<'_> {
    let mut words = Words::lenient(text).filter_map(Result::ok);
    let first = words.next().unwrap_or(Word {
        text: Cow::Borrowed(""),
        glob: false,
        tilde: false,
    });
    match words.next() {
        None => first,
        // A span holding a quoted blank reads as one word; anything else is joined.
        Some(second) => {
            let mut s = first.text.into_owned();
            s.push(' ');
            s.push_str(&second.text);
            for w in words {
                s.push(' ');
                s.push_str(&w.text);
            }
            Word {
                text: Cow::Owned(s),
                glob: first.glob || second.glob,
                tilde: first.tilde,
            }
        }
    }
}

/// Reads the tokens of one simple command leniently (quotes closed at its end).
pub fn tokens(text: &str) -> Vec<Token<'_>> {
    let b = text.as_bytes();
    let mut out: Vec<Token<'_>> = Vec::new();
    let mut i = 0;
    let mut wants_target = false;
    while i < b.len() {
        if matches!(b[i], b' ' | b'\t') {
            i += 1;
            continue;
        }
        let start = i;
        if let Some((fd_end, op, op_end)) = operator_at(b, i) {
            let end = word_end(b, op_end);
            let attached = (end > op_end).then(|| one_word(&text[op_end..end]).text.into_owned());
            wants_target = attached.is_none();
            out.push(Token {
                word: one_word(&text[start..end]),
                redirect: Some(Redirect {
                    fd: text[start..fd_end].to_string(),
                    op,
                    attached,
                }),
                target: false,
            });
            i = end.max(op_end);
            continue;
        }
        // A digit run or `{name}` not followed by an operator is a word; so is a lone
        // `<`/`>` the table does not know (there is none: `<` and `>` are operators).
        let end = word_end(b, i).max(i + 1);
        let word = one_word(&text[start..end]);
        out.push(Token {
            word,
            redirect: None,
            target: std::mem::take(&mut wants_target),
        });
        i = end;
    }
    out
}

/// Reserved words after which the next word is the command.
pub const RESERVED: [&str; 10] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "time", "coproc",
];

/// Whether `word` is an assignment (`NAME=value`).
pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// The index of the command word at or after `from`: past redirections and their
/// targets, assignments, and the reserved words that may precede a command (`time -p`
/// with its option). `tokens.len()` when there is none.
pub fn command_index(tokens: &[Token<'_>], from: usize) -> usize {
    let mut i = from;
    while let Some(t) = tokens.get(i) {
        tick(1);
        let w = t.word.as_str();
        if !t.is_word() || is_assignment(w) || RESERVED.contains(&w) {
            i += 1;
            if w == "time" && tokens.get(i).is_some_and(|t| t.word.as_str() == "-p") {
                i += 1;
            }
        } else {
            break;
        }
    }
    i
}

/// Every index at which a command may start in `tokens`: the command word as bash reads
/// the simple command, then, after each `&>` or `&>>`, the command word as `dash` reads
/// what follows (`a &>f b`: `a &` and then `>f b`).
///
/// Linear in the tokens: the command word at or after each index is found in one pass
/// from the end (a run of `&>f` once cost a walk to the end from each).
pub fn command_starts(tokens: &[Token<'_>]) -> Vec<usize> {
    let mut starts = Vec::new();
    let first = command_index(tokens, 0);
    if first < tokens.len() {
        starts.push(first);
    }
    if !tokens
        .iter()
        .any(|t| t.redirect.as_ref().is_some_and(|r| op_is_amp(r.op)))
    {
        return starts;
    }
    // at[k]: command_index(tokens, k), for every k, from the end.
    let mut at = vec![tokens.len(); tokens.len() + 2];
    for k in (0..tokens.len()).rev() {
        tick(1);
        let t = &tokens[k];
        let w = t.word.as_str();
        at[k] = if !t.is_word() || is_assignment(w) || RESERVED.contains(&w) {
            if w == "time" && tokens.get(k + 1).is_some_and(|t| t.word.as_str() == "-p") {
                at[k + 2]
            } else {
                at[k + 1]
            }
        } else {
            k
        };
    }
    let mut seen = vec![false; tokens.len()];
    if let Some(&f) = starts.first() {
        seen[f] = true;
    }
    for (k, t) in tokens.iter().enumerate() {
        if t.redirect.as_ref().is_some_and(|r| op_is_amp(r.op)) {
            let s = at[k];
            if s < tokens.len() && !seen[s] {
                seen[s] = true;
                starts.push(s);
            }
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn texts(line: &str) -> Vec<&str> {
        simple_commands(line).collect()
    }

    #[rstest]
    #[case("2>&1 rm x", &["2>&1 rm x"])]
    #[case(">&2 rm x", &[">&2 rm x"])]
    #[case("2>&- rm x", &["2>&- rm x"])]
    #[case("<&0 rm x", &["<&0 rm x"])]
    #[case(">|log rm x", &[">|log rm x"])]
    #[case("{fd}>log rm x", &["{fd}>log rm x"])]
    #[case("find . -exec rm {} +", &["find . -exec rm {} +"])]
    #[case("a &>f b", &["a &>f b"])]
    #[case("a && >f b", &["a ", "", " >f b"])]
    #[case("a |& b", &["a ", "", " b"])]
    #[case("a && b || c; d | e & f", &["a ", "", " b ", "", " c", " d ", " e ", " f"])]
    #[case("echo \\>&rm x", &["echo \\>", "rm x"])]
    #[case("echo \\>|rm x", &["echo \\>", "rm x"])]
    #[case("echo \\\\>&rm x", &["echo \\\\>&rm x"])]
    #[case("{ rm x; }", &["", " rm x", " ", ""])]
    #[case("a{fd}>x", &["a", "fd", ">x"])]
    fn splits_outside_operators(#[case] line: &str, #[case] expected: &[&str]) {
        assert_eq!(texts(line), expected);
    }

    fn shape(part: &str) -> Vec<String> {
        tokens(part)
            .iter()
            .map(|t| match &t.redirect {
                Some(r) => format!(
                    "[{}{}{}]",
                    r.fd,
                    r.op.text(),
                    r.attached.as_deref().unwrap_or("")
                ),
                None if t.target => format!("<{}>", t.word.as_str()),
                None => t.word.as_str().to_string(),
            })
            .collect()
    }

    #[rstest]
    #[case("2>&1 rm x", &["[2>&1]", "rm", "x"])]
    #[case("2> log rm x", &["[2>]", "<log>", "rm", "x"])]
    #[case("echo hi>out", &["echo", "hi", "[>out]"])]
    #[case("echo hi 2>>err <in", &["echo", "hi", "[2>>err]", "[<in]"])]
    #[case("<<- EOF rm x", &["[<<-]", "<EOF>", "rm", "x"])]
    #[case("<<<'a b' rm x", &["[<<<a b]", "rm", "x"])]
    #[case("{fd}>log rm x", &["[{fd}>log]", "rm", "x"])]
    #[case("3<>f x", &["[3<>f]", "x"])]
    #[case("&>>f x", &["[&>>f]", "x"])]
    #[case("echo '>' \">\" \\> x", &["echo", ">", ">", ">", "x"])]
    #[case("echo a2>x", &["echo", "a2", "[>x]"])]
    #[case(">'a b' x", &["[>a b]", "x"])]
    fn reads_redirections(#[case] part: &str, #[case] expected: &[&str]) {
        assert_eq!(shape(part), expected);
    }

    #[rstest]
    #[case("2>&1 rm x", "rm")]
    #[case("X=1 >log Y=2 rm x", "rm")]
    #[case("! time -p rm x", "rm")]
    #[case("coproc rm x", "rm")]
    #[case("<<- EOF rm x", "rm")]
    #[case("> rm x", "x")]
    fn finds_the_command_word(#[case] part: &str, #[case] word: &str) {
        let t = tokens(part);
        assert_eq!(t[command_index(&t, 0)].word.as_str(), word);
    }

    #[test]
    fn both_readings_of_amp_greater() {
        let t = tokens("a &>f b c");
        let words: Vec<&str> = command_starts(&t)
            .into_iter()
            .map(|i| t[i].word.as_str())
            .collect();
        assert_eq!(words, ["a", "b"]);
    }

    #[rstest]
    #[case("echo hi 2>", true)]
    #[case("echo hi >>>x", true)]
    #[case("echo hi >> x", false)]
    #[case("cat <", false)]
    fn unsure_redirections(#[case] line: &str, #[case] unsure: bool) {
        let line = if line == "cat <" { "cat <(ls)" } else { line };
        let p = parts(line)[0];
        assert_eq!(p.unsure(&p.tokens()), unsure, "{line}");
    }

    #[test]
    fn knows_which_parts_open_inside_a_double_quote() {
        let quoted: Vec<bool> = parts("echo \"$(cat a)\" > out; echo 'a;b'")
            .iter()
            .map(|p| p.opens_quoted)
            .collect();
        assert_eq!(quoted, [false, false, true, false, false]);
    }

    #[rstest]
    #[case(Op::DupOut, "1", false)]
    #[case(Op::DupOut, "-", false)]
    #[case(Op::DupOut, "file", true)]
    #[case(Op::Clobber, "f", true)]
    #[case(Op::In, "f", false)]
    #[case(Op::HereString, "f", false)]
    fn what_writes(#[case] op: Op, #[case] target: &str, #[case] writes: bool) {
        assert_eq!(op.writes(target), writes);
    }
}
