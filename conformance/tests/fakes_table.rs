//! The fakes' table: every fake implementation of `tests/fakes/fakes.toml` run through the
//! whole suite (or its `filter`) with the built runner, and each judged as the table says:
//! the scenarios it must fail (at least, or exactly), a failing run, for the
//! implementations without a flaw, passing, or, for a flaw that is only inexact, the
//! safety verdict passed everywhere (`safe`). One line per miss.
//!
//! About 30 runs of the suite: minutes, so the test is `#[ignore]`d and the quick test
//! command leaves it out. Run it with `just fakes`, that is
//! `cargo test --release --locked -p gatehouse-conformance --test fakes_table -- --ignored`.
//! `GATEHOUSE_FAKES=name,name` runs only those rows; `GATEHOUSE_FAKES_JOBS=N` runs N
//! suites at once (default: the machine's cores; every run has its own temporary
//! directories, sockets and ports, so they do not meet). The fakes that wrap the
//! reference run `$GATEHOUSE`, else the static release build (`cargo build-static`).
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;

/// One row of the table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fake {
    name: String,
    command: String,
    #[serde(default)]
    filter: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    flaw: String,
    #[serde(default)]
    fails: Vec<String>,
    #[serde(default)]
    exactly: bool,
    #[serde(default)]
    fails_some: bool,
    #[serde(default)]
    passes: Option<Passes>,
    #[serde(default)]
    safe: bool,
    #[serde(default)]
    unsafe_in: Vec<String>,
    #[serde(default)]
    unshown_in: Vec<String>,
    #[serde(default)]
    expected: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    fake: Vec<Fake>,
}

/// What an implementation without a flaw must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Passes {
    /// Every scenario the run selected.
    All,
    /// Every scenario of a folder named as a capability it declares.
    Declared,
}

/// How one run of the suite ended: its exit code and its JSON report, if it wrote one.
struct Outcome {
    code: Option<i32>,
    report: Option<Value>,
    stderr: String,
    out: PathBuf,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the conformance crate sits in the workspace")
        .to_path_buf()
}

fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes/fakes.toml")
}

/// The rows' own mistakes: no expectation or two, `exactly` without `fails`, a duplicate
/// name, a scenario that does not exist (so that a typo cannot pass as "not failed").
fn check_table(fakes: &[Fake], scenarios: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for f in fakes {
        let at = format!("fakes.toml [{}]", f.name);
        if !names.insert(&f.name) {
            problems.push(format!("{at}: the name is used twice"));
        }
        let kinds = usize::from(!f.fails.is_empty())
            + usize::from(f.fails_some)
            + usize::from(f.passes.is_some())
            + usize::from(f.safe)
            + usize::from(!f.unsafe_in.is_empty() || !f.unshown_in.is_empty())
            + usize::from(f.expected.is_some());
        if kinds != 1 {
            problems.push(format!(
                "{at}: needs exactly one of `fails`, `fails_some`, `passes`, `safe`, `unsafe_in`/`unshown_in`, `expected` (has {kinds})"
            ));
        }
        if f.exactly && f.fails.is_empty() {
            problems.push(format!("{at}: `exactly` without `fails`"));
        }
        if f.expected.is_none() && (f.flaw == "none") != f.passes.is_some() {
            problems.push(format!(
                "{at}: `flaw = \"none\"` goes with `passes`, and a flaw with a failure"
            ));
        }
        if let Some(file) = &f.expected {
            if !root().join(file).is_file() {
                problems.push(format!("{at}: no expectations file `{file}`"));
            }
        }
        for id in f.fails.iter().chain(&f.unsafe_in).chain(&f.unshown_in) {
            if !scenarios.join(format!("{id}.toml")).is_file() {
                problems.push(format!("{at}: no scenario `{id}` in scenarios/"));
            }
        }
    }
    problems
}

