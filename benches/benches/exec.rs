//! Whole-process cost of one jailed `true`, as a person pays it: `gatehouse exec -- true`
//! against the bubblewrap line agents typically call (`--unshare-all --cap-drop ALL`) and
//! against `true` itself, spawned in turn, round after round, so that all three see the
//! same load; the medians and their ratios are printed at the end.
//!
//! A bench binary rather than criterion: criterion measures one function at a time, and
//! on a shared machine the load moves between them; interleaving keeps the ratio honest.
//! Needs the release `gatehouse`: the static build where the platform has one (`cargo
//! build-static`, `target/x86_64-unknown-linux-gnu/release/gatehouse`, which is what the
//! conformance runner certifies there), else the one beside this executable (`cargo build
//! --release -p gatehouse`), or `GATEHOUSE`; and `/usr/bin/bwrap`, each measured as a fresh
//! copy in the bench's own directory. Rounds: `GATEHOUSE_BENCH_ROUNDS`
//! (default 30). Extra `gatehouse exec` arguments (`--network allow-list ...`) can be
//! measured with `GATEHOUSE_BENCH_EXEC_ARGS`, and an older build of `gatehouse` in the same
//! rounds with `GATEHOUSE_BENCH_BEFORE=path`. The rounds go through every order of the
//! cases (the count is rounded up to a multiple of n!), so that each case follows each
//! other equally often; the medians by predecessor are printed too.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gatehouse_benches::median;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

fn gatehouse() -> Option<PathBuf> {
    gatehouse_benches::release_gatehouse()
}

fn run(argv: &[String]) -> Result<f64, String> {
    let start = Instant::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        return Err(format!("`{}` exited {status}", argv.join(" ")));
    }
    Ok(ms)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that excludes us means skip.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if args.iter().any(|f| !"exec".contains(f.as_str())) {
        return;
    }
    let Some(gh) = gatehouse() else {
        eprintln!("exec bench: skipped: build the reference first (cargo build-static, or cargo build --release -p gatehouse) or set GATEHOUSE");
        return;
    };
    let rounds: usize = std::env::var("GATEHOUSE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir().expect("tempdir");
    let w = dir.path().join("W");
    std::fs::create_dir_all(&w).expect("workspace");
    let w = w.display().to_string();
    // Every binary measured is a fresh copy in this directory, so that their page caches
    // have one history: the same gatehouse binary as two files, one copied minutes before
    // the other, took 325 and 282 page faults per command and ran 12 % apart.
    let fresh = |from: &std::path::Path, name: &str| -> String {
        let to = dir.path().join(name);
        if let Err(e) = std::fs::copy(from, &to) {
            eprintln!("exec bench: cannot copy {}: {e}", from.display());
            std::process::exit(1);
        }
        to.display().to_string()
    };
    let bwrap = fresh(std::path::Path::new("/usr/bin/bwrap"), "bwrap");
    let s = |x: &str| x.to_string();
    let mut exec = vec![
        fresh(&gh, "gatehouse"),
        s("exec"),
        s("--workspace"),
        w.clone(),
    ];
    if let Ok(extra) = std::env::var("GATEHOUSE_BENCH_EXEC_ARGS") {
        exec.extend(extra.split_whitespace().map(str::to_string));
    }
    exec.extend([s("--"), s("true")]);
    let mut cases: Vec<(&str, Vec<String>, Vec<f64>)> = vec![
        ("true", vec![s("true")], Vec::new()),
        (
            "bwrap line",
            [
                &bwrap,
                "--unshare-all",
                "--cap-drop",
                "ALL",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--bind",
                &w,
                &w,
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ]
            .iter()
            .map(|x| x.to_string())
            .collect(),
            Vec::new(),
        ),
        ("gatehouse exec -- true", exec.clone(), Vec::new()),
    ];
    // An older build measured in the same rounds (`GATEHOUSE_BENCH_BEFORE=path`), so a
    // change's effect is read from one run under one load.
    if let Some(before) = std::env::var_os("GATEHOUSE_BENCH_BEFORE") {
        let mut argv = exec;
        argv[0] = fresh(std::path::Path::new(&before), "gatehouse-before");
        cases.push(("  the same, before", argv, Vec::new()));
    }
    // The run after a jail pays for part of its teardown (the kernel frees a network
    // namespace and a mount tree after the last process is gone), so the order must give
    // every case every predecessor equally often, not only every place: turning one fixed
    // order by one each round kept who-follows-whom fixed, and one binary measured as two
    // cases came out 12-15 % apart by its predecessor alone (the bwrap line followed
    // `true`, which leaves nothing behind, three times in four). Rounds go through every
    // permutation of the cases in turn: over each n! rounds every ordered pair is adjacent
    // equally often and every case takes every place equally often.
    let n = cases.len();
    let rounds = rounds.div_ceil(factorial(n)) * factorial(n);
    let mut order: Vec<usize> = (0..n).collect();
    // after[p][c]: the times of case c right after case p (within a round or across).
    let mut after = vec![vec![Vec::new(); n]; n];
    let mut prev: Option<usize> = None;
    for _ in 0..rounds {
        for &c in &order {
            let (name, argv, times) = &mut cases[c];
            match run(argv) {
                Ok(ms) => {
                    times.push(ms);
                    if let Some(p) = prev {
                        after[p][c].push(ms);
                    }
                }
                Err(e) => {
                    eprintln!("exec bench: {name}: {e}");
                    std::process::exit(1);
                }
            }
            prev = Some(c);
        }
        next_permutation(&mut order);
    }
    let medians: Vec<(&str, f64)> = cases.iter_mut().map(|(n, _, t)| (*n, median(t))).collect();
    let bwrap = medians[1].1;
    println!("exec bench: {rounds} rounds, interleaved, whole-process medians");
    println!("  gatehouse: {}", gh.display());
    for (name, m) in &medians {
        println!(
            "  {name:<26} {m:8.2} ms   {:5.2}x the bwrap line",
            m / bwrap
        );
    }
    println!("  median by predecessor (row: the case before; column: the case measured):");
    let short = |name: &str| name.trim().chars().take(12).collect::<String>();
    print!("  {:<14}", "");
    for (name, _, _) in &cases {
        print!("{:>14}", short(name));
    }
    println!();
    for (p, (pname, _, _)) in cases.iter().enumerate() {
        print!("  {:<14}", short(pname));
        for times in after[p].iter_mut() {
            match times.is_empty() {
                true => print!("{:>14}", "-"),
                false => print!("{:>11.2} ms", median(times)),
            }
        }
        println!();
    }
}

fn factorial(n: usize) -> usize {
    (1..=n).product()
}

/// The next permutation in lexicographic order, the first again after the last.
fn next_permutation(v: &mut [usize]) {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        v.reverse();
        return;
    };
    let j = (i..v.len())
        .rev()
        .find(|&j| v[j] > v[i - 1])
        .expect("v[i] qualifies");
    v.swap(i - 1, j);
    v[i..].reverse();
}
