//! A chapter of `spec/` as a page, CommonMark-style: its text as written, each
//! requirement's ID an anchor (`#HOOK-IN-2`), each part (`**(a)**`) an anchor
//! (`#HOOK-IN-2.a`), and under every requirement the cases that pin it, read as a person
//! reads them, or the written reason why none can (`untestable.toml`).

use std::collections::BTreeMap;

use super::cases::{self, Links, View};
use super::markdown::{self, Rewrite};
use super::page::esc;
use super::reports::Implementations;
use gatehouse_conform_core::scenario::Step;
use gatehouse_conform_core::spec::Requirement;
use gatehouse_conform_core::trace::Traced;

/// What a chapter page needs of the whole site.
pub struct Context<'a> {
    /// Each requirement as the spec defines it.
    pub requirements: &'a BTreeMap<String, Requirement>,
    /// The trace: which scenarios and steps pin each requirement.
    pub traced: &'a BTreeMap<String, Traced>,
    /// Every scenario, by id, with its file's text.
    pub views: &'a BTreeMap<String, View<'a>>,
    /// The implementations and their reports.
    pub impls: &'a Implementations,
    /// Every chapter stem.
    pub chapters: &'a [String],
    /// Each requirement ID and its chapter.
    pub ids: &'a BTreeMap<String, String>,
    /// The source link of a repository file and line, from a page one level down.
    pub source: &'a dyn Fn(&str, usize) -> String,
    /// The public classes and OWASP risks, named under each requirement they list.
    pub lists: &'a super::tags::Lists,
}

/// The chapter's text with requirement anchors, part anchors and one marker line after
/// each requirement (indented into its list item, so that the cases stay inside it).
pub fn marked(text: &str, reqs: &[&Requirement]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut sorted: Vec<&&Requirement> = reqs.iter().collect();
    sorted.sort_by_key(|r| std::cmp::Reverse(r.line));
    for r in sorted {
        let start = r.line - 1;
        let Some(first) = lines.get(start).cloned() else {
            continue;
        };
        let indent = first.len() - first.trim_start().len();
        let t = first.trim_start();
        let marker_width = ["- ", "* ", "+ "]
            .iter()
            .find(|m| t.starts_with(**m))
            .map(|m| m.len())
            .or_else(|| {
                let d = t.bytes().take_while(u8::is_ascii_digit).count();
                (d > 0 && (t[d..].starts_with(". ") || t[d..].starts_with(") "))).then_some(d + 2)
            })
            .unwrap_or(0);
        let id = &r.id;
        lines[start] = first.replacen(
            &format!("**[{id}]**"),
            &format!("<strong><a class=\"req-id\" id=\"{id}\" href=\"#{id}\">[{id}]</a></strong>"),
            1,
        );
        for line in lines.iter_mut().take(r.end_line).skip(start) {
            for p in &r.parts {
                *line = line.replacen(
                    &format!("**({p})**"),
                    &format!("<strong class=\"part\" id=\"{id}.{p}\">({p})</strong>"),
                    1,
                );
            }
        }
        let pad = " ".repeat(indent + marker_width);
        lines.insert(
            r.end_line.min(lines.len()),
            format!("{pad}{}", markdown::marker_line(id)),
        );
    }
    lines.join("\n") + "\n"
}

/// The steps of `view` that pin `id` or one of its parts, each with the parts it pins.
fn pinning<'v>(view: &'v View<'_>, traced: &Traced, id: &str) -> Vec<(&'v Step, Vec<String>)> {
    let sid = &view.scenario.id;
    let mut out = Vec::new();
    for step in view.scenario.body.steps() {
        let at = format!("{sid}#{}", step.index);
        let mut what = Vec::new();
        if traced.steps.contains(&at) {
            what.push(id.to_string());
        }
        for (p, steps) in &traced.parts {
            if steps.contains(&at) {
                what.push(format!("{id}.{p}"));
            }
        }
        if !what.is_empty() {
            out.push((step, what));
        }
    }
    out
}

