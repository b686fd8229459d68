//! The dangerous list (GATE-DANGER-1 to -10): whether a shell line holds a recursive
//! delete (`rm` with a recursive flag, or `find ... -delete`) anywhere it could run, or is
//! built so that the gate cannot rule one out.
//!
//! Pure text processing over the line: touches no file. It errs toward finding a delete
//! where there is none, because a false hit only makes the gate ask (and withhold both
//! keys), while a miss could let a saved grant run it unasked.

use super::lists::{basename, class, classify};
use super::syntax::{command_starts, parts, Op, Token};
use super::words::Word;
use super::work::tick;
use std::borrow::Cow;

/// How deep quoted arguments are re-read as command lines before the scan gives up and
/// calls the line dangerous.
const MAX_DEPTH: usize = 8;

/// The most words one brace expansion may produce before the respelled reading is
/// refused (and the line called dangerous): the gate reads what it can, not a bomb.
const MAX_BRACE_WORDS: usize = 256;

/// Whether `line` is on the dangerous list.
///
/// The scan reads the line twice, as written and as the shell respells it
/// ([`shell_spelling`], GATE-DANGER-6), and in each reading:
/// 1. turns backticks into `$(`...`)` and splits the line into simple commands
///    ([`super::syntax::parts`]) at every `;` `&` `|` newline, carriage return, `(` `)`,
///    `{` `}`, quoted or not (never inside a redirection operator: `2>&1`, `>|`),
///    remembering which ones a pipe, a here-string, a here-document or a process
///    substitution feeds;
/// 2. reads each leniently with quote removal through [`super::syntax`] (redirections,
///    their targets, leading assignments and reserved words skipped to the command word),
///    and calls the line dangerous when:
///    - a redirection has no target: the gate cannot be sure how a shell reads it;
///    - the command word holds an expansion (`$`, a backtick, an unquoted glob): the
///      gate cannot know what runs (GATE-DANGER-9);
///    - **any** word is `rm` (by last component, after `/`, `=` or `!`, any ASCII case,
///      or a glob that can match it) followed by a recursive flag before `--`, or by a
///      word the shell expands that could become one (GATE-DANGER-7, -8), or `find` is
///      followed by `-delete` (or a glob or expansion that could become it);
///    - a word after a wrapper holds an expansion (`sudo $x`, `sh -c "$x"`);
///    - an interpreter other than a shell is given inline code (`python3 -c`, `perl -e`),
///      or an `awk` program can run a command (GATE-DANGER-10);
///    - a shell, interpreter or `parallel` reads its program from a pipe, a here-string,
///      a here-document or a process substitution (`echo ... | sh`, `bash <(...)`);
///    - `xargs` or `parallel` builds an `rm` line from its input with no `--`, or it (or
///      `find`) splices names into a command line (`xargs -I{} sh -c '... {}'`, or the
///      replace string `xargs -I%` names);
/// 3. reads every word holding a blank again as a command line, of any command
///    (`git rebase -x 'rm -rf x'`, `git -c alias.x='!rm -rf .'`).
///
/// **Choice:** every argument of every command counts, because the gate does not know
/// which arguments a program runs (`git rebase -x`, `uv run`, `ssh host`): `echo rm -rf x`,
/// `grep rm -r .` and `git commit -m "rm -rf build"` are dangerous, which only asks.
pub fn is_dangerous(line: &str) -> bool {
    if !may_be_dangerous(line) {
        return false;
    }
    if scan(line, 0) {
        return true;
    }
    match shell_spelling(line) {
        Spelling::Same => false,
        Spelling::Respelled(spelled) => scan(&spelled, 0),
        Spelling::TooLarge => true,
    }
}

/// A cheap filter, sound for every rule of the scan: a line can only be dangerous if it
/// holds a byte that quotes, expands, pipes, redirects or opens an extended glob (`$`
/// backtick `*` `?` `[` `|` `<` `>` `{` `(` quotes, backslash), the letters `rm` in any
/// case (every word that may run as `rm` ends so), `fd` or `stdin` in any case (every
/// descriptor path holds one, GATE-DANGER-11), `-delete`, or a word naming an interpreter (inline code needs no
/// quotes: `python3 -c print(1)`). Most lines an agent proposes hold none of them.
fn may_be_dangerous(line: &str) -> bool {
    let b = line.as_bytes();
    if b.iter().any(|c| b"$`*?[|<>{('\"\\".contains(c)) {
        return true;
    }
    if b.windows(2)
        .any(|w| w.eq_ignore_ascii_case(b"rm") || w.eq_ignore_ascii_case(b"fd"))
        || b.windows(5).any(|w| w.eq_ignore_ascii_case(b"stdin"))
        || line.contains("-delete")
    {
        return true;
    }
    line.split_ascii_whitespace().any(|token| {
        let name = basename(token);
        let bits = if name.bytes().any(|c| c.is_ascii_uppercase()) {
            classify(&name.to_ascii_lowercase())
        } else {
            classify(name)
        };
        bits & class::INTERPRETER != 0
    })
}

/// The line as the shell respells it, when it differs.
enum Spelling {
    /// Nothing to respell.
    Same,
    /// The respelled line.
    Respelled(String),
    /// A brace expansion too large to read.
    TooLarge,
}

/// The line as a POSIX shell respells it before it runs (GATE-DANGER-6), or `None` when
/// the line holds nothing it would respell or a brace expansion too large to read (the
/// dangerous list already asks for that one): the permission patterns read this spelling
/// too (PERM-SHELL-5).
pub fn respell(line: &str) -> Option<String> {
    match shell_spelling(line) {
        Spelling::Respelled(spelled) => Some(spelled),
        Spelling::Same | Spelling::TooLarge => None,
    }
}

