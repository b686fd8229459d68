//! The redirections a shell line opens for writing (ORDER-REDIR-1, TRUST-WRITE-11): `>`,
//! `>>`, `>|`, `<>`, `&>`, `&>>` and their `N>` forms, with the target attached or in the
//! next word; `>&N` and `N>&M` duplicate a descriptor and open nothing. Each target is a
//! write of untrusted data by the trust map's table, planned before the line runs.
//!
//! Read from the gate's own word reader ([`crate::gate::words`]). Errs toward finding a
//! redirection where there is none (a quoted `">"` counts): a false one only asks more.
//! Pure text processing.

use crate::gate::words::{simple_commands, Words};

/// One redirection target, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The operator (`>`, `>>`, `2>`, `&>`, ...).
    pub op: String,
    /// The target word after quote removal.
    pub path: String,
}

/// If `word` is a redirection that opens for writing: its operator and the target text
/// attached to it (empty when the target is the next word). `None` for a read
/// redirection, a duplication or an ordinary word.
fn write_op(word: &str) -> Option<(String, &str)> {
    let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &word[digits..];
    let ops = [">>", ">|", "<>", ">", "&>>", "&>"];
    let op = ops.iter().find(|op| rest.starts_with(**op))?;
    if digits > 0 && op.starts_with('&') {
        return None;
    }
    let target = &rest[op.len()..];
    if target.starts_with('&') && (*op == ">" || *op == ">>") {
        // `>&2`, `2>&1`, `>&-`: a duplication (a bare `>&` at the end is split by the
        // reader anyway).
        return None;
    }
    Some((word[..digits + op.len()].to_string(), target))
}

/// Every target of `line` opened for writing, in order.
pub fn targets(line: &str) -> Vec<Target> {
    let mut out = Vec::new();
    // `>|` is `>` that overrides noclobber; the command splitter would cut it at `|`.
    let line = line.replace(">|", "> ");
    for command in simple_commands(&line) {
        let words: Vec<String> = Words::lenient(command)
            .filter_map(|w| w.ok().map(|w| w.text.into_owned()))
            .collect();
        let mut i = 0;
        while i < words.len() {
            if let Some((op, attached)) = write_op(&words[i]) {
                if !attached.is_empty() {
                    out.push(Target {
                        op,
                        path: attached.to_string(),
                    });
                } else if let Some(next) = words.get(i + 1) {
                    out.push(Target {
                        op,
                        path: next.clone(),
                    });
                    i += 1;
                }
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn paths(line: &str) -> Vec<String> {
        targets(line).into_iter().map(|t| t.path).collect()
    }

    #[rstest]
    #[case("echo hi > notes.txt", &["notes.txt"])]
    #[case("echo hi >notes.txt", &["notes.txt"])]
    #[case("echo hi >> log", &["log"])]
    #[case("echo hi >| log", &["log"])]
    #[case("echo hi 2>| log", &["log"])]
    #[case("cat <> f", &["f"])]
    #[case("make 2> err.txt", &["err.txt"])]
    #[case("make 2>>err.txt", &["err.txt"])]
    #[case("make &> all.txt", &["all.txt"])]
    #[case("make &>> all.txt", &["all.txt"])]
    #[case("make > out 2>&1", &["out"])]
    #[case("echo hi >&2", &[])]
    #[case("cat < in", &[])]
    #[case("cat <<EOF", &[])]
    #[case("ls && echo x > 'a b'", &["a b"])]
    #[case("echo $(cat x > y)", &["y"])]
    #[case("echo hi", &[])]
    fn finds_write_targets(#[case] line: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(line), expected, "{line}");
    }
}
