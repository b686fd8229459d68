//! A certified result anyone can check (`spec/verdicts.md`, PROTO-CERT-3 to 5): the
//! submission folder `certify` writes ([`package`]) and the check `verify` runs over one
//! ([`verify`]), one line per problem. The folder:
//!
//! ```text
//! PRODUCT.toml        name, vendor, version, repository, reproduce
//! report.json         the canonical JSON report of the fixed run
//! run.log             the run's human report
//! SUITE               the suite hash
//! expectations.toml   the known failures, each with its reason (when the run had them)
//! ```
//!
//! A product may declare a `scope` (PROTO-CERT-7): the chapters it can express, run
//! whole and nothing else; verify then tallies every MUST of the checklist as passed,
//! failed or not tested, and a MUST outside the run is never counted as passed. A
//! folder kept as *results* (`verify --results`) is well formed but not certified: its
//! refusals are printed as the reasons, and it is accepted as results only while it
//! has one.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::checklist::{self, Checklist, Level};
use crate::diff::{failing, RunView};

/// The product file.
pub const PRODUCT: &str = "PRODUCT.toml";
/// The canonical JSON report.
pub const REPORT: &str = "report.json";
/// The run's log.
pub const LOG: &str = "run.log";
/// The suite hash.
pub const SUITE: &str = "SUITE";
/// The expectations file.
pub const EXPECTATIONS: &str = "expectations.toml";

/// What `PRODUCT.toml` says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    /// The product's name.
    pub name: String,
    /// Who makes it.
    pub vendor: String,
    /// The version that ran, pinned.
    pub version: String,
    /// Where its source or releases are.
    pub repository: String,
    /// How to reproduce the run: the commands, from a checkout of the suite's release.
    pub reproduce: String,
    /// The chapters the product can express and ran, each whole (PROTO-CERT-7); empty
    /// for the whole suite.
    #[serde(default)]
    pub scope: Vec<String>,
}

/// Versions that name no one release.
const UNPINNED: &[&str] = &[
    "", "latest", "main", "master", "head", "dev", "nightly", "*",
];

impl Product {
    /// Reads a product file's text; every problem on its own line naming `display`.
    pub fn parse(text: &str, display: &str) -> Result<Product, Vec<String>> {
        let p: Product = toml::from_str(text).map_err(|e| {
            vec![format!(
                "{display}: {}",
                e.message().trim_end().replace('\n', " ")
            )]
        })?;
        let mut problems = Vec::new();
        for (key, value) in [
            ("name", &p.name),
            ("vendor", &p.vendor),
            ("repository", &p.repository),
            ("reproduce", &p.reproduce),
        ] {
            if value.trim().is_empty() {
                problems.push(format!("{display}: `{key}` is empty"));
            }
        }
        for ch in &p.scope {
            if ch.is_empty() || !ch.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
                problems.push(format!(
                    "{display}: `scope` entry {ch:?} is not a chapter's name (`gate`, `hooks`, ...)"
                ));
            }
        }
        if UNPINNED.contains(&p.version.trim().to_ascii_lowercase().as_str()) {
            problems.push(format!(
                "{display}: `version` {:?} is not pinned (name the release or the commit that ran)",
                p.version
            ));
        }
        if problems.is_empty() {
            Ok(p)
        } else {
            Err(problems)
        }
    }
}

/// What `verify` found: the problems that refuse the submission, and what it lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    /// One line per problem; the submission is accepted when there is none.
    pub problems: Vec<String>,
    /// Failures listed without refusing (of SHOULD requirements only).
    pub listed: Vec<String>,
    /// The product and its score, when the files read.
    pub summary: Option<String>,
    /// The problems that say the folder is not well formed (a missing or unreadable
    /// file, a product file or report that does not read): each is also in `problems`.
    /// A results folder must have none.
    pub malformed: Vec<String>,
    /// The MUST requirements of the checklist as the run leaves them, when it has one.
    pub musts: Option<MustTally>,
}

