//! The checklist of a specification release (`spec/verdicts.md`, PROTO-CERT-1 and 2):
//! `spec/checklists/VERSION.toml`, every requirement of the release that is not
//! withdrawn, with its level for a certified result (its own keyword: MUST, SHOULD, or
//! MAY for one that states neither) and its evidence (the scenarios that cite it, or
//! `spec/untestable.toml`), frozen with the suite hash of the release.
//!
//! [`Checklist::derive`] makes it from the spec, the trace and the suite's identity;
//! [`Checklist::render`] writes it (`gatehouse-conform checklist --write`);
//! [`Checklist::parse`] reads it back; [`disagreements`] is the check `trace` runs for
//! the current version. Older versions' files are frozen: read, never regenerated.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::identity::SuiteId;
use crate::spec::SpecIndex;
use crate::trace::Trace;

/// The folder of the checklists, under the spec directory.
pub const DIR: &str = "checklists";

/// A requirement's level for a certified result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// MUST, MUST NOT, SHALL or REQUIRED: a safety failure refuses the submission.
    #[serde(rename = "MUST")]
    Must,
    /// SHOULD or SHOULD NOT only: a safety failure is listed, not refused.
    #[serde(rename = "SHOULD")]
    Should,
    /// Neither: informative, never refused.
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// The word as the checklist writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }

    /// The level of a requirement whose text holds `keywords` (PROTO-CERT-2).
    pub fn of<'a>(keywords: impl IntoIterator<Item = &'a String>) -> Level {
        let mut level = Level::May;
        for k in keywords {
            match k.as_str() {
                "MUST" | "SHALL" | "REQUIRED" => return Level::Must,
                "SHOULD" => level = Level::Should,
                _ => {}
            }
        }
        level
    }
}

/// One requirement of the checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// The requirement ID.
    pub id: String,
    /// Its level.
    pub level: Level,
    /// The scenarios that cite it, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<String>,
    /// The verdict its scenarios check it at (`safety` or `exactness`, PROTO-VERDICT-12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The document that says why no scenario can check it (`spec/untestable.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

/// A release's checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checklist {
    /// The specification version (`0.15`).
    pub spec_version: String,
    /// The suite hash of the release (`sha256:...`).
    pub suite_hash: String,
    /// How many requirements are MUST.
    pub must: usize,
    /// How many are SHOULD.
    pub should: usize,
    /// How many are MAY.
    pub may: usize,
    /// Every requirement, by ID.
    #[serde(rename = "requirement", default)]
    pub items: Vec<Item>,
}

/// The checklist file of `version` under `spec_dir`.
pub fn path(spec_dir: &Path, version: &str) -> PathBuf {
    spec_dir.join(DIR).join(format!("{version}.toml"))
}

impl Checklist {
    /// The checklist of the suite as it stands: every requirement not withdrawn, its
    /// level from its keyword, its evidence from the trace.
    pub fn derive(spec: &SpecIndex, trace: &Trace, suite: &SuiteId) -> Checklist {
        let mut items = Vec::new();
        for r in spec.requirements.values().filter(|r| !r.withdrawn) {
            let traced = trace.requirements.get(&r.id);
            let mut scenarios: Vec<String> =
                traced.map(|t| t.scenarios.clone()).unwrap_or_default();
            scenarios.sort();
            scenarios.dedup();
            let verdict = traced
                .and_then(|t| t.level)
                .filter(|_| !scenarios.is_empty())
                .map(|l| {
                    match l {
                        crate::verdict::Level::Safety => "safety",
                        crate::verdict::Level::Exactness => "exactness",
                    }
                    .to_string()
                });
            let document = traced
                .and_then(|t| t.untestable.as_ref())
                .map(|_| "spec/untestable.toml".to_string());
            items.push(Item {
                id: r.id.clone(),
                level: Level::of(&r.keywords()),
                scenarios,
                verdict,
                document,
            });
        }
        let count = |l: Level| items.iter().filter(|i| i.level == l).count();
        Checklist {
            spec_version: suite.spec_version.clone(),
            suite_hash: suite.hash.clone(),
            must: count(Level::Must),
            should: count(Level::Should),
            may: count(Level::May),
            items,
        }
    }

