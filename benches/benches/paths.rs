//! Path confinement against its floor and its naive alternative, and the trust-map
//! lookup.
//!
//! - `resolve/{openat2,walk}`: [`Roots::resolve`] to an `O_PATH` handle, both backends;
//! - `raw_openat2`: the floor, one bare `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//!   with `O_PATH` on the same root handle;
//! - `canonicalize_prefix`: `std::fs::canonicalize` plus a whole-component prefix check
//!   (racy, shown for cost only);
//!
//! each for 1, 4, 16 and 64 components, through plain directories (`d/d/.../f`) and
//! through a symlink at every other level (`s/d/s/.../f`, `s -> d`). Then `trust/lookup_depth8`:
//! one decision at depth 8 in a map of 10,000 rules, decided by a rule at that depth, and
//! `..._miss`: decided only by the working directory's rule, every prefix probed.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::hint::black_box;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gatehouse::paths::{Backend, Roots};
use gatehouse::trust::{Trust, TrustKey, TrustMap, WriteEffect};
use rustix::fs::{Mode, OFlags, ResolveFlags};

const DEPTHS: [usize; 4] = [1, 4, 16, 64];

fn tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("root");
    let mut dir = root.clone();
    for _ in 0..64 {
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("f"), "x").unwrap();
        symlink("d", dir.join("s")).unwrap();
        dir = dir.join("d");
    }
    (tmp, root)
}

/// `d/d/.../f` (plain) or `s/d/s/d/.../f` (a symlink at every other level, so 64
/// components stay under Linux's 40-link bound).
fn spelled(kind: &str, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n - 1 {
        s.push_str(if kind == "s" && i % 2 == 0 {
            "s/"
        } else {
            "d/"
        });
    }
    s.push('f');
    s
}

fn resolvers(c: &mut Criterion) {
    let (_tmp, root) = tree();
    let openat2 = Roots::open_with(&root, Backend::Openat2).unwrap();
    let walk = Roots::open_with(&root, Backend::Walk).unwrap();
    assert_eq!(
        openat2.backend(),
        Backend::Openat2,
        "this machine lacks openat2"
    );
    let root_fd = rustix::fs::open(
        &root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    for kind in ["d", "s"] {
        let label = if kind == "d" { "plain" } else { "symlinked" };
        let mut g = c.benchmark_group(format!("paths/{label}"));
        for n in DEPTHS {
            let p = spelled(kind, n);
            g.bench_with_input(BenchmarkId::new("resolve_openat2", n), &p, |b, p| {
                b.iter(|| black_box(openat2.resolve(black_box(p.as_str()), true).unwrap()))
            });
            g.bench_with_input(BenchmarkId::new("resolve_walk", n), &p, |b, p| {
                b.iter(|| black_box(walk.resolve(black_box(p.as_str()), true).unwrap()))
            });
            g.bench_with_input(BenchmarkId::new("raw_openat2", n), &p, |b, p| {
                b.iter(|| {
                    black_box(
                        rustix::fs::openat2(
                            &root_fd,
                            black_box(p.as_str()),
                            OFlags::PATH | OFlags::CLOEXEC,
                            Mode::empty(),
                            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
                        )
                        .unwrap(),
                    )
                })
            });
            g.bench_with_input(BenchmarkId::new("canonicalize_prefix", n), &p, |b, p| {
                b.iter(|| {
                    let c = fs::canonicalize(root.join(black_box(p.as_str()))).unwrap();
                    assert!(c.starts_with(&root));
                    black_box(c)
                })
            });
        }
        g.finish();
    }
}

fn trust_lookup(c: &mut Criterion) {
    let mut map = TrustMap::new("/w/proj");
    map.skip_permissions();
    // 10,000 rules over depths 1..=8 (about 1,250 siblings at every level of one
    // chain `p0/p1/...`), both polarities.
    let key_of = |i: usize| {
        let depth = 1 + i % 8;
        let mut segs: Vec<String> = (0..depth - 1).map(|k| format!("p{k}")).collect();
        segs.push(format!("n{i}"));
        TrustKey::rel(segs.join("/"))
    };
    for i in 0..9_999 {
        let key = key_of(i);
        if matches!(i % 3, 0) {
            let plan = map.plan_write(&key, Trust::Untrusted);
            assert_eq!(plan.effect, WriteEffect::Mark(Trust::Untrusted));
            map.reconcile(&plan);
        } else {
            map.at_file(&key);
        }
    }
    assert_eq!(map.status().len(), 10_000);
    // A depth-8 key whose every prefix is in the trie.
    let probe = key_of(7);
    assert_eq!(probe.segments.len(), 8);
    c.bench_function("trust/lookup_depth8_10000_rules", |b| {
        b.iter(|| black_box(map.decision(black_box(&probe))))
    });
    // The worst case: depth 8, no rule below the root's covers it, so every prefix is
    // probed before the working directory's rule decides.
    let miss = TrustKey::rel("p0/p1/p2/p3/p4/p5/p6/zzz");
    assert_eq!(map.decision(&miss), Some(Trust::Trusted));
    c.bench_function("trust/lookup_depth8_10000_rules_miss", |b| {
        b.iter(|| black_box(map.decision(black_box(&miss))))
    });
}

criterion_group!(benches, resolvers, trust_lookup);
criterion_main!(benches);
