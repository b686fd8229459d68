//! Two runs compared (`spec/verdicts.md`, PROTO-CERT-6): `gatehouse-conform diff A.json
//! B.json` and the site's history both read canonical JSON reports through [`RunView`]
//! (as JSON values, so that a report of any earlier runner reads) and list what changed
//! with [`diff`]: new failures first, safety before exactness, then the fixed ones, then
//! the scenarios only one run has.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// What a report says, as much as a comparison and a score need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    /// The implementation's name (its `hello`).
    pub name: String,
    /// Its version (its `hello`).
    pub version: String,
    /// The fence backend it declared (`none` for null).
    pub backend: String,
    /// The specification version of the suite that judged it.
    pub spec_version: String,
    /// The suite hash.
    pub suite_hash: String,
    /// Safety: (passed, judged): judged is every scenario not skipped.
    pub safety: (usize, usize),
    /// Exactness: (passed, judged).
    pub exactness: (usize, usize),
    /// Per scenario id: its safety and exactness verdicts.
    pub scenarios: BTreeMap<String, (String, String)>,
}

/// Whether a verdict is a failure: failed, errored or not shown safe.
pub fn failing(verdict: &str) -> bool {
    matches!(verdict, "failed" | "errored" | "not_shown")
}

fn score(counts: &Value) -> (usize, usize) {
    let n = |k: &str| counts.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
    let passed = n("passed");
    (passed, passed + n("failed") + n("errored") + n("not_shown"))
}

impl RunView {
    /// Reads a canonical JSON report's value; a report without scenarios is refused.
    pub fn from_json(v: &Value) -> Result<RunView, String> {
        let s = |path: &[&str]| {
            let mut at = v;
            for k in path {
                at = at.get(k).unwrap_or(&Value::Null);
            }
            at.as_str().unwrap_or("unknown").to_string()
        };
        let list = v
            .get("scenarios")
            .and_then(Value::as_array)
            .ok_or("not a canonical JSON report: no `scenarios` list")?;
        let mut scenarios = BTreeMap::new();
        for sc in list {
            let id = sc.get("id").and_then(Value::as_str).unwrap_or_default();
            let word = |k: &str| sc.get(k).and_then(Value::as_str).unwrap_or("unknown");
            // Reports older than the two verdicts have only `outcome`.
            let exactness = sc
                .get("exactness")
                .map_or(word("outcome"), |_| word("exactness"));
            let safety = sc.get("safety").map_or(word("outcome"), |_| word("safety"));
            scenarios.insert(id.to_string(), (safety.to_string(), exactness.to_string()));
        }
        let verdicts = v.get("verdicts").unwrap_or(&Value::Null);
        let summary = v.get("summary").unwrap_or(&Value::Null);
        Ok(RunView {
            name: s(&["environment", "name"]),
            version: s(&["environment", "version"]),
            backend: v
                .pointer("/environment/environment/fence_backend")
                .and_then(Value::as_str)
                .unwrap_or("none")
                .to_string(),
            spec_version: s(&["runner", "suite", "spec_version"]),
            suite_hash: s(&["runner", "suite", "hash"]),
            safety: score(verdicts.get("safety").unwrap_or(summary)),
            exactness: score(verdicts.get("exactness").unwrap_or(summary)),
            scenarios,
        })
    }

    /// Reads the report at `path`; the message names the file.
    pub fn load(path: &Path) -> Result<RunView, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        RunView::from_json(&v).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The implementation as the site's history groups its runs: its name and the fence
    /// backend it declared (`gatehouse (native)`).
    pub fn who(&self) -> String {
        format!("{} ({})", self.name, self.backend)
    }

    /// `safety 212/212, exactness 198/212`.
    pub fn score_line(&self) -> String {
        format!(
            "safety {}/{}, exactness {}/{}",
            self.safety.0, self.safety.1, self.exactness.0, self.exactness.1
        )
    }
}

/// What changed from one run to another, each list in scenario order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Scenarios that fail safety in B and did not in A: `(id, A's verdict, B's)`.
    pub new_safety: Vec<(String, String, String)>,
    /// Scenarios still safe in B that fail exactness in B and did not in A.
    pub new_exactness: Vec<(String, String, String)>,
    /// Scenarios that failed safety in A and do not in B.
    pub fixed_safety: Vec<(String, String, String)>,
    /// Scenarios that failed exactness in A and do not in B (safe in both).
    pub fixed_exactness: Vec<(String, String, String)>,
    /// Scenarios only B has, with B's safety and exactness verdicts.
    pub added: Vec<(String, String, String)>,
    /// Scenarios only A has.
    pub removed: Vec<String>,
}

