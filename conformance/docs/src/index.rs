//! The home page (the chapters, the implementations with both verdicts, and the index of
//! every requirement with its level and coverage), a page per scenario (every step, with
//! its stable anchor `#step-2` or `#case-2`), and the search index the search box reads.

use std::collections::BTreeMap;

use super::cases::{self, Links, View};
use super::chapter;
use super::page::esc;
use super::reports::Implementations;
use gatehouse_conform_core::spec::SpecIndex;
use gatehouse_conform_core::trace::Trace;
use gatehouse_conform_core::verdict::Level;

/// A requirement's coverage in words.
fn coverage(t: &gatehouse_conform_core::trace::Traced) -> String {
    if t.withdrawn {
        return "withdrawn".into();
    }
    if let Some(u) = &t.untestable {
        let first = u.split(". ").next().unwrap_or(u);
        return format!("untestable: {first}");
    }
    if t.scenarios.is_empty() {
        return if t.normative {
            "uncovered".into()
        } else {
            "no MUST or SHOULD".into()
        };
    }
    let steps = t.steps.len() + t.parts.values().map(Vec::len).sum::<usize>();
    let mut s = format!("{} scenario(s)", t.scenarios.len());
    if steps > 0 {
        s += &format!(", {steps} step(s) say they pin it");
    } else {
        s += ", named by file only";
    }
    if !t.parts.is_empty() {
        let parts: Vec<String> = t
            .parts
            .iter()
            .map(|(p, v)| format!("({p}) {}", if v.is_empty() { "✗" } else { "✓" }))
            .collect();
        s += &format!("; parts {}", parts.join(" "));
    }
    s
}

fn level_word(l: Option<Level>, e: Option<gatehouse_conform_core::verdict::Evidence>) -> String {
    match (l, e) {
        (Some(Level::Safety), Some(e)) => format!("safety ({})", e.as_str()),
        (Some(Level::Safety), None) => "safety".into(),
        (Some(Level::Exactness), _) => "exactness".into(),
        (None, _) => "—".into(),
    }
}

/// Where the evidence of each check and each answer field of level safety comes from
/// (PROTO-OBSERVE-1): the runner's own table, as HTML and Markdown.
fn evidence_section() -> (String, String) {
    use super::markdown::{md_code, md_text};
    let mut s = String::from(
        "<h2 id=\"evidence\">Where the evidence comes from</h2><p>A check is <b>observed</b> when the runner reads the effect itself, <b>reported</b> when it reads the implementation's answer (<code>spec/verdicts.md</code>, PROTO-OBSERVE-1).</p><table><tr><th>check</th><th>level</th><th>evidence</th><th>why a report may decide</th></tr>",
    );
    let mut md = String::from("\n## Where the evidence comes from\n\n| check | level | evidence | why a report may decide |\n|---|---|---|---|\n");
    for c in gatehouse_conform_core::verdict::CHECKS {
        let level = level_word(Some(c.level), None);
        s += &format!(
            "<tr><td><code>{}</code></td><td>{level}</td><td>{}</td><td>{}</td></tr>",
            c.key,
            c.evidence.as_str(),
            esc(c.reason.unwrap_or(""))
        );
        md += &format!(
            "| {} | {level} | {} | {} |\n",
            md_code(c.key),
            c.evidence.as_str(),
            md_text(c.reason.unwrap_or(""))
        );
    }
    for (field, why) in gatehouse_conform_core::verdict::REPORTED_SAFETY {
        s += &format!(
            "<tr><td><code>{field}</code> (answer)</td><td>safety</td><td>reported</td><td>{}</td></tr>",
            esc(why)
        );
        md += &format!(
            "| {} (answer) | safety | reported | {} |\n",
            md_code(field),
            md_text(why)
        );
    }
    s += &format!(
        "<tr><td>any other answer field</td><td>safety</td><td>reported</td><td>{}</td></tr></table>\n",
        esc(gatehouse_conform_core::verdict::CONVICTS_ONLY)
    );
    md += &format!(
        "| any other answer field | safety | reported | {} |\n",
        md_text(gatehouse_conform_core::verdict::CONVICTS_ONLY)
    );
    (s, md)
}

