//! Spawning `true`: unjailed, in the native jail, in bubblewrap (through the gatehouse
//! backend, and plain `bwrap` with the same mount arguments as a baseline), and through the
//! plane's pool (the warm path: a request to an idle, already-fenced executor), measured
//! right after the unjailed row: issue 10 asks for the warm path within 1.5x of it.
//!
//! The jail needs the gatehouse binary (it re-executes itself as `gatehouse __jail`): set
//! `GATEHOUSE_JAIL_HELPER`, or build it first (`cargo build --release -p gatehouse`); the
//! bench looks beside its own executable. A backend that cannot be prepared here is
//! reported and skipped, never measured as something else.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse::fence::plan::Layout;
use gatehouse::fence::{Action, BackendChoice, Fence, FenceOptions, Policy};
use gatehouse::plane::{Broker, PlaneConfig, RunRequest};

fn helper() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GATEHOUSE_JAIL_HELPER") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/spawn-<hash> → target/<profile>/gatehouse
    let candidate = exe.parent()?.parent()?.join("gatehouse");
    candidate.exists().then_some(candidate)
}

struct Fixture {
    _dir: tempfile::TempDir,
    policy: Policy,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let policy = Policy::new(vec![ws], dir.path().join("scratch"));
    Fixture { _dir: dir, policy }
}

fn options(backend: BackendChoice, helper: &std::path::Path) -> FenceOptions {
    FenceOptions {
        backend,
        helper: Some(helper.to_path_buf()),
        ..FenceOptions::default()
    }
}

fn quiet(mut cmd: Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn env(fence: &Fence) -> Vec<(String, String)> {
    gatehouse::plane::env::jail_env(std::env::vars_os(), &fence.policy().home(), None, true)
}

fn bench_spawn(c: &mut Criterion) {
    let mut g = c.benchmark_group("spawn_true");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));

    g.bench_function("unjailed", |b| {
        b.iter(|| assert!(quiet(Command::new("true"))))
    });

    let Some(helper) = helper() else {
        eprintln!("spawn: no gatehouse helper found (build it or set GATEHOUSE_JAIL_HELPER): jail benches skipped");
        g.finish();
        return;
    };
    let fx = fixture();
    // The pool right after the bare spawn, so that the ratio of the two rows compares
    // runs seconds apart, under the same load (the jails' rows take longer).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let mut config = PlaneConfig::new(
        fx.policy.clone(),
        options(BackendChoice::Native, &helper),
        "bench",
    );
    config.pool_size = 1;
    config.policy.log_dir = Some(fx._dir.path().join("logs"));
    match rt.block_on(Broker::start(config)) {
        Ok(broker) => {
            g.bench_function("pool_warm", |b| {
                b.iter(|| {
                    let out = rt
                        .block_on(broker.run(RunRequest::new(["true"])))
                        .expect("run");
                    assert!(out.exit.success() && out.warm)
                })
            });
            rt.block_on(broker.shutdown());
        }
        Err(e) => eprintln!("spawn: pool skipped: {e}"),
    }

    let exec = || Action::Exec {
        argv: vec!["true".into()],
    };

    for (name, backend) in [
        ("native", BackendChoice::Native),
        ("bwrap", BackendChoice::Bwrap),
    ] {
        match Fence::prepare(fx.policy.clone(), &options(backend, &helper)) {
            Ok(fence) => {
                let env = env(&fence);
                g.bench_function(name, |b| {
                    b.iter(|| {
                        let cmd = fence.command(exec(), env.clone()).expect("command");
                        assert!(quiet(cmd))
                    })
                });
                if backend == BackendChoice::Bwrap {
                    // Baseline: bubblewrap alone with the same mount tree, no helper, no
                    // Landlock, no seccomp.
                    let layout = Layout::of(fence.policy(), None);
                    let args = gatehouse::fence::bwrap::args(fence.policy(), &layout, &helper);
                    g.bench_function("bwrap_plain", |b| {
                        b.iter(|| {
                            let mut cmd = Command::new("/usr/bin/bwrap");
                            cmd.args(&args).arg("--").arg("true").env_clear();
                            assert!(quiet(cmd))
                        })
                    });
                }
            }
            Err(e) => eprintln!("spawn: {name} skipped: {e}"),
        }
    }

    g.finish();
}

criterion_group!(benches, bench_spawn);
criterion_main!(benches);
