//! The allowed command, rewritten to run in the fence: `gatehouse exec --no-tty
//! --workspace ROOT ... [choices] -- SHELL -c ORIGINAL`, as one POSIX shell line whose
//! every word is quoted so that the agent's shell hands `gatehouse exec` exactly these
//! words, and `SHELL -c` gets back every byte of the original line (GUARD-REWRITE-1).
//!
//! Pure text; touches nothing.

use super::config::ExecChoices;
use crate::choices::table::Raw;
use std::path::{Path, PathBuf};

/// The rewrite cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// A NUL byte (in the command or in a choice of the configuration): no command line
    /// can carry one, so no rewrite keeps its meaning.
    #[error("the fenced command would hold a NUL byte, which no command line can carry")]
    Nul,
    /// A path of the configuration is not UTF-8 (the agent's input is JSON text).
    #[error("{0} is not UTF-8 and cannot be written into a command line")]
    NotUtf8(PathBuf),
}

/// One word for a POSIX shell: bare when it holds only characters no shell treats
/// specially, otherwise in single quotes, each `'` written `'\''`. Inside single quotes
/// every byte but `'` is literal (newlines, `$`, backticks, `\`, `"` included).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./,:=+@%".contains(&b));
    if plain {
        return word.to_string();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `words` as one shell line.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

fn text(p: &Path) -> Result<String, RewriteError> {
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| RewriteError::NotUtf8(p.to_path_buf()))
}

/// The words of the fenced command: `program exec` with the roots and choices, then
/// `shell -c command`.
pub fn fenced_words(
    program: &Path,
    roots: &[PathBuf],
    choices: &ExecChoices,
    shell: &Path,
    command: &str,
) -> Result<Vec<String>, RewriteError> {
    let mut w = vec![text(program)?, "exec".into(), "--no-tty".into()];
    for r in roots {
        w.push("--workspace".into());
        w.push(text(r)?);
    }
    // Every choice of the [exec] table as its flag, in the table's order.
    for (spec, raw) in choices.flags().given() {
        let flag = spec.name;
        match raw {
            Raw::One(v) => w.push(format!("--{flag}={v}")),
            Raw::List(vs) => w.extend(vs.iter().map(|v| format!("--{flag}={v}"))),
            Raw::Paths(ps) => {
                for p in ps {
                    w.push(format!("--{flag}={}", text(p)?));
                }
            }
            Raw::Map(kv) => w.extend(kv.iter().map(|(k, v)| format!("--{flag}={k}={v}"))),
            Raw::Switch(true) => w.push(format!("--{flag}")),
            Raw::Switch(false) => {}
        }
    }
    w.push("--".into());
    w.push(text(shell)?);
    w.push("-c".into());
    w.push(command.to_string());
    if w.iter().any(|word| word.contains('\0')) {
        return Err(RewriteError::Nul);
    }
    Ok(w)
}

/// The fenced command as one shell line.
pub fn fenced_line(
    program: &Path,
    roots: &[PathBuf],
    choices: &ExecChoices,
    shell: &Path,
    command: &str,
) -> Result<String, RewriteError> {
    Ok(join(&fenced_words(
        program, roots, choices, shell, command,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::process::Command;

    /// What `sh -c LINE` hands its command: the words, NUL-separated.
    fn words_seen(line: &str) -> Vec<String> {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{line:?}");
        let mut v: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .map(|w| String::from_utf8(w.to_vec()).unwrap())
            .collect();
        v.pop();
        v
    }

    #[test]
    fn the_hard_bytes_come_back_whole() {
        for s in [
            "",
            "'",
            "''",
            "a'b",
            "$HOME",
            "`id`",
            "$(id)",
            "a\nb",
            "\\",
            "\"",
            "!",
            "*",
            "~",
            "-c",
            "--",
            " ",
            "\t",
            "é ☃",
            "\u{7f}\u{1b}[0m",
        ] {
            assert_eq!(words_seen(&quote(s)), vec![s.to_string()], "{s:?}");
        }
    }

    #[test]
    fn a_nul_is_refused_not_cut() {
        let r = fenced_line(
            Path::new("/g"),
            &[],
            &ExecChoices::default(),
            Path::new("/bin/sh"),
            "echo a\0rm -rf ~",
        );
        assert_eq!(r, Err(RewriteError::Nul));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_command_comes_back_byte_for_byte(cmd in "[^\\x00]{0,40}", root in "/[^\\x00]{0,12}") {
            let choices = ExecChoices::default();
            let words = fenced_words(Path::new("/opt/g house/gatehouse"), &[PathBuf::from(&root)], &choices, Path::new("/bin/bash"), &cmd).unwrap();
            let line = join(&words);
            prop_assert_eq!(words_seen(&line), words.clone());
            prop_assert_eq!(words.last().unwrap(), &cmd);
        }
    }
}
