//! The form of a scenario's `sources`: where a public report of the behaviour it
//! reproduces can be found. Four forms, each precise enough to look up:
//!
//! - an advisory: `GHSA-xxxx-xxxx-xxxx` or `CVE-YYYY-NNNN`;
//! - an issue or pull request: `owner/repo#N`;
//! - a file in a repository: `owner/repo:path` (a changelog, say);
//! - a page: its title and date, `Title (YYYY-MM-DD)`.
//!
//! Which public classes the suite knows, and which sources each lists, is
//! `spec/public-record.toml`'s; this module only says whether one string has a form.

/// Checks one source's form; the error says which forms are accepted.
pub fn check_form(source: &str) -> Result<(), String> {
    if source.trim() != source || source.is_empty() {
        return Err(format!(
            "source `{source}` is empty or has surrounding spaces"
        ));
    }
    if is_advisory(source) || is_issue(source) || is_repo_file(source) || is_page(source) {
        return Ok(());
    }
    Err(format!(
        "source `{source}` has no known form: write an advisory (`GHSA-xxxx-xxxx-xxxx`, \
         `CVE-2026-1234`), an issue or pull request (`owner/repo#123`), a file in a repository \
         (`owner/repo:CHANGELOG.md`) or a page's title and date (`Title (2026-03-03)`)"
    ))
}

fn is_advisory(s: &str) -> bool {
    if let Some(rest) = s.strip_prefix("GHSA-") {
        let groups: Vec<&str> = rest.split('-').collect();
        return groups.len() == 3
            && groups.iter().all(|g| {
                g.len() == 4
                    && g.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
    }
    if let Some(rest) = s.strip_prefix("CVE-") {
        return match rest.split_once('-') {
            Some((year, n)) => {
                year.len() == 4 && all_digits(year) && (4..=7).contains(&n.len()) && all_digits(n)
            }
            None => false,
        };
    }
    false
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `owner/repo`: GitHub's characters for both halves.
fn is_repo(s: &str) -> bool {
    let name = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    match s.split_once('/') {
        Some((owner, repo)) => name(owner) && name(repo) && !owner.starts_with('.'),
        None => false,
    }
}

fn is_issue(s: &str) -> bool {
    match s.rsplit_once('#') {
        Some((repo, n)) => is_repo(repo) && all_digits(n) && !n.starts_with('0'),
        None => false,
    }
}

fn is_repo_file(s: &str) -> bool {
    match s.split_once(':') {
        Some((repo, path)) => {
            is_repo(repo)
                && !path.is_empty()
                && !path.starts_with('/')
                && !path.split('/').any(|c| c.is_empty() || c == "..")
                && !path.contains(char::is_whitespace)
        }
        None => false,
    }
}

fn is_page(s: &str) -> bool {
    let Some(title) = s.strip_suffix(')') else {
        return false;
    };
    let Some((title, date)) = title.rsplit_once(" (") else {
        return false;
    };
    let b = date.as_bytes();
    title.trim().len() >= 3
        && b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && all_digits(&date[..4])
        && all_digits(&date[5..7])
        && all_digits(&date[8..])
        && (1..=12).contains(&date[5..7].parse::<u8>().unwrap_or(0))
        && (1..=31).contains(&date[8..].parse::<u8>().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::check_form;

    #[test]
    fn the_four_forms_pass() {
        for ok in [
            "GHSA-g8r9-g2v8-jv6f",
            "CVE-2026-87766",
            "openai/codex#20277",
            "google-gemini/gemini-cli#28175",
            "landlock-lsm/rust-landlock:CHANGELOG.md",
            "Ona, How Claude Code escapes its own denylist and sandbox (2026-03-03)",
        ] {
            assert_eq!(check_form(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn near_misses_fail() {
        for bad in [
            "",
            " openai/codex#1",
            "GHSA-g8r9-g2v8",
            "GHSA-G8R9-G2V8-JV6F",
            "CVE-26-1",
            "openai/codex#",
            "openai/codex#01",
            "codex#12",
            "openai/codex:",
            "openai/codex:../x",
            "openai/codex:/etc/passwd",
            "a page without a date",
            "A page (2026-13-01)",
            "A page (2026-3-3)",
            "https://example.com/x",
        ] {
            assert!(check_form(bad).is_err(), "{bad:?} passed");
        }
    }
}
