//! The lists a scenario or a requirement belongs to, named on its page: the public
//! classes of bypass (`spec/public-record.toml`, the known-attacks page) and the OWASP
//! agentic risks (`spec/asi.toml`, the ASI map). A scenario belongs to a class when it
//! cites one of the class's sources, and to a risk when one of its requirements is mapped
//! to it; a requirement belongs to a class that names it, and to a risk whose entry names
//! it or its prefix. Its check reads the written pages back ([`problems`]).

use std::collections::BTreeMap;
use std::path::Path;

use gatehouse_conform_core::asi::{self, Asi, Risk};
use gatehouse_conform_core::public_record::Class;
use gatehouse_conform_core::scenario::Scenario;

use super::markdown::md_text;
use super::page::esc;

/// The two lists, as loaded for the site.
#[derive(Debug, Default)]
pub struct Lists {
    /// The public classes of bypass.
    pub classes: Vec<Class>,
    /// The OWASP agentic risks.
    pub asi: Asi,
}

/// What one page belongs to.
#[derive(Debug, Default, PartialEq)]
pub struct Tags<'a> {
    /// The public classes.
    pub classes: Vec<&'a Class>,
    /// The OWASP risks.
    pub risks: Vec<&'a Risk>,
}

impl Tags<'_> {
    /// Whether it belongs to no list.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.risks.is_empty()
    }

    /// One HTML paragraph naming each class and risk, linked to its section (`up`: the
    /// way from the page to the site's root); empty when there is none.
    pub fn html(&self, up: &str) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut parts = Vec::new();
        if !self.classes.is_empty() {
            parts.push(format!(
                "known attack: {}",
                self.classes
                    .iter()
                    .map(|c| format!(
                        "<a href=\"{up}known-attacks.html#{}\">#{} {}</a>",
                        esc(&c.id),
                        c.number,
                        esc(&c.title)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        if !self.risks.is_empty() {
            parts.push(format!(
                "OWASP agentic risk: {}",
                self.risks
                    .iter()
                    .map(|r| format!(
                        "<a href=\"{up}asi.html#{}\">{} {}</a>",
                        esc(&r.id),
                        esc(&r.id),
                        esc(&r.name)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        format!("<p class=\"lists\">{}</p>\n", parts.join(" · "))
    }

    /// The same as one Markdown line (no trailing newline); empty when there is none.
    pub fn markdown(&self, up: &str) -> String {
        let mut parts = Vec::new();
        if !self.classes.is_empty() {
            parts.push(format!(
                "known attack: {}",
                self.classes
                    .iter()
                    .map(|c| format!(
                        "[#{} {}]({up}known-attacks.md#{})",
                        c.number,
                        md_text(&c.title),
                        c.id
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        if !self.risks.is_empty() {
            parts.push(format!(
                "OWASP agentic risk: {}",
                self.risks
                    .iter()
                    .map(|r| format!("[{} {}]({up}asi.md#{})", r.id, md_text(&r.name), r.id))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        parts.join(" · ")
    }
}

impl Lists {
    /// The classes and risks of requirement `id`.
    pub fn requirement(&self, id: &str) -> Tags<'_> {
        Tags {
            classes: self
                .classes
                .iter()
                .filter(|c| c.requirements.iter().any(|r| r == id))
                .collect(),
            risks: self
                .asi
                .risks
                .iter()
                .filter(|r| r.requirements.iter().any(|e| asi::matches(e, id)))
                .collect(),
        }
    }

    /// The classes and risks of scenario `s`.
    pub fn scenario(&self, s: &Scenario) -> Tags<'_> {
        let reqs = s.all_requirements();
        Tags {
            classes: self
                .classes
                .iter()
                .filter(|c| s.sources.iter().any(|src| c.sources.contains(src)))
                .collect(),
            risks: self
                .asi
                .risks
                .iter()
                .filter(|r| {
                    reqs.iter()
                        .any(|id| r.requirements.iter().any(|e| asi::matches(e, id)))
                })
                .collect(),
        }
    }
}

/// Every scenario page and requirement block that does not name a class or risk it
/// belongs to, one line each: scenario pages under `out/scenarios/`, requirement blocks
/// (`data-req="ID"`) on `out/spec/CHAPTER.html`.
pub fn problems(
    out: &Path,
    lists: &Lists,
    scenarios: &[Scenario],
    chapters: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut p = Vec::new();
    let links = |t: &Tags<'_>| -> Vec<String> {
        t.classes
            .iter()
            .map(|c| format!("known-attacks.html#{}", c.id))
            .chain(t.risks.iter().map(|r| format!("asi.html#{}", r.id)))
            .collect()
    };
    for s in scenarios {
        let want = links(&lists.scenario(s));
        if want.is_empty() {
            continue;
        }
        let path = out.join(format!("scenarios/{}.html", s.id));
        let page = std::fs::read_to_string(&path).unwrap_or_default();
        let line = page
            .lines()
            .find(|l| l.starts_with("<p class=\"lists\">"))
            .unwrap_or("");
        for w in want.iter().filter(|w| !line.contains(&format!("{w}\""))) {
            p.push(format!(
                "{}: the scenario's page does not name {w}",
                path.display()
            ));
        }
    }
    let mut pages: BTreeMap<&str, String> = BTreeMap::new();
    for (id, chapter) in chapters {
        let want = links(&lists.requirement(id));
        if want.is_empty() {
            continue;
        }
        let page = pages.entry(chapter.as_str()).or_insert_with(|| {
            std::fs::read_to_string(out.join(format!("spec/{chapter}.html"))).unwrap_or_default()
        });
        let block = page
            .split_once(&format!("<div class=\"cases\" data-req=\"{id}\">\n"))
            .map_or("", |(_, rest)| {
                rest.split("</div><!--/cases-->").next().unwrap_or("")
            });
        let line = block
            .lines()
            .find(|l| l.starts_with("<p class=\"lists\">"))
            .unwrap_or("");
        for w in want.iter().filter(|w| !line.contains(&format!("{w}\""))) {
            p.push(format!(
                "spec/{chapter}.html: requirement {id} does not name {w}"
            ));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists() -> Lists {
        let classes = gatehouse_conform_core::public_record::parse(
            "[[class]]\nid = \"git-config-runs\"\nnumber = 1\ntitle = \"git runs config\"\nsources = [\"a/b#1\"]\nrequirements = [\"GATE-READ-3\"]\n",
            "public-record.toml",
        )
        .unwrap();
        let asi = gatehouse_conform_core::asi::parse(
            "source = \"OWASP (2025-12-09)\"\nurl = \"https://genai.owasp.org/\"\n[[risk]]\nid = \"ASI02\"\nname = \"Tool Misuse\"\nrequirements = [\"GATE-\"]\n[[risk]]\nid = \"ASI03\"\nname = \"Identity\"\nrequirements = [\"FENCE-ENV-1\"]\n",
            "asi.toml",
        )
        .unwrap();
        Lists { classes, asi }
    }

    #[test]
    fn a_requirement_names_its_classes_and_risks() {
        let l = lists();
        let t = l.requirement("GATE-READ-3");
        assert_eq!(t.classes.len(), 1);
        assert_eq!(
            t.risks.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["ASI02"]
        );
        let html = t.html("../");
        assert!(
            html.contains("href=\"../known-attacks.html#git-config-runs\""),
            "{html}"
        );
        assert!(html.contains("href=\"../asi.html#ASI02\""), "{html}");
        assert!(t.markdown("../").contains("(../asi.md#ASI02)"));
        assert!(l.requirement("FENCE-JAIL-1").is_empty());
        assert!(l.requirement("FENCE-JAIL-1").html("../").is_empty());
    }

    #[test]
    fn problems_name_a_page_that_misses_a_list() {
        let l = lists();
        let dir = std::env::temp_dir().join(format!("gh-docs-tags-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("spec")).unwrap();
        let chapters: BTreeMap<String, String> = [
            ("GATE-READ-3".to_string(), "gate".to_string()),
            ("FENCE-JAIL-1".to_string(), "fence".to_string()),
        ]
        .into();
        let good = l.requirement("GATE-READ-3").html("../");
        std::fs::write(
            dir.join("spec/gate.html"),
            format!("<div class=\"cases\" data-req=\"GATE-READ-3\">\n{good}</div><!--/cases-->\n"),
        )
        .unwrap();
        assert_eq!(problems(&dir, &l, &[], &chapters), Vec::<String>::new());
        // Only the risk named: the class is missing.
        let partial = good.replace("known-attacks.html#git-config-runs", "known-attacks.html");
        std::fs::write(
            dir.join("spec/gate.html"),
            format!(
                "<div class=\"cases\" data-req=\"GATE-READ-3\">\n{partial}</div><!--/cases-->\n"
            ),
        )
        .unwrap();
        let p = problems(&dir, &l, &[], &chapters);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            p,
            ["spec/gate.html: requirement GATE-READ-3 does not name known-attacks.html#git-config-runs"]
        );
    }
}
