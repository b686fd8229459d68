//! The redirections a shell line opens for writing (ORDER-REDIR-1, TRUST-WRITE-11): `>`,
//! `>>`, `>|`, `<>`, `&>`, `&>>` and their `N>` and `{name}>` forms, with the target
//! attached, in the next word, or glued to the word before (`echo hi>out`), and `>&file`
//! (bash writes the file); `>&N`, `N>&M` and `>&-` duplicate or close a descriptor and
//! open nothing. Each target is a write of untrusted data by the trust map's table,
//! planned before the line runs.
//!
//! Read from the gate's one reader of redirections ([`crate::gate::syntax`]), which
//! splits quote-blind: a redirection inside a quoted argument counts too, which only asks
//! more. Pure text processing.

use crate::gate::syntax::{parts, tokens, Token};

/// One redirection target, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The operator (`>`, `>>`, `2>`, `&>`, ...).
    pub op: String,
    /// The target word after quote removal.
    pub path: String,
}

/// Every target of `line` opened for writing, in order.
pub fn targets(line: &str) -> Vec<Target> {
    let mut out = Vec::new();
    for part in parts(line) {
        let before = out.len();
        read_targets(&tokens(part.text), &mut out);
        if part.opens_quoted {
            // A part that opens inside a double quote (`" > out` of `echo "$(cat a)" >
            // out`) is read with that quote open too: the redirection after it is the
            // shell's. A target both readings find is one target.
            let mut second = Vec::new();
            read_targets(&tokens(&format!("\"{}", part.text)), &mut second);
            for t in second {
                if !out[before..].contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// Adds each target `tokens` open for writing to `out`.
fn read_targets(tokens: &[Token<'_>], out: &mut Vec<Target>) {
    for (i, t) in tokens.iter().enumerate() {
        let Some(r) = &t.redirect else {
            continue;
        };
        let path = match &r.attached {
            Some(attached) => attached.clone(),
            None => match tokens.get(i + 1) {
                Some(next) if next.target => next.word.text.to_string(),
                _ => continue,
            },
        };
        if r.op.writes(&path) {
            out.push(Target {
                op: format!("{}{}", r.fd, r.op.text()),
                path,
            });
        }
    }
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
    #[case("echo hi>notes.txt", &["notes.txt"])]
    #[case("echo hi >&notes.txt", &["notes.txt"])]
    #[case("echo hi 2>&-", &[])]
    #[case("exec {fd}>log", &["log"])]
    #[case("2>&1 >out echo hi", &["out"])]
    #[case("echo \"$(cat a)\" > out", &["out"])]
    #[case("cat <<< x >out", &["out"])]
    fn finds_write_targets(#[case] line: &str, #[case] expected: &[&str]) {
        assert_eq!(paths(line), expected, "{line}");
    }
}
