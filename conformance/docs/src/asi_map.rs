//! The *ASI map* (`asi.html`, `md/asi.md`): per risk of the OWASP Top 10 for Agentic
//! Applications (2026) as `spec/asi.toml` maps it, the requirements that address it, the
//! scenarios that test them (the trace's), and each implementation's safety verdicts on
//! those scenarios, counted, with the ones it failed; a risk no requirement addresses
//! shows its reason. And its check read back from disk.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gatehouse_conform_core::asi::{self, Asi};
use gatehouse_conform_core::spec::SpecIndex;
use gatehouse_conform_core::trace::Trace;

use super::error::DocsError;
use super::known_attacks::cell;
use super::markdown::{md_code, md_text};
use super::page::esc;
use super::reports::Implementations;

/// Loads `spec/asi.toml` for the site; its problems are the lint's.
pub fn load(spec_dir: &Path) -> Result<Asi, DocsError> {
    asi::load(&spec_dir.join("asi.toml"))
        .map_err(|e| DocsError::Lists(e.iter().map(ToString::to_string).collect()))
}

/// One column's safety verdicts over a risk's scenarios.
#[derive(Debug, Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    skipped: usize,
    unknown: usize,
}

impl Tally {
    fn words(&self) -> String {
        let mut w = vec![
            format!("{} passed", self.passed),
            format!("{} failed", self.failed.len()),
        ];
        if self.skipped > 0 {
            w.push(format!("{} skipped or not shown", self.skipped));
        }
        if self.unknown > 0 {
            w.push(format!("{} without a verdict", self.unknown));
        }
        w.join(", ")
    }
}