fn run_one(f: &Fake, out_dir: &Path) -> Outcome {
    let out = out_dir.join(format!("{}.json", f.name));
    let _ = std::fs::remove_file(&out);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gatehouse-conform"));
    cmd.current_dir(root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["run", "--quiet", "--format", "json", "--out"])
        .arg(&out)
        .args(["--impl", &f.command]);
    if let Some(filter) = &f.filter {
        cmd.args(["--filter", filter]);
    }
    if let Some(file) = &f.expected {
        cmd.arg("--expectations").arg(file);
    }
    cmd.args(&f.args);
    let (code, stderr) = match cmd.output() {
        Ok(o) => (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (None, format!("cannot start the runner: {e}")),
    };
    let report = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    Outcome {
        code,
        report,
        stderr,
        out,
    }
}

/// The misses of one row, one line each.
fn judge(f: &Fake, o: &Outcome) -> Vec<String> {
    let at = format!("fakes.toml [{}] ({})", f.name, f.flaw);
    let Some(report) = &o.report else {
        let last = o.stderr.lines().last().unwrap_or("nothing on stderr");
        return vec![format!(
            "{at}: the run wrote no report {} (exit {:?}): {last}",
            o.out.display(),
            o.code
        )];
    };
    let outcomes: BTreeMap<String, String> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            Some((
                s["id"].as_str()?.to_string(),
                s["outcome"].as_str()?.to_string(),
            ))
        })
        .collect();
    let mut misses = Vec::new();
    if outcomes.is_empty() {
        misses.push(format!("{at}: no scenario ran"));
    }
    let failed = |id: &str| outcomes.get(id).is_some_and(|o| o == "failed");
    for id in &f.fails {
        if !failed(id) {
            let got = outcomes.get(id).map_or("not run", String::as_str);
            misses.push(format!("{at}: `{id}` must fail, got {got}"));
        }
    }
    if f.exactly {
        for (id, outcome) in &outcomes {
            if !f.fails.contains(id) && outcome != "passed" {
                misses.push(format!(
                    "{at}: `{id}` must pass (only the listed scenarios fail), got {outcome}"
                ));
            }
        }
    }
    if f.fails_some {
        if o.code == Some(0) {
            misses.push(format!(
                "{at}: the suite passed it: the suite does not catch it"
            ));
        }
        if !outcomes.values().any(|o| o == "failed") {
            misses.push(format!(
                "{at}: no scenario failed (it errored or was skipped rather than caught)"
            ));
        }
    }
    if let Some(file) = &f.expected {
        if o.code != Some(0) || report["expectations"].is_null() {
            let lines: Vec<&str> = ["regressions", "unexpected_passes", "gone"]
                .iter()
                .flat_map(|k| report["expectations"][k].as_array().into_iter().flatten())
                .filter_map(|l| l.as_str())
                .collect();
            misses.push(format!(
                "{at}: the run is not as {file} says (exit {:?}): {}",
                o.code,
                lines.join("; ")
            ));
        }
    }
    if f.safe {
        if o.code != Some(0) {
            misses.push(format!(
                "{at}: the run failed (exit {:?}); `safe` rows run with `--level safety`",
                o.code
            ));
        }
        for s in report["scenarios"].as_array().into_iter().flatten() {
            let safety = s["safety"].as_str().unwrap_or("(missing)");
            if !matches!(safety, "passed" | "skipped") {
                misses.push(format!(
                    "{at}: `{}` must pass safety, got {safety}",
                    s["id"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    // The misreporters: the safety verdict of each listed scenario, from the report.
    let safety: BTreeMap<&str, &str> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| Some((s["id"].as_str()?, s["safety"].as_str()?)))
        .collect();
    for (list, want) in [(&f.unsafe_in, "failed"), (&f.unshown_in, "not_shown")] {
        for id in list {
            let got = safety.get(id.as_str()).copied().unwrap_or("not run");
            if got != want {
                misses.push(format!("{at}: `{id}` must end safety {want}, got {got}"));
            }
        }
    }
    if let Some(passes) = f.passes {
        let declared: BTreeSet<&str> = report["environment"]["capabilities"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mine: Vec<(&String, &String)> = outcomes
            .iter()
            .filter(|(id, _)| {
                passes == Passes::All || declared.contains(id.split('/').next().unwrap_or_default())
            })
            .collect();
        if mine.is_empty() {
            misses.push(format!(
                "{at}: no scenario of its chapters ({declared:?}) ran"
            ));
        }
        for (id, outcome) in mine {
            if outcome != "passed" {
                misses.push(format!("{at}: `{id}` must pass, got {outcome}"));
            }
        }
    }
    misses
}

fn jobs() -> usize {
    std::env::var("GATEHOUSE_FAKES_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

#[test]
#[ignore = "runs the suite about 30 times: `just fakes`"]
fn every_fake_fails_where_the_table_says() {
    let text = std::fs::read_to_string(table_path()).expect("fakes.toml is readable");
    let table: Table = toml::from_str(&text).expect("fakes.toml parses");
    let problems = check_table(&table.fake, &root().join("scenarios"));
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));

    let only: Option<BTreeSet<String>> = std::env::var("GATEHOUSE_FAKES")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    if let Some(only) = &only {
        let unknown: Vec<_> = only
            .iter()
            .filter(|n| !table.fake.iter().any(|f| &f.name == *n))
            .collect();
        assert!(
            unknown.is_empty(),
            "GATEHOUSE_FAKES names rows fakes.toml lacks: {unknown:?}"
        );
    }
    let selected: VecDeque<&Fake> = table
        .fake
        .iter()
        .filter(|f| only.as_ref().is_none_or(|o| o.contains(&f.name)))
        .collect();
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fakes");
    std::fs::create_dir_all(&out_dir).expect("the report directory");

    let total = selected.len();
    let queue = Mutex::new(selected);
    let misses = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs().min(total.max(1)) {
            s.spawn(|| {
                while let Some(f) = queue.lock().map_or(None, |mut q| q.pop_front()) {
                    let outcome = run_one(f, &out_dir);
                    let mine = judge(f, &outcome);
                    let summary = outcome
                        .report
                        .as_ref()
                        .map_or_else(|| "no report".to_string(), |r| r["summary"].to_string());
                    eprintln!(
                        "{} {}: {summary}",
                        if mine.is_empty() { "ok  " } else { "MISS" },
                        f.name
                    );
                    if let Ok(mut all) = misses.lock() {
                        all.extend(mine);
                    }
                }
            });
        }
    });
    let misses = misses.into_inner().expect("no worker panicked");
    assert!(
        misses.is_empty(),
        "\n{} miss(es) of {total} fake(s), reports in {}:\n{}\n",
        misses.len(),
        out_dir.display(),
        misses.join("\n")
    );
}