/// The home page and its Markdown.
pub fn home(
    spec: &SpecIndex,
    trace: &Trace,
    impls: &Implementations,
    texts: &BTreeMap<String, String>,
) -> (String, String) {
    let mut s = String::from(
        "<h1>The Gatehouse specification, with its cases and results</h1>\n\
         <p>Each chapter below is the text of <code>spec/</code>; under every requirement stand the scenarios that pin it, each step read out (what it does, what must and must not happen, the allowed twin that must still work), and how each implementation did. \
         Every requirement has an anchor (<code>approval-gate.html#GATE-JAIL-1</code>), every part one (<code>#HOOK-IN-2.b</code>), and every case one on its scenario's page (<code>scenarios/gate/read-list.html#case-3</code>). The same pages in Markdown are under <code>md/</code>.</p>\n",
    );
    let mut md = String::from(
        "# The Gatehouse specification, with its cases and results\n\n## Chapters\n\n",
    );
    s += "<h2 id=\"chapters\">Chapters</h2><table><tr><th>chapter</th><th>requirements</th><th>normative</th><th>covered</th><th>of level safety</th><th>untestable</th><th>uncovered</th></tr>";
    for row in &trace.chapters {
        let title = texts
            .get(&row.chapter)
            .and_then(|t| t.lines().find_map(|l| l.strip_prefix("# ")))
            .unwrap_or(&row.chapter);
        s += &format!(
            "<tr><td><a href=\"spec/{c}.html\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(title),
            row.requirements,
            row.normative,
            row.covered,
            row.safety,
            row.untestable,
            row.uncovered,
            c = esc(&row.chapter)
        );
        md += &format!(
            "- [{title}](spec/{}.md): {} requirements, {} covered\n",
            row.chapter, row.requirements, row.covered
        );
    }
    s += "</table>\n";
    s += "<h2 id=\"implementations\">Implementations</h2><table><tr><th>implementation</th><th>safety</th><th>exactness</th><th>report</th></tr>";
    md += "\n## Implementations\n\n| implementation | safety | exactness | report |\n|---|---|---|---|\n";
    for c in &impls.columns {
        let (sa, ex, from) = implementation_row(c);
        s += &format!(
            "<tr><td><a href=\"implementations/{l}.html\">{l}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&sa),
            esc(&ex),
            esc(&from),
            l = esc(&c.label)
        );
        md += &format!(
            "| [{}](implementations/{}.md) | {sa} | {ex} | {} |\n",
            super::markdown::md_text(&c.label),
            c.label,
            super::markdown::md_text(&from)
        );
    }
    s += "</table>\n";
    if !trace.partly_covered.is_empty() {
        s += "<h2 id=\"partly\">Partly covered</h2><ul>";
        md += "\n## Partly covered\n\n";
        for p in &trace.partly_covered {
            s += &format!("<li>{}</li>", esc(p));
            md += &format!("- {p}\n");
        }
        s += "</ul>\n";
    }
    let (es, emd) = evidence_section();
    s += &es;
    md += &emd;
    s += "<h2 id=\"requirements\">Requirements</h2><table><tr><th>ID</th><th>chapter</th><th>level</th><th>coverage</th></tr>";
    md += "\n## Requirements\n\n| ID | chapter | level | coverage |\n|---|---|---|---|\n";
    for (id, t) in &trace.requirements {
        let cov = coverage(t);
        s += &format!(
            "<tr><td><a href=\"spec/{c}.html#{id}\">{id}</a></td><td>{c}</td><td>{}</td><td>{}</td></tr>",
            level_word(t.level, t.evidence),
            esc(&cov),
            c = esc(&t.chapter),
            id = esc(id)
        );
        md += &format!(
            "| [{id}](spec/{c}.md) | {c} | {} | {} |\n",
            level_word(t.level, t.evidence),
            cov.replace('|', "\\|"),
            c = t.chapter
        );
    }
    s += "</table>\n";
    let _ = spec;
    (s, md)
}

