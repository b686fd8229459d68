//! `gatehouse-conform trace`: the map between requirements and scenarios, and the rules of
//! `spec/README.md` ("Citing scenarios") checked over it.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::scenario::{Scenario, ScenarioError};
use crate::spec::SpecIndex;
use crate::untestable::Untestable;

/// One requirement in the map.
#[derive(Debug, Clone, Serialize)]
pub struct Traced {
    /// Chapter stem.
    pub chapter: String,
    /// 1-based line in the chapter.
    pub line: usize,
    /// Carries MUST/SHOULD/SHALL/REQUIRED.
    pub normative: bool,
    /// Struck through.
    pub withdrawn: bool,
    /// Scenario ids citing it.
    pub scenarios: Vec<String>,
    /// The steps and cases that pin it (`gate/read-list#3`): each says so in `pins`, is
    /// a case naming it, or belongs to a file that names it alone.
    pub steps: Vec<String>,
    /// Its parts (`**(a)**` in its text), each with the steps that pin it (`pins =
    /// ["ID.a"]`).
    pub parts: BTreeMap<String, Vec<String>>,
    /// Scenarios that name it beside other requirements and do not say which of their
    /// steps pin which.
    pub file_only: Vec<String>,
    /// The untestable reason, if listed.
    pub untestable: Option<String>,
    /// `safety` when a field of a scenario that cites it is of level safety, else
    /// `exactness`; `None` when no scenario cites it (`spec/verdicts.md`,
    /// PROTO-VERDICT-12).
    pub level: Option<crate::verdict::Level>,
    /// Of a requirement of level safety: `observed` when some field of level safety that
    /// pins it is one the runner observes itself, else `reported` (its safety rests on
    /// the implementation's answer, for the reason `spec/verdicts.md` gives that field:
    /// PROTO-OBSERVE-1).
    pub evidence: Option<crate::verdict::Evidence>,
}

/// Coverage of one chapter.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChapterRow {
    /// Covered normative requirements of level safety (the rest covered are exactness).
    pub safety: usize,
    /// Of those, the ones some observed field pins (PROTO-OBSERVE-1).
    pub observed: usize,
    /// Chapter stem.
    pub chapter: String,
    /// Requirements defined.
    pub requirements: usize,
    /// Of which normative (and not withdrawn).
    pub normative: usize,
    /// Normative ones with a scenario.
    pub covered: usize,
    /// Normative ones listed as untestable.
    pub untestable: usize,
    /// Normative ones with neither.
    pub uncovered: usize,
}

/// The whole trace.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    /// One row per chapter.
    pub chapters: Vec<ChapterRow>,
    /// The map, by ID.
    pub requirements: BTreeMap<String, Traced>,
    /// Every rule broken, one line each.
    pub violations: Vec<String>,
    /// Requirements covered only in part, one line each: a part no step pins.
    pub partly_covered: Vec<String>,
    /// Per scenario folder, the fields of level safety its scenarios pin: how many the
    /// runner observes itself and how many it reads from the answer (PROTO-OBSERVE-1).
    pub evidence: BTreeMap<String, (usize, usize)>,
}

/// Inputs of a trace; `spec_dir` prefixes chapter names in messages.
pub struct Inputs<'a> {
    /// The spec as parsed.
    pub spec: &'a SpecIndex,
    /// The spec directory as displayed.
    pub spec_dir: &'a str,
    /// Scenarios loaded without the spec-ID check.
    pub scenarios: &'a [Scenario],
    /// Files that could not be loaded.
    pub scenario_errors: &'a [ScenarioError],
    /// The untestable list.
    pub untestable: &'a [Untestable],
    /// Problems with the untestable file.
    pub untestable_errors: &'a [ScenarioError],
}

