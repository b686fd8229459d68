//! How a `shell` line is read for patterns (PERM-SHELL-1 to -7). A condition on `cmd` is
//! tested against several readings of the line, built from the gate's own reading of it
//! ([`crate::gate::words`]): no second shell parser.
//!
//! - **Deny and ask** patterns match when **any** reading matches: the whole line as
//!   written; each simple command (split by [`crate::gate::syntax::parts`] at `;` `&&`
//!   `||` `|` `&` newline, `$(`, `)`, backticks and braces, quoted or not, never inside
//!   a redirection operator such as `2>&1`) as written; each simple command with quotes
//!   removed, redirections with their targets, assignments and reserved words (`!`,
//!   `time`, `coproc`, ...) skipped to its command word (both command words of bash's and
//!   dash's reading of `&>`) and the program named by its last path component; the same after a leading run of options
//!   (`git -c x=y push` is also read `git push`); after a wrapper (`sudo`, `env`,
//!   `nice -n 5`, `sh -c`, ...) every later word as the start of a command; and every
//!   quoted argument of a wrapper re-read as a line of its own (`sh -c 'a && rm -rf x'`).
//! - **Allow** patterns approve only when **every** simple command, with quotes removed
//!   and nothing else changed, matches an allow pattern: a chain is approved only if each
//!   of its parts is, and a program spelled by a path is not the program of that name.
//!   A line holding `${`, `$((` or `$[` is approved by none (PERM-SHELL-9): bash runs
//!   code inside those expansions that no simple command shows.
//!
//! Normalising widens what a deny catches and narrows what an allow approves, so either
//! mistake can only make the order ask or refuse more.
//!
//! Pure text processing: touches nothing.

use crate::gate::lists::{basename, is_danger_wrapper};
use crate::gate::syntax::{command_starts, parts, tokens, Token};
use std::borrow::Cow;

use super::glob::fold_text;

/// How deep quoted wrapper arguments are re-read before the reading gives up.
pub const MAX_DEPTH: usize = 8;

/// The readings of one shell line, folded to lower case for matching.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readings {
    /// Every text a deny or ask pattern is tried against (the whole line first).
    pub any: Vec<String>,
    /// One text per simple command, each of which an allow pattern must match.
    pub every: Vec<String>,
    /// The line nests wrappers deeper than [`MAX_DEPTH`]: what lies below was not read,
    /// so every deny pattern on `cmd` counts as matched and no allow approves.
    pub too_deep: bool,
    /// The line holds a braced parameter expansion or an arithmetic expansion (`${`,
    /// `$((`, `$[`), inside which bash runs code no command word shows (`${x@P}`,
    /// `${!v}`, `$((v))` with `v='a[$(id)]'`): no allow pattern approves it (PERM-SHELL-9).
    pub hidden_code: bool,
}

impl Readings {
    /// Reads `line`.
    pub fn of(line: &str) -> Readings {
        let mut r = Readings {
            hidden_code: holds_hidden_code(line),
            ..Readings::default()
        };
        push_unique(&mut r.any, fold_text(line));
        for part in parts(line) {
            let tokens = part.tokens();
            if tokens.is_empty() {
                continue;
            }
            let words = texts(&tokens);
            let joined = fold_text(&words.join(" "));
            read_command(part.text, &tokens, &words, Some(&joined), 0, &mut r);
            r.every.push(joined);
        }
        if let Some(respelled) = crate::gate::danger::respell(line) {
            read_into(&respelled, 0, &mut r);
        }
        r
    }
}

/// Whether `line` holds `${`, `$((` or `$[`, quoted or not (PERM-SHELL-9): single quotes
/// make them literal, which only makes an allow ask more.
fn holds_hidden_code(line: &str) -> bool {
    line.contains("${") || line.contains("$((") || line.contains("$[")
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !s.is_empty() && !v.contains(&s) {
        v.push(s);
    }
}

/// Adds the deny/ask readings of `line` at nesting `depth`.
fn read_into(line: &str, depth: usize, r: &mut Readings) {
    if depth > MAX_DEPTH {
        r.too_deep = true;
        return;
    }
    for part in parts(line) {
        let tokens = tokens(part.text);
        let words = texts(&tokens);
        read_command(part.text, &tokens, &words, None, depth, r);
    }
}

