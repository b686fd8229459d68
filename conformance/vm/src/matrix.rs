//! The merged matrix report: every guest's canonical JSON and JUnit as files, one
//! Markdown table (guest and user x scenario folder, with counts and times) with every
//! non-passing scenario and its reason, and `matrix.json`, the same facts for machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::error::VmError;
use super::guest::{GuestResult, UserRun};
use super::kernels::Narrowed;

/// Counts of one user's run in one scenario folder.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    errored: usize,
}

impl Tally {
    fn add(&mut self, outcome: &str) {
        match outcome {
            "passed" => self.passed += 1,
            "failed" => self.failed += 1,
            "skipped" => self.skipped += 1,
            _ => self.errored += 1,
        }
    }

    fn cell(self) -> String {
        let mut parts = vec![format!("{} ok", self.passed)];
        for (n, word) in [
            (self.failed, "failed"),
            (self.errored, "errored"),
            (self.skipped, "skipped"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        parts.join(", ")
    }
}

fn folder(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

fn scenarios(report: &Value) -> impl Iterator<Item = &Value> {
    report
        .get("scenarios")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn tallies(report: &Value) -> BTreeMap<String, Tally> {
    let mut t: BTreeMap<String, Tally> = BTreeMap::new();
    for s in scenarios(report) {
        let id = s.get("id").and_then(Value::as_str).unwrap_or("?");
        let outcome = s
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("errored");
        t.entry(folder(id).to_string()).or_default().add(outcome);
    }
    t
}

/// Whether a user's run is green: a report, exit 0, nothing failed or errored.
pub fn user_green(u: &UserRun) -> bool {
    u.problem.is_none()
        && u.exit == Some(0)
        && u.report.as_ref().is_some_and(|r| {
            scenarios(r).all(|s| {
                matches!(
                    s.get("outcome").and_then(Value::as_str),
                    Some("passed" | "skipped")
                )
            })
        })
}

/// Whether the whole guest is green.
pub fn guest_green(g: &GuestResult) -> bool {
    g.error.is_none() && !g.users.is_empty() && g.users.iter().all(user_green)
}

fn suite_secs(u: &UserRun) -> Option<f64> {
    u.report
        .as_ref()?
        .pointer("/runner/duration_ms")?
        .as_u64()
        .map(|ms| ms as f64 / 1000.0)
}

/// What the guests leave to the host, said in the report rather than skipped silently.
#[derive(Debug, Clone, Default)]
pub struct HostOnly {
    /// How many scenarios of the decision tier the run selects (`None`: not counted).
    pub decision_scenarios: Option<usize>,
    /// kernels.toml's `[[narrowed]]` entries, each with how many scenarios it names.
    pub narrowed: Vec<(Narrowed, Option<usize>)>,
}

/// A `[[narrowed]]` entry as one run reports it.
struct NarrowedNote<'a> {
    entry: &'a Narrowed,
    count: Option<usize>,
    guests: Vec<String>,
    line: String,
}

/// Why the decision tier is not run in a guest that runs the enforcement tier only.
pub const NOT_RUN: &str = "not run on this guest: kernel-independent, run on the host";

impl HostOnly {
    /// Each `[[narrowed]]` entry some guest of this run left out: the entry, its count,
    /// the guests that left it out and its line for `matrix.md`.
    fn narrowed_notes<'a>(&'a self, results: &[GuestResult]) -> Vec<NarrowedNote<'a>> {
        self.narrowed
            .iter()
            .filter_map(|(n, count)| {
                let guests: Vec<String> = results
                    .iter()
                    .filter(|g| g.plan.leaves_out.contains(n))
                    .map(|g| g.plan.label())
                    .collect();
                if guests.is_empty() {
                    return None;
                }
                let what = match count {
                    Some(c) => format!("{c} scenario(s) matching {}", n.scenarios.join(", ")),
                    None => format!("the scenarios matching {}", n.scenarios.join(", ")),
                };
                let line = format!(
                    "{what} (run on the guests of {} only, kernels.toml [[narrowed]]: {}): left out on {}",
                    n.kernels.join(", "),
                    n.why.trim(),
                    guests.join(", ")
                );
                Some(NarrowedNote {
                    entry: n,
                    count: *count,
                    guests,
                    line,
                })
            })
            .collect()
    }

    fn note(&self, results: &[GuestResult]) -> Option<String> {
        let guests: Vec<String> = results
            .iter()
            .filter(|g| !g.plan.decision_tier)
            .map(|g| g.plan.label())
            .collect();
        if guests.is_empty() || self.decision_scenarios == Some(0) {
            return None;
        }
        let what = match self.decision_scenarios {
            Some(n) => format!("{n} scenario(s) of the decision tier"),
            None => "the decision tier".to_string(),
        };
        Some(format!(
            "{what} ({NOT_RUN}: pure policy, no command runs in a fence, so no kernel feature reaches it; `gatehouse-conform run` on the host runs it): {}",
            guests.join(", ")
        ))
    }
}

/// Writes each guest's reports into `dir`, then `matrix.md` and `matrix.json`; returns
/// the Markdown.
pub fn write(
    dir: &Path,
    results: &[GuestResult],
    command: &str,
    wall: f64,
    host_only: &HostOnly,
) -> Result<String, VmError> {
    let put = |name: String, bytes: &[u8]| {
        std::fs::write(dir.join(&name), bytes).map_err(|source| VmError::Write {
            path: dir.join(&name),
            source,
        })
    };
    let pretty = |name: &str, v: &Value| {
        serde_json::to_string_pretty(v).map_err(|source| VmError::Serialize {
            path: dir.join(name),
            source,
        })
    };
    for g in results {
        for u in &g.users {
            let stem = format!("{}-{}-{}", g.plan.kernel, g.plan.variant, u.user);
            if let Some(r) = &u.report {
                let name = format!("{stem}.json");
                let text = pretty(&name, r)?;
                put(name, text.as_bytes())?;
            }
            if let Some(x) = &u.junit {
                put(format!("{stem}.xml"), x)?;
            }
        }
    }
    let mut md = markdown(results, command, wall);
    let narrowed = host_only.narrowed_notes(results);
    let decision = host_only.note(results);
    if decision.is_some() || !narrowed.is_empty() {
        let _ = writeln!(md, "\n## Not run in every guest\n");
        for note in decision.iter().chain(narrowed.iter().map(|n| &n.line)) {
            let _ = writeln!(md, "- {note}");
        }
    }
    put("matrix.md".into(), md.as_bytes())?;
    let mut summary = summary_json(results, command, wall);
    summary["not_run_in_guests"] = json!({
        "decision_tier": {
            "scenarios": host_only.decision_scenarios,
            "guests": results.iter().filter(|g| !g.plan.decision_tier).map(|g| g.plan.label()).collect::<Vec<_>>(),
            "why": NOT_RUN,
        },
        "narrowed": narrowed.iter().map(|n| json!({
            "scenarios": n.entry.scenarios, "count": n.count, "run_on": n.entry.kernels,
            "why": n.entry.why.trim(), "left_out_on": n.guests,
        })).collect::<Vec<_>>(),
    });
    put(
        "matrix.json".into(),
        pretty("matrix.json", &summary)?.as_bytes(),
    )?;
    Ok(md)
}

fn folders(results: &[GuestResult]) -> Vec<String> {
    let mut all: Vec<String> = results
        .iter()
        .flat_map(|g| g.users.iter())
        .filter_map(|u| u.report.as_ref())
        .flat_map(|r| tallies(r).into_keys())
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The Markdown view.
pub fn markdown(results: &[GuestResult], command: &str, wall: f64) -> String {
    let folders = folders(results);
    let mut md = String::new();
    let green = results.iter().filter(|g| guest_green(g)).count();
    let _ = writeln!(
        md,
        "# Kernel matrix\n\n`{command}`: {green} of {} guests green, {wall:.0} s wall.\n",
        results.len()
    );
    let _ = write!(md, "| kernel | variant | user | Landlock | tiers | ");
    for f in &folders {
        let _ = write!(md, "{f} | ");
    }
    let _ = writeln!(md, "boot s | suite s | first error |");
    let _ = write!(md, "|---|---|---|---|---|");
    for _ in &folders {
        let _ = write!(md, "---|");
    }
    let _ = writeln!(md, "---|---|---|");
    for g in results {
        let boot = g
            .boot
            .map_or("-".to_string(), |d| format!("{:.1}", d.as_secs_f64()));
        if g.users.iter().all(|u| u.report.is_none()) {
            let reason = g.error.clone().unwrap_or_else(|| "no report".into());
            let _ = writeln!(
                md,
                "| {} | {} | - | {} | {} | errored |{} {boot} | - | {} |",
                g.plan.kernel,
                g.plan.variant,
                g.plan.landlock_abi,
                g.plan.tiers(),
                " |".repeat(folders.len().saturating_sub(1)),
                first_error_text(&reason)
            );
            continue;
        }
        for u in &g.users {
            let t = u.report.as_ref().map(tallies).unwrap_or_default();
            let _ = write!(
                md,
                "| {} | {} | {} | {} | {} | ",
                g.plan.kernel,
                g.plan.variant,
                u.user,
                g.plan.landlock_abi,
                g.plan.tiers()
            );
            for f in &folders {
                let cell = t.get(f).map_or("-".into(), |t| t.cell());
                let _ = write!(md, "{cell} | ");
            }
            let suite = suite_secs(u).map_or("-".into(), |s| format!("{s:.0}"));
            let first = first_error(g, u).map_or("-".into(), |e| first_error_text(&e));
            let _ = writeln!(md, "{boot} | {suite} | {first} |");
        }
    }
    let mut problems = String::new();
    for g in results {
        if let Some(e) = &g.error {
            let _ = writeln!(
                problems,
                "- **{}** (guest): errored: {}",
                g.plan.label(),
                cell_text(e)
            );
        }
        for u in &g.users {
            for s in u.report.iter().flat_map(scenarios) {
                let outcome = s.get("outcome").and_then(Value::as_str).unwrap_or("?");
                if outcome == "passed" {
                    continue;
                }
                let id = s.get("id").and_then(Value::as_str).unwrap_or("?");
                let reason = s.get("reason").and_then(Value::as_str).unwrap_or("");
                // Reports since spec 0.10 carry the safety verdict (spec/verdicts.md).
                let safety = match s.get("safety").and_then(Value::as_str) {
                    Some("failed") => " (safety failed)",
                    _ => "",
                };
                let _ = writeln!(
                    problems,
                    "- {} {} `{id}`: {outcome}{safety}: {}",
                    g.plan.label(),
                    u.user,
                    cell_text(reason)
                );
            }
        }
    }
    if !problems.is_empty() {
        let _ = writeln!(md, "\n## Every scenario that did not pass\n\n{problems}");
    }
    md
}

/// The first thing that went wrong in a user's run, for its row: why it has no report,
/// else its first errored scenario (id and reason), else its first failed one, else the
/// guest's own error. `None` for a run where nothing did.
fn first_error(g: &GuestResult, u: &UserRun) -> Option<String> {
    if let Some(p) = &u.problem {
        return Some(p.clone());
    }
    for wanted in ["errored", "failed"] {
        let found = u.report.iter().flat_map(scenarios).find(|s| {
            s.get("outcome")
                .and_then(Value::as_str)
                .unwrap_or("errored")
                == wanted
        });
        if let Some(s) = found {
            let id = s.get("id").and_then(Value::as_str).unwrap_or("?");
            let reason = s.get("reason").and_then(Value::as_str).unwrap_or("");
            return Some(format!("{id}: {wanted}: {reason}"));
        }
    }
    match u.exit {
        Some(e) if e != 0 => Some(format!("the inner run exited {e}")),
        _ => g.error.clone(),
    }
}

/// Longest first-error quote in a row; the whole reason is in the list below the table.
const FIRST_ERROR_CHARS: usize = 160;

/// Its first non-empty line, at most [`FIRST_ERROR_CHARS`] characters (`...` when cut),
/// quoted as code.
fn first_error_text(s: &str) -> String {
    let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let mut cut: String = first
        .chars()
        .take(FIRST_ERROR_CHARS)
        .collect::<String>()
        .replace('|', "\\|")
        .replace('`', "'");
    if first.chars().count() > FIRST_ERROR_CHARS || lines.next().is_some() {
        cut.push_str("...");
    }
    format!("`{cut}`")
}

fn cell_text(s: &str) -> String {
    let one: String = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    if one.chars().count() > 300 {
        one.chars().take(300).collect::<String>() + "..."
    } else {
        one
    }
}

fn summary_json(results: &[GuestResult], command: &str, wall: f64) -> Value {
    let guests: Vec<Value> = results
        .iter()
        .map(|g| {
            json!({
                "kernel": g.plan.kernel,
                "variant": g.plan.variant,
                "release": g.release,
                "landlock_abi": g.plan.landlock_abi,
                "user_namespaces": g.plan.user_namespaces,
                "tiers": g.plan.tiers(),
                "green": guest_green(g),
                "error": g.error,
                "boot_secs": g.boot.map(|d| d.as_secs_f64()),
                "total_secs": g.total.as_secs_f64(),
                "users": g.users.iter().map(|u| json!({
                    "user": u.user,
                    "exit": u.exit,
                    "problem": u.problem,
                    "suite_secs": suite_secs(u),
                    "summary": u.report.as_ref().and_then(|r| r.get("summary")).cloned(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"command": command, "wall_secs": wall, "guests": guests})
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::kernels::GuestPlan;

    fn plan() -> GuestPlan {
        GuestPlan {
            kernel: "6.1".into(),
            variant: "base".into(),
            cmdline: String::new(),
            sysctls: vec![],
            landlock_abi: 2,
            user_namespaces: true,
            fence_backend: "native".into(),
            decision_tier: true,
            leaves_out: Vec::new(),
        }
    }

    fn user(outcomes: &[(&str, &str)]) -> UserRun {
        let scenarios: Vec<Value> = outcomes
            .iter()
            .map(|(id, o)| json!({"id": id, "outcome": o, "reason": format!("why {id}")}))
            .collect();
        UserRun {
            user: "root".into(),
            exit: Some(0),
            report: Some(json!({"scenarios": scenarios, "runner": {"duration_ms": 4000}})),
            junit: None,
            problem: None,
        }
    }

    fn guest(users: Vec<UserRun>, error: Option<&str>) -> GuestResult {
        GuestResult {
            plan: plan(),
            release: Some("6.1.0".into()),
            boot: Some(Duration::from_secs(3)),
            total: Duration::from_secs(10),
            error: error.map(String::from),
            users,
            console: "c".into(),
        }
    }

    #[test]
    fn counts_per_folder_and_every_non_passing_scenario_with_its_reason() {
        let g = guest(
            vec![user(&[
                ("fence/a", "passed"),
                ("fence/b", "failed"),
                ("gate/c", "skipped"),
            ])],
            None,
        );
        let md = markdown(std::slice::from_ref(&g), "vm --all", 12.0);
        assert!(
            md.contains(
                "| 6.1 | base | root | 2 | all | 1 ok, 1 failed | 0 ok, 1 skipped | 3.0 | 4 | `fence/b: failed: why fence/b` |"
            ),
            "{md}"
        );
        assert!(md.contains("`fence/b`: failed: why fence/b"));
        assert!(md.contains("`gate/c`: skipped: why gate/c"));
        assert!(!md.contains("`fence/a`"));
        assert!(!guest_green(&g));
    }

    #[test]
    fn the_decision_tier_left_to_the_host_is_said_never_silent() {
        let mut g = guest(vec![user(&[("fence/a", "passed")])], None);
        g.plan.decision_tier = false;
        let note = HostOnly {
            decision_scenarios: Some(12),
            narrowed: vec![],
        }
        .note(std::slice::from_ref(&g))
        .unwrap();
        assert!(
            note.starts_with("12 scenario(s) of the decision tier"),
            "{note}"
        );
        assert!(
            note.contains(NOT_RUN) && note.ends_with("6.1/base"),
            "{note}"
        );
        // A run whose filter selects no decision scenario leaves nothing to say.
        assert!(HostOnly {
            decision_scenarios: Some(0),
            narrowed: vec![],
        }
        .note(std::slice::from_ref(&g))
        .is_none());
        g.plan.decision_tier = true;
        assert!(HostOnly::default().note(&[g]).is_none());
    }

    #[test]
    fn a_narrowed_entry_names_the_guests_that_left_it_out_and_why() {
        let n = Narrowed {
            scenarios: vec!["fence/net-".into()],
            kernels: vec!["5.10".into()],
            why: "one per class".into(),
            unless_pins: vec![],
        };
        let mut g = guest(vec![user(&[("fence/a", "passed")])], None);
        let host = HostOnly {
            decision_scenarios: Some(0),
            narrowed: vec![(n.clone(), Some(3))],
        };
        assert!(host.narrowed_notes(std::slice::from_ref(&g)).is_empty());
        g.plan.leaves_out = vec![n];
        let notes = host.narrowed_notes(std::slice::from_ref(&g));
        assert_eq!(notes.len(), 1);
        assert_eq!(
            notes[0].line,
            "3 scenario(s) matching fence/net- (run on the guests of 5.10 only, kernels.toml [[narrowed]]: one per class): left out on 6.1/base"
        );
        let dir = tempfile::tempdir().unwrap();
        let md = write(dir.path(), std::slice::from_ref(&g), "vm", 1.0, &host).unwrap();
        assert!(md.contains("## Not run in every guest"), "{md}");
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("matrix.json")).unwrap())
                .unwrap();
        assert_eq!(
            json["not_run_in_guests"]["narrowed"][0]["left_out_on"][0],
            "6.1/base"
        );
    }

    #[test]
    fn an_errored_guest_is_a_row_with_its_reason_and_never_green() {
        let g = guest(vec![], Some("hung: no power-off within 600 s"));
        let md = markdown(std::slice::from_ref(&g), "vm", 1.0);
        assert!(
            md.contains("| errored | 3.0 | - | `hung: no power-off within 600 s` |"),
            "{md}"
        );
        assert!(!guest_green(&g));
        let ok = guest(vec![user(&[("fence/a", "passed")])], None);
        assert!(guest_green(&ok));
        let mut exit1 = user(&[("fence/a", "passed")]);
        exit1.exit = Some(1);
        assert!(!guest_green(&guest(vec![exit1], None)));
    }

    #[test]
    fn an_errored_users_row_quotes_its_first_error_on_one_cut_line() {
        // The trap of issue 44: every unprivileged scenario errored on its fixture and the
        // row said only "0 ok, 83 errored".
        let mut unpriv = user(&[
            ("fence/a", "passed"),
            ("fence/b", "errored"),
            ("gate/c", "errored"),
        ]);
        unpriv.user = "unprivileged".into();
        let reasons = unpriv.report.as_mut().unwrap()["scenarios"]
            .as_array_mut()
            .unwrap();
        reasons[1]["reason"] =
            "fixture: cannot build the fixture: Permission denied (os error 13)\nat /tmp/x".into();
        reasons[2]["reason"] = "later".into();
        let g = guest(vec![user(&[("fence/a", "passed")]), unpriv], None);
        let md = markdown(std::slice::from_ref(&g), "vm", 1.0);
        let row = md.lines().find(|l| l.contains("| unprivileged |")).unwrap();
        assert!(
            row.ends_with(
                "| 1 ok, 1 errored | 0 ok, 1 errored | 3.0 | 4 | `fence/b: errored: fixture: cannot build the fixture: Permission denied (os error 13)...` |"
            ),
            "{row}"
        );
        let root = md.lines().find(|l| l.contains("| root |")).unwrap();
        assert!(root.ends_with("| 3.0 | 4 | - |"), "{root}");
        // A user with no report says why; a long reason is cut, `|` escaped.
        let mut none = user(&[]);
        none.report = None;
        none.exit = None;
        none.problem = Some(format!("no report: {}| end", "x".repeat(400)));
        let md = markdown(
            &[guest(vec![user(&[("fence/a", "passed")]), none], None)],
            "vm",
            1.0,
        );
        let row = md.lines().find(|l| l.contains("no report")).unwrap();
        assert!(row.ends_with("...` |"), "{row}");
        assert!(row.len() < 400, "{row}");
        // The header has the column.
        assert!(md.contains("| boot s | suite s | first error |"), "{md}");
    }
}
