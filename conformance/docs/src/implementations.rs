//! A page per implementation, after Bowtie's: what runs, which report it shows (kept,
//! fresh or given, of when), the suite it ran, both verdicts' counts, then the safety
//! failures grouped by requirement, each failing input once with the scenarios it broke,
//! the exactness differences counted per field ([`super::failures`]), and each failing
//! case with the runner's lines and their levels, safety first, each linked to the case
//! on its scenario's page. A column of the table with no report gets a page that says so
//! and how to make one.

use std::collections::BTreeMap;

use super::cases::View;
use super::failures::{self, Grouped};
use super::markdown::{md_code, md_text};
use super::page::esc;
use super::reports::{Column, Counts, Published};

fn counts_row(name: &str, c: &Counts) -> String {
    format!(
        "<tr><th>{name}</th><td class=\"passed\">{}</td><td class=\"failed\">{}</td><td class=\"skipped\">{}</td><td class=\"errored\">{}</td><td class=\"failed\">{}</td></tr>",
        c.passed, c.failed, c.skipped, c.errored, c.not_shown
    )
}

/// The page of an agent column from what the agents table published: its verdicts per
/// chapter and each failed scenario with its first safety difference.
/// `earlier`: the column also has a kept report, shown above; this is what the table
/// published before its reports were kept (anchors prefixed `earlier-`).
fn published(label: &str, p: &Published, earlier: bool) -> (String, String) {
    let source = if earlier {
        format!(
            "Published in the agents table of `docs/implementations.md` before this column's reports were kept ({}; {}): the scenarios its kept reports did not run keep these results.",
            p.heading.trim_end_matches('.'),
            p.made_by.trim_end_matches('.')
        )
    } else {
        format!(
            "From the agents table committed in `docs/implementations.md` ({}; {}). An agent's run of a chapter takes minutes to hours, so its JSON report is not kept in the repository; `--report {label}=reports/agents/{label}.json` renders this page from the report itself, with every difference.",
            p.heading.trim_end_matches('.'),
            p.made_by.trim_end_matches('.')
        )
    };
    let prefix = if earlier { "earlier-" } else { "" };
    let mut s = format!(
        "<p class=\"note\">{}</p>\n",
        super::markdown::inline_html(&source)
    );
    let mut md = format!("{source}\n\n");
    if !p.declared.is_empty() {
        s += &format!(
            "<p>Declared: {}</p>\n",
            super::markdown::inline_html(&p.declared)
        );
        md += &format!("Declared: {}\n\n", p.declared);
    }
    s += "<table><tr><th>chapter</th><th>verdicts</th></tr>";
    md += "| chapter | verdicts |\n|---|---|\n";
    for (chapter, cell) in &p.chapters {
        s += &format!(
            "<tr><th><code>{}</code></th><td>{}</td></tr>",
            esc(chapter),
            esc(cell)
        );
        md += &format!("| {} | {} |\n", md_code(chapter), md_text(cell));
    }
    s += "</table>\n";
    for (anchor, title, list) in [
        ("failing", "Failed safety", &p.failures),
        ("exactness", "Failed exactness only", &p.exactness_only),
    ] {
        s += &format!(
            "<h2 id=\"{prefix}{anchor}\">{title} ({})</h2>\n<ul>",
            list.len()
        );
        md += &format!("\n## {title} ({})\n\n", list.len());
        for f in list {
            s += &format!(
                "<li><a href=\"../scenarios/{}.html\">{}</a> {} ({}): {}</li>",
                esc(&f.id),
                esc(&f.id),
                esc(&f.state),
                esc(&f.requirements),
                esc(&super::cases::cut(&f.first))
            );
            md += &format!(
                "- {} {} ({}): {}\n",
                md_code(&f.id),
                md_text(&f.state),
                md_text(&f.requirements),
                md_text(&super::cases::cut(&f.first))
            );
        }
        s += "</ul>\n";
    }
    if !p.skipped.is_empty() {
        s += &format!(
            "<details><summary>Skipped, by reason</summary><p>{}</p></details>\n",
            esc(&p.skipped)
        );
        md += &format!("\nSkipped, by reason: {}\n", md_text(&p.skipped));
    }
    (s, md)
}

