//! The dangerous list (GATE-DANGER-1 to -10): whether a shell line holds a recursive
//! delete (`rm` with a recursive flag, or `find ... -delete`) anywhere it could run, or is
//! built so that the gate cannot rule one out.
//!
//! Pure text processing over the line: touches no file. It errs toward finding a delete
//! where there is none, because a false hit only makes the gate ask (and withhold both
//! keys), while a miss could let a saved grant run it unasked.

use super::lists::{basename, class, classify};
use super::syntax::{command_starts, parts, Token};
use super::words::Word;
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
/// holds a byte that quotes, expands, pipes or redirects (`$` backtick `*` `?` `[` `|`
/// `<` `>` `{` quotes, backslash), the letters `rm` in any case (every word that may run as
/// `rm` ends so), `-delete`, or a word naming an interpreter (inline code needs no
/// quotes: `python3 -c print(1)`). Most lines an agent proposes hold none of them.
fn may_be_dangerous(line: &str) -> bool {
    let b = line.as_bytes();
    if b.iter().any(|c| b"$`*?[|<>{'\"\\".contains(c)) {
        return true;
    }
    if b.windows(2).any(|w| w.eq_ignore_ascii_case(b"rm")) || line.contains("-delete") {
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
    if !line.contains("\\\n") && !line.contains('$') && !line.contains('{') {
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

/// Expands the brace expansions of every blank-separated token of `line` (quote-blind),
/// bash style: `{a,b}` alternatives and `{x..y}` sequences of integers or single
/// characters, nested, with prefix and suffix. `None` past [`MAX_BRACE_WORDS`] words.
fn expand_braces(line: &str) -> Option<String> {
    let mut out = String::with_capacity(line.len());
    let mut budget = MAX_BRACE_WORDS;
    for (i, token) in line.split([' ', '\t']).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if token.contains('{') {
            let mut words = Vec::new();
            expand_token(token, 0, &mut words, &mut budget)?;
            out.push_str(&words.join(" "));
        } else {
            out.push_str(token);
        }
    }
    Some(out)
}

fn expand_token(token: &str, from: usize, out: &mut Vec<String>, budget: &mut usize) -> Option<()> {
    let bytes = token.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] != b'{' || (i > 0 && bytes[i - 1] == b'$') {
            i += 1;
            continue;
        }
        // The matching close and the top-level commas.
        let (mut depth, mut commas, mut close) = (0usize, Vec::new(), None);
        for (j, &b) in bytes.iter().enumerate().skip(i) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
        let Some(close) = close else {
            break;
        };
        let (prefix, body, suffix) = (&token[..i], &token[i + 1..close], &token[close + 1..]);
        let alternatives: Vec<String> = if commas.is_empty() {
            match sequence(body) {
                Some(items) => items,
                None => {
                    i += 1;
                    continue;
                }
            }
        } else {
            let mut parts = Vec::new();
            let mut start = i + 1;
            for &c in &commas {
                parts.push(token[start..c].to_string());
                start = c + 1;
            }
            parts.push(token[start..close].to_string());
            parts
        };
        for alternative in alternatives {
            let word = format!("{prefix}{alternative}{suffix}");
            expand_token(&word, prefix.len(), out, budget)?;
        }
        return Some(());
    }
    *budget = budget.checked_sub(1)?;
    out.push(token.to_string());
    Some(())
}