/// Builds the map and checks the rules.
pub fn trace(i: &Inputs<'_>) -> Trace {
    let mut v = Vec::new();
    for s in &i.spec.stray {
        v.push(format!(
            "{}/{}:{}: {} outside a requirement with an ID",
            i.spec_dir, s.file, s.line, s.word
        ));
    }
    for (id, chapter, line) in &i.spec.duplicates {
        v.push(format!(
            "{}/{chapter}.md:{line}: `{id}` is defined twice",
            i.spec_dir
        ));
    }
    let mut map: BTreeMap<String, Traced> = i
        .spec
        .requirements
        .values()
        .map(|r| {
            let t = Traced {
                chapter: r.chapter.clone(),
                line: r.line,
                normative: r.normative,
                withdrawn: r.withdrawn,
                scenarios: Vec::new(),
                steps: Vec::new(),
                parts: r.parts.iter().map(|p| (p.clone(), Vec::new())).collect(),
                file_only: Vec::new(),
                untestable: None,
                level: None,
                evidence: None,
            };
            (r.id.clone(), t)
        })
        .collect();
    let mut field_counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for s in i.scenarios {
        let chapter = s.id.split('/').next().unwrap_or_default().to_string();
        for (field, level, reqs) in s.pinned() {
            let evidence = crate::verdict::evidence(&field);
            if level == crate::verdict::Level::Safety {
                let c = field_counts.entry(chapter.clone()).or_default();
                match evidence {
                    crate::verdict::Evidence::Observed => c.0 += 1,
                    crate::verdict::Evidence::Reported => c.1 += 1,
                }
            }
            for id in reqs {
                if let Some(t) = map.get_mut(&id) {
                    t.level = Some(t.level.map_or(level, |l| l.min(level)));
                    if level == crate::verdict::Level::Safety {
                        t.evidence = Some(t.evidence.map_or(evidence, |e| e.min(evidence)));
                    }
                }
            }
        }
        let citable = i.spec.citable();
        let mut attributed = std::collections::BTreeSet::new();
        for (step, named) in s.entries() {
            let at = format!("{}#{}", s.id, step.index);
            for pin in s.step_pins(step, &named) {
                if !citable.contains(&pin) {
                    v.push(format!(
                        "{}:{}: pins `{pin}`, which no chapter defines",
                        s.path, step.line
                    ));
                    continue;
                }
                let (id, part) = crate::spec::split_part(&pin);
                attributed.insert(id.to_string());
                if let Some(t) = map.get_mut(id) {
                    match part.and_then(|p| t.parts.get_mut(p)) {
                        Some(steps) => steps.push(at.clone()),
                        None => t.steps.push(at.clone()),
                    }
                }
            }
        }
        for id in s.all_requirements() {
            if !attributed.contains(&id) {
                if let Some(t) = map.get_mut(&id) {
                    t.file_only.push(s.id.clone());
                }
            }
            match map.get_mut(&id) {
                Some(t) => {
                    t.scenarios.push(s.id.clone());
                    t.level.get_or_insert(crate::verdict::Level::Exactness);
                }
                None => v.push(format!(
                    "{}: cites `{id}`, which no chapter defines",
                    s.path
                )),
            }
        }
    }
    for e in i.scenario_errors {
        v.push(format!("{e} (the file cannot be traced)"));
    }
    v.extend(i.untestable_errors.iter().map(ToString::to_string));
    for u in i.untestable {
        match map.get_mut(&u.id) {
            None => v.push(format!(
                "{}/untestable.toml:{}: `{}` does not exist",
                i.spec_dir, u.line, u.id
            )),
            Some(t) if !t.scenarios.is_empty() => v.push(format!(
                "{}/untestable.toml:{}: `{}` is listed as untestable but covered by {}",
                i.spec_dir,
                u.line,
                u.id,
                t.scenarios.join(", ")
            )),
            Some(t) => t.untestable = Some(u.reason.clone()),
        }
    }
    let mut chapters: Vec<ChapterRow> = i
        .spec
        .chapters
        .iter()
        .map(|c| ChapterRow {
            chapter: c.clone(),
            ..ChapterRow::default()
        })
        .collect();
    for (id, t) in &map {
        let Some(row) = chapters.iter_mut().find(|c| c.chapter == t.chapter) else {
            continue;
        };
        row.requirements += 1;
        if !t.normative || t.withdrawn {
            continue;
        }
        row.normative += 1;
        if !t.scenarios.is_empty() {
            row.covered += 1;
            if t.level == Some(crate::verdict::Level::Safety) {
                row.safety += 1;
                if t.evidence == Some(crate::verdict::Evidence::Observed) {
                    row.observed += 1;
                }
            }
        } else if t.untestable.is_some() {
            row.untestable += 1;
        } else {
            row.uncovered += 1;
            v.push(format!(
                "{}/{}.md:{}: `{id}` states a MUST or SHOULD but has no scenario and no entry in untestable.toml",
                i.spec_dir, t.chapter, t.line
            ));
        }
    }
    let partly_covered = map
        .iter()
        .filter(|(_, t)| !t.scenarios.is_empty() && !t.withdrawn)
        .flat_map(|(id, t)| {
            t.parts
                .iter()
                .filter(|(_, steps)| steps.is_empty())
                .map(move |(p, _)| {
                    format!(
                        "{id}.{p} ({}.md:{}): no step pins this part",
                        t.chapter, t.line
                    )
                })
        })
        .collect();
    Trace {
        chapters,
        requirements: map,
        violations: v,
        partly_covered,
        evidence: field_counts,
    }
}

