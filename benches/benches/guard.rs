//! The whole round trip of `gatehouse guard claude-code` as the agent pays it on every
//! call (process start, stdin JSON, the session opened from the state directory, the
//! decision order, the journal write, the answer), against `gatehouse gate check` (process
//! start and the gate alone) and against spawning `true`. The guarded line is an allowed
//! read (`cat notes.txt`), so the answer is the rewritten command.
//!
//! Two guard cases: `fresh`, a new agent session each call (the record and journal made),
//! and `long_session`, one session whose journal grows by one decision per call, as an
//! agent's session does (its length at the end is printed). Needs the release `gatehouse`
//! beside the bench (`cargo build --release -p gatehouse`) or `GATEHOUSE`.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn gatehouse() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GATEHOUSE") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?.parent()?;
    [
        exe.parent()?.parent()?.join("gatehouse"),
        target.join("release/gatehouse"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

fn feed(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    child.wait_with_output().expect("wait")
}

fn bench(c: &mut Criterion) {
    let Some(gh) = gatehouse() else {
        eprintln!("guard bench: skipped: cargo build --release -p gatehouse, or set GATEHOUSE");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::write(ws.join("notes.txt"), "a\n").expect("notes");
    let config = root.join("guard.toml");
    std::fs::write(&config, format!("state-dir = {:?}\n", root.join("state"))).expect("config");
    let input = |session: &str| {
        serde_json::json!({
            "session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": ws,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "cat notes.txt", "description": "d"},
            "tool_use_id": "toolu_1",
        })
        .to_string()
        .into_bytes()
    };
    let guard = || {
        let mut c = Command::new(&gh);
        c.args(["guard", "claude-code", "--config"])
            .arg(&config)
            .current_dir(&ws);
        c
    };
    let check = feed(&mut guard(), &input("probe"));
    assert!(
        check.status.success() && String::from_utf8_lossy(&check.stdout).contains("\"allow\""),
        "the guard does not allow the bench's line: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let mut g = c.benchmark_group("guard");
    g.bench_function("true", |b| {
        b.iter(|| {
            Command::new("true").status().expect("true");
        })
    });
    g.bench_function("gate_check", |b| {
        b.iter(|| {
            let o = Command::new(&gh)
                .args(["gate", "check", "--", "cat notes.txt"])
                .current_dir(&ws)
                .stdout(Stdio::piped())
                .output()
                .expect("gate check");
            assert!(o.status.success());
        })
    });
    let mut n = 0u64;
    g.bench_function("claude_code_fresh", |b| {
        b.iter(|| {
            n += 1;
            let o = feed(&mut guard(), &input(&format!("fresh-{n}")));
            assert!(o.status.success());
        })
    });
    let mut calls = 0u64;
    g.bench_function("claude_code_long_session", |b| {
        b.iter(|| {
            calls += 1;
            let o = feed(&mut guard(), &input("long"));
            assert!(o.status.success());
        })
    });
    g.finish();
    eprintln!("guard bench: the long session held {calls} decisions at the end");
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