    /// The file's text: a header, the counts, one `[[requirement]]` per item.
    pub fn render(&self) -> String {
        let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# The checklist of Gatehouse {v} (spec/verdicts.md, PROTO-CERT-1 and 2): every\n\
             # requirement of the release with its level for a certified result and its\n\
             # evidence, frozen with the suite hash of the release. Written by\n\
             # `gatehouse-conform checklist --write`; `gatehouse-conform trace` fails while it\n\
             # disagrees with the current version. Do not edit by hand.\n",
            v = self.spec_version
        );
        let _ = writeln!(out, "spec_version = {}", q(&self.spec_version));
        let _ = writeln!(out, "suite_hash = {}", q(&self.suite_hash));
        let _ = writeln!(out, "must = {}", self.must);
        let _ = writeln!(out, "should = {}", self.should);
        let _ = writeln!(out, "may = {}", self.may);
        for i in &self.items {
            let _ = writeln!(out, "\n[[requirement]]");
            let _ = writeln!(out, "id = {}", q(&i.id));
            let _ = writeln!(out, "level = {}", q(i.level.as_str()));
            if !i.scenarios.is_empty() {
                let list: Vec<String> = i.scenarios.iter().map(|s| q(s)).collect();
                let _ = writeln!(out, "scenarios = [{}]", list.join(", "));
            }
            if let Some(v) = &i.verdict {
                let _ = writeln!(out, "verdict = {}", q(v));
            }
            if let Some(d) = &i.document {
                let _ = writeln!(out, "document = {}", q(d));
            }
        }
        out
    }

    /// Reads a checklist's text; `display` names the file in the message.
    pub fn parse(text: &str, display: &str) -> Result<Checklist, String> {
        let c: Checklist = toml::from_str(text)
            .map_err(|e| format!("{display}: {}", e.message().trim_end().replace('\n', " ")))?;
        let count = |l: Level| c.items.iter().filter(|i| i.level == l).count();
        if (c.must, c.should, c.may)
            != (count(Level::Must), count(Level::Should), count(Level::May))
        {
            return Err(format!(
                "{display}: the counts (must {}, should {}, may {}) are not those of its requirements ({}, {}, {})",
                c.must,
                c.should,
                c.may,
                count(Level::Must),
                count(Level::Should),
                count(Level::May)
            ));
        }
        Ok(c)
    }

    /// Reads the checklist file at `path`.
    pub fn load(path: &Path) -> Result<Checklist, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Checklist::parse(&text, &path.display().to_string())
    }

    /// The level of requirement `id` (a part `ID.a` is its requirement's).
    pub fn level(&self, id: &str) -> Option<Level> {
        let id = crate::spec::split_part(id).0;
        self.items.iter().find(|i| i.id == id).map(|i| i.level)
    }
}

/// Where the file `have` disagrees with `want` (derived from the suite as it stands), one
/// line each naming `display`; empty when they agree.
pub fn disagreements(have: &Checklist, want: &Checklist, display: &str) -> Vec<String> {
    let mut out = Vec::new();
    let fix = "(run `gatehouse-conform checklist --write`)";
    if have.spec_version != want.spec_version {
        out.push(format!(
            "{display}: is the checklist of spec version {}, the spec is {} {fix}",
            have.spec_version, want.spec_version
        ));
    }
    if have.suite_hash != want.suite_hash {
        out.push(format!(
            "{display}: frozen with suite {}, the suite is now {} {fix}",
            have.suite_hash, want.suite_hash
        ));
    }
    let have_items: BTreeMap<&str, &Item> = have.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let want_items: BTreeMap<&str, &Item> = want.items.iter().map(|i| (i.id.as_str(), i)).collect();
    for (id, w) in &want_items {
        match have_items.get(id) {
            None => out.push(format!("{display}: `{id}` is missing {fix}")),
            Some(h) if h.level != w.level => out.push(format!(
                "{display}: `{id}` is {} in the checklist, {} in the spec {fix}",
                h.level.as_str(),
                w.level.as_str()
            )),
            Some(h) if h != w => out.push(format!(
                "{display}: `{id}`: its evidence differs from the scenarios and untestable.toml {fix}"
            )),
            Some(_) => {}
        }
    }
    for id in have_items.keys().filter(|id| !want_items.contains_key(*id)) {
        out.push(format!(
            "{display}: `{id}` is no requirement of the spec (or is withdrawn) {fix}"
        ));
    }
    out
}