/// The page and its Markdown, by their paths under the output directory.
pub fn pages(
    asi: &Asi,
    spec: &SpecIndex,
    trace: &Trace,
    impls: &Implementations,
) -> Vec<(PathBuf, String)> {
    let ids = spec.ids();
    let mut s = format!(
        "<h1 id=\"asi\">The OWASP agentic risks</h1>\n<p>The OWASP Top 10 for Agentic Applications (2026), as <code>spec/asi.toml</code> maps each risk to the requirements that address it; under each, the scenarios that test those requirements and each implementation's <b>safety</b> verdicts on them (from its report; for an agent column without one, the failures the agents table lists). The list as checked: <a href=\"{}\">{}</a>.</p>\n",
        esc(&asi.url),
        esc(&asi.source)
    );
    let mut md = format!(
        "# The OWASP agentic risks\n\nThe OWASP Top 10 for Agentic Applications (2026), as `spec/asi.toml` maps each risk to the requirements that address it; under each, the scenarios that test them and each implementation's safety verdicts. The list as checked: [{}]({}).\n\n",
        md_text(&asi.source),
        asi.url
    );
    s += "<table><tr><th>risk</th><th>name</th><th>requirements</th><th>scenarios</th></tr>";
    md += "| risk | name | requirements | scenarios |\n|---|---|---|---|\n";
    let mut sections = String::new();
    let mut sections_md = String::new();
    for risk in &asi.risks {
        let reqs = risk.expand(&ids);
        let scenarios: BTreeSet<&String> = reqs
            .iter()
            .filter_map(|id| trace.requirements.get(*id))
            .flat_map(|t| t.scenarios.iter())
            .collect();
        s += &format!(
            "<tr><td><a href=\"#{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&risk.name),
            reqs.len(),
            scenarios.len(),
            id = esc(&risk.id)
        );
        md += &format!(
            "| {} | {} | {} | {} |\n",
            risk.id,
            md_text(&risk.name),
            reqs.len(),
            scenarios.len()
        );
        sections += &format!(
            "<h2 id=\"{id}\">{id} {}</h2>\n",
            esc(&risk.name),
            id = esc(&risk.id)
        );
        sections_md += &format!("\n## {} {}\n\n", risk.id, md_text(&risk.name));
        if let Some(none) = &risk.none {
            sections += &format!(
                "<p class=\"none\">No requirement addresses it: {}</p>\n",
                esc(none)
            );
            sections_md += &format!("No requirement addresses it: {}\n", md_text(none));
            continue;
        }
        sections += &format!(
            "<p>Named in <code>spec/asi.toml</code> as {}.</p>\n<details><summary>{} requirement(s)</summary><p>{}</p></details>\n",
            risk.requirements
                .iter()
                .map(|r| format!("<code>{}</code>", esc(r)))
                .collect::<Vec<_>>()
                .join(", "),
            reqs.len(),
            reqs.iter()
                .map(|r| {
                    let chapter = spec
                        .requirements
                        .get(*r)
                        .map_or("", |q| q.chapter.as_str());
                    format!(
                        "<a class=\"req-id\" href=\"spec/{}.html#{r}\">{r}</a>",
                        esc(chapter)
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        );
        sections_md += &format!(
            "Named in `spec/asi.toml` as {}: {} requirement(s), {} scenario(s).\n\n",
            risk.requirements
                .iter()
                .map(|r| md_code(r))
                .collect::<Vec<_>>()
                .join(", "),
            reqs.len(),
            scenarios.len()
        );
        sections += "<table><tr><th>implementation</th><th>safety over its scenarios</th><th>failed</th></tr>";
        sections_md += "| implementation | safety over its scenarios | failed |\n|---|---|---|\n";
        for c in &impls.columns {
            let mut t = Tally::default();
            for id in &scenarios {
                let x = cell(c, id);
                match x.safety {
                    "passed" => t.passed += 1,
                    "failed" | "errored" => t.failed.push((*id).clone()),
                    "skipped" | "not_shown" => t.skipped += 1,
                    _ => t.unknown += 1,
                }
            }
            sections += &format!(
                "<tr><td><a href=\"implementations/{l}.html\">{l}</a></td><td>{}</td><td>{}</td></tr>",
                esc(&t.words()),
                t.failed
                    .iter()
                    .map(|id| format!("<a href=\"scenarios/{id}.html\">{id}</a>", id = esc(id)))
                    .collect::<Vec<_>>()
                    .join(" "),
                l = esc(&c.label)
            );
            sections_md += &format!(
                "| {} | {} | {} |\n",
                md_text(&c.label),
                md_text(&t.words()),
                t.failed
                    .iter()
                    .map(|id| md_code(id))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        sections += &format!(
            "</table>\n<details><summary>{} scenario(s)</summary><p>{}</p></details>\n",
            scenarios.len(),
            scenarios
                .iter()
                .map(|id| format!("<a href=\"scenarios/{id}.html\">{id}</a>", id = esc(id)))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    s += "</table>\n";
    s += &sections;
    md += &sections_md;
    vec![
        (
            PathBuf::from("asi.html"),
            super::page::page("The OWASP agentic risks", 0, &s),
        ),
        (PathBuf::from("md/asi.md"), md),
    ]
}

/// The problems of the written page, one line each: a risk without its section, or
/// whose section shows neither its verdicts nor its reason.
pub fn problems(dir: &Path, asi: &Asi) -> Vec<String> {
    let path = dir.join("asi.html");
    let Ok(html) = std::fs::read_to_string(&path) else {
        return vec![format!("{}: missing", path.display())];
    };
    let mut out = Vec::new();
    for risk in &asi.risks {
        let open = format!("<h2 id=\"{}\">", risk.id);
        let Some(start) = html.find(&open) else {
            out.push(format!("asi.html: no section for {}", risk.id));
            continue;
        };
        let body = &html[start + open.len()..];
        let body = &body[..body.find("<h2 ").unwrap_or(body.len())];
        let shows = if risk.none.is_some() {
            body.contains("<p class=\"none\">No requirement addresses it: ")
        } else {
            body.contains("<th>safety over its scenarios</th>")
        };
        if !shows {
            out.push(format!(
                "asi.html: {} shows neither its verdicts nor why no requirement addresses it",
                risk.id
            ));
        }
    }
    out
}
