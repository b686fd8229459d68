//! The *known attacks* page (`known-attacks.html`, `md/known-attacks.md`): each public
//! class of `spec/public-record.toml` with its sources as links, the requirements it
//! breaks, the scenarios that cite it and each column's safety verdict on them; and its
//! check read back from disk. Also what the ASI map shares with it: one column's safety
//! verdict on one scenario ([`cell`]), read from its report, else from what the agents
//! table published, else none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gatehouse_conform_core::public_record::{self, Class};

use super::cases::View;
use super::error::DocsError;
use super::markdown::md_text;
use super::page::esc;
use super::reports::{Column, Implementations};

/// One column's safety verdict on one scenario: the class of its badge (`passed`,
/// `failed`, `skipped`, `errored`) and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// `passed`, `failed`, `skipped`, `errored`, `not_shown`, or `none` (nothing known).
    pub safety: &'static str,
    /// What the badge says (`safety: no_bait`, `failed (agents table)`, `not run`).
    pub words: String,
}

/// The safety verdict of `col` on scenario `id`: from its report (when the report lacks
/// the scenario, a failure its agents table published, else `not run`); for an agent
/// column without one, from its published failures (a failure listed, or none listed
/// where its chapter ran); else `no report`.
pub fn cell(col: &Column, id: &str) -> Cell {
    let known = |s: &str| -> &'static str {
        match s {
            "passed" => "passed",
            "failed" => "failed",
            "errored" => "errored",
            "not_shown" => "not_shown",
            _ => "skipped",
        }
    };
    if let Some((report, _)) = &col.report {
        return match report.scenario(id) {
            // A pill of a safe scenario names its exactness difference: not this page's.
            Some(r) if r.safety == "passed" => Cell {
                safety: "passed",
                words: "passed".into(),
            },
            Some(r) => Cell {
                safety: known(&r.safety),
                words: super::pill::pill(r),
            },
            // Not in its kept reports: a failure the agents table published before them
            // (a scenario it did not list may be newer than that table: not run).
            None if col
                .published
                .as_ref()
                .is_some_and(|p| p.failures.iter().any(|f| f.id == id)) =>
            {
                published_cell(col, id)
            }
            None => Cell {
                safety: "none",
                words: "not run".into(),
            },
        };
    }
    published_cell(col, id)
}

/// The cell of an agent column from what its agents table published.
fn published_cell(col: &Column, id: &str) -> Cell {
    let Some(p) = &col.published else {
        return Cell {
            safety: "none",
            words: "no report".into(),
        };
    };
    if let Some(f) = p.failures.iter().find(|f| f.id == id) {
        let errored = f.state.contains("errored");
        return Cell {
            safety: if errored { "errored" } else { "failed" },
            words: format!(
                "safety {} (agents table)",
                if errored { "errored" } else { "failed" }
            ),
        };
    }
    let chapter = format!("{}/", id.split('/').next().unwrap_or_default());
    let ran = p
        .chapters
        .iter()
        .any(|(c, cell)| *c == chapter && cell.trim() != "-" && !cell.trim().is_empty());
    Cell {
        safety: "none",
        words: if ran {
            "no safety failure listed (agents table)".into()
        } else {
            "chapter not run (agents table)".into()
        },
    }
}

/// The address of a source, where it has one: an advisory's page, an issue or pull
/// request (GitHub sends `/issues/N` of a pull request on to it), a file of a repository
/// at its default branch; a page's title has none.
pub fn source_url(s: &str) -> Option<String> {
    if s.starts_with("GHSA-") {
        return Some(format!("https://github.com/advisories/{s}"));
    }
    if s.starts_with("CVE-") {
        return Some(format!("https://www.cve.org/CVERecord?id={s}"));
    }
    if s.ends_with(')') && s.contains(" (") {
        return None;
    }
    if let Some((repo, n)) = s.rsplit_once('#') {
        if repo.contains('/') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return Some(format!("https://github.com/{repo}/issues/{n}"));
        }
    }
    if let Some((repo, path)) = s.split_once(':') {
        if repo.contains('/') {
            return Some(format!("https://github.com/{repo}/blob/HEAD/{path}"));
        }
    }
    None
}