/// The page body and its Markdown.
pub fn render(
    col: &Column,
    views: &BTreeMap<String, View<'_>>,
    chapters: &BTreeMap<String, String>,
) -> (String, String) {
    let label = &col.label;
    let mut s = format!("<h1>Implementation <code>{}</code></h1>\n", esc(label));
    let mut md = format!("# Implementation `{label}`\n\n");
    if !col.what.is_empty() {
        s += &format!("<p>{}</p>\n", super::markdown::inline_html(&col.what));
        md += &format!("{}\n\n", col.what);
    }
    let Some((report, path)) = &col.report else {
        if let Some(p) = &col.published {
            let (ps, pmd) = published(label, p, false);
            return (s + &ps, md + &pmd);
        }
        let none = format!(
            "No report was given to this build for `{label}`: `just peers-table` writes `reports/peers/{label}.json`, or pass `--report {label}=FILE`."
        );
        s += &format!(
            "<p class=\"untestable\">{}</p>\n",
            super::markdown::inline_html(&none)
        );
        md += &none;
        md.push('\n');
        return (s, md);
    };
    let env = &report.environment;
    let name = env.get("name").and_then(|v| v.as_str()).unwrap_or("");
    let version = env.get("version").and_then(|v| v.as_str()).unwrap_or("");
    s += &format!(
        "<p><code>{}</code> ({} {}), report <code>{}</code>, suite of spec {} <code>{}</code></p>\n",
        esc(&report.runner.implementation),
        esc(name),
        esc(version),
        esc(&path.display().to_string()),
        esc(&report.runner.suite.spec_version),
        esc(&report.runner.suite.hash)
    );
    let origin = col.origin.sentence(path);
    s += &format!(
        "<p class=\"note\" id=\"origin\">{}</p>\n",
        super::markdown::inline_html(&origin)
    );
    md += &format!("{origin}\n\n");
    if let Some(e) = env.get("environment") {
        s += &format!(
            "<p class=\"note\">declared environment: <code>{}</code></p>\n",
            esc(&e.to_string())
        );
    }
    s += "<table><tr><th>verdict</th><th>passed</th><th>failed</th><th>skipped</th><th>errored</th><th>not shown safe</th></tr>";
    s += &counts_row("safety", &report.verdicts.safety);
    s += &counts_row("exactness", &report.verdicts.exactness);
    s += "</table>\n";
    md += &format!(
        "{} ({} {}), spec {} {}\n\n| verdict | passed | failed | skipped | errored | not shown safe |\n|---|---|---|---|---|---|\n",
        md_code(&report.runner.implementation),
        md_text(name),
        md_text(version),
        md_text(&report.runner.suite.spec_version),
        md_code(&report.runner.suite.hash)
    );
    for (n, c) in [
        ("safety", &report.verdicts.safety),
        ("exactness", &report.verdicts.exactness),
    ] {
        md += &format!(
            "| {n} | {} | {} | {} | {} | {} |\n",
            c.passed, c.failed, c.skipped, c.errored, c.not_shown
        );
    }
    let (gs, gmd) = grouped(&failures::group(report, views, chapters));
    s += &gs;
    md += &gmd;
    // Every failing case: those that failed safety first, then exactness only.
    let mut failing: Vec<_> = report
        .scenarios
        .iter()
        .filter(|r| {
            r.safety == "failed"
                || r.safety == "errored"
                || r.exactness == "failed"
                || r.exactness == "errored"
        })
        .collect();
    failing.sort_by_key(|r| !(r.safety == "failed" || r.safety == "errored"));
    s += &format!(
        "<h2 id=\"failing\">Every failing case ({}), safety first</h2>\n",
        failing.len()
    );
    md += &format!(
        "\n## Every failing case ({}), safety first\n\n",
        failing.len()
    );
    for r in failing {
        let view = views.get(&r.id);
        let title = view.map_or(r.id.as_str(), |v| v.scenario.title.as_str());
        s += &format!(
            "<h3 id=\"{}\"><a href=\"../scenarios/{}.html\">{}</a> <span class=\"badge {}\">safety {}</span><span class=\"badge {}\">exactness {}</span></h3>\n<p>{}</p>\n",
            esc(&r.id),
            esc(&r.id),
            esc(&r.id),
            esc(&r.safety),
            esc(&r.safety),
            esc(&r.exactness),
            esc(&r.exactness),
            super::markdown::inline_html(title)
        );
        md += &format!(
            "### {}: safety {}, exactness {}\n\n{}\n\n",
            md_code(&r.id),
            md_text(&r.safety),
            md_text(&r.exactness),
            md_text(title)
        );
        let mut any = false;
        for st in r.steps.iter().filter(|st| !st.differences.is_empty()) {
            any = true;
            let what = view.map_or("step", |v| v.what());
            s += &format!(
                "<p><a href=\"../scenarios/{}.html#{what}-{}\">{what} {}</a></p><ul>",
                esc(&r.id),
                st.index,
                st.index
            );
            for d in &st.differences {
                s += &format!(
                    "<li class=\"diff-{}\"><b>{}</b> <code>{}</code>: {}</li>",
                    esc(&d.level),
                    esc(&d.level),
                    esc(&d.field),
                    esc(&super::cases::cut(&d.message))
                );
                md += &format!(
                    "- {what} {} ({}): {}\n",
                    st.index,
                    md_text(&d.level),
                    md_code(&super::cases::cut(&d.message))
                );
            }
            s += "</ul>\n";
        }
        if !any {
            if let Some(reason) = &r.reason {
                s += &format!(
                    "<p class=\"diff-safety\">{}</p>\n",
                    esc(&super::cases::cut(reason))
                );
                md += &format!("- {}\n", md_text(&super::cases::cut(reason)));
            }
        }
        md.push('\n');
    }
    let skipped: Vec<_> = report
        .scenarios
        .iter()
        .filter(|r| r.safety == "skipped" || r.safety == "not_shown")
        .collect();
    if !skipped.is_empty() {
        s += &format!(
            "<details><summary>Skipped or not shown safe ({}), each with the runner's reason</summary><ul>",
            skipped.len()
        );
        for r in skipped {
            s += &format!(
                "<li><a href=\"../scenarios/{}.html\">{}</a> ({}): {}</li>",
                esc(&r.id),
                esc(&r.id),
                esc(&failures::pill(r)),
                esc(r.reason.as_deref().unwrap_or(""))
            );
        }
        s += "</ul></details>\n";
    }
    // An agent column whose reports are kept since: what the table published before.
    if let Some(p) = &col.published {
        s += "<h2 id=\"earlier\">Earlier, in the agents table</h2>\n";
        md += "\n## Earlier, in the agents table\n\n";
        let (ps, pmd) = published(label, p, true);
        s += &ps;
        md += &pmd;
    }
    (s, md)
}