/// The check `trace` runs: the checklist of the current version (`derived`'s) against
/// `derived`; a missing or unreadable file is one line.
pub fn check(spec_dir: &Path, derived: &Checklist) -> Vec<String> {
    let file = path(spec_dir, &derived.spec_version);
    let display = file.display().to_string();
    if !file.exists() {
        return vec![format!(
            "{display}: the checklist of the current spec version is missing (run `gatehouse-conform checklist --write`)"
        )];
    }
    match Checklist::load(&file) {
        Ok(have) => disagreements(&have, derived, &display),
        Err(e) => vec![e],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_file;
    use crate::spec::parse_chapter;

    fn derived() -> Checklist {
        let mut spec = SpecIndex::default();
        parse_chapter(
            "gate.md",
            "- **[GATE-A-1]** The gate MUST ask.\n- **[GATE-A-2]** It SHOULD NOT log `MUST`.\n\
             - **[GATE-A-3]** It may say so.\n- **[GATE-A-4]** It SHALL **(a)** x.\n\
             ~~**[GATE-A-5]** Withdrawn: MUST.~~\n",
            &mut spec,
        );
        let src =
            "title = \"t\"\nrequirements = [\"GATE-A-1\", \"GATE-A-2\"]\ntier = \"decision\"\n\
                   [[case]]\ndecide = \"rm -rf x\"\nexpect = { decision = \"ask\" }\n\
                   [[case]]\ndecide = \"ls\"\nexpect = { decision = \"allow\" }\n";
        let scenarios = vec![load_file(src, "s/gate/t.toml", "gate/t", None).unwrap()];
        let untestable = vec![crate::untestable::Untestable {
            id: "GATE-A-4".into(),
            reason: "r".into(),
            line: 1,
        }];
        let t = crate::trace::trace(&crate::trace::Inputs {
            spec: &spec,
            spec_dir: "spec",
            scenarios: &scenarios,
            scenario_errors: &[],
            untestable: &untestable,
            untestable_errors: &[],
        });
        let suite = SuiteId {
            spec_version: "0.9".into(),
            hash: "sha256:ab".into(),
            files: 2,
        };
        Checklist::derive(&spec, &t, &suite)
    }

    #[test]
    fn levels_come_from_each_requirements_own_keyword() {
        let c = derived();
        let levels: Vec<(&str, Level)> = c.items.iter().map(|i| (i.id.as_str(), i.level)).collect();
        assert_eq!(
            levels,
            vec![
                ("GATE-A-1", Level::Must),
                ("GATE-A-2", Level::Should),
                ("GATE-A-3", Level::May),
                ("GATE-A-4", Level::Must),
            ]
        );
        assert_eq!((c.must, c.should, c.may), (2, 1, 1));
        assert_eq!(c.items[0].scenarios, vec!["gate/t"]);
        assert_eq!(c.items[0].verdict.as_deref(), Some("safety"));
        assert_eq!(c.items[3].document.as_deref(), Some("spec/untestable.toml"));
    }

    #[test]
    fn it_reads_back_what_it_writes_and_names_each_disagreement() {
        let c = derived();
        let back = Checklist::parse(&c.render(), "c.toml").unwrap();
        assert_eq!(back, c);
        assert!(disagreements(&back, &c, "c.toml").is_empty());
        let mut stale = c.clone();
        stale.suite_hash = "sha256:00".into();
        stale.items[1].level = Level::Must;
        stale.items[0].scenarios.clear();
        stale.items.remove(2);
        let lines = disagreements(&stale, &c, "c.toml");
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(
            lines[0].starts_with("c.toml: frozen with suite sha256:00, the suite is now sha256:ab")
        );
        assert!(lines[1].contains("`GATE-A-1`: its evidence differs"));
        assert!(lines[2].contains("`GATE-A-2` is MUST in the checklist, SHOULD in the spec"));
        assert!(lines[3].contains("`GATE-A-3` is missing"));
    }

    #[test]
    fn counts_that_do_not_add_up_are_refused() {
        let mut text = derived().render();
        text = text.replace("must = 2", "must = 3");
        let e = Checklist::parse(&text, "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml: the counts (must 3"), "{e}");
    }
}
