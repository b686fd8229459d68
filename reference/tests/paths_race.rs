//! A thread keeps swapping a directory and a symlink pointing outside
//! (`renameat2(RENAME_EXCHANGE)`) while the resolver opens paths through that name, for a
//! bounded time per backend. Any successful open must be an object inside the root
//! (device and inode), never the outside file.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse::paths::{Backend, Roots};
use rustix::fs::{renameat_with, RenameFlags, CWD};

const RUN_FOR: Duration = Duration::from_millis(1500);

fn race(backend: Backend) {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let proj = base.join("proj");
    fs::create_dir_all(proj.join("d/sub")).unwrap();
    fs::write(proj.join("d/sub/f"), "inside").unwrap();
    fs::create_dir_all(base.join("outside/sub")).unwrap();
    fs::write(base.join("outside/sub/f"), "outside").unwrap();
    symlink(base.join("outside"), proj.join("l")).unwrap();
    let inside = common::objects_under(&proj);
    let outside = fs::metadata(base.join("outside/sub/f")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (a, b) = (proj.join("d"), proj.join("l"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                swaps += 1;
            }
            swaps
        })
    };

    let roots = Roots::open_with(&proj, backend).unwrap();
    let backend = common::expected_backend(backend);
    assert_eq!(roots.backend(), backend, "the backend that runs");
    let (mut ok, mut refused, mut escapes) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < RUN_FOR {
        for p in ["d/sub/f", "d/sub/../sub/f", "l/sub/f"] {
            match roots.open_read(p) {
                Ok(gatehouse::paths::Readable::File(f)) => {
                    let md = f.metadata().unwrap();
                    if !inside.contains(&(md.dev(), md.ino())) || md.ino() == outside.ino() {
                        escapes += 1;
                    }
                    ok += 1;
                }
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{backend:?}: {ok} opened, {refused} refused, {swaps} swaps, {escapes} escapes");
    assert_eq!(escapes, 0);
    assert!(swaps > 100, "the swapper must really race");
    assert!(ok > 0 && refused > 0, "both outcomes must be exercised");
    assert_eq!(
        roots.runs(if backend == Backend::Walk {
            Backend::Openat2
        } else {
            Backend::Walk
        }),
        0
    );
}

#[test]
fn openat2_never_escapes_under_swaps() {
    race(Backend::Openat2);
}

#[test]
fn walk_never_escapes_under_swaps() {
    race(Backend::Walk);
}