/// The MUST requirements of a checklist as one run leaves them (PROTO-CERT-7).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MustTally {
    /// Every scenario of its evidence ran and passed at the verdict it checks it at.
    pub passed: usize,
    /// A scenario fails safety on it.
    pub failed: usize,
    /// Some scenario of its evidence did not run (out of scope, skipped) or did not pass
    /// at that verdict without failing safety on it: never counted as passed.
    pub not_tested: usize,
    /// No scenario can check it (`spec/untestable.toml`): shown by its document.
    pub by_document: usize,
}

impl MustTally {
    /// `MUST: 480 passed, 0 failed, 25 not tested, 7 by document`.
    pub fn line(&self) -> String {
        format!(
            "MUST: {} passed, {} failed, {} not tested, {} by document",
            self.passed, self.failed, self.not_tested, self.by_document
        )
    }
}

/// The tally of `list`'s MUST requirements over the report's scenarios, `failed` being
/// the requirements some scenario fails safety on.
pub fn tally(list: &Checklist, report: &Value, failed: &BTreeSet<String>) -> MustTally {
    let verdicts: std::collections::BTreeMap<&str, (&str, &str)> = report
        .get("scenarios")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|sc| {
            let w = |k: &str| sc.get(k).and_then(Value::as_str).unwrap_or("unknown");
            Some((
                sc.get("id").and_then(Value::as_str)?,
                (w("safety"), w("exactness")),
            ))
        })
        .collect();
    let mut t = MustTally::default();
    for item in list.items.iter().filter(|i| i.level == Level::Must) {
        if failed.contains(&item.id) {
            t.failed += 1;
        } else if item.scenarios.is_empty() {
            if item.document.is_some() {
                t.by_document += 1;
            } else {
                t.not_tested += 1;
            }
        } else if item.scenarios.iter().all(|s| {
            verdicts.get(s.as_str()).is_some_and(|(safety, exactness)| {
                if item.verdict.as_deref() == Some("exactness") {
                    *exactness == "passed"
                } else {
                    *safety == "passed"
                }
            })
        }) {
            t.passed += 1;
        } else {
            t.not_tested += 1;
        }
    }
    t
}

/// The chapters of a checklist: the first part of every scenario it cites.
fn chapters(list: &Checklist) -> BTreeSet<String> {
    list.items
        .iter()
        .flat_map(|i| i.scenarios.iter())
        .filter_map(|s| s.split_once('/').map(|(c, _)| c.to_string()))
        .collect()
}

/// The requirements scenario `sc` (a report's record) fails safety on: those its steps
/// with a safety difference pin (`pins`, else the step's requirements, else the file's),
/// or, without such a step, the file's and every step's.
pub fn failed_requirements(sc: &Value) -> BTreeSet<String> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| crate::spec::split_part(s).0.to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let file = strings(sc.get("requirements"));
    let steps = sc
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = BTreeSet::new();
    for st in &steps {
        let unsafe_step = st
            .get("differences")
            .and_then(Value::as_array)
            .is_some_and(|ds| {
                ds.iter()
                    .any(|d| d.get("level").and_then(Value::as_str) == Some("safety"))
            });
        if unsafe_step {
            let pins = strings(st.get("pins"));
            let own = strings(st.get("requirements"));
            let ids = if !pins.is_empty() {
                pins
            } else if !own.is_empty() {
                own
            } else {
                file.clone()
            };
            out.extend(ids);
        }
    }
    if out.is_empty() {
        out.extend(file);
        for st in &steps {
            out.extend(strings(st.get("requirements")));
            out.extend(strings(st.get("pins")));
        }
    }
    out
}