/// The line respelled the way a POSIX shell (bash) reads a few constructs that the plain
/// word reader does not: a backslash-newline continuation vanishes (`rm \<newline>-rf x`),
/// `$IFS` and `${IFS...}` become a space (`rm${IFS}-rf${IFS}x`), an ANSI-C quote
/// `$'...'` becomes the single-quoted text it decodes to (`$'\x72m' -r x`), `$"..."`
/// a plain double quote, and a brace expansion the words it expands to (`{r,}m -rf x`,
/// `rm -{r,f} x`, GATE-DANGER-8).
///
/// **Choice:** the scan reads the line both as written and respelled, and calls it
/// dangerous if either reading holds a delete: a respelling that is wrong for some shell
/// can then only make the gate ask more.
fn shell_spelling(line: &str) -> Spelling {
    if !line.contains("\\\n") && !line.contains(['$', '{', '(']) {
        return Spelling::Same;
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("\\\n") {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("${IFS") {
            out.push(' ');
            rest = after.find('}').map_or("", |i| &after[i + 1..]);
        } else if let Some(after) = rest
            .strip_prefix("$IFS")
            .filter(|a| !a.starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric()))
        {
            out.push(' ');
            rest = after;
        } else if let Some(after) = rest.strip_prefix("$'") {
            let (text, after) = ansi_c(after);
            out.push('\'');
            out.push_str(&text.replace('\'', "'\\''"));
            out.push('\'');
            rest = after;
        } else if let Some(after) = rest.strip_prefix("$\"") {
            out.push('"');
            rest = after;
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if let Some(starred) = extglob_as_star(&out) {
        out = starred;
    }
    if out.contains('{') {
        match expand_braces(&out) {
            Some(expanded) => out = expanded,
            None => return Spelling::TooLarge,
        }
    }
    if out == line {
        Spelling::Same
    } else {
        Spelling::Respelled(out)
    }
}

/// The most bytes the respelled line may hold, for a line of `len` bytes: a brace
/// expansion past it is refused (and the line called dangerous) like one past
/// [`MAX_BRACE_WORDS`], so that the respelled reading stays linear in the line
/// (GATE-DANGER-12).
fn max_brace_bytes(len: usize) -> usize {
    8 * len + 4096
}

/// Expands the brace expansions of every word of `line`, bash style: `{a,b}` alternatives
/// and `{x..y}` sequences of integers or single characters, nested, with prefix and
/// suffix. A word ends at an unquoted blank, newline or operator (`;` `&` `|` `<` `>` `(`
/// `)`), so a quoted blank stays inside it (`{sh,-c,'rm -rf x'}`, GATE-DANGER-8) and
/// `{rm,-rf,x};` expands before the `;`. The braces and commas themselves are found
/// quote-blind (`sh -c 'rm -{r,f} x'` is expanded too), which can only add readings.
/// `None` past [`MAX_BRACE_WORDS`] words or [`max_brace_bytes`].
///
/// Linear: each word is parsed once with a stack of open braces (never rescanned from
/// each `{`), its expansion is counted before it is built, and it is built only when the
/// count and the bytes fit.
fn expand_braces(line: &str) -> Option<String> {
    let mut budget = Budget {
        words: MAX_BRACE_WORDS,
        bytes: max_brace_bytes(line.len()),
    };
    let mut out = String::with_capacity(line.len());
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let end = brace_word_end(b, i);
        if end == i {
            out.push(b[i] as char);
            i += 1;
            continue;
        }
        let word = &line[i..end];
        if word.contains('{') {
            expand_word(word, &mut out, &mut budget)?;
        } else {
            out.push_str(word);
        }
        if out.len() > budget.bytes {
            return None;
        }
        i = end;
    }
    Some(out)
}

/// What a line's brace expansions may still produce.
struct Budget {
    words: usize,
    bytes: usize,
}

/// The end of the word starting at `i` for brace expansion: the first unquoted blank,
/// newline or operator byte (`i` itself when `b[i]` is one).
fn brace_word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        tick(1);
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => {
                return i
            }
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
                    tick(1);
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// One piece of a word under brace expansion.
enum Piece {
    /// Literal bytes of the word.
    Lit(usize, usize),
    /// A `{` not (yet) known to open an expansion.
    Open(usize),
    /// A `,` at the top of the innermost open brace.
    Comma(usize),
    /// An expansion's alternatives.
    Group(Vec<Vec<Piece>>),
    /// A sequence's items.
    Items(Vec<String>),
}

/// An open brace while a word is parsed.
struct Frame {
    /// Where its pieces start (its [`Piece::Open`]).
    start: usize,
    /// Its byte in the word.
    open: usize,
    /// `${`: a parameter expansion, never a brace expansion.
    param: bool,
    /// A top-level comma was seen.
    comma: bool,
}

/// Expands one word into `out` (its words separated by spaces), or `None` when the
/// budget does not hold them.
fn expand_word(word: &str, out: &mut String, budget: &mut Budget) -> Option<()> {
    let b = word.as_bytes();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let lit = |pieces: &mut Vec<Piece>, i: usize| match pieces.last_mut() {
        Some(Piece::Lit(_, end)) if *end == i => *end = i + 1,
        _ => pieces.push(Piece::Lit(i, i + 1)),
    };
    for (i, &c) in b.iter().enumerate() {
        tick(1);
        match c {
            b'{' => {
                stack.push(Frame {
                    start: pieces.len(),
                    open: i,
                    param: i > 0 && b[i - 1] == b'$',
                    comma: false,
                });
                pieces.push(Piece::Open(i));
            }
            b',' if stack.last().is_some_and(|f| !f.param) => {
                if let Some(f) = stack.last_mut() {
                    f.comma = true;
                }
                pieces.push(Piece::Comma(i));
            }
            b'}' => {
                let Some(frame) = stack.pop() else {
                    lit(&mut pieces, i);
                    continue;
                };
                let body = &word[frame.open + 1..i];
                if frame.param {
                    lit(&mut pieces, i);
                } else if frame.comma {
                    // Every brace inside is closed, so every comma left is this one's.
                    let mut alternatives = vec![Vec::new()];
                    for piece in pieces.drain(frame.start + 1..) {
                        tick(1);
                        match piece {
                            Piece::Comma(_) => alternatives.push(Vec::new()),
                            other => alternatives.last_mut()?.push(other),
                        }
                    }
                    pieces.truncate(frame.start);
                    pieces.push(Piece::Group(alternatives));
                } else if let Some(items) = (body.len() <= 64).then(|| sequence(body)).flatten() {
                    pieces.truncate(frame.start);
                    pieces.push(Piece::Items(items));
                } else {
                    lit(&mut pieces, i);
                }
            }
            _ => lit(&mut pieces, i),
        }
    }
    let mut work = 0usize;
    let (count, bytes) = measure_pieces(&pieces, &mut work);
    if count > budget.words || bytes > budget.bytes || work > budget.bytes {
        return None;
    }
    if count > 1 {
        budget.words -= count;
    }
    for (k, w) in build(&pieces, word).iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
    Some(())
}

/// The number of words `pieces` expand to and their bytes in all, saturating; `work`
/// adds the bytes every nested expansion builds on the way.
fn measure_pieces(pieces: &[Piece], work: &mut usize) -> (usize, usize) {
    let mut acc = (1usize, 0usize);
    for piece in pieces {
        tick(1);
        let (c, b) = match piece {
            Piece::Lit(s, e) => (1, e - s),
            Piece::Open(_) | Piece::Comma(_) => (1, 1),
            Piece::Items(items) => (items.len(), items.iter().map(String::len).sum()),
            Piece::Group(alternatives) => {
                let mut sum = (0usize, 0usize);
                for alternative in alternatives {
                    let (c, b) = measure_pieces(alternative, work);
                    sum = (sum.0.saturating_add(c), sum.1.saturating_add(b));
                }
                *work = work.saturating_add(sum.1);
                sum
            }
        };
        acc = (
            acc.0.saturating_mul(c),
            acc.1
                .saturating_mul(c)
                .saturating_add(b.saturating_mul(acc.0)),
        );
    }
    acc
}

/// The words `pieces` expand to (measured first: see [`measure_pieces`]).
fn build(pieces: &[Piece], word: &str) -> Vec<String> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let choices: Vec<String> = match piece {
            Piece::Lit(s, e) => {
                words.iter_mut().for_each(|w| w.push_str(&word[*s..*e]));
                continue;
            }
            Piece::Open(i) | Piece::Comma(i) => {
                words.iter_mut().for_each(|w| w.push_str(&word[*i..*i + 1]));
                continue;
            }
            Piece::Items(items) => items.clone(),
            Piece::Group(alternatives) => {
                alternatives.iter().flat_map(|a| build(a, word)).collect()
            }
        };
        if let [only] = choices.as_slice() {
            words.iter_mut().for_each(|w| w.push_str(only));
            continue;
        }
        words = words
            .iter()
            .flat_map(|w| choices.iter().map(move |c| format!("{w}{c}")))
            .collect();
    }
    words
}

