//! The dangerous list (GATE-DANGER-1 to -3): whether a shell line holds a recursive delete
//! (`rm` with a recursive flag, or `find ... -delete`) anywhere it could run.
//!
//! Pure text processing over the line: touches no file. It errs toward finding a delete
//! where there is none, because a false hit only makes the gate ask (and withhold both
//! keys), while a miss could let a saved grant run it unasked.

use super::lists::{basename, is_danger_wrapper};
use super::words::{simple_commands, Words};
use std::borrow::Cow;

/// How deep quoted arguments are re-read as command lines before the scan gives up and
/// calls the line dangerous.
const MAX_DEPTH: usize = 8;

/// Whether `line` is on the dangerous list.
///
/// The scan:
/// 1. splits the line into simple commands at every `;` `&` `|` newline, carriage return,
///    `(` `)` (so `$(`), `{` `}` and backtick, quoted or not ([`simple_commands`]);
/// 2. reads each leniently with quote removal, skips leading assignments (`X=1`) and
///    redirections, and looks at the command word: `rm` (by last path component) with a
///    recursive flag before a bare `--`, or `find` with a `-delete` primary;
/// 3. after a wrapper (`sudo`, `env`, `nice -n 5`, `xargs`, `command`, an interpreter, a
///    shell keyword such as `then`, ...) **any** later `rm` or `find` word counts, and any
///    later word holding a space or tab is read again as a command line (`sh -c "rm -rf
///    x"`), which is then itself treated as wrapped.
///
/// **Choice:** outside a wrapper only the command word counts, so `echo rm -rf x` and
/// `grep rm -r .` are not dangerous (they take their ordinary route and `grep` stays a
/// read); inside a wrapper the scan does not know which argument is the command, so it
/// counts them all (`env echo rm -rf x` is dangerous). A quoted argument of an ordinary
/// command is not re-read (`git commit -m "rm -rf build"` is not dangerous), but the
/// quote-blind split of step 1 does see a chain or substitution inside quotes, so
/// `echo "a; rm -rf x"` is, which only asks.
pub fn is_dangerous(line: &str) -> bool {
    if may_hold_delete(line) && scan(line, 0, false) {
        return true;
    }
    match shell_spelling(line) {
        Some(spelled) => may_hold_delete(&spelled) && scan(&spelled, 0, false),
        None => false,
    }
}

/// The line as a POSIX shell respells it before it runs (GATE-DANGER-6), or `None` when
/// the line holds nothing it would respell: the permission patterns read this spelling
/// too (PERM-SHELL-5).
pub fn respell(line: &str) -> Option<String> {
    shell_spelling(line)
}

/// The line respelled the way a POSIX shell (bash) reads a few constructs that the plain
/// word reader does not: a backslash-newline continuation vanishes (`rm \<newline>-rf x`),
/// `$IFS` and `${IFS...}` become a space (`rm${IFS}-rf${IFS}x`), an ANSI-C quote
/// `$'...'` becomes the single-quoted text it decodes to (`$'\x72m' -r x`), and `$"..."`
/// a plain double quote. `None` when the line holds none of them.
///
/// **Choice:** the scan reads the line both as written and respelled, and calls it
/// dangerous if either reading holds a delete: a respelling that is wrong for some shell
/// can then only make the gate ask more.
fn shell_spelling(line: &str) -> Option<String> {
    if !line.contains("\\\n") && !line.contains('$') {
        return None;
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
    Some(out)
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

/// A cheap filter: quote removal only removes quotes and backslashes, so a line that
/// holds neither `rm` nor `-delete` once those are skipped cannot hold a recursive `rm`
/// or a `find -delete`.
fn may_hold_delete(line: &str) -> bool {
    const DELETE: &[u8] = b"-delete";
    let mut prev = 0u8;
    let mut matched = 0usize;
    for b in line.bytes().filter(|b| !matches!(b, b'\'' | b'"' | b'\\')) {
        if prev == b'r' && b == b'm' {
            return true;
        }
        matched = if b == DELETE[matched] {
            matched + 1
        } else if b == b'-' {
            1
        } else {
            0
        };
        if matched == DELETE.len() {
            return true;
        }
        prev = b;
    }
    false
}

fn scan(line: &str, depth: usize, wrapped: bool) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let mut words: Vec<Cow<'_, str>> = Vec::new();
    for command in simple_commands(line) {
        words.clear();
        words.extend(Words::lenient(command).filter_map(|w| w.ok().map(|w| w.text)));
        let start = command_index(&words);
        let Some(first) = words.get(start) else {
            continue;
        };
        let wrapped_here = wrapped || is_danger_wrapper(first);
        if wrapped_here {
            if (start..words.len()).any(|i| deletes(&words[i..])) {
                return true;
            }
            let nested = words[start + 1..]
                .iter()
                .filter(|w| w.contains([' ', '\t']))
                .any(|w| scan(w, depth + 1, true));
            if nested {
                return true;
            }
        } else if deletes(&words[start..]) {
            return true;
        }
    }
    false
}

/// The index of the command word of a simple command: past leading assignments
/// (`NAME=value`) and redirections (`>out`, `2> out`, `<in`).
fn command_index(words: &[Cow<'_, str>]) -> usize {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if is_assignment(w) {
            i += 1;
        } else if let Some(rest) = redirection_rest(w) {
            // `>out` holds its target; a bare `>` or `2>` takes the next word.
            i += if rest.is_empty() { 2 } else { 1 };
        } else {
            break;
        }
    }
    i
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// For a redirection word (`[n]<`, `[n]>`, `>>`, `>|`, `<>`...), the target text that
/// follows the operator.
fn redirection_rest(word: &str) -> Option<&str> {
    let after_digits = word.trim_start_matches(|c: char| c.is_ascii_digit());
    if !after_digits.starts_with(['<', '>']) {
        return None;
    }
    Some(after_digits.trim_start_matches(['<', '>', '|']))
}

/// Whether `words[0]` is a delete given what follows: `rm` with a recursive flag before a
/// bare `--`, or `find` with `-delete`.
fn deletes(words: &[Cow<'_, str>]) -> bool {
    let Some((command, args)) = words.split_first() else {
        return false;
    };
    match basename(command) {
        "rm" => args
            .iter()
            .take_while(|w| w.as_ref() != "--")
            .any(|w| is_recursive_flag(w)),
        "find" => args.iter().any(|w| w.as_ref() == "-delete"),
        _ => false,
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
    #[case("grep rm -r .")]
    #[case("echo rm -rf x")]
    #[case("ls -R")]
    #[case("rmdir -r x")]
    #[case("find . -name x")]
    #[case("find . -print")]
    #[case("git rm -r --cached x")]
    #[case("git commit -m \"rm -rf build\"")]
    #[case("cp -r a b")]
    #[case("ls")]
    #[case("")]
    #[case("sudo ls -R")]
    #[case("sh -c 'rm x'")]
    #[case("echo $'rm -r x'")]
    #[case("echo $IFS rm -r x")]
    #[case("rm $'x' -- -r")]
    fn non_dangerous_twins(#[case] line: &str) {
        assert!(!is_dangerous(line), "{line}");
    }

    #[rstest]
    #[case("rm", true)]
    #[case("r'm'", true)]
    #[case("r\\m", true)]
    #[case("-d\"el\"ete", true)]
    #[case("--delete", true)]
    #[case("npm run build && ./deploy.sh", false)]
    #[case("find . -name x", false)]
    #[case("r m", false)]
    fn the_filter_sees_through_quotes(#[case] line: &str, #[case] may: bool) {
        assert_eq!(may_hold_delete(line), may, "{line}");
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