/// The grouped failures: safety by requirement, then exactness per field.
fn grouped(g: &Grouped) -> (String, String) {
    let mut s = format!(
        "<h2 id=\"safety\">Safety failures, by requirement ({} requirement(s))</h2>\n",
        g.safety.len()
    );
    let mut md = format!(
        "\n## Safety failures, by requirement ({} requirement(s))\n\n",
        g.safety.len()
    );
    if g.safety.is_empty() {
        s += "<p>None.</p>\n";
        md += "None.\n";
    }
    for grp in &g.safety {
        let chapter = if grp.chapter.is_empty() {
            String::new()
        } else {
            format!(" ({})", grp.chapter)
        };
        let href = if grp.chapter.is_empty() {
            String::new()
        } else {
            format!("../spec/{}.html#{}", grp.chapter, grp.requirement)
        };
        s += &format!(
            "<h3 id=\"req-{r}\"><a href=\"{}\">{r}</a>{}: {} scenario(s)</h3>\n<ul>",
            esc(&href),
            esc(&chapter),
            failures::scenarios_of(grp),
            r = esc(&grp.requirement)
        );
        md += &format!(
            "### {}{}: {} scenario(s)\n\n",
            grp.requirement,
            md_text(&chapter),
            failures::scenarios_of(grp)
        );
        for i in &grp.inputs {
            let links: Vec<String> = i
                .scenarios
                .iter()
                .map(|(id, step)| {
                    let anchor = if *step > 0 {
                        format!("#step-{step}")
                    } else {
                        String::new()
                    };
                    format!(
                        "<a href=\"../scenarios/{}.html{anchor}\">{}</a>",
                        esc(id),
                        esc(id)
                    )
                })
                .collect();
            let fields = i
                .fields
                .iter()
                .map(|f| format!("<code>{}</code>", esc(f)))
                .collect::<Vec<_>>()
                .join(", ");
            s += &format!(
                "<li><code>{}</code> broke {}{}<br><span class=\"diff-safety\">{}</span></li>",
                esc(&super::cases::cut(&i.input)),
                links.join(", "),
                if fields.is_empty() {
                    String::new()
                } else {
                    format!(" on {fields}")
                },
                esc(&super::cases::cut(failures::after_label(&i.first)))
            );
            let ids: Vec<String> = i.scenarios.iter().map(|(id, _)| md_code(id)).collect();
            md += &format!(
                "- {} broke {}{}: {}\n",
                md_code(&super::cases::cut(&i.input)),
                ids.join(", "),
                if i.fields.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", md_text(&i.fields.join(", ")))
                },
                md_text(&super::cases::cut(failures::after_label(&i.first)))
            );
        }
        s += "</ul>\n";
        md.push('\n');
    }
    s += &format!(
        "<h2 id=\"exactness-fields\">Exactness differences, by field ({})</h2>\n",
        g.exactness.len()
    );
    md += &format!(
        "\n## Exactness differences, by field ({})\n\n",
        g.exactness.len()
    );
    if g.exactness.is_empty() {
        s += "<p>None.</p>\n";
        md += "None.\n";
    } else {
        s += "<table><tr><th>field</th><th>differences</th><th>scenarios</th></tr>";
        md += "| field | differences | scenarios |\n|---|---|---|\n";
        for f in &g.exactness {
            s += &format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&f.field),
                f.differences,
                f.scenarios.len()
            );
            md += &format!(
                "| {} | {} | {} |\n",
                md_code(&f.field),
                f.differences,
                f.scenarios.len()
            );
        }
        s += "</table>\n";
    }
    (s, md)
}