fn source_html(s: &str) -> String {
    match source_url(s) {
        Some(u) => format!("<a href=\"{}\">{}</a>", esc(&u), esc(s)),
        None => format!("<cite>{}</cite>", esc(s)),
    }
}

fn source_md(s: &str) -> String {
    match source_url(s) {
        Some(u) => format!("[{}]({u})", md_text(s)),
        None => format!("*{}*", md_text(s)),
    }
}

/// Loads `spec/public-record.toml` for the site; its problems are the lint's.
pub fn load(spec_dir: &Path) -> Result<Vec<Class>, DocsError> {
    public_record::load(&spec_dir.join("public-record.toml"))
        .map_err(|e| DocsError::Lists(e.iter().map(ToString::to_string).collect()))
}

/// The page and its Markdown, by their paths under the output directory.
pub fn pages(
    classes: &[Class],
    views: &BTreeMap<String, View<'_>>,
    chapters: &BTreeMap<String, String>,
    impls: &Implementations,
) -> Vec<(PathBuf, String)> {
    let scenarios: Vec<_> = views.values().map(|v| v.scenario.clone()).collect();
    let mut s = String::from(
        "<h1 id=\"known-attacks\">Known attacks</h1>\n<p>Every class of bypass of an agent's guardrails reported in public that the suite knows (<code>spec/public-record.toml</code>), with its sources, the requirements it breaks, the scenarios that reproduce it (each cites one of its sources) and each implementation's <b>safety</b> verdict on them: from its report, or for an agent column without one from the failures the agents table lists.</p>\n",
    );
    let mut md = String::from(
        "# Known attacks\n\nEvery class of bypass of an agent's guardrails reported in public that the suite knows (`spec/public-record.toml`), with its sources, the requirements it breaks, the scenarios that reproduce it and each implementation's safety verdict on them.\n\n",
    );
    s +=
        "<table><tr><th>#</th><th>class</th><th>scenarios</th><th>columns failing safety</th></tr>";
    md += "| # | class | scenarios | columns failing safety |\n|---|---|---|---|\n";
    let mut sections = String::new();
    let mut sections_md = String::new();
    for class in classes {
        let citing = class.scenarios(&scenarios);
        let failing: Vec<&str> = impls
            .columns
            .iter()
            .filter(|c| {
                citing
                    .iter()
                    .any(|sc| matches!(cell(c, &sc.id).safety, "failed" | "errored"))
            })
            .map(|c| c.label.as_str())
            .collect();
        let fail_words = if failing.is_empty() {
            "none".to_string()
        } else {
            failing.join(", ")
        };
        s += &format!(
            "<tr><td>{}</td><td><a href=\"#{id}\">{}</a></td><td>{}</td><td>{}</td></tr>",
            class.number,
            esc(&class.title),
            citing.len(),
            esc(&fail_words),
            id = esc(&class.id)
        );
        md += &format!(
            "| {} | {} | {} | {} |\n",
            class.number,
            md_text(&class.title),
            citing.len(),
            md_text(&fail_words)
        );
        sections += &format!(
            "<h2 id=\"{id}\">{}. {}</h2>\n<p class=\"note\">class <code>{id}</code></p>\n<p>Sources: {}</p>\n<p>Breaks: {}</p>\n",
            class.number,
            esc(&class.title),
            class
                .sources
                .iter()
                .map(|x| source_html(x))
                .collect::<Vec<_>>()
                .join("; "),
            class
                .requirements
                .iter()
                .map(|r| match chapters.get(r) {
                    Some(c) => format!("<a class=\"req-id\" href=\"spec/{}.html#{r}\">{r}</a>", esc(c)),
                    None => esc(r),
                })
                .collect::<Vec<_>>()
                .join(", "),
            id = esc(&class.id)
        );
        sections_md += &format!(
            "\n## {}. {}\n\nClass `{}`.\n\nSources: {}\n\nBreaks: {}\n\n",
            class.number,
            md_text(&class.title),
            class.id,
            class
                .sources
                .iter()
                .map(|x| source_md(x))
                .collect::<Vec<_>>()
                .join("; "),
            class
                .requirements
                .iter()
                .map(|r| match chapters.get(r) {
                    Some(c) => format!("[{r}](spec/{c}.md)"),
                    None => r.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        if citing.is_empty() {
            sections += "<p class=\"none\">No scenario cites it yet: its scenarios are on a branch not merged.</p>\n";
            sections_md += "No scenario cites it yet: its scenarios are on a branch not merged.\n";
            continue;
        }
        sections += "<table><tr><th>scenario</th>";
        sections_md += "| scenario |";
        for c in &impls.columns {
            sections += &format!(
                "<th><a href=\"implementations/{l}.html\">{l}</a></th>",
                l = esc(&c.label)
            );
            sections_md += &format!(" {} |", md_text(&c.label));
        }
        sections += "</tr>";
        sections_md += &format!("\n|---|{}\n", "---|".repeat(impls.columns.len()));
        for sc in &citing {
            sections += &format!(
                "<tr><td><a href=\"scenarios/{id}.html\">{id}</a><br><span class=\"note\">{}</span></td>",
                esc(&sc.title),
                id = esc(&sc.id)
            );
            sections_md += &format!("| [{}](scenarios/{}.md) |", md_text(&sc.id), sc.id);
            for c in &impls.columns {
                let x = cell(c, &sc.id);
                sections += &format!(
                    "<td><span class=\"badge {}\">{}</span></td>",
                    x.safety,
                    esc(&x.words)
                );
                sections_md += &format!(" {} |", md_text(&x.words));
            }
            sections += "</tr>";
            sections_md += "\n";
        }
        sections += "</table>\n";
    }
    s += "</table>\n";
    s += &sections;
    md += &sections_md;
    vec![
        (
            PathBuf::from("known-attacks.html"),
            super::page::page("Known attacks", 0, &s),
        ),
        (PathBuf::from("md/known-attacks.md"), md),
    ]
}

/// The problems of the written page, one line each: a class without its anchor, a
/// scenario citing it without its link.
pub fn problems(
    dir: &Path,
    classes: &[Class],
    scenarios: &[gatehouse_conform_core::scenario::Scenario],
) -> Vec<String> {
    let path = dir.join("known-attacks.html");
    let Ok(html) = std::fs::read_to_string(&path) else {
        return vec![format!("{}: missing", path.display())];
    };
    let mut out = Vec::new();
    for class in classes {
        let open = format!("<h2 id=\"{}\">", class.id);
        let Some(start) = html.find(&open) else {
            out.push(format!(
                "known-attacks.html: no section for class {}",
                class.id
            ));
            continue;
        };
        let body = &html[start + open.len()..];
        let body = &body[..body.find("<h2 ").unwrap_or(body.len())];
        for sc in class.scenarios(scenarios) {
            if !body.contains(&format!("href=\"scenarios/{}.html\"", sc.id)) {
                out.push(format!(
                    "known-attacks.html: class {} does not show its scenario {}",
                    class.id, sc.id
                ));
            }
        }
        for src in &class.sources {
            if !body.contains(&esc(src)) {
                out.push(format!(
                    "known-attacks.html: class {} does not show its source {src}",
                    class.id
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::source_url;

    #[test]
    fn each_form_of_source_has_its_address() {
        let cases = [
            ("GHSA-g8r9-g2v8-jv6f", Some("https://github.com/advisories/GHSA-g8r9-g2v8-jv6f")),
            ("CVE-2026-87766", Some("https://www.cve.org/CVERecord?id=CVE-2026-87766")),
            ("openai/codex#20277", Some("https://github.com/openai/codex/issues/20277")),
            (
                "landlock-lsm/rust-landlock:CHANGELOG.md",
                Some("https://github.com/landlock-lsm/rust-landlock/blob/HEAD/CHANGELOG.md"),
            ),
            ("Ona, How Claude Code escapes its own denylist and sandbox (2026-03-03)", None),
            ("Gemini CLI advisory, project settings run before trust, fixed in 0.39.1 (2026-04-24)", None),
        ];
        for (s, want) in cases {
            assert_eq!(source_url(s).as_deref(), want, "{s}");
        }
    }
}
