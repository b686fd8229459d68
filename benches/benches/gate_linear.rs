//! Every gate decision at most linear in its line (GATE-DANGER-12): the whole decision
//! (`Gate::decide`, dangerous list, respelling, auto-safe and its jail) over adversarial
//! lines of 1, 16 and 64 KB, one group per shape, so that the time per kilobyte at 64 KB
//! divides directly by the time per kilobyte at 1 KB. The shapes are those of the unit
//! test that counts the scan's steps (`gate::danger::tests`), plus the jail's.
//!
//! `GATE_LINEAR_ONCE=shape:kb` decides that one line three times and prints the fastest
//! in microseconds, for a build whose reader is too slow for criterion (the baseline in
//! `benches/README.md` was taken so, each run under `timeout`).
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use gatehouse::gate::{Gate, GateConfig, GrantTable, Tool};

/// Adversarial lines of about `n` bytes.
fn shapes(n: usize) -> Vec<(&'static str, String)> {
    let rep = |unit: &str, head: &str, tail: &str| {
        let k = n.saturating_sub(head.len() + tail.len()) / unit.len().max(1);
        format!("{head}{}{tail}", unit.repeat(k.max(1)))
    };
    let half = n / 2;
    vec![
        (
            "nested-braces",
            format!("echo {}a{}", "{".repeat(half), "}".repeat(half)),
        ),
        (
            "nested-brace-lists",
            format!("echo {}a{}", "{a,".repeat(n / 5), "}".repeat(n / 5)),
        ),
        ("brace-alternatives", rep("{a,b}", "echo x", "")),
        ("quoted-braces", rep("'{a,b c}'", "echo ", "")),
        ("quotes", rep("'a b' ", "echo ", "")),
        ("double-quotes", rep("\"a\\\"b\" ", "echo ", "")),
        ("separators", rep("; ", "ls", "")),
        ("amp-redirections", rep("&>f ", "a ", "b")),
        ("named-descriptors", rep("{a}>x;", "", "")),
        ("rm-words", rep(" rm", "echo", " x")),
        ("fed-shells", rep(" sh", "echo x | sudo", " x")),
        ("stars", rep("*", "echo ", "x")),
        ("find-stars", rep("*", "find . ", "x")),
        (
            "substitutions",
            format!("echo {}x{}", "$(".repeat(n / 3), ")".repeat(n / 3)),
        ),
        ("extglob", rep("@(a|", "echo ", "")),
        ("sh-c-nesting", rep("sh -c 'a b' ", "", "")),
        (
            "jail-option",
            format!(
                "cat -{}{}",
                "a".repeat(200),
                "/../a".repeat(n.saturating_sub(205) / 5)
            ),
        ),
        ("jail-dotdot", rep("a/../", "cat ", "notes.txt")),
    ]
}

fn fixture() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let ws = root.path().join("workspace");
    std::fs::create_dir_all(ws.join("sub")).expect("sub");
    std::fs::write(ws.join("notes.txt"), "hello\n").expect("notes");
    root
}

const SIZES_KB: [usize; 3] = [1, 16, 64];

fn main() {
    let root = fixture();
    let gate = Gate::new(GateConfig::new(root.path().join("workspace"))).expect("gate");
    let grants = GrantTable::new();
    if let Ok(spec) = std::env::var("GATE_LINEAR_ONCE") {
        let (name, kb) = spec.split_once(':').expect("shape:kb");
        let kb: usize = kb.parse().expect("kb");
        let line = shapes(kb * 1024)
            .into_iter()
            .find(|(n, _)| *n == name)
            .expect("a known shape")
            .1;
        let best = (0..3)
            .map(|_| {
                let t = Instant::now();
                black_box(gate.decide(Tool::Shell, black_box(&line), &grants));
                t.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!("{name} {kb} KB: {:.1} us", best.as_secs_f64() * 1e6);
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    for (name, _) in shapes(1024) {
        let mut group = c.benchmark_group(format!("gate_linear/{name}"));
        for kb in SIZES_KB {
            let line = shapes(kb * 1024)
                .into_iter()
                .find(|(n, _)| *n == name)
                .expect("shape")
                .1;
            group.throughput(Throughput::Bytes(line.len() as u64));
            group.bench_with_input(
                BenchmarkId::from_parameter(format!("{kb}KB")),
                &line,
                |b, line| b.iter(|| black_box(gate.decide(Tool::Shell, black_box(line), &grants))),
            );
        }
        group.finish();
    }
    c.final_summary();
}