/// The cases of one requirement as HTML, on a chapter page.
pub fn cases_html(cx: &Context<'_>, id: &str) -> String {
    let mut s = format!("<div class=\"cases\" data-req=\"{}\">\n", esc(id));
    s += &cx.lists.requirement(id).html("../");
    let Some(t) = cx.traced.get(id) else {
        return s + "</div><!--/cases-->\n";
    };
    let links = Links {
        up: "../".into(),
        source: cx.source,
    };
    if let Some(reason) = &t.untestable {
        s += &format!(
            "<p class=\"untestable\">No scenario can check this: {}</p>\n",
            markdown::inline_html(reason)
        );
    } else if t.scenarios.is_empty() {
        s += if t.withdrawn {
            "<p class=\"none\">Withdrawn: promises nothing, so nothing pins it.</p>\n"
        } else if !t.normative {
            "<p class=\"none\">States no MUST or SHOULD, so no scenario is owed.</p>\n"
        } else {
            "<p class=\"uncovered\">No scenario pins this and untestable.toml gives no reason (the trace fails).</p>\n"
        };
    }
    let unpinned: Vec<&String> = t
        .parts
        .iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(p, _)| p)
        .collect();
    if !t.scenarios.is_empty() && !unpinned.is_empty() {
        s += &format!(
            "<p class=\"untestable\">Partly covered: no step pins part {}.</p>\n",
            unpinned
                .iter()
                .map(|p| format!("<a href=\"#{id}.{p}\">({p})</a>"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for sid in &t.scenarios {
        let Some(view) = cx.views.get(sid) else {
            continue;
        };
        let steps = pinning(view, t, id);
        let file_only = steps.is_empty();
        s += &format!(
            "<details class=\"scenario\" id=\"{}\"{}><summary><a href=\"../{}\">{}</a> {}</summary>\n",
            esc(&format!("{id}/{sid}")),
            if file_only { "" } else { " open" },
            esc(&view.page_path()),
            markdown::inline_html(&view.scenario.title),
            cases::verdict_badges(sid, cx.impls, "../")
        );
        s += &cases::head_html(view, &links);
        if file_only {
            s += &format!(
                "<p class=\"note\">The file names {} requirements and does not say which of its steps pin which: every step is listed, each read in full on <a href=\"../{}\">the scenario's page</a>.</p>\n",
                view.scenario.all_requirements().len(),
                esc(&view.page_path())
            );
            for step in view.scenario.body.steps() {
                s += &cases::step_line_html(view, step, &links);
            }
        } else {
            for (step, _) in &steps {
                let anchor = format!("{id}/{sid}/{}", view.anchor(step));
                s += &cases::step_html(view, step, &anchor, cx.impls, &links, false);
            }
        }
        s += "</details>\n";
    }
    s + "</div><!--/cases-->\n"
}

/// The cases of one requirement in Markdown, indented by the caller.
pub fn cases_markdown(cx: &Context<'_>, id: &str) -> String {
    let Some(t) = cx.traced.get(id) else {
        return String::new();
    };
    let links = Links {
        up: "../".into(),
        source: cx.source,
    };
    let mut s = String::new();
    let tags = cx.lists.requirement(id).markdown("../");
    if !tags.is_empty() {
        s += &format!("> {tags}\n>\n");
    }
    if let Some(reason) = &t.untestable {
        s += &format!(
            "> No scenario can check this: {}\n",
            reason.replace('\n', " ")
        );
    }
    for sid in &t.scenarios {
        let Some(view) = cx.views.get(sid) else {
            continue;
        };
        let steps = pinning(view, t, id);
        let shown: Vec<&Step> = if steps.is_empty() {
            view.scenario.body.steps()
        } else {
            steps.iter().map(|(st, _)| *st).collect()
        };
        for line in cases::markdown(view, &shown, cx.impls, &links).lines() {
            s += &format!("> {line}\n");
        }
        s += ">\n";
    }
    s
}

/// The chapter's page body and its Markdown.
pub fn render(cx: &Context<'_>, stem: &str, text: &str) -> (String, String) {
    let reqs: Vec<&Requirement> = cx
        .requirements
        .values()
        .filter(|r| r.chapter == stem)
        .collect();
    let marked = marked(text, &reqs);
    let source = |p: &str| (cx.source)(&format!("spec/{}", p.trim_start_matches("./")), 0);
    let rw = Rewrite {
        chapters: cx.chapters,
        ids: cx.ids,
        source: &source,
    };
    let html = rw.chapter_html(&marked, &|id| cases_html(cx, id));
    let mut md = String::new();
    for line in marked.lines() {
        let t = line.trim_start();
        match t
            .strip_prefix("<!--gatehouse-cases:")
            .and_then(|r| r.strip_suffix("-->"))
        {
            Some(id) => {
                let pad = &line[..line.len() - t.len()];
                md.push('\n');
                for l in cases_markdown(cx, id).lines() {
                    md += &format!("{pad}{l}\n");
                }
                md.push('\n');
            }
            None => {
                md += line;
                md.push('\n');
            }
        }
    }
    (html, md)
}

/// The plain text of a requirement (for the search and the index): its lines, the
/// Markdown marks dropped.
pub fn requirement_text(text: &str, r: &Requirement) -> String {
    text.lines()
        .skip(r.line - 1)
        .take(r.end_line + 1 - r.line)
        .map(|l| l.trim().trim_start_matches("- "))
        .collect::<Vec<_>>()
        .join(" ")
        .replace(&format!("**[{}]**", r.id), "")
        .replace(['*', '`', '~'], "")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_conform_core::spec::{parse_chapter, SpecIndex};

    #[test]
    fn markers_go_inside_the_item_after_its_last_line() {
        let text = "# T\n\n- **[GATE-A-1]** MUST **(a)** ask and\n  **(b)** log.\n- **[GATE-A-2]** MUST.\n";
        let mut spec = SpecIndex::default();
        parse_chapter("gate.md", text, &mut spec);
        let reqs: Vec<&Requirement> = spec.requirements.values().collect();
        let m = marked(text, &reqs);
        assert!(m.contains("id=\"GATE-A-1\""), "{m}");
        assert!(m.contains("id=\"GATE-A-1.b\""), "{m}");
        assert!(
            m.contains("  **(b)** log.\n  <!--gatehouse-cases:GATE-A-1-->\n- <strong>")
                || m.contains("log.\n  <!--gatehouse-cases:GATE-A-1-->\n"),
            "{m}"
        );
        assert!(
            m.ends_with("MUST.\n  <!--gatehouse-cases:GATE-A-2-->\n"),
            "{m}"
        );
    }
}