/// The human view: a coverage table per chapter, then the violations.
pub fn render_human(t: &Trace) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>12} {:>10} {:>8} {:>7} {:>10} {:>11} {:>10}",
        "chapter",
        "requirements",
        "normative",
        "covered",
        "safety",
        "exactness",
        "untestable",
        "uncovered"
    );
    for r in &t.chapters {
        let _ = writeln!(
            s,
            "{:<24} {:>12} {:>10} {:>8} {:>7} {:>10} {:>11} {:>10}",
            r.chapter,
            r.requirements,
            r.normative,
            r.covered,
            r.safety,
            r.covered - r.safety,
            r.untestable,
            r.uncovered
        );
    }
    let _ = writeln!(
        s,
        "\nfields of level safety by where their evidence comes from (spec/verdicts.md, PROTO-OBSERVE-1):\n{:<24} {:>9} {:>9}",
        "scenarios", "observed", "reported"
    );
    for (folder, (observed, reported)) in &t.evidence {
        let _ = writeln!(
            s,
            "{:<24} {:>9} {:>9}",
            format!("{folder}/"),
            observed,
            reported
        );
    }
    let file_only: Vec<&String> = t
        .requirements
        .iter()
        .filter(|(_, r)| {
            !r.scenarios.is_empty() && r.steps.is_empty() && r.parts.values().all(Vec::is_empty)
        })
        .map(|(id, _)| id)
        .collect();
    if !file_only.is_empty() {
        let _ = writeln!(
            s,
            "\n{} covered requirement(s) are named only by files that name several and do not \
             say which step pins which (`pins`, scenarios/README.md); `--format json` lists them",
            file_only.len()
        );
    }
    if !t.partly_covered.is_empty() {
        let _ = writeln!(s, "\npartly covered ({}):", t.partly_covered.len());
        for p in &t.partly_covered {
            let _ = writeln!(s, "  {p}");
        }
    }
    if t.violations.is_empty() {
        let _ = writeln!(s, "\ntrace: no violations");
    } else {
        let _ = writeln!(s, "\n{} violation(s):", t.violations.len());
        for v in &t.violations {
            let _ = writeln!(s, "  {v}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_file;
    use crate::spec::parse_chapter;

    #[test]
    fn a_requirement_is_of_level_safety_when_a_field_that_pins_it_is() {
        let mut spec = SpecIndex::default();
        parse_chapter(
            "gate.md",
            "- **[GATE-A-1]** MUST a.\n- **[GATE-A-2]** MUST b.\n",
            &mut spec,
        );
        let src = "title = \"t\"\nrequirements = [\"GATE-A-1\"]\ntier = \"decision\"\n\
                   [[case]]\ndecide = \"ls\"\nexpect = { decision = \"allow\", route = \"auto_safe\" }\n\
                   [[case]]\nrequirements = [\"GATE-A-2\"]\ndecide = \"rm -rf x\"\nexpect = { decision = \"ask\" }\n";
        let scenarios = vec![load_file(src, "s/gate/t.toml", "gate/t", None).unwrap()];
        let t = trace(&Inputs {
            spec: &spec,
            spec_dir: "spec",
            scenarios: &scenarios,
            scenario_errors: &[],
            untestable: &[],
            untestable_errors: &[],
        });
        use crate::verdict::Level;
        // GATE-A-2 is pinned by the `ask` of its case: a more permissive answer exists.
        assert_eq!(t.requirements["GATE-A-2"].level, Some(Level::Safety));
        // GATE-A-1 is the file's: every case pins it, the `ask` one too.
        assert_eq!(t.requirements["GATE-A-1"].level, Some(Level::Safety));
        assert_eq!(t.chapters[0].safety, 2);
    }

    #[test]
    fn steps_pin_parts_and_the_rest_is_listed() {
        let mut spec = SpecIndex::default();
        parse_chapter(
            "gate.md",
            "- **[GATE-A-1]** MUST **(a)** ask and **(b)** log.\n- **[GATE-A-2]** MUST b.\n",
            &mut spec,
        );
        let pinned = "title = \"t\"\nrequirements = [\"GATE-A-1\", \"GATE-A-2\"]\ntier = \"decision\"\n\
                      [[step]]\npins = [\"GATE-A-1.a\"]\ndecide = \"ls\"\nexpect = { decision = \"allow\" }\n\
                      [[step]]\ndecide = \"rm x\"\nexpect = { decision = \"ask\" }\n";
        let named =
            "title = \"u\"\nrequirements = [\"GATE-A-1\", \"GATE-A-2\"]\ntier = \"decision\"\n\
                     [[case]]\ndecide = \"ls\"\nexpect = { decision = \"allow\" }\n";
        let scenarios = vec![
            load_file(pinned, "s/gate/p.toml", "gate/p", None).unwrap(),
            load_file(named, "s/gate/n.toml", "gate/n", None).unwrap(),
        ];
        let t = trace(&Inputs {
            spec: &spec,
            spec_dir: "spec",
            scenarios: &scenarios,
            scenario_errors: &[],
            untestable: &[],
            untestable_errors: &[],
        });
        assert!(t.violations.is_empty(), "{:?}", t.violations);
        let a1 = &t.requirements["GATE-A-1"];
        assert_eq!(a1.parts["a"], vec!["gate/p#1"]);
        assert!(a1.parts["b"].is_empty());
        assert_eq!(a1.file_only, vec!["gate/n"]);
        // GATE-A-2: named by both files, pinned by no step of either.
        assert_eq!(
            t.requirements["GATE-A-2"].file_only,
            vec!["gate/p", "gate/n"]
        );
        assert!(t.requirements["GATE-A-2"].steps.is_empty());
        assert_eq!(
            t.partly_covered,
            vec!["GATE-A-1.b (gate.md:1): no step pins this part"]
        );
    }

    #[test]
    fn every_rule_is_checked() {
        let mut spec = SpecIndex::default();
        parse_chapter(
            "gate.md",
            "- **[GATE-A-1]** MUST a.\n- **[GATE-A-2]** MUST b.\n- **[GATE-A-3]** MUST c.\n\
             - **[GATE-A-4]** May d.\n\nA stray SHOULD.\n",
            &mut spec,
        );
        let src = "title = \"t\"\nrequirements = [\"GATE-A-1\", \"GATE-Z-9\"]\ntier = \"decision\"\n[[step]]\ngrants = true\n";
        let scenarios = vec![load_file(src, "s/gate/t.toml", "gate/t", None).unwrap()];
        let untestable = vec![
            Untestable {
                id: "GATE-A-2".into(),
                reason: "r".into(),
                line: 1,
            },
            Untestable {
                id: "GATE-A-1".into(),
                reason: "r".into(),
                line: 4,
            },
            Untestable {
                id: "GATE-Q-1".into(),
                reason: "r".into(),
                line: 7,
            },
        ];
        let t = trace(&Inputs {
            spec: &spec,
            spec_dir: "spec",
            scenarios: &scenarios,
            scenario_errors: &[],
            untestable: &untestable,
            untestable_errors: &[],
        });
        assert_eq!(
            t.violations,
            vec![
                "spec/gate.md:6: SHOULD outside a requirement with an ID",
                "s/gate/t.toml: cites `GATE-Z-9`, which no chapter defines",
                "spec/untestable.toml:4: `GATE-A-1` is listed as untestable but covered by gate/t",
                "spec/untestable.toml:7: `GATE-Q-1` does not exist",
                "spec/gate.md:3: `GATE-A-3` states a MUST or SHOULD but has no scenario and no entry in untestable.toml",
            ]
        );
        // The scenario pins nothing of level safety (a grant listing): exactness.
        assert_eq!(
            t.requirements["GATE-A-1"].level,
            Some(crate::verdict::Level::Exactness)
        );
        assert_eq!(t.requirements["GATE-A-3"].level, None);
        let row = &t.chapters[0];
        assert_eq!(
            (
                row.requirements,
                row.normative,
                row.covered,
                row.untestable,
                row.uncovered
            ),
            (4, 3, 1, 1, 1)
        );
    }
}