/// The line with every extended glob group (`@(...)`, `!(...)`, `+(...)`, `*(...)`,
/// `?(...)`, outside quotes) read as `*`, a glob that matches whatever the group can
/// (GATE-DANGER-9, -13): bash reads `r@(m)` as a pattern when `extglob` is on, which a
/// line may switch on itself (`shopt -s extglob` and a newline) and some modes do by
/// default. `None` when the line holds none. One pass with a stack of parentheses.
fn extglob_as_star(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut open_groups = 0usize;
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        tick(1);
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'(' if !single && !double => {
                let glob = i > 0
                    && matches!(b[i - 1], b'@' | b'!' | b'+' | b'*' | b'?')
                    && !(i > 1 && b[i - 2] == b'\\');
                if glob {
                    open_groups += 1;
                }
                stack.push(if glob { Some(i - 1) } else { None });
            }
            b')' if !single && !double => {
                if let Some(Some(from)) = stack.pop() {
                    open_groups -= 1;
                    if open_groups == 0 {
                        spans.push((from, i + 1));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for (from, to) in spans {
        out.push_str(&line[at..from]);
        out.push('*');
        at = to;
    }
    out.push_str(&line[at..]);
    Some(out)
}

/// The items of a brace sequence body `x..y[..step]`, or `None` when it is not one.
fn sequence(body: &str) -> Option<Vec<String>> {
    let mut parts = body.split("..");
    let (a, b) = (parts.next()?, parts.next()?);
    let step: i128 = match parts.next() {
        Some(s) => s.parse::<i64>().ok()?.unsigned_abs().max(1).into(),
        None => 1,
    };
    if parts.next().is_some() {
        return None;
    }
    let (x, y, chars) = match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => (i128::from(x), i128::from(y), false),
        _ => {
            let (mut ca, mut cb) = (a.chars(), b.chars());
            match (ca.next(), ca.next(), cb.next(), cb.next()) {
                (Some(x), None, Some(y), None) => {
                    (i128::from(u32::from(x)), i128::from(u32::from(y)), true)
                }
                _ => return None,
            }
        }
    };
    let count = (x - y).abs() / step + 1;
    if count > MAX_BRACE_WORDS as i128 {
        return Some(vec![String::new(); MAX_BRACE_WORDS + 1]);
    }
    let dir = if y >= x { step } else { -step };
    Some(
        (0..count)
            .map(|k| {
                let v = x + k * dir;
                if chars {
                    u32::try_from(v)
                        .ok()
                        .and_then(char::from_u32)
                        .map(String::from)
                        .unwrap_or_default()
                } else {
                    v.to_string()
                }
            })
            .collect(),
    )
}

/// Decodes the body of an ANSI-C quote up to its closing `'` (or the end of the line);
/// returns the text and what follows the quote.
fn ansi_c(body: &str) -> (String, &str) {
    let mut text = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return (text, &body[i + 1..]),
            '\\' => {
                let Some((_, e)) = chars.next() else {
                    break;
                };
                let (radix, max) = match e {
                    'x' => (16, 2),
                    'u' => (16, 4),
                    'U' => (16, 8),
                    '0'..='7' => (8, 2),
                    _ => (0, 0),
                };
                if radix == 0 {
                    text.push(match e {
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'e' | 'E' => '\u{1b}',
                        'f' => '\u{c}',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'v' => '\u{b}',
                        'c' => match chars.next() {
                            Some((_, x)) => char::from((x as u8) & 0x1f),
                            None => break,
                        },
                        other => other,
                    });
                    continue;
                }
                let mut value = if radix == 8 {
                    e.to_digit(8).unwrap_or(0)
                } else {
                    0
                };
                let mut taken = 0;
                while taken < max {
                    match chars.peek().and_then(|&(_, d)| d.to_digit(radix)) {
                        Some(d) => {
                            value = value.wrapping_mul(radix).wrapping_add(d);
                            chars.next();
                            taken += 1;
                        }
                        None => break,
                    }
                }
                text.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            }
            c => text.push(c),
        }
    }
    (text, "")
}

