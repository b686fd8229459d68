//! Escape-flag detection for the read commands of section 5 (GATE-FLAG-1 to -9).
//!
//! Works on words already read by [`super::words`]; touches nothing else.

use super::lists::{escape_flags, EscapeFlags};
use super::words::Word;

/// Whether `word` spells one of `flags`' long options, possibly abbreviated: `--NAME` or
/// `--NAME=VALUE` whose `NAME` (at least one character) is a prefix of a listed long
/// flag (GATE-FLAG-2).
fn is_long_flag(flags: &EscapeFlags, word: &str) -> bool {
    let Some(rest) = word.strip_prefix("--") else {
        return false;
    };
    let name = rest.split_once('=').map_or(rest, |(name, _)| name);
    !name.is_empty() && flags.long.iter().any(|long| long.starts_with(name))
}

/// Whether `word` is a short-option cluster holding one of `flags`' short letters
/// (GATE-FLAG-3). Any listed letter anywhere in the cluster counts, even where a real
/// parser would read it as an option's value: the gate does not know which options take
/// values, and a false hit only asks.
fn is_short_flag(flags: &EscapeFlags, word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() > 1
        && bytes[0] == b'-'
        && bytes[1] != b'-'
        && bytes[1..].iter().any(|b| flags.short.contains(b))
}