/// The texts of `tokens`, quotes removed.
fn texts<'a>(tokens: &[Token<'a>]) -> Vec<Cow<'a, str>> {
    tokens.iter().map(|t| t.word.text.clone()).collect()
}

/// Adds the deny/ask readings of one simple command, read as `words`.
fn read_command(
    command: &str,
    tokens: &[Token<'_>],
    words: &[Cow<'_, str>],
    joined: Option<&str>,
    depth: usize,
    r: &mut Readings,
) {
    let trimmed = command.trim_matches([' ', '\t']);
    if trimmed.is_empty() {
        return;
    }
    // The text as written differs from the words joined only where quoting, escapes or
    // runs of blanks are: skip the copy otherwise.
    let plain = !trimmed.contains(['\'', '"', '\\', '\t']) && !trimmed.contains("  ");
    if !plain {
        push_unique(&mut r.any, fold_text(trimmed));
    }
    let starts = command_starts(tokens);
    if starts.is_empty() {
        return;
    }
    match joined {
        Some(j) => push_unique(&mut r.any, j.to_string()),
        None => push_unique(&mut r.any, fold_text(&words.join(" "))),
    }
    for start in starts {
        read_from(&words[start..], start > 0, depth, r);
    }
}

/// Adds the readings of a command whose command word is `words[0]`; `skipped` when
/// assignments, redirections or reserved words stood before it.
fn read_from(words: &[Cow<'_, str>], skipped: bool, depth: usize, r: &mut Readings) {
    let renamed = basename(&words[0]).len() != words[0].len();
    if skipped || renamed {
        add_command(words, r);
    } else {
        add_options_dropped(words, r);
    }
    if is_danger_wrapper(&words[0]) {
        // The wrapper's own options and arguments cannot be told from the command it
        // runs without knowing each wrapper: every later word may start it.
        for j in 1..words.len() {
            add_command(&words[j..], r);
        }
        for w in &words[1..] {
            if w.contains([' ', '\t', ';', '&', '|', '\n']) {
                read_into(w, depth + 1, r);
            }
        }
    }
}

/// Adds the normalised readings of a command starting at `words[0]`: the program by its
/// last path component, then its arguments; and the same with a leading run of options
/// (each with at most one value) dropped in every length.
fn add_command(words: &[Cow<'_, str>], r: &mut Readings) {
    let Some((program, args)) = words.split_first() else {
        return;
    };
    let program = basename(program);
    let mut s = String::from(program);
    for w in args {
        s.push(' ');
        s.push_str(w);
    }
    push_unique(&mut r.any, fold_text(&s));
    add_options_dropped(words, r);
}

/// Adds the readings of a command with a leading run of options dropped (PERM-SHELL-4).
fn add_options_dropped(words: &[Cow<'_, str>], r: &mut Readings) {
    let Some((program, args)) = words.split_first() else {
        return;
    };
    let program = basename(program);
    let join = |rest: &[Cow<'_, str>]| {
        let mut s = String::from(program);
        for w in rest {
            s.push(' ');
            s.push_str(w);
        }
        fold_text(&s)
    };
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i].len() > 1 {
        i += 1;
        push_unique(&mut r.any, join(&args[i..]));
        if i + 1 < args.len() && !args[i].starts_with('-') {
            i += 1;
            push_unique(&mut r.any, join(&args[i..]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn any_starts(line: &str, prefix: &str) -> bool {
        Readings::of(line).any.iter().any(|r| r.starts_with(prefix))
    }

    #[rstest]
    #[case("rm -rf x")]
    #[case("RM -rf x")]
    #[case("echo hi && rm -rf x")]
    #[case("echo hi&&rm -rf x")]
    #[case("echo hi; rm x")]
    #[case("echo hi | rm x")]
    #[case("echo hi & rm x")]
    #[case("echo hi\nrm x")]
    #[case("echo $(rm x)")]
    #[case("echo \"$(rm x)\"")]
    #[case("echo `rm x`")]
    #[case("(rm x)")]
    #[case("{ rm x; }")]
    #[case("/bin/rm x")]
    #[case("/usr/bin/rm -rf x")]
    #[case("\"rm\" -rf x")]
    #[case("\\rm -rf x")]
    #[case("r'm' x")]
    #[case("nice rm -rf x")]
    #[case("nice -n 5 rm -rf x")]
    #[case("timeout 5 rm x")]
    #[case("sudo -u root rm x")]
    #[case("env X=1 rm x")]
    #[case("X=1 rm x")]
    #[case(">log rm x")]
    #[case("sh -c 'rm -rf x'")]
    #[case("bash -lc 'echo a && rm -rf x'")]
    #[case("sh -c \"sh -c 'rm x'\"")]
    #[case("xargs rm")]
    #[case("find . -exec rm {} +")]
    #[case("$'\\x72m' -rf x")]
    #[case("rm${IFS}-rf x")]
    // behind a leading redirection or reserved word (issue 29, item 6)
    #[case("2>&1 rm x")]
    #[case(">&2 rm x")]
    #[case("2>&- rm x")]
    #[case("0<&- rm x")]
    #[case(">|log rm x")]
    #[case("2>|log rm x")]
    #[case("&>log rm x")]
    #[case("&>>log rm x")]
    #[case("3<>log rm x")]
    #[case("<<<hi rm x")]
    #[case("<<- EOF rm x\nhi\nEOF")]
    #[case("{fd}>&- rm x")]
    #[case("echo hi &>/dev/null rm x")]
    #[case("coproc rm x")]
    #[case("! 2>&1 rm x")]
    #[case("time -p 2>&1 rm x")]
    #[case("echo \"$(>&2 rm x)\"")]
    #[case("cat <(2>&1 rm x)")]
    #[case("true && 2>&1 rm x")]
    #[case("2>&1 >&2 X=1 rm x")]
    #[case("sh -c '2>&1 rm x'")]
    #[case("echo \\>&rm x")]
    fn deny_readings_find_rm(#[case] line: &str) {
        assert!(
            any_starts(line, "rm"),
            "{line}: {:?}",
            Readings::of(line).any
        );
    }

    #[rstest]
    #[case("git -c x=y push", "git push")]
    #[case("git -C dir push origin", "git push origin")]
    #[case("/usr/bin/git push", "git push")]
    #[case("git --no-pager push", "git push")]
    fn global_options_before_a_subcommand_are_read_through(#[case] line: &str, #[case] r: &str) {
        assert!(
            Readings::of(line).any.iter().any(|x| x == r),
            "{:?}",
            Readings::of(line).any
        );
    }

    #[rstest]
    #[case("echo rm -rf x")]
    #[case("grep rm notes.txt")]
    #[case("git commit -m 'rm -rf build'")]
    #[case("ls -la")]
    fn ordinary_arguments_are_not_commands(#[case] line: &str) {
        assert!(
            !any_starts(line, "rm"),
            "{line}: {:?}",
            Readings::of(line).any
        );
    }

    #[rstest]
    #[case("echo hi", &["echo hi"])]
    #[case("echo hi && rm x", &["echo hi", "rm x"])]
    #[case("\"echo\" 'a  b'", &["echo a  b"])]
    #[case("/bin/echo hi", &["/bin/echo hi"])]
    #[case("X=1 echo hi", &["x=1 echo hi"])]
    #[case("echo $(id)", &["echo $", "id"])]
    fn every_part_must_be_allowed(#[case] line: &str, #[case] every: &[&str]) {
        assert_eq!(Readings::of(line).every, every);
    }

    #[rstest]
    #[case("echo ${x@P}", true)]
    #[case("echo ${!v}", true)]
    #[case("echo ${v:=$(id)}", true)]
    #[case("echo ${x/#/$(id)}", true)]
    #[case("echo $((v))", true)]
    #[case("echo $[v]", true)]
    #[case("echo \"${HOME}\"", true)]
    #[case("echo $HOME", false)]
    #[case("echo hi", false)]
    #[case("echo '$x'", false)]
    fn expansions_that_run_code_are_flagged(#[case] line: &str, #[case] hidden: bool) {
        assert_eq!(Readings::of(line).hidden_code, hidden, "{line}");
    }

    #[test]
    fn nesting_too_deep_is_flagged() {
        let mut line = "rm x".to_string();
        for _ in 0..12 {
            line = format!("sh -c '{}'", line.replace('\'', "'\\''"));
        }
        assert!(Readings::of(&line).too_deep);
        assert!(!Readings::of("sh -c 'sh -c \"rm x\"'").too_deep);
    }
}