/// Backticks read as `$(` and `)`, alternately, so that a substitution in backticks is a
/// `$` word like `$(...)`.
fn backticks_as_substitutions(line: &str) -> Cow<'_, str> {
    if !line.contains('`') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut open = false;
    for c in line.chars() {
        if c == '`' {
            out.push_str(if open { ")" } else { "$(" });
            open = !open;
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn scan(line: &str, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let line = backticks_as_substitutions(line);
    let mut awk_runs: Option<bool> = None;
    let mut words: Vec<Word<'_>> = Vec::new();
    // GATE-DANGER-11: a word naming a descriptor, and a program that may read one.
    let (mut names_descriptor, mut runs_program) = (false, false);
    for part in parts(&line) {
        let tokens = part.tokens();
        tick(part.text.len() + 1);
        // A redirection the reader cannot place: a shell would not read it as the gate
        // does (GATE-DANGER-9).
        if part.unsure(&tokens) {
            return true;
        }
        let starts = command_starts(&tokens);
        names_descriptor |= tokens.iter().any(|t| names_a_descriptor(t.word.as_str()));
        let Some(&start) = starts.first() else {
            continue;
        };
        // The gate cannot know what a command word with an expansion runs.
        if starts.iter().any(|&s| is_expansion(&tokens[s].word)) {
            return true;
        }
        // Standard input duplicated from another descriptor (`bash <&3`) feeds it too.
        let fed = part.fed
            || tokens.iter().any(|t| {
                t.redirect
                    .as_ref()
                    .is_some_and(|r| r.op == Op::DupIn && (r.fd.is_empty() || r.fd == "0"))
            });
        words.clear();
        words.extend(tokens.iter().map(|t| t.word.clone()));
        let after = Suffixes::of(&words, &tokens);
        let mut wrapped = false;
        let mut spreads = false; // an `xargs` or `parallel` builds the rest from its input
        let mut splices = false; // ... or a `find`, which splices names for `{}`
        let mut replace: Option<String> = None; // `xargs -I REPLACE`
                                                // Every word counts, assignments too (`make CLEAN='rm -rf x'` re-read).
        for i in 0..words.len() {
            tick(1);
            let word = &words[i];
            let text = word.as_str();
            let blank = text.contains([' ', '\t', '\n']);
            // A word with a blank is code of its own, read again below.
            if wrapped && !blank && text.contains('$') {
                return true;
            }
            if is_rm_word(word) && after.rm[i + 1].unwrap_or(spreads) {
                return true;
            }
            let name = command_name(text);
            if name == "find" && after.find_deletes[i + 1] {
                return true;
            }
            if splices
                && blank
                && (text.contains("{}")
                    || replace
                        .as_deref()
                        .is_some_and(|r| r.len() <= text.len() && text.contains(r)))
            {
                return true;
            }
            if spreads && replace.is_none() {
                replace = replace_string(text, &words[i + 1..]);
            }
            let bits = classify(&name);
            if bits & class::AWK != 0 {
                if *awk_runs.get_or_insert_with(|| awk_may_run(&line)) {
                    return true;
                }
            } else if bits & (class::INTERPRETER | class::SHELL) == class::INTERPRETER
                && after.inline_code[i + 1]
            {
                return true;
            }
            let command_position = i == start || (i > start && wrapped);
            runs_program |= bits & (class::INTERPRETER | class::SHELL | class::AWK) != 0
                || name == "sed"
                || (command_position && matches!(name.as_ref(), "source" | "."));
            if fed
                && command_position
                && reads_program_from_input(&name, bits, after.stdin[i + 1], after.operand[i + 1])
            {
                return true;
            }
            // A here-string's or redirection's attached text is read again on its own
            // (`3<<<'rm -rf x'`), without its operator.
            let again = tokens[i]
                .redirect
                .as_ref()
                .and_then(|r| r.attached.as_deref())
                .unwrap_or(text);
            if again.contains([' ', '\t', '\n']) && scan(again, depth + 1) {
                return true;
            }
            if i >= start && bits & class::WRAPPER != 0 {
                wrapped = true;
            }
            if matches!(name.as_ref(), "xargs" | "parallel" | "sem") {
                spreads = true;
            }
            splices |= spreads || name == "find";
        }
    }
    names_descriptor && runs_program
}

/// What the words from each index on hold, for the rules that look at the words after
/// one (computed once per simple command from its end, so that a command of many `rm`,
/// `find` or interpreter words is read in linear time, GATE-DANGER-12). Each vector has
/// one entry per word and one for the empty rest.
struct Suffixes {
    /// The first word that decides [`rm_arg`]: `Some(true)` a recursive flag or a word
    /// that may become one, `Some(false)` a bare `--`, `None` neither.
    rm: Vec<Option<bool>>,
    /// A word makes `find` delete ([`find_arg`]).
    find_deletes: Vec<bool>,
    /// A word gives an interpreter inline code ([`inline_arg`]).
    inline_code: Vec<bool>,
    /// A word names standard input (`-`, `-s`, `/dev/stdin`, ...).
    stdin: Vec<bool>,
    /// A token is an operand: a word that is neither an option nor a redirection.
    operand: Vec<bool>,
}

impl Suffixes {
    fn of(words: &[Word<'_>], tokens: &[Token<'_>]) -> Self {
        let n = words.len();
        let mut s = Suffixes {
            rm: vec![None; n + 1],
            find_deletes: vec![false; n + 1],
            inline_code: vec![false; n + 1],
            stdin: vec![false; n + 1],
            operand: vec![false; n + 1],
        };
        for i in (0..n).rev() {
            tick(1);
            let (w, t) = (&words[i], &tokens[i]);
            let text = w.as_str();
            s.rm[i] = rm_arg(w).or(s.rm[i + 1]);
            s.find_deletes[i] = find_arg(w) || s.find_deletes[i + 1];
            s.inline_code[i] = inline_arg(text) || s.inline_code[i + 1];
            s.stdin[i] = is_stdin_word(t.word.as_str()) || s.stdin[i + 1];
            s.operand[i] = (t.is_word() && !t.word.as_str().starts_with('-')) || s.operand[i + 1];
        }
        s
    }
}

/// Whether `text` names a descriptor or standard input as a path (GATE-DANGER-11): one
/// of its pieces (cut at blanks, `=`, `:`, `,` and redirection operators, so that
/// `BASH_ENV=/dev/fd/3`, `--rcfile=/dev/stdin` and `0</dev/stdin` count) holds a `/` and,
/// read as a path with `.`, empty and `..` components dropped, has a component `stdin`
/// or `fd` in any ASCII case: `/dev/stdin`, `//dev/fd/3`, `/dev/./fd/3`,
/// `/proc/self/fd/0`, `/proc/thread-self/fd/3`, `/proc/1/fd/3`, `fd/3` after `cd /dev`.
fn names_a_descriptor(text: &str) -> bool {
    text.split([' ', '\t', '\n', '=', ':', ',', '<', '>', '&', '|', ';'])
        .filter(|piece| piece.contains('/'))
        .any(|piece| {
            piece.split('/').any(|c| {
                tick(1);
                c.eq_ignore_ascii_case("stdin") || c.eq_ignore_ascii_case("fd")
            })
        })
}

/// Whether a word names standard input for a program that reads one: `-`, `-s`, or a
/// descriptor path ([`names_a_descriptor`]).
fn is_stdin_word(text: &str) -> bool {
    text == "-" || text == "-s" || names_a_descriptor(text)
}

/// The last path component of a command word, lower-cased (a case-insensitive
/// filesystem runs `RM` as `rm`).
fn command_name(word: &str) -> Cow<'_, str> {
    let name = basename(word);
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// Whether a word holds something the shell expands into text the gate does not see: a
/// `$` (variable, substitution, arithmetic) or an unquoted glob character.
fn is_expansion(word: &Word<'_>) -> bool {
    word.glob || word.text.contains('$')
}

/// Whether `word` may run as `rm` (or GNU's `grm`, or `srm`): its text after the last
/// `/`, `=` or `!` is one of them in any ASCII case (`/bin/rm`, `--exec=rm`,
/// `alias.x=!rm`), a single-dash word ends in one (`-xrm`, an attached value), or it
/// holds an unquoted glob that can match one (`r[m]`, `r?`, `*`).
fn is_rm_word(word: &Word<'_>) -> bool {
    let text = word.as_str();
    let tail = text.rsplit(['/', '=', '!']).next().unwrap_or(text);
    if RM_NAMES.iter().any(|name| tail.eq_ignore_ascii_case(name)) {
        return true;
    }
    let b = text.as_bytes();
    if b.len() > 3 && b[0] == b'-' && b[1] != b'-' && b[b.len() - 2..].eq_ignore_ascii_case(b"rm") {
        return true;
    }
    word.glob && {
        let lower = tail.to_ascii_lowercase();
        RM_NAMES
            .iter()
            .any(|name| glob_matches(lower.as_bytes(), name.as_bytes()))
    }
}

/// The names of a recursive-capable `rm`.
const RM_NAMES: [&str; 3] = ["rm", "grm", "srm"];

/// What one word after an `rm` says about a recursive delete: `Some(true)` when it is a
/// recursive flag or a word the shell expands that may become one (a `$`, or a glob not
/// starting with a literal character other than `-`), `Some(false)` when it is a bare
/// `--` (the rest are operands), `None` otherwise. The line is dangerous when the first
/// deciding word is `Some(true)`, or, when `xargs` or `parallel` builds the line, when
/// there is none (its input may hold `-rf`).
///
/// **Choice:** `rm -- *` and `rm ./*` are not dangerous: after `--` GNU `rm` reads every
/// word as an operand (none of its options takes a separate value, so `--` is never one),
/// and every expansion of `./*` starts with `./`.
fn rm_arg(arg: &Word<'_>) -> Option<bool> {
    let text = arg.as_str();
    if text == "--" {
        return Some(false);
    }
    (is_recursive_flag(text)
        || text.contains('$')
        || (arg.glob && text.starts_with(['*', '?', '[', '-'])))
    .then_some(true)
}

/// The replace string an `xargs` option word names (`-I X`, `-IX`, `--replace=X`), which
/// `xargs` swaps for each input name.
fn replace_string(word: &str, rest: &[Word<'_>]) -> Option<String> {
    let value = if word == "-I" {
        rest.first().map(|w| w.as_str())
    } else {
        word.strip_prefix("--replace=")
            .or_else(|| word.strip_prefix("-I"))
    };
    value.filter(|v| !v.is_empty()).map(str::to_string)
}

/// Whether a word after `find` makes it delete: `-delete`, or a glob or expansion that
/// could become it.
fn find_arg(arg: &Word<'_>) -> bool {
    let text = arg.as_str();
    text == "-delete"
        || (text.contains('$') && !text.contains([' ', '\t', '\n']))
        || (arg.glob && glob_matches(text.as_bytes(), b"-delete"))
}

/// Whether a word after an interpreter gives it inline code: a short-option cluster
/// holding `c`, `e`, `E`, `p`, `r`, `B` or `R` (`python3 -c`, `perl -ne`, `node -p`,
/// `php -r`), a long option that is a prefix of `--eval`, `--print`, `--command`,
/// `--exec`, `--run` or `--expr`, or the word `eval` (`deno eval`).
fn inline_arg(text: &str) -> bool {
    const LONG: [&str; 6] = ["eval", "print", "command", "exec", "run", "expr"];
    if let Some(long) = text.strip_prefix("--") {
        let name = long.split_once('=').map_or(long, |(n, _)| n);
        return !name.is_empty() && LONG.iter().any(|l| l.starts_with(name));
    }
    text == "eval"
        || (text.len() > 1
            && text.starts_with('-')
            && text[1..].contains(['c', 'e', 'E', 'p', 'r', 'B', 'R']))
}

/// Whether an `awk` program in `line` can run a command: `system(`, `getline` (`"cmd" |
/// getline`), or a pipe into a quoted command (`print ... | "sh"`).
fn awk_may_run(line: &str) -> bool {
    if line.contains("system") || line.contains("getline") {
        return true;
    }
    line.match_indices('|')
        .any(|(i, _)| line[i + 1..].trim_start().starts_with(['"', '\'']))
}

/// Whether `name`, fed by a pipe or a redirection, reads its program from that input:
/// `parallel` and `sem` (each input line is a command), `source`/`.`, or a shell or
/// interpreter given no script operand (`operand`: one among the words after it), or
/// given `-`, `-s` or a descriptor path (`stdin`).
fn reads_program_from_input(name: &str, bits: u8, stdin: bool, operand: bool) -> bool {
    if matches!(name, "parallel" | "sem") {
        return true;
    }
    if bits & (class::INTERPRETER | class::SHELL) == 0 && !matches!(name, "source" | ".") {
        return false;
    }
    if stdin {
        return true;
    }
    if bits & class::AWK != 0 {
        return false; // the program is an operand; the input is data
    }
    // A script operand makes the input its data.
    !operand
}

/// Whether `text` matches the glob `pattern` (`*`, `?`, `[...]` with ranges and `!`/`^`).
///
/// Linear in the pattern for the short texts the scan asks about (`rm`, `-delete`): one
/// pass over the pattern carrying the set of text positions reached, never a search
/// that backtracks (a run of `*` once cost exponential time, GATE-DANGER-12).
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    // reached[k]: the pattern read so far can match text[..k].
    let mut reached = vec![false; text.len() + 1];
    reached[0] = true;
    let mut next = vec![false; text.len() + 1];
    let mut p = 0;
    while p < pattern.len() {
        tick(text.len() + 1);
        next.iter_mut().for_each(|r| *r = false);
        match pattern[p] {
            b'*' => {
                let first = reached.iter().position(|&r| r);
                if let Some(first) = first {
                    next[first..].iter_mut().for_each(|r| *r = true);
                }
                p += 1;
            }
            b'?' => {
                next[1..].copy_from_slice(&reached[..text.len()]);
                p += 1;
            }
            b'[' => {
                let rest = &pattern[p + 1..];
                let (negate, body) = match rest.first() {
                    Some(b'!' | b'^') => (true, &rest[1..]),
                    _ => (false, rest),
                };
                // The class ends at the first `]` after its first character; with none,
                // the `[` is literal.
                match body.iter().skip(1).position(|&b| b == b']').map(|e| e + 1) {
                    None => {
                        for k in 0..text.len() {
                            next[k + 1] = reached[k] && text[k] == b'[';
                        }
                        p += 1;
                    }
                    Some(end) => {
                        let class = &body[..end];
                        for k in 0..text.len() {
                            next[k + 1] = reached[k] && in_class(class, text[k]) != negate;
                        }
                        p += 1 + (rest.len() - body.len()) + end + 1;
                    }
                }
            }
            c => {
                for k in 0..text.len() {
                    next[k + 1] = reached[k] && text[k] == c;
                }
                p += 1;
            }
        }
        std::mem::swap(&mut reached, &mut next);
        if !reached.contains(&true) {
            return false;
        }
    }
    reached[text.len()]
}

/// Whether `c` is in the body of a bracket class (ranges `a-z` included).
fn in_class(class: &[u8], c: u8) -> bool {
    let mut hit = false;
    let mut k = 0;
    while k < class.len() {
        if k + 2 < class.len() && class[k + 1] == b'-' {
            hit |= class[k] <= c && c <= class[k + 2];
            k += 3;
        } else {
            hit |= class[k] == c;
            k += 1;
        }
    }
    hit
}

/// A short cluster holding `r` or `R`, or a long option that is a prefix of
/// `--recursive` (GATE-DANGER-1).
fn is_recursive_flag(word: &str) -> bool {
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split_once('=').map_or(long, |(n, _)| n);
        return !name.is_empty() && "recursive".starts_with(name);
    }
    word.len() > 1 && word.starts_with('-') && word[1..].contains(['r', 'R'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("rm -r x")]
    #[case("rm -R x")]
    #[case("rm -rf x")]
    #[case("rm -fr x")]
    #[case("rm -Rf x")]
    #[case("rm -vrf x")]
    #[case("rm -r -f x")]
    #[case("rm -f -r x")]
    #[case("rm --recursive x")]
    #[case("rm --rec x")]
    #[case("rm --r x")]
    #[case("rm x -rf")]
    #[case("rm dir -rf")]
    #[case("/bin/rm -rf x")]
    #[case("\"rm\" '-rf' x")]
    #[case("\\rm -rf x")]
    #[case("r\"m\" -r x")]
    #[case("rm \"-r\"f x")]
    #[case("sudo rm -rf /")]
    #[case("sudo -u root rm -rf /")]
    #[case("env rm -rf x")]
    #[case("env X=1 rm -rf x")]
    #[case("X=1 rm -rf x")]
    #[case("nice -n 5 rm -rf x")]
    #[case("timeout 5 rm -rf x")]
    #[case("xargs rm -rf")]
    #[case("find . | xargs rm -r")]
    #[case("command rm -rf x")]
    #[case("exec rm -rf x")]
    #[case("nohup rm -rf x")]
    #[case("ls; rm -rf x")]
    #[case("ls&&rm -rf x")]
    #[case("ls || rm -rf x")]
    #[case("ls | rm -rf x")]
    #[case("ls\nrm -rf x")]
    #[case("ls & rm -rf x")]
    #[case("echo $(rm -rf x)")]
    #[case("echo \"$(rm -rf x)\"")]
    #[case("echo `rm -rf x`")]
    #[case("(rm -rf x)")]
    #[case("{ rm -rf x; }")]
    #[case("sh -c \"rm -rf x\"")]
    #[case("bash -c 'ls && rm -rf x'")]
    #[case("xargs sh -c 'rm -r x'")]
    #[case("python3 -c 'rm -r x'")]
    #[case("sudo sh -c \"cd / && rm -rf x\"")]
    #[case("sh -c \"sh -c 'rm -rf x'\"")]
    #[case("if true; then rm -rf x; fi")]
    #[case(">log rm -rf x")]
    #[case("2> log rm -rf x")]
    #[case("find . -delete")]
    #[case("find . -name '*.o' -delete")]
    #[case("sudo find / -delete")]
    #[case("find . -exec rm -rf {} +")]
    #[case("find . -exec rm -rf {} \\;")]
    #[case("xargs -I{} rm -rf {}")]
    #[case("env echo rm -rf x")]
    #[case("echo \"a; rm -rf x\"")]
    #[case("rm \\\n-rf x")]
    #[case("r\\\nm -rf x")]
    #[case("rm -\\\nr x")]
    #[case("rm${IFS}-rf${IFS}x")]
    #[case("rm$IFS-rf x")]
    #[case("rm${IFS:0:1}-r x")]
    #[case("rm $'-r' x")]
    #[case("$'rm' -r x")]
    #[case("$'\\x72m' -r x")]
    #[case("$'\\162\\155' -r x")]
    #[case("rm $'\\u002dr' x")]
    #[case("rm $\"-r\" x")]
    #[case("strace rm -rf x")]
    #[case("parallel rm -r ::: x")]
    #[case("script -c 'rm -r x'")]
    #[case("trap 'rm -rf x' EXIT")]
    #[case("2>&1 rm -rf x")]
    #[case(">|log rm -rf x")]
    #[case("echo hi 2>")]
    #[case("echo hi >>>x")]
    // item 11: any argument of any command
    #[case("git rebase -x 'rm -rf victimdir' HEAD~1")]
    #[case("git rebase --exec='rm -rf x' HEAD~1")]
    #[case("git rebase -x'rm -rf x' HEAD~1")]
    #[case("git bisect run rm -rf x")]
    #[case("git -c alias.x='!rm -rf .' x")]
    #[case("uv run rm -rf x")]
    #[case("npx rm -rf x")]
    #[case("npm exec -- rm -rf x")]
    #[case("make CLEAN='rm -rf x' clean")]
    #[case("ssh host rm -rf x")]
    #[case("ssh host 'rm -rf x'")]
    #[case("tmux new -d 'rm -rf x'")]
    #[case("RM -rf x")]
    #[case("grm -rf x")]
    #[case("echo rm -rf x")]
    #[case("git commit -m \"rm -rf build\"")]
    // item 12: a glob or expansion after rm
    #[case("rm *")]
    #[case("rm -f *")]
    #[case("rm ?rf")]
    #[case("rm [-]rf x")]
    #[case("rm -*")]
    #[case("rm $x")]
    #[case("rm \"$x\"")]
    #[case("rm $(ls)")]
    #[case("rm `ls`")]
    #[case("rm {-rf,x}")]
    #[case("rm -{r,f} x")]
    #[case("{r,}m -rf x")]
    #[case("rm -{a..z} x")]
    #[case("ls | xargs rm")]
    #[case("find . -del*")]
    #[case("find . $x")]
    // item 13: deletes the shell assembles
    #[case("echo rm -rf x | sh")]
    #[case("echo cm0gLXJmIHgK | base64 -d | sh")]
    #[case("curl -s x | bash -s")]
    #[case("cat f |& sh")]
    #[case("bash <<< \"$x\"")]
    #[case("sh <<EOF\nls\nEOF")]
    #[case("bash <(curl x)")]
    #[case("source <(curl x)")]
    #[case("echo x | python3")]
    #[case("echo x | python3 -")]
    #[case("echo x | sudo sh")]
    #[case("echo 'rm -rf x' | parallel")]
    #[case("$(echo rm) -rf x")]
    #[case("`echo rm` -rf x")]
    #[case("$x")]
    #[case("eval $x")]
    #[case("sh -c \"$x\"")]
    #[case("sudo $(which rm) -rf x")]
    #[case("/usr/bin/r[m] -rf x")]
    #[case("r? -rf x")]
    #[case("python3 -c \"import os; os.system('rm -rf x')\"")]
    #[case("python3 -c 'import shutil; shutil.rmtree(\"x\")'")]
    #[case("perl -e 'system(\"r\".\"m -rf x\")'")]
    #[case("perl -ne 'print'")]
    #[case("node -e \"require('fs').rmSync('x',{recursive:true})\"")]
    #[case("ruby -e 'FileUtils.rm_rf(\"x\")'")]
    #[case("Rscript -e 'unlink(\"x\", recursive=TRUE)'")]
    #[case("php -r 'x();'")]
    #[case("deno eval 'x'")]
    #[case("awk 'BEGIN{system(\"r\" \"m -rf x\")}'")]
    #[case("awk '{print \"r\" \"m -rf x\" | \"sh\"}'")]
    #[case("find . -exec sh -c 'echo {}' \\;")]
    #[case("ls | xargs -I{} sh -c 'echo {}'")]
    #[case("ls | xargs -I% sh -c 'cat %'")]
    #[case("ls | xargs -IX sh -c 'cat X'")]
    #[case("ls | xargs --replace=@ bash -c 'cat @'")]
    // issue 42, item 7: a program or startup file read from a descriptor
    #[case(". /dev/fd/3 3<<<'rm -rf src'")]
    #[case(". /dev/fd/3 3<<<\"$x\"")]
    #[case("source /proc/self/fd/3 3< <(curl x)")]
    #[case("BASH_ENV=/dev/fd/3 bash -c true 3<<<\"$x\"")]
    #[case("env BASH_ENV=/dev/fd/3 bash -c true 3<<<\"$x\"")]
    #[case("export BASH_ENV=/dev/fd/3; bash -c true 3<<<\"$x\"")]
    #[case("ENV=/dev/fd/3 sh -i 3<<<\"$x\"")]
    #[case("PYTHONSTARTUP=/dev/fd/3 python3 -i 3<<<\"$x\"")]
    #[case("cat x | bash //dev/stdin")]
    #[case("cat x | bash /dev/./stdin")]
    #[case("cat x | bash /dev/../dev/stdin")]
    #[case("cat x | bash /proc/self/fd/0")]
    #[case("cat x | bash /proc/thread-self/fd/0")]
    #[case("cat x | perl /DEV/STDIN")]
    #[case("python3 /dev/fd/3 3<<<\"$x\"")]
    #[case("node /proc/self/fd/3 3<x")]
    #[case("bash --rcfile=/dev/fd/3 -i 3<x")]
    #[case("bash <&3 3<<<\"$x\"")]
    #[case("cd /dev && bash fd/3 3<x")]
    #[case("awk -f /dev/fd/3 3<x")]
    #[case("sed -f /dev/stdin x")]
    // item 8: a brace expansion holding a quoted blank or ended by an operator
    #[case("{sh,-c,'rm -rf src'}")]
    #[case("{rm,-rf,src,' '}")]
    #[case("{bash,-c,\"rm -rf src\"}")]
    #[case("{sh,-c,rm\\ -rf\\ src}")]
    #[case("{rm,-rf,src};true")]
    #[case("{rm,-rf,src}&&true")]
    #[case("{rm,-rf,src}|cat")]
    #[case("{rm,-rf,src}>log")]
    #[case("true;{rm,-rf,src}")]
    #[case("{python3,-c,'print(1)'}")]
    #[case("{x{a,b}; rm -{r,f} x")]
    // item 9: an extended glob as the command word
    #[case("shopt -s extglob\n/usr/bin/r@(m) -rf src")]
    #[case("/usr/bin/r@(m) -rf src")]
    #[case("/usr/bin/r+(m) -rf src")]
    #[case("/usr/bin/r*(m) -rf src")]
    #[case("/usr/bin/r?(m) -rf src")]
    #[case("/usr/bin/!(ls) -rf src")]
    #[case("@(r)m -rf src")]
    #[case("/usr/bin/r@('m') -rf src")]
    #[case("/usr/bin/r@(m|x y) -rf src")]
    #[case("sudo /usr/bin/r@(m) -rf src")]
    #[case("env r@(m) -rf src")]
    fn dangerous_spellings(#[case] line: &str) {
        assert!(is_dangerous(line), "{line}");
    }

    #[rstest]
    #[case("rm x")]
    #[case("rm -f x")]
    #[case("rm -i x")]
    #[case("rm -v -f x")]
    #[case("rm -- -rf")]
    #[case("rm -f -- -r")]
    #[case("rm --force x")]
    #[case("rm --verbose x")]
    #[case("grep -r foo .")]
    #[case("ls -R")]
    #[case("rmdir -r x")]
    #[case("find . -name x")]
    #[case("find . -print")]
    #[case("cp -r a b")]
    #[case("ls")]
    #[case("")]
    #[case("sudo ls -R")]
    #[case("sh -c 'rm x'")]
    #[case("echo 'rm x' -r")]
    #[case("rm -- *")]
    #[case("rm ./*")]
    #[case("rm -f ./*.o")]
    #[case("rm a*")]
    #[case("rm -- \"$x\"")]
    #[case("find . -exec rm {} +")]
    #[case("find . -exec sh -c 'echo \"$1\"' _ {} \\;")]
    #[case("xargs rm -- ")]
    #[case("ls | xargs -I% cp % sub/")]
    #[case("echo {a,b}")]
    #[case("python3 x.py")]
    #[case("python3 -m json.tool")]
    #[case("cat x | python3 script.py")]
    #[case("ls | awk '{print $1}'")]
    #[case("cat notes.txt | sh -c 'wc -l'")]
    #[case("echo \"$HOME\"")]
    #[case("for f in *.txt; do cat \"$f\"; done")]
    #[case("docker run --rm -it img")]
    #[case("ls -a€ x")]
    #[case("ls -aé x")]
    #[case("git log --format=%H -r")]
    #[case("rm 'x' -- -r")]
    #[case("2>&1 echo hi")]
    #[case("echo hi >>x 2>&1")]
    #[case("cat <(ls)")]
    #[case("bash script.sh")]
    #[case(". ./env.sh")]
    #[case("source venv/bin/activate")]
    #[case("cat /dev/stdin")]
    #[case("cat x | python3 script.py")]
    #[case("echo hi >/dev/fd/2")]
    #[case("echo '{a, b}'")]
    #[case("cp notes.txt{,.bak}")]
    #[case("echo {a,b};ls")]
    #[case("ls @(a|b)")]
    #[case("((i++))")]
    #[case("fd pattern")]
    fn non_dangerous_twins(#[case] line: &str) {
        assert!(!is_dangerous(line), "{line}");
    }

    #[rstest]
    #[case("ls -la sub", false)]
    #[case("git status", false)]
    #[case("npm run build -- --prod", false)]
    #[case("RM -rf x", true)]
    #[case("python3 -c print(1)", true)]
    #[case("find . -delete", true)]
    #[case("echo 'x'", true)]
    #[case("cat <in", true)]
    fn the_filter_passes_what_the_scan_may_need(#[case] line: &str, #[case] may: bool) {
        assert_eq!(may_be_dangerous(line), may, "{line}");
    }

    #[test]
    fn very_deep_nesting_counts_as_dangerous() {
        let nest = |inner: &str, levels: usize| {
            let mut line = inner.to_string();
            for _ in 0..levels {
                line = format!("sh -c {}", shell_quote(&line));
            }
            line
        };
        assert!(!is_dangerous(&nest("rm x", 3)));
        assert!(is_dangerous(&nest("rm -r x", 3)));
        assert!(is_dangerous(&nest("rm x", 12)));
    }

    /// Adversarial lines of about `n` bytes, one per shape the bench measures
    /// (`benches/benches/gate_linear.rs`).
    pub(crate) fn adversarial(n: usize) -> Vec<(&'static str, String)> {
        let rep = |unit: &str, head: &str, tail: &str| {
            let k = n.saturating_sub(head.len() + tail.len()) / unit.len().max(1);
            format!("{head}{}{tail}", unit.repeat(k.max(1)))
        };
        let half = n / 2;
        vec![
            (
                "nested-braces",
                format!("echo {}a{}", "{".repeat(half), "}".repeat(half)),
            ),
            (
                "nested-brace-lists",
                format!("echo {}a{}", "{a,".repeat(n / 5), "}".repeat(n / 5)),
            ),
            ("open-braces", rep("{x", "echo ", "}")),
            ("empty-braces", rep("{}", "echo ", "")),
            ("brace-alternatives", rep("{a,b}", "echo x", "")),
            ("brace-words", rep("{a,b} ", "echo ", "")),
            ("quoted-braces", rep("'{a,b c}'", "echo ", "")),
            ("quotes", rep("'a b' ", "echo ", "")),
            ("open-quotes", rep("' ", "echo ", "")),
            ("double-quotes", rep("\"a\\\"b\" ", "echo ", "")),
            ("separators", rep("; ", "ls", "")),
            ("pipes", rep("| ", "ls", "")),
            ("amp-redirections", rep("&>f ", "a ", "b")),
            ("named-descriptors", rep("{a}>x;", "", "")),
            ("rm-words", rep(" rm", "echo", " x")),
            ("find-words", rep(" find", "echo 'x'", " x")),
            ("interpreter-words", rep(" python3", "echo", " x")),
            ("fed-shells", rep(" sh", "echo x | sudo", " x")),
            ("stars", rep("*", "echo ", "x")),
            ("find-stars", rep("*", "find . ", "x")),
            (
                "substitutions",
                format!("echo {}x{}", "$(".repeat(n / 3), ")".repeat(n / 3)),
            ),
            ("backticks", rep("`a` ", "echo ", "")),
            (
                "subshells",
                format!("{}ls{}", "(".repeat(half), ")".repeat(half)),
            ),
            ("ifs", rep("${IFS", "echo ", "")),
            ("ansi-c", rep("$'\\x41' ", "echo ", "")),
            ("extglob", rep("@(a|", "echo ", "")),
            ("descriptor-paths", rep(" /dev/fd/3", "cat", "")),
            ("sh-c-nesting", rep("sh -c 'a b' ", "", "")),
            (
                "xargs-replace",
                format!(
                    "xargs -I{} sh -c {}",
                    "x".repeat(half),
                    "'a b' ".repeat(n / 12)
                ),
            ),
        ]
    }

    /// GATE-DANGER-12: the steps the dangerous-list scan takes grow at most linearly with
    /// the line: at 16 KB at most 24 times its steps at 1 KB (linear is 16), for every
    /// adversarial shape. Counted, never timed; a runaway reader stops at 10^8 steps.
    #[test]
    fn every_shape_costs_at_most_linear_work() {
        use crate::work::measure;
        let small = adversarial(1024);
        let large = adversarial(16 * 1024);
        let mut failures = Vec::new();
        let steps = |line: &str| {
            std::panic::catch_unwind(|| {
                measure(100_000_000, || {
                    is_dangerous(line);
                })
            })
            .ok()
        };
        for ((name, s), (_, l)) in small.iter().zip(&large) {
            match (steps(s), steps(l)) {
                (Some(a), Some(b)) if b <= 24 * a.max(1) => {}
                (a, b) => failures.push(format!("{name}: {a:?} steps at 1 KB, {b:?} at 16 KB")),
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