/// Whether the words of a line, whose first word is `words[0]`, carry an escape flag of
/// that command (GATE-FLAG-1).
///
/// `find` primaries count anywhere (GATE-FLAG-4); for the other five, a bare `--` ends the
/// options and every later word is an operand (GATE-FLAG-5).
pub fn has_escape_flag(words: &[Word<'_>]) -> bool {
    let Some((command, args)) = words.split_first() else {
        return false;
    };
    // `strings` (binutils, LLVM) reads `@FILE` as more arguments, before any option
    // parsing, so after `--` too: the jail cannot see what the list names (GATE-FLAG-8).
    if command.as_str() == "strings" && args.iter().any(|w| w.as_str().starts_with('@')) {
        return true;
    }
    let Some(flags) = escape_flags(command.as_str()) else {
        return false;
    };
    if !flags.primaries.is_empty() {
        return args.iter().any(|w| flags.primaries.contains(&w.as_str()));
    }
    let mut previous: Option<&str> = None;
    for word in args {
        let w = word.as_str();
        if w == "--" && ends_options(previous) {
            return false;
        }
        if is_long_flag(flags, w) || is_short_flag(flags, w) || is_obsolete_follow(flags, w) {
            return true;
        }
        previous = Some(w);
    }
    false
}

/// Whether a bare `--` that follows the argument `previous` (`None`: it follows the
/// command) ends the options (GATE-FLAG-5).
///
/// **Choice:** an option word may take the next word as its value, and the gate does not
/// know which do: in `sort -T -- -o x` the `--` is the value of `-T` and `-o x` is still
/// an option. So a `--` right after an option word that could want a separate value (a
/// short cluster, or a long option without `=`) ends nothing, and the words after it are
/// still read as flags; that can only make the gate ask more.
pub fn ends_options(previous: Option<&str>) -> bool {
    match previous {
        None => true,
        Some(p) => p == "-" || !p.starts_with('-') || (p.starts_with("--") && p.contains('=')),
    }
}

/// `tail`'s obsolete form `+NUM[bcl]f` (`tail +1f notes.txt`), which GNU `tail` still
/// reads as `-n +NUM -f`: it follows the file and never returns, like `-f`.
fn is_obsolete_follow(flags: &EscapeFlags, word: &str) -> bool {
    flags.command == "tail" && word.starts_with('+') && word.contains(['f', 'F'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::read_words;
    use rstest::rstest;

    fn escapes(line: &str) -> bool {
        has_escape_flag(&read_words(line).unwrap())
    }

    #[rstest]
    // find primaries, anywhere
    #[case("find . -exec cat")]
    #[case("find . -execdir x")]
    #[case("find . -ok x")]
    #[case("find . -okdir x")]
    #[case("find . -delete")]
    #[case("find . -fprintf f x")]
    #[case("find . -fprint f")]
    #[case("find . -fprint0 f")]
    #[case("find . -fls f")]
    #[case("find -- . -delete")]
    #[case("find . '-exec' x")]
    // rg long flags, written and abbreviated
    #[case("rg --pre ./x.sh foo")]
    #[case("rg --pre=./x.sh foo")]
    #[case("rg --pre-glob '*.gz' foo")]
    #[case("rg --pre-g x foo")]
    #[case("rg --hostname-bin x foo")]
    #[case("rg --host x foo")]
    #[case("rg --p x")]
    // sort
    #[case("sort -o out notes.txt")]
    #[case("sort -ro out notes.txt")]
    #[case("sort notes.txt -o out")]
    #[case("sort --output=out")]
    #[case("sort --out=x")]
    #[case("sort --o x")]
    #[case("sort --compress-program=gzip")]
    #[case("sort --comp=gzip")]
    #[case("sort --files0-from=x")]
    #[case("sort --files0=x")]
    // tail
    #[case("tail -f notes.txt")]
    #[case("tail -F notes.txt")]
    #[case("tail -5f notes.txt")]
    #[case("tail --follow notes.txt")]
    #[case("tail --fol notes.txt")]
    #[case("tail --follow=name notes.txt")]
    #[case("tail --retry notes.txt")]
    #[case("tail --re notes.txt")]
    #[case("\"tail\" \"-f\" notes.txt")]
    // grep
    #[case("grep -Z x notes.txt")]
    #[case("grep -rZ x .")]
    #[case("grep --null x notes.txt")]
    #[case("grep --nu x notes.txt")]
    // head
    #[case("head -z notes.txt")]
    #[case("head -nz notes.txt")]
    #[case("head --zero-terminated notes.txt")]
    #[case("head --zero notes.txt")]
    #[case("head --z notes.txt")]
    // a `--` that may be an option's value ends nothing
    #[case("sort -T -- -o/tmp/x notes.txt")]
    #[case("grep -e -- -Z x notes.txt")]
    #[case("rg -e -- --pre=./x.sh foo")]
    #[case("tail --sleep -- -f notes.txt")]
    // tail's obsolete follow form
    #[case("tail +1f notes.txt")]
    #[case("tail +5cf notes.txt")]
    // GATE-FLAG-8, -9
    #[case("strings @list")]
    #[case("strings -- @list")]
    #[case("strings -n 4 @list")]
    #[case("grep -R BEGIN .")]
    #[case("grep -rR BEGIN .")]
    #[case("grep --dereference-recursive BEGIN .")]
    #[case("grep --dereference BEGIN .")]
    #[case("rg -L BEGIN")]
    #[case("rg -uL BEGIN")]
    #[case("rg --follow BEGIN")]
    #[case("rg --fol BEGIN")]
    #[case("find -L . -name x")]
    #[case("find . -follow")]
    #[case("ls -RL")]
    #[case("ls -lL sub")]
    #[case("ls --dereference -R")]
    #[case("date -s 2020-01-01")]
    #[case("date -us 2020-01-01")]
    #[case("date --set=2020-01-01")]
    #[case("date --se 2020-01-01")]
    fn escape_flags_ask(#[case] line: &str) {
        assert!(escapes(line), "{line}");
    }

    #[rstest]
    #[case("find . -name x")]
    #[case("find . -print")]
    #[case("find . -executable")]
    #[case("rg foo")]
    #[case("rg -p foo")]
    #[case("sort -r notes.txt")]
    #[case("sort -- -o")]
    #[case("sort --check notes.txt")]
    #[case("tail -n 5 notes.txt")]
    #[case("tail -- -f")]
    #[case("grep -rn x .")]
    #[case("grep -z x notes.txt")]
    #[case("grep -- -Z notes.txt")]
    #[case("head -n 5 notes.txt")]
    #[case("head -Z notes.txt")]
    #[case("cat -f notes.txt")]
    #[case("ls --follow")]
    #[case("tail -")]
    #[case("tail --")]
    #[case("sort -r notes.txt -- -o")]
    #[case("sort --key=1 -- -o")]
    #[case("tail +5 notes.txt")]
    #[case("grep -e x -- -Z")]
    #[case("grep -r BEGIN .")]
    #[case("rg BEGIN")]
    #[case("find -H . -name x")]
    #[case("ls -R")]
    #[case("ls -la")]
    #[case("ls --dereference-command-line sub")]
    #[case("date +%s")]
    #[case("date -u")]
    #[case("strings notes.txt")]
    #[case("strings ./@list")]
    #[case("grep @ notes.txt")]
    fn ordinary_flags_do_not(#[case] line: &str) {
        assert!(!escapes(line), "{line}");
    }
}