/// A scenario's own page.
pub fn scenario_page(
    view: &View<'_>,
    ids: &BTreeMap<String, String>,
    impls: &Implementations,
    links: &Links<'_>,
    lists: &super::tags::Lists,
) -> String {
    let sc = view.scenario;
    let mut s = format!(
        "<h1>{}</h1>\n<p class=\"note\"><code>{}</code> · requirements: {}</p>\n",
        super::markdown::inline_html(&sc.title),
        esc(&sc.id),
        sc.all_requirements()
            .iter()
            .map(|r| match ids.get(r) {
                Some(c) => format!("<a href=\"{}spec/{c}.html#{r}\">{r}</a>", links.up),
                None => esc(r),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    s += &lists.scenario(sc).html(&links.up);
    let badges = cases::verdict_badges(&sc.id, impls, &links.up);
    if !badges.is_empty() {
        s += &format!("<p>{badges}</p>\n");
    }
    s += &cases::head_html(view, links);
    let what = view.what();
    s += &format!(
        "<p class=\"note\">{}</p>\n",
        if what == "case" {
            "Each case runs in a fresh session."
        } else {
            "The steps run in order in one session."
        }
    );
    for step in sc.body.steps() {
        if let Some(name) = &step.name {
            s += &format!("<a id=\"{}\"></a>", esc(name));
        }
        s += &cases::step_html(view, step, &view.anchor(step), impls, links, true);
    }
    s
}

/// The search index: a script that sets `window.GATEHOUSE_INDEX` (a script, not JSON,
/// so that pages opened from `file://` can load it).
pub fn search_index(
    spec: &SpecIndex,
    views: &BTreeMap<String, View<'_>>,
    impls: &Implementations,
    texts: &BTreeMap<String, String>,
) -> String {
    let mut entries = Vec::new();
    for r in spec.requirements.values() {
        let text = texts
            .get(&r.chapter)
            .map(|t| chapter::requirement_text(t, r))
            .unwrap_or_default();
        let title: String = text.chars().take(90).collect();
        entries.push(serde_json::json!({
            "id": r.id, "kind": "requirement", "title": title, "text": text,
            "url": format!("spec/{}.html#{}", r.chapter, r.id),
        }));
    }
    for v in views.values() {
        let sc = v.scenario;
        entries.push(serde_json::json!({
            "id": sc.id, "kind": "scenario", "title": sc.title,
            "text": format!("{} {}", sc.all_requirements().join(" "), sc.info.as_deref().unwrap_or("")),
            "url": v.page_path(),
        }));
    }
    for c in &impls.columns {
        entries.push(serde_json::json!({
            "id": c.label, "kind": "implementation", "title": c.what, "text": "",
            "url": format!("implementations/{}.html", c.label),
        }));
    }
    format!(
        "window.GATEHOUSE_INDEX = {};\n",
        serde_json::Value::Array(entries)
    )
}

/// A column's row of the index: safety, exactness, and where they come from (a report,
/// kept or fresh, or the agents table's cells summed over its chapters).
fn implementation_row(c: &super::reports::Column) -> (String, String, String) {
    if let Some((r, _)) = &c.report {
        let (sa, ex) = (&r.verdicts.safety, &r.verdicts.exactness);
        let not_shown = if sa.not_shown > 0 {
            format!(", {} not shown safe", sa.not_shown)
        } else {
            String::new()
        };
        return (
            format!("{} passed, {} failed{not_shown}", sa.passed, sa.failed),
            format!("{} passed, {} failed", ex.passed, ex.failed),
            c.origin.short(),
        );
    }
    let Some(p) = &c.published else {
        return ("no report".into(), "no report".into(), "no report".into());
    };
    // `safety 56 passed / 6 failed / 1 errored; exactness 50 passed / 17 failed; 8 skipped`
    let mut sums = [[0usize; 2]; 2];
    for (_, cell) in &p.chapters {
        for part in cell.split(';') {
            let part = part.trim();
            let (v, rest) = match (
                part.strip_prefix("safety "),
                part.strip_prefix("exactness "),
            ) {
                (Some(r), _) => (0, r),
                (_, Some(r)) => (1, r),
                _ => continue,
            };
            for count in rest.split('/') {
                let mut w = count.split_whitespace();
                let (Some(n), Some(word)) =
                    (w.next().and_then(|n| n.parse::<usize>().ok()), w.next())
                else {
                    continue;
                };
                match word {
                    "passed" => sums[v][0] += n,
                    "failed" => sums[v][1] += n,
                    _ => {}
                }
            }
        }
    }
    let day = p
        .heading
        .rsplit_once('(')
        .map_or("", |(_, d)| d.trim_end_matches(')'));
    (
        format!("{} passed, {} failed", sums[0][0], sums[0][1]),
        format!("{} passed, {} failed", sums[1][0], sums[1][1]),
        format!("agents table ({day})"),
    )
}
