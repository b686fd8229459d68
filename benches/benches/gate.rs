//! The approval gate's decision over a corpus of realistic command lines, against the
//! honest floor: the same lines through word splitting alone.
//!
//! Both benches walk the whole corpus (`benches/corpus/gate-lines.txt`) per iteration and
//! report per-line throughput, so the medians divide directly into a ratio. The workspace
//! is the seed's fixture (`notes.txt`, `sub/`) plus the links the corpus names, built in
//! a temporary directory so the jail's filesystem lookups are real.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gatehouse::gate::words::read_words;
use gatehouse::gate::{Gate, GateConfig, GrantTable, Tool};

fn corpus() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/gate-lines.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn fixture() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let ws = root.path().join("workspace");
    std::fs::create_dir_all(ws.join("sub")).expect("sub");
    std::fs::create_dir_all(root.path().join("outside/dir")).expect("outside");
    std::fs::write(ws.join("notes.txt"), "hello\n").expect("notes");
    std::fs::write(ws.join("sub/a.txt"), "a\n").expect("a");
    std::fs::write(root.path().join("outside/secret.txt"), "secret\n").expect("secret");
    std::os::unix::fs::symlink("notes.txt", ws.join("link-in")).expect("link-in");
    std::os::unix::fs::symlink(root.path().join("outside/secret.txt"), ws.join("link-out"))
        .expect("link-out");
    std::os::unix::fs::symlink(root.path().join("outside/dir"), ws.join("sublink"))
        .expect("sublink");
    root
}

fn bench_gate(c: &mut Criterion) {
    let lines = corpus();
    assert!(
        lines.len() >= 200,
        "the corpus must hold at least 200 lines"
    );
    let root = fixture();
    let gate = Gate::new(GateConfig::new(root.path().join("workspace"))).expect("gate");
    let grants = GrantTable::new();

    let mut group = c.benchmark_group("gate");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("decide", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(gate.decide(Tool::Shell, black_box(line), &grants));
            }
        })
    });
    group.bench_function("word_splitting_baseline", |b| {
        b.iter(|| {
            for line in &lines {
                let _ = black_box(read_words(black_box(line)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_gate);
criterion_main!(benches);