/// What changed from run `a` to run `b`.
pub fn diff(a: &RunView, b: &RunView) -> Diff {
    let mut d = Diff::default();
    for (id, (bs, bx)) in &b.scenarios {
        let Some((as_, ax)) = a.scenarios.get(id) else {
            d.added.push((id.clone(), bs.clone(), bx.clone()));
            continue;
        };
        let row = |x: &str, y: &str| (id.clone(), x.to_string(), y.to_string());
        match (failing(as_), failing(bs)) {
            (false, true) => d.new_safety.push(row(as_, bs)),
            (true, false) => d.fixed_safety.push(row(as_, bs)),
            (true, true) => {}
            (false, false) => match (failing(ax), failing(bx)) {
                (false, true) => d.new_exactness.push(row(ax, bx)),
                (true, false) => d.fixed_exactness.push(row(ax, bx)),
                _ => {}
            },
        }
    }
    d.removed = a
        .scenarios
        .keys()
        .filter(|id| !b.scenarios.contains_key(*id))
        .cloned()
        .collect();
    d
}

impl Diff {
    /// Whether B has a failure A did not.
    pub fn has_new_failures(&self) -> bool {
        !self.new_safety.is_empty() || !self.new_exactness.is_empty()
    }

    /// One line per scenario, in the order of PROTO-CERT-6.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let rows =
            |out: &mut Vec<String>, what: &str, level: &str, v: &[(String, String, String)]| {
                for (id, a, b) in v {
                    out.push(format!("{what:<11} {level:<9}  {id}  ({a} -> {b})"));
                }
            };
        rows(&mut out, "new failure", "safety", &self.new_safety);
        rows(&mut out, "new failure", "exactness", &self.new_exactness);
        rows(&mut out, "fixed", "safety", &self.fixed_safety);
        rows(&mut out, "fixed", "exactness", &self.fixed_exactness);
        for (id, s, x) in &self.added {
            out.push(format!(
                "{:<11} {:<9}  {id}  (safety {s}, exactness {x})",
                "new", "scenario"
            ));
        }
        for id in &self.removed {
            out.push(format!("{:<11} {:<9}  {id}", "gone", "scenario"));
        }
        out
    }

    /// The counts in a few words: `2 new failure(s) (1 safety), 3 fixed, 4 new scenario(s), 0 gone`.
    pub fn summary(&self) -> String {
        format!(
            "{} new failure(s) ({} safety), {} fixed ({} safety), {} new scenario(s), {} gone",
            self.new_safety.len() + self.new_exactness.len(),
            self.new_safety.len(),
            self.fixed_safety.len() + self.fixed_exactness.len(),
            self.fixed_safety.len(),
            self.added.len(),
            self.removed.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(scenarios: &[(&str, &str, &str)]) -> RunView {
        let list: Vec<Value> = scenarios
            .iter()
            .map(|(id, s, x)| json!({"id": id, "safety": s, "exactness": x, "outcome": x}))
            .collect();
        RunView::from_json(&json!({
            "environment": {"name": "impl", "version": "1"},
            "runner": {"suite": {"spec_version": "0.15", "hash": "sha256:ab"}},
            "verdicts": {"safety": {"passed": 3, "failed": 1, "skipped": 2},
                         "exactness": {"passed": 2, "failed": 2, "skipped": 2}},
            "scenarios": list,
        }))
        .unwrap()
    }

    #[test]
    fn new_failures_come_first_safety_before_exactness_then_the_fixed() {
        let a = run(&[
            ("a/exact", "passed", "passed"),
            ("a/fixed", "failed", "failed"),
            ("a/fixed-x", "passed", "failed"),
            ("a/gone", "passed", "passed"),
            ("a/safe", "passed", "passed"),
            ("a/same", "failed", "failed"),
        ]);
        let b = run(&[
            ("a/exact", "passed", "failed"),
            ("a/fixed", "passed", "failed"),
            ("a/fixed-x", "skipped", "skipped"),
            ("a/new", "passed", "passed"),
            ("a/safe", "not_shown", "skipped"),
            ("a/same", "failed", "failed"),
        ]);
        let d = diff(&a, &b);
        assert!(d.has_new_failures());
        let lines = d.lines();
        let ids: Vec<&str> = lines
            .iter()
            .map(|l| l.split_whitespace().find(|w| w.contains('/')).unwrap())
            .collect();
        assert_eq!(
            ids,
            vec![
                "a/safe",
                "a/exact",
                "a/fixed",
                "a/fixed-x",
                "a/new",
                "a/gone"
            ]
        );
        assert_eq!(
            lines[0],
            "new failure safety     a/safe  (passed -> not_shown)"
        );
        assert!(lines[1].starts_with("new failure exactness"));
        assert_eq!(
            d.summary(),
            "2 new failure(s) (1 safety), 2 fixed (1 safety), 1 new scenario(s), 1 gone"
        );
        assert!(!diff(&b, &b).has_new_failures());
        assert_eq!(a.score_line(), "safety 3/4, exactness 2/4");
    }
}
