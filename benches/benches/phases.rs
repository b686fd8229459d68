//! Where the time of one `gatehouse exec -- true` goes, phase by phase: runs a build of
//! the reference made with the `timing-marks` feature (`sys::mark`) round after round,
//! reads the marks its processes write on standard error (the launcher's, the helper's and
//! the jail's init's; the init's reach us through the launcher's relay), and prints for
//! every mark the median time since the launcher's `main` and the median time since the
//! mark before it, whichever process wrote that one. A mark names the point a process has
//! reached; a step of the jail's plan is marked as it starts.
//!
//! Not a criterion bench and no ratio: the marks cost a `write` each and the build is not
//! the one shipped; the exec bench measures the shipped build. Run:
//! `cargo build-static --features timing-marks --target-dir target/marks` and
//! `GATEHOUSE=$PWD/target/marks/x86_64-unknown-linux-gnu/release/gatehouse cargo bench
//! -p gatehouse-benches --bench phases` (an absolute path: benches run in their package) (rounds: `GATEHOUSE_BENCH_ROUNDS`, default 40). Without
//! `GATEHOUSE` it is skipped; a `GATEHOUSE` without marks is an error.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gatehouse_benches::median;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// One mark of one run: seconds, the writer's PID (as it sees itself), the phase.
struct Mark {
    at: f64,
    pid: u32,
    phase: String,
}

fn marks_of(stderr: &[u8]) -> Vec<Mark> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|line| {
            let mut f = line.strip_prefix("gatehouse-mark ")?.split(' ');
            let at = f.next()?.parse().ok()?;
            let pid = f.next()?.parse().ok()?;
            let phase = f.next()?.to_string();
            Some(Mark { at, pid, phase })
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !args.is_empty() && !args.iter().any(|a| "phases".contains(a.as_str())) {
        return;
    }
    let Some(gatehouse) = std::env::var_os("GATEHOUSE") else {
        eprintln!("phases bench: skipped: set GATEHOUSE to a build with --features timing-marks");
        return;
    };
    let rounds: usize = std::env::var("GATEHOUSE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(40)
        .max(1);
    let workspace = tempfile::tempdir().expect("a workspace");
    // (process role, phase, its occurrence in that process) → of every run, the time since
    // the launcher's main and since the mark before.
    type Key = (String, String, usize);
    let mut times: BTreeMap<Key, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for round in 0..rounds {
        let out = Command::new(&gatehouse)
            .arg("exec")
            .arg("--workspace")
            .arg(workspace.path())
            .args(["--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap_or_else(|e| {
                eprintln!("phases bench: {}: {e}", gatehouse.to_string_lossy());
                std::process::exit(1)
            });
        assert!(out.status.success(), "gatehouse exec exited {}", out.status);
        let mut marks = marks_of(&out.stderr);
        if marks.is_empty() {
            eprintln!(
                "phases bench: {} wrote no timing marks: build it with --features timing-marks",
                gatehouse.to_string_lossy()
            );
            std::process::exit(1);
        }
        marks.sort_by(|a, b| a.at.partial_cmp(&b.at).expect("no NaN"));
        // The launcher writes `main`; the init sees itself as PID 1; any other is the helper.
        let Some((start, launcher)) = marks
            .iter()
            .find(|m| m.phase == "main")
            .map(|m| (m.at, m.pid))
        else {
            panic!("round {round}: no mark of the launcher's main");
        };
        let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mut previous = start;
        for m in &marks {
            let role = if m.pid == launcher {
                "launcher"
            } else if m.pid == 1 {
                "init"
            } else {
                "helper"
            };
            let n = seen
                .entry((role.to_string(), m.phase.clone()))
                .and_modify(|n| *n += 1)
                .or_insert(1);
            let (at, since) = times
                .entry((role.to_string(), m.phase.clone(), *n))
                .or_default();
            at.push((m.at - start) * 1e3);
            since.push((m.at - previous) * 1e3);
            previous = m.at;
        }
    }
    let mut rows: Vec<(f64, f64, usize, String)> = times
        .iter_mut()
        .map(|(key, (at, since))| {
            let runs = at.len();
            let a = median(at);
            let s = median(since);
            let name = match key.2 {
                1 => format!("{:8} {}", key.0, key.1),
                n => format!("{:8} {} ({n})", key.0, key.1),
            };
            (a, s, runs, name)
        })
        .collect();
    rows.sort_by(|a, b| a.0.partial_cmp(&b.0).expect("no NaN"));
    println!("phases bench: {rounds} rounds of gatehouse exec -- true, medians");
    println!(
        "  {:>9} {:>9}  {:>4}  process  phase",
        "at ms", "+ms", "runs"
    );
    for (a, s, runs, name) in rows {
        println!("  {a:9.3} {s:9.3}  {runs:4}  {name}");
    }
}
