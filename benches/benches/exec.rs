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
//! --release -p gatehouse`), or `GATEHOUSE`; and `/usr/bin/bwrap`. Rounds: `GATEHOUSE_BENCH_ROUNDS`
//! (default 30). Extra `gatehouse exec` arguments (`--network allow-list ...`) can be
//! measured with `GATEHOUSE_BENCH_EXEC_ARGS`, and an older build of `gatehouse` in the same
//! rounds with `GATEHOUSE_BENCH_BEFORE=path`. The order of the cases turns by one each
//! round.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

fn gatehouse() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GATEHOUSE") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/exec-<hash> → target/<triple>/release/gatehouse (static),
    // else target/<profile>/gatehouse, else release.
    let target = exe.parent()?.parent()?.parent()?;
    let static_build = if cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        target_arch = "x86_64"
    )) {
        Some(target.join("x86_64-unknown-linux-gnu/release/gatehouse"))
    } else {
        None
    };
    static_build
        .into_iter()
        .chain([
            exe.parent()?.parent()?.join("gatehouse"),
            target.join("release/gatehouse"),
        ])
        .find(|p| p.exists())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
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
    let s = |x: &str| x.to_string();
    let mut exec = vec![
        gh.display().to_string(),
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
                "/usr/bin/bwrap",
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
        argv[0] = before.to_string_lossy().into_owned();
        cases.push(("  the same, before", argv, Vec::new()));
    }
    // Each round starts one case later, so that every case runs in every place of the
    // order equally often: the run after a jail pays for part of its teardown (the
    // kernel frees a network namespace after its last process is gone), and with a fixed
    // order one binary run twice in one round measured 0.25 ms apart by place alone.
    let n = cases.len();
    for round in 0..rounds {
        for k in 0..n {
            let (name, argv, times) = &mut cases[(round + k) % n];
            match run(argv) {
                Ok(ms) => times.push(ms),
                Err(e) => {
                    eprintln!("exec bench: {name}: {e}");
                    std::process::exit(1);
                }
            }
        }
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
}