/// What the run's mode (`mode` of the report) says against the product's `scope`: one
/// line per way it is not a certified run, empty when it is (PROTO-CERT-3 and 7). A
/// scoped run is filtered by exactly `CHAPTER/` per chapter of the scope, nothing else.
pub fn mode_problems(m: &Value, scope: &[String], shown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let list_of = |k: &str| -> Vec<String> {
        m.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (filter, exclude) = (list_of("filter"), list_of("exclude"));
    let tier = m.get("tier").and_then(Value::as_str);
    let wanted: BTreeSet<String> = scope.iter().map(|c| format!("{c}/")).collect();
    let given: BTreeSet<String> = filter.iter().cloned().collect();
    if scope.is_empty() && !filter.is_empty() {
        out.push(format!(
            "{shown}: the run was filtered (--filter {}): a certified run is the whole suite, or the whole chapters of the product's `scope`",
            filter.join(" --filter ")
        ));
    } else if !scope.is_empty() && given != wanted {
        out.push(format!(
            "{shown}: the run's filters ({}) are not the product's scope ({}): a scoped run is `--filter CHAPTER/` for each chapter of `scope`, nothing else",
            if filter.is_empty() {
                "none: the whole suite".to_string()
            } else {
                filter.join(" ")
            },
            wanted.into_iter().collect::<Vec<_>>().join(" ")
        ));
    }
    if !exclude.is_empty() {
        out.push(format!(
            "{shown}: the run left scenarios out (--exclude {}): a certified run is the whole suite",
            exclude.join(" --exclude ")
        ));
    }
    if let Some(t) = tier {
        out.push(format!(
            "{shown}: the run was of one tier (--tier {t}): a certified run is the whole suite"
        ));
    }
    if m.get("update_expectations").and_then(Value::as_bool) == Some(true) {
        out.push(format!(
            "{shown}: the run was compared with the expectations it wrote (--update-expectations)"
        ));
    }
    out
}

/// Checks the submission folder `dir` against the checklists under `spec_dir`
/// (PROTO-CERT-5 and 7).
pub fn verify(dir: &Path, spec_dir: &Path) -> Verified {
    let mut v = Verified::default();
    let shown = |name: &str| dir.join(name).display().to_string();
    let malformed = |v: &mut Verified, line: String| {
        v.malformed.push(line.clone());
        v.problems.push(line);
    };
    let read = |name: &str, v: &mut Verified| -> Option<String> {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                malformed(v, format!("{}: missing", shown(name)));
                None
            }
            Err(e) => {
                malformed(v, format!("{}: cannot read: {e}", shown(name)));
                None
            }
        }
    };
    let product = read(PRODUCT, &mut v).and_then(|t| match Product::parse(&t, &shown(PRODUCT)) {
        Ok(p) => Some(p),
        Err(e) => {
            for l in e {
                malformed(&mut v, l);
            }
            None
        }
    });
    let scope = product
        .as_ref()
        .map(|p| p.scope.clone())
        .unwrap_or_default();
    let suite_file = read(SUITE, &mut v).map(|t| t.trim().to_string());
    if read(LOG, &mut v).is_some_and(|t| t.trim().is_empty()) {
        malformed(&mut v, format!("{}: empty", shown(LOG)));
    }
    let Some(report_text) = read(REPORT, &mut v) else {
        return v;
    };
    let report: Value = match serde_json::from_str(&report_text) {
        Ok(r) => r,
        Err(e) => {
            malformed(&mut v, format!("{}: not JSON: {e}", shown(REPORT)));
            return v;
        }
    };
    let view = match RunView::from_json(&report) {
        Ok(view) => view,
        Err(e) => {
            malformed(&mut v, format!("{}: {e}", shown(REPORT)));
            return v;
        }
    };
    // The suite: a released checklist of the report's version, its hash, SUITE's.
    let list_path = checklist::path(spec_dir, &view.spec_version);
    let list = match Checklist::load(&list_path) {
        Ok(c) => Some(c),
        Err(_) if !list_path.exists() => {
            v.problems.push(format!(
                "{}: spec version {} has no released checklist ({} is missing)",
                shown(REPORT),
                view.spec_version,
                list_path.display()
            ));
            None
        }
        Err(e) => {
            v.problems.push(e);
            None
        }
    };
    if let Some(c) = &list {
        if c.suite_hash != view.suite_hash {
            v.problems.push(format!(
                "{}: suite hash {} is not the suite of the {} release ({}, {})",
                shown(REPORT),
                view.suite_hash,
                c.spec_version,
                c.suite_hash,
                list_path.display()
            ));
        }
        let known = chapters(c);
        for ch in scope.iter().filter(|ch| !known.contains(*ch)) {
            v.problems.push(format!(
                "{}: `scope` names {ch:?}, not a chapter of the {} checklist",
                shown(PRODUCT),
                c.spec_version
            ));
        }
    }
    if let Some(s) = &suite_file {
        if *s != view.suite_hash {
            v.problems.push(format!(
                "{}: says {s}, the report's suite hash is {}",
                shown(SUITE),
                view.suite_hash
            ));
        }
    }
    if let Some(parent) = dir.canonicalize().ok().and_then(|d| {
        d.parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    }) {
        let looks_versioned = parent.split('.').count() >= 2
            && parent
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if looks_versioned && parent != view.spec_version {
            v.problems.push(format!(
                "{}: the folder is under version {parent}, the report ran spec version {}",
                dir.display(),
                view.spec_version
            ));
        }
    }
    // The mode: fixed (or scoped), and expectations only with reasons.
    let mode = report.get("mode");
    match mode {
        None => v.problems.push(format!(
            "{}: records no run mode (a runner older than PROTO-CERT-3, or not a certify run)",
            shown(REPORT)
        )),
        Some(m) => {
            v.problems.extend(mode_problems(m, &scope, &shown(REPORT)));
            if m.get("expectations").is_some_and(|e| !e.is_null()) {
                check_expectations(dir, &mut v.problems);
            }
        }
    }
    if mode.is_none() && dir.join(EXPECTATIONS).exists() {
        check_expectations(dir, &mut v.problems);
    }
    if let Some(n) = report
        .get("invalid")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    {
        v.problems.push(format!(
            "{}: {} scenario file(s) could not be loaded in the run",
            shown(REPORT),
            n.len()
        ));
    }
    // No MUST requirement failing safety; SHOULD failures listed. Without a checklist
    // every requirement is taken as MUST, as is an ID the checklist does not know: fail
    // closed.
    let level = |r: &str| list.as_ref().and_then(|c| c.level(r));
    let mut should = 0;
    let mut failed_musts = BTreeSet::new();
    for sc in report
        .get("scenarios")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let safety = sc
            .get("safety")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        if !failing(safety) {
            continue;
        }
        let id = sc.get("id").and_then(Value::as_str).unwrap_or("?");
        let reqs = failed_requirements(sc);
        let must: Vec<&String> = reqs
            .iter()
            .filter(|r| level(r).map_or(true, |l| l == Level::Must))
            .collect();
        if !must.is_empty() {
            failed_musts.extend(must.iter().map(|s| s.to_string()));
            v.problems.push(format!(
                "{}: `{id}` fails safety ({safety}) on MUST {}",
                shown(REPORT),
                must.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else if reqs.iter().any(|r| level(r) == Some(Level::Should)) {
            should += 1;
            v.listed.push(format!(
                "`{id}` fails safety ({safety}) on SHOULD {}",
                reqs.iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    v.musts = list.as_ref().map(|c| tally(c, &report, &failed_musts));
    if let Some(p) = &product {
        v.summary = Some(format!(
            "{} {} ({}), Gatehouse {}{}: {}{}; {should} SHOULD failure(s) listed",
            p.name,
            p.version,
            p.vendor,
            view.spec_version,
            if p.scope.is_empty() {
                String::new()
            } else {
                format!(", scope {}", p.scope.join(" "))
            },
            view.score_line(),
            v.musts
                .as_ref()
                .map(|t| format!("; {}", t.line()))
                .unwrap_or_default()
        ));
    }
    v
}

/// The expectations file of the folder: present, well formed, every entry with a reason.
fn check_expectations(dir: &Path, problems: &mut Vec<String>) {
    let path = dir.join(EXPECTATIONS);
    if !path.exists() {
        problems.push(format!(
            "{}: missing (the run was compared with an expectations file)",
            path.display()
        ));
        return;
    }
    match crate::expectations::Expectations::load(&path) {
        Err(e) => problems.push(e.to_string()),
        Ok(e) => {
            for (id, entry) in &e.scenarios {
                if entry.reason.trim().is_empty() {
                    problems.push(format!(
                        "{}: `{id}` is an expected failure without a reason",
                        path.display()
                    ));
                }
            }
        }
    }
}

/// The log of a run known only by its JSON report (`certify --from-report`): its verdict
/// lines, then one line per scenario.
pub fn log_from_report(report: &Value) -> String {
    let mut out = String::new();
    for l in report
        .pointer("/verdict/lines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
    for sc in report
        .get("scenarios")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let w = |k: &str| sc.get(k).and_then(Value::as_str).unwrap_or("?");
        out.push_str(&format!(
            "{:<10} {:<10} {}{}\n",
            w("safety"),
            w("exactness"),
            w("id"),
            sc.get("reason")
                .and_then(Value::as_str)
                .map(|r| format!("  ({r})"))
                .unwrap_or_default()
        ));
    }
    out
}

/// Writes a submission folder into `out` (made if missing): the product file's text,
/// the report's, the log's, the expectations file's (when given) and `SUITE` from the
/// report.
pub fn package(
    out: &Path,
    product: &str,
    report: &str,
    log: &str,
    expectations: Option<&str>,
) -> Result<(), crate::error::Error> {
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|source| crate::error::Error::Write { path, source })
    };
    std::fs::create_dir_all(out).map_err(|source| crate::error::Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let hash = serde_json::from_str::<Value>(report)
        .ok()
        .and_then(|v| {
            v.pointer("/runner/suite/hash")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_default();
    write(PRODUCT, product)?;
    write(REPORT, report)?;
    write(LOG, log)?;
    write(SUITE, &format!("{hash}\n"))?;
    if let Some(e) = expectations {
        write(EXPECTATIONS, e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_product_names_a_pinned_version_and_every_field() {
        let ok = "name = \"n\"\nvendor = \"v\"\nversion = \"1.2.3\"\nrepository = \"r\"\nreproduce = \"x\"\n";
        assert!(Product::parse(ok, "P").is_ok());
        let bad = ok.replace("1.2.3", "latest").replace("\"v\"", "\"\"");
        assert_eq!(
            Product::parse(&bad, "P").unwrap_err(),
            vec![
                "P: `vendor` is empty".to_string(),
                "P: `version` \"latest\" is not pinned (name the release or the commit that ran)"
                    .to_string()
            ]
        );
    }

    #[test]
    fn the_must_tally_never_counts_an_untested_must_as_passed() {
        let item =
            |id: &str, scenarios: &[&str], verdict: Option<&str>, document: bool| checklist::Item {
                id: id.into(),
                level: Level::Must,
                scenarios: scenarios.iter().map(|s| s.to_string()).collect(),
                verdict: verdict.map(String::from),
                document: document.then(|| "spec/untestable.toml".to_string()),
            };
        let list = Checklist {
            spec_version: "0.9".into(),
            suite_hash: "sha256:ab".into(),
            must: 6,
            should: 0,
            may: 0,
            items: vec![
                item("A-1", &["gate/a"], Some("safety"), false),
                // One scenario of its evidence out of the run: not tested.
                item("A-2", &["gate/a", "fence/b"], Some("safety"), false),
                // Checked at exactness: a safety pass does not show it.
                item("A-3", &["gate/c"], Some("exactness"), false),
                item("A-4", &["gate/d"], Some("safety"), false),
                item("A-5", &[], None, true),
                item("A-6", &["gate/s"], Some("safety"), false),
            ],
        };
        let report = json!({"scenarios": [
            {"id": "gate/a", "safety": "passed", "exactness": "passed"},
            {"id": "gate/c", "safety": "passed", "exactness": "failed"},
            {"id": "gate/d", "safety": "failed", "exactness": "failed"},
            {"id": "gate/s", "safety": "skipped", "exactness": "skipped"},
        ]});
        let failed: BTreeSet<String> = ["A-4".to_string()].into();
        assert_eq!(
            tally(&list, &report, &failed),
            MustTally {
                passed: 1,
                failed: 1,
                not_tested: 3,
                by_document: 1
            }
        );
    }

    #[test]
    fn a_failure_is_on_what_its_unsafe_steps_pin() {
        let sc = json!({
            "requirements": ["GATE-A-1", "GATE-A-2"],
            "steps": [
                {"pins": ["GATE-A-2.b"], "differences": [{"level": "safety"}]},
                {"pins": ["GATE-A-1"], "differences": [{"level": "exactness"}]},
            ]
        });
        assert_eq!(
            failed_requirements(&sc).into_iter().collect::<Vec<_>>(),
            vec!["GATE-A-2"]
        );
        let errored =
            json!({"requirements": ["GATE-A-1"], "steps": [{"requirements": ["GATE-B-1"]}]});
        assert_eq!(failed_requirements(&errored).len(), 2);
    }
}
