//! Criterion's view of issue 46's target: `gatehouse exec -- true` (the static build where
//! the platform has one, `cargo build-static`) against the bubblewrap line agents call for
//! the same confinement of one command (`--unshare-all --cap-drop ALL --die-with-parent`,
//! the root read-only, the workspace writable, a fresh `/dev` and `/proc`), each as a whole
//! process, as a person pays it. `benches/exec_ratio.sh` runs this idle and with one busy
//! core and prints the ratio of the two medians; `benches/exec.rs` measures the same pair
//! interleaved round by round, which a loaded machine needs.
//!
//! Needs the release `gatehouse` (found as `benches/exec.rs` finds it, or `GATEHOUSE`) and
//! `/usr/bin/bwrap`; either missing is reported and the bench skipped. Each binary is a
//! fresh copy in the bench's own directory, as in `benches/exec.rs`.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

fn quiet(argv: &[String]) {
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", argv[0]));
    assert!(status.success(), "`{}` exited {status}", argv.join(" "));
}

fn bench_exec_true(c: &mut Criterion) {
    let Some(gh) = gatehouse_benches::release_gatehouse() else {
        eprintln!("exec_true bench: skipped: build the reference first (cargo build-static, or cargo build --release -p gatehouse) or set GATEHOUSE");
        return;
    };
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("exec_true bench: skipped: /usr/bin/bwrap is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let w = dir.path().join("W");
    std::fs::create_dir_all(&w).expect("workspace");
    let w = w.display().to_string();
    let fresh = |from: &Path, name: &str| -> String {
        let to: PathBuf = dir.path().join(name);
        std::fs::copy(from, &to).expect("copy");
        to.display().to_string()
    };
    let bwrap = fresh(Path::new("/usr/bin/bwrap"), "bwrap");
    let gatehouse = fresh(&gh, "gatehouse");
    let s = |x: &str| x.to_string();
    let bwrap_line: Vec<String> = vec![
        bwrap,
        s("--unshare-all"),
        s("--cap-drop"),
        s("ALL"),
        s("--die-with-parent"),
        s("--ro-bind"),
        s("/"),
        s("/"),
        s("--bind"),
        w.clone(),
        w.clone(),
        s("--dev"),
        s("/dev"),
        s("--proc"),
        s("/proc"),
        s("true"),
    ];
    let exec: Vec<String> = vec![
        gatehouse,
        s("exec"),
        s("--no-tty"),
        s("--workspace"),
        w.clone(),
        s("--"),
        s("true"),
    ];
    eprintln!("exec_true bench: gatehouse {}", gh.display());
    let mut g = c.benchmark_group("exec_true");
    g.sample_size(60)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    g.bench_function("bwrap_line", |b| b.iter(|| quiet(&bwrap_line)));
    g.bench_function("gatehouse_exec", |b| b.iter(|| quiet(&exec)));
    g.finish();
}

criterion_group!(benches, bench_exec_true);
criterion_main!(benches);
