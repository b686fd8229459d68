//! The builtin `redact_secrets` (HOOK-REDACT-1, -2), on by default: every string of a
//! call's input (before anything else sees it) and of its response (before the model or
//! any hook sees it) has each secret replaced by [`MARK`].
//!
//! A secret is (a) the value of a variable of the agent's own environment whose name says
//! it holds one (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`,
//! `*AUTH*`), at least 8 bytes long; or (b) text of a well-known token shape: `sk-` (and
//! `sk-ant-`, `sk-proj-`) keys, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`
//! tokens, GitLab `glpat-`, Slack `xox?-`, AWS `AKIA` key ids, Google `AIza` keys, and
//! PEM private-key blocks.
//!
//! Pure text processing over the values and the environment snapshot it is given.

use serde_json::Value;

/// What a secret is replaced with.
pub const MARK: &str = "[REDACTED]";

/// Words in a variable name that mark its value as a secret.
pub const SECRET_NAME_PARTS: [&str; 7] = [
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// Shortest environment value treated as a secret (shorter ones would redact ordinary
/// words).
pub const MIN_SECRET_LEN: usize = 8;

/// Token prefixes and the shortest run of token characters that must follow.
const SHAPES: [(&str, usize); 13] = [
    ("sk-ant-", 16),
    ("sk-proj-", 16),
    ("sk-", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    ("glpat-", 20),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("AIza", 30),
];

/// A redactor holding the secrets of one environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    values: Vec<String>,
}

impl Redactor {
    /// The secrets of the given environment.
    pub fn from_env<I: IntoIterator<Item = (String, String)>>(env: I) -> Redactor {
        let mut values: Vec<String> = env
            .into_iter()
            .filter(|(k, v)| {
                let k = k.to_ascii_uppercase();
                v.len() >= MIN_SECRET_LEN && SECRET_NAME_PARTS.iter().any(|p| k.contains(p))
            })
            .map(|(_, v)| v)
            .collect();
        // Longest first, so a secret holding another is replaced whole.
        values.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        values.dedup();
        Redactor { values }
    }

    /// The secrets of this process's environment.
    pub fn from_process_env() -> Redactor {
        Redactor::from_env(std::env::vars())
    }

    /// `text` with every secret replaced; `None` when it held none.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = std::borrow::Cow::Owned(out.replace(v.as_str(), MARK));
            }
        }
        let shaped = redact_shapes(&out);
        match (shaped, out) {
            (Some(s), _) => Some(s),
            (None, std::borrow::Cow::Owned(s)) => Some(s),
            (None, std::borrow::Cow::Borrowed(_)) => None,
        }
    }

    /// Redacts every string in `value` (keys stay); returns how many strings changed.
    pub fn redact_value(&self, value: &mut Value) -> usize {
        match value {
            Value::String(s) => match self.redact_str(s) {
                Some(r) => {
                    *s = r;
                    1
                }
                None => 0,
            },
            Value::Array(a) => a.iter_mut().map(|v| self.redact_value(v)).sum(),
            Value::Object(m) => m.values_mut().map(|v| self.redact_value(v)).sum(),
            _ => 0,
        }
    }
}

fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Replaces token shapes and PEM private-key blocks.
fn redact_shapes(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut changed = false;
    let mut copied = 0;
    while i < b.len() {
        if b[i] == b'-' && b[i..].starts_with(b"-----BEGIN ") {
            if let Some(head_end) = text[i..]
                .find("-----\n")
                .or_else(|| text[i + 11..].find("-----").map(|x| x + 11))
            {
                let head = &text[i..i + head_end];
                if head.contains("PRIVATE KEY") {
                    let end = text[i..]
                        .find("-----END ")
                        .and_then(|e| text[i + e + 9..].find("-----").map(|f| i + e + 9 + f + 5))
                        .unwrap_or(b.len());
                    out.push_str(&text[copied..i]);
                    out.push_str(MARK);
                    i = end;
                    copied = end;
                    changed = true;
                    continue;
                }
            }
        }
        // Every shape starts with one of these bytes: skip the rest cheaply.
        let boundary =
            matches!(b[i], b's' | b'g' | b'x' | b'A') && (i == 0 || !is_token_char(b[i - 1]));
        if boundary {
            if let Some(len) = shape_at(&b[i..]) {
                out.push_str(&text[copied..i]);
                out.push_str(MARK);
                i += len;
                copied = i;
                changed = true;
                continue;
            }
            if b[i..].starts_with(b"AKIA")
                && b.len() >= i + 20
                && b[i + 4..i + 20]
                    .iter()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && (b.len() == i + 20 || !is_token_char(b[i + 20]))
            {
                out.push_str(&text[copied..i]);
                out.push_str(MARK);
                i += 20;
                copied = i;
                changed = true;
                continue;
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The longest token a run of token characters is followed across line breaks for.
pub const MAX_WRAPPED: usize = 256;

/// The length of the token shape at the start of `b`, if one is there. A token wrapped
/// onto the next lines (by `fold`, a terminal, a log's column limit: one `\n` or `\r\n`
/// between token characters) is followed across the breaks, up to [`MAX_WRAPPED`]
/// characters, so that no part of it is left visible; this errs toward redacting a word
/// that happens to follow a token on the next line.
fn shape_at(b: &[u8]) -> Option<usize> {
    for (prefix, min) in SHAPES {
        if b.starts_with(prefix.as_bytes()) {
            let (mut j, mut run) = (prefix.len(), 0);
            loop {
                if j < b.len() && is_token_char(b[j]) {
                    run += 1;
                    j += 1;
                    continue;
                }
                let brk = if b[j..].starts_with(b"\r\n") {
                    2
                } else {
                    usize::from(b[j..].starts_with(b"\n"))
                };
                if brk > 0 && run < MAX_WRAPPED && b.get(j + brk).is_some_and(|c| is_token_char(*c))
                {
                    j += brk;
                    continue;
                }
                break;
            }
            if run >= min {
                // A token never ends with the break it was followed across.
                return Some(j);
            }
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn r() -> Redactor {
        Redactor::from_env([
            (
                "GATEHOUSE_BAIT_TOKEN".to_string(),
                "bait-7f3a9c1e".to_string(),
            ),
            ("DB_PASSWORD".to_string(), "hunter2hunter2".to_string()),
            ("SHORT_KEY".to_string(), "abc".to_string()),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ])
    }

    #[rstest]
    #[case("echo bait-7f3a9c1e", "echo [REDACTED]")]
    #[case("pw=hunter2hunter2;", "pw=[REDACTED];")]
    #[case("abc /usr/bin:/bin", "abc /usr/bin:/bin")]
    #[case("key sk-abcdefghijklmnopqrstuvwx end", "key [REDACTED] end")]
    #[case("ghp_0123456789abcdefghijABCD", "[REDACTED]")]
    #[case("id AKIAABCDEFGHIJKLMNOP.", "id [REDACTED].")]
    #[case("task-sk-short", "task-sk-short")]
    #[case(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\nafter",
        "[REDACTED]\nafter"
    )]
    #[case("-----BEGIN CERTIFICATE-----\nabc", "-----BEGIN CERTIFICATE-----\nabc")]
    #[case("sk-abcdefghij\nklmnopqrstuvwxyz\nend.", "[REDACTED].")]
    #[case("x ghp_0123456789\r\nabcdefghijABCDEFGH y", "x [REDACTED] y")]
    #[case("sk-abcdefghijklmnopqrstu\nvwxyz0123 rest", "[REDACTED] rest")]
    #[case("task sk-\nnotes\n", "task sk-\nnotes\n")]
    fn redacts(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(
            r().redact_str(input).unwrap_or_else(|| input.to_string()),
            expected
        );
    }

    #[test]
    fn redacts_every_string_of_a_value() {
        let mut v =
            json!({"cmd": "curl -H 'x: bait-7f3a9c1e'", "n": 1, "list": ["hunter2hunter2", "ok"]});
        assert_eq!(r().redact_value(&mut v), 2);
        assert_eq!(
            v,
            json!({"cmd": "curl -H 'x: [REDACTED]'", "n": 1, "list": ["[REDACTED]", "ok"]})
        );
    }
}
