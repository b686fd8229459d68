//! The check of a generated site, read back from disk: every requirement of `spec/` has
//! its anchor on its chapter's page, and under it at least one case or the written reason
//! why none can be (`untestable.toml`); a requirement that is withdrawn or states no MUST
//! or SHOULD says so instead; every part has its anchor; every implementation has its
//! page. `gatehouse-conform docs` runs it after writing, and the test of the site runs
//! the command.

use std::path::Path;

use super::error::DocsError;
use gatehouse_conform_core::spec::SpecIndex;

/// The problems of the site in `dir`, one line each (empty: complete).
pub fn problems(dir: &Path, spec: &SpecIndex, labels: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for chapter in &spec.chapters {
        let path = dir.join("spec").join(format!("{chapter}.html"));
        let Ok(html) = std::fs::read_to_string(&path) else {
            out.push(format!("{}: missing", path.display()));
            continue;
        };
        for r in spec.requirements.values().filter(|r| &r.chapter == chapter) {
            let id = &r.id;
            if !html.contains(&format!("id=\"{id}\"")) {
                out.push(format!("{chapter}.html: no anchor for {id}"));
            }
            for p in &r.parts {
                if !html.contains(&format!("id=\"{id}.{p}\"")) {
                    out.push(format!("{chapter}.html: no anchor for {id}.{p}"));
                }
            }
            let open = format!("<div class=\"cases\" data-req=\"{id}\">");
            let Some(start) = html.find(&open) else {
                out.push(format!("{chapter}.html: no cases under {id}"));
                continue;
            };
            let body = &html[start..];
            let body = &body[..body.find("<!--/cases-->").unwrap_or(body.len())];
            let has_case =
                body.contains("<div class=\"case ") || body.contains("<div class=\"case\"");
            let has_reason = body.contains("<p class=\"untestable\">No scenario can check this: ");
            let says_none = body.contains("<p class=\"none\">");
            let owed = r.normative && !r.withdrawn;
            if owed && !has_case && !has_reason {
                out.push(format!(
                    "{chapter}.html: {id} shows neither a case nor its reason from untestable.toml"
                ));
            } else if !owed && !has_case && !has_reason && !says_none {
                out.push(format!(
                    "{chapter}.html: {id} shows no case and does not say why"
                ));
            }
        }
    }
    for label in labels {
        let path = dir.join("implementations").join(format!("{label}.html"));
        if !path.is_file() {
            out.push(format!("{}: missing", path.display()));
        }
    }
    out
}

/// [`problems`] as a result.
pub fn check(dir: &Path, spec: &SpecIndex, labels: &[String]) -> Result<(), DocsError> {
    let p = problems(dir, spec, labels);
    if p.is_empty() {
        Ok(())
    } else {
        Err(DocsError::Incomplete(p))
    }
}