/// The items of a brace sequence body `x..y[..step]`, or `None` when it is not one.
fn sequence(body: &str) -> Option<Vec<String>> {
    let mut parts = body.split("..");
    let (a, b) = (parts.next()?, parts.next()?);
    let step: i64 = match parts.next() {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if parts.next().is_some() {
        return None;
    }
    let (x, y, chars) = match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => (x, y, false),
        _ => {
            let (mut ca, mut cb) = (a.chars(), b.chars());
            match (ca.next(), ca.next(), cb.next(), cb.next()) {
                (Some(x), None, Some(y), None) => (x as i64, y as i64, true),
                _ => return None,
            }
        }
    };
    let count = (x - y).unsigned_abs() / step as u64 + 1;
    if count > MAX_BRACE_WORDS as u64 {
        return Some(vec![String::new(); MAX_BRACE_WORDS + 1]);
    }
    let dir = if y >= x { step } else { -step };
    Some(
        (0..count as i64)
            .map(|k| {
                let v = x + k * dir;
                if chars {
                    char::from_u32(v as u32)
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
    for part in parts(&line) {
        let tokens = part.tokens();
        // A redirection the reader cannot place: a shell would not read it as the gate
        // does (GATE-DANGER-9).
        if part.unsure(&tokens) {
            return true;
        }
        let starts = command_starts(&tokens);
        let Some(&start) = starts.first() else {
            continue;
        };
        // The gate cannot know what a command word with an expansion runs.
        if starts.iter().any(|&s| is_expansion(&tokens[s].word)) {
            return true;
        }
        words.clear();
        words.extend(tokens.iter().map(|t| t.word.clone()));
        let mut wrapped = false;
        let mut spreads = false; // an `xargs` or `parallel` builds the rest from its input
        let mut splices = false; // ... or a `find`, which splices names for `{}`
        let mut replace: Option<String> = None; // `xargs -I REPLACE`
                                                // Every word counts, assignments too (`make CLEAN='rm -rf x'` re-read).
        for i in 0..words.len() {
            let (word, rest) = (&words[i], &words[i + 1..]);
            let text = word.as_str();
            let blank = text.contains([' ', '\t', '\n']);
            // A word with a blank is code of its own, read again below.
            if wrapped && !blank && text.contains('$') {
                return true;
            }
            if is_rm_word(word) && rm_deletes(rest, spreads) {
                return true;
            }
            let name = command_name(text);
            if name == "find" && find_deletes(rest) {
                return true;
            }
            if splices
                && blank
                && (text.contains("{}") || replace.as_deref().is_some_and(|r| text.contains(r)))
            {
                return true;
            }
            if spreads && replace.is_none() {
                replace = replace_string(text, rest);
            }
            let bits = classify(&name);
            if bits & class::AWK != 0 {
                if *awk_runs.get_or_insert_with(|| awk_may_run(&line)) {
                    return true;
                }
            } else if bits & (class::INTERPRETER | class::SHELL) == class::INTERPRETER
                && gives_inline_code(rest)
            {
                return true;
            }
            if part.fed
                && (i == start || (i > start && wrapped))
                && reads_program_from_input(&name, bits, &tokens[i + 1..])
            {
                return true;
            }
            if blank && scan(text, depth + 1) {
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
    false
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

/// Whether the words after an `rm` make it a recursive delete, or may: a recursive flag
/// before a bare `--`, or a word the shell expands that may become one (a `$`, or a glob
/// not starting with a literal character other than `-`); or, when `xargs` or `parallel`
/// builds the line (`spreads`), no `--` at all (its input may hold `-rf`).
///
/// **Choice:** `rm -- *` and `rm ./*` are not dangerous: after `--` GNU `rm` reads every
/// word as an operand (none of its options takes a separate value, so `--` is never one),
/// and every expansion of `./*` starts with `./`.
fn rm_deletes(args: &[Word<'_>], spreads: bool) -> bool {
    for arg in args {
        let text = arg.as_str();
        if text == "--" {
            return false;
        }
        if is_recursive_flag(text) {
            return true;
        }
        if text.contains('$') {
            return true;
        }
        if arg.glob && text.starts_with(['*', '?', '[', '-']) {
            return true;
        }
    }
    spreads
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

/// Whether the words after a `find` delete: `-delete`, or a glob or expansion that could
/// become it.
fn find_deletes(args: &[Word<'_>]) -> bool {
    args.iter().any(|arg| {
        let text = arg.as_str();
        text == "-delete"
            || (text.contains('$') && !text.contains([' ', '\t', '\n']))
            || (arg.glob && glob_matches(text.as_bytes(), b"-delete"))
    })
}

/// Whether an interpreter's arguments give it inline code: a short-option cluster holding
/// `c`, `e`, `E`, `p`, `r`, `B` or `R` (`python3 -c`, `perl -ne`, `node -p`, `php -r`), a
/// long option that is a prefix of `--eval`, `--print`, `--command`, `--exec`, `--run`
/// or `--expr`, or the word `eval` (`deno eval`).
fn gives_inline_code(args: &[Word<'_>]) -> bool {
    const LONG: [&str; 6] = ["eval", "print", "command", "exec", "run", "expr"];
    args.iter().any(|arg| {
        let text = arg.as_str();
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            return !name.is_empty() && LONG.iter().any(|l| l.starts_with(name));
        }
        text == "eval"
            || (text.len() > 1
                && text.starts_with('-')
                && text[1..].contains(['c', 'e', 'E', 'p', 'r', 'B', 'R']))
    })
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

/// Whether `name` with `args`, fed by a pipe or a redirection, reads its program from
/// that input: `parallel` and `sem` (each input line is a command), `source`/`.`, or a
/// shell or interpreter given no script operand, or given `-`, `-s` or `/dev/stdin`.
fn reads_program_from_input(name: &str, bits: u8, args: &[Token<'_>]) -> bool {
    const STDIN: [&str; 5] = ["-", "-s", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];
    if matches!(name, "parallel" | "sem") {
        return true;
    }
    if bits & (class::INTERPRETER | class::SHELL) == 0 && !matches!(name, "source" | ".") {
        return false;
    }
    if args.iter().any(|a| STDIN.contains(&a.word.as_str())) {
        return true;
    }
    if bits & class::AWK != 0 {
        return false; // the program is an operand; the input is data
    }
    // A script operand (a word that is neither an option nor a redirection) makes the
    // input its data.
    !args
        .iter()
        .any(|a| a.is_word() && !a.word.as_str().starts_with('-'))
}

/// Whether `text` matches the glob `pattern` (`*`, `?`, `[...]` with ranges and `!`/`^`).
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|k| glob_matches(rest, &text[k..])),
        Some((b'?', rest)) => !text.is_empty() && glob_matches(rest, &text[1..]),
        Some((b'[', rest)) => {
            let Some((&c, after)) = text.split_first() else {
                return false;
            };
            let (negate, body) = match rest.first() {
                Some(b'!' | b'^') => (true, &rest[1..]),
                _ => (false, rest),
            };
            // The class ends at the first `]` after its first character.
            let Some(end) = body.iter().skip(1).position(|&b| b == b']').map(|p| p + 1) else {
                return c == b'[' && glob_matches(rest, after);
            };
            let class = &body[..end];
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
            hit != negate && glob_matches(&body[end + 1..], after)
        }
        Some((&p, rest)) => text.first() == Some(&p) && glob_matches(rest, &text[1..]),
    }
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

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
