//! Helpers shared by the integration tests: the resolver's ground truth, and the Landlock
//! ABI the tests expect.
#![allow(dead_code)]
// The tests' helpers panic to fail the test that called them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Every object under `root` (itself included) by `(device, inode)`, found by a walk
/// that never follows a link: the ground truth a confined resolution must land in.
pub fn objects_under(root: &Path) -> HashSet<(u64, u64)> {
    let mut out = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let md = fs::symlink_metadata(&p).unwrap();
        out.insert((md.dev(), md.ino()));
        if md.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out
}

/// The Landlock ABI of this kernel, as the fence sees it; when `GATEHOUSE_TEST_LANDLOCK_ABI`
/// is set (`0`: no Landlock), the test fails unless the kernel offers exactly that ABI, so
/// that a test which adapts to the kernel can never skip silently on a host that lost a
/// feature (as rust-landlock's `LANDLOCK_CRATE_TEST_ABI`).
pub fn landlock_abi() -> Option<gatehouse::fence::Abi> {
    let kernel = gatehouse::sys::landlock::kernel_abi();
    if let Ok(want) = std::env::var("GATEHOUSE_TEST_LANDLOCK_ABI") {
        let want: u8 = want
            .parse()
            .unwrap_or_else(|_| panic!("GATEHOUSE_TEST_LANDLOCK_ABI={want}: not a number"));
        assert_eq!(
            kernel.map_or(0, |a| a.number()),
            want,
            "GATEHOUSE_TEST_LANDLOCK_ABI={want}, but the kernel offers {kernel:?}"
        );
    }
    kernel
}

/// The resolver we expect to run when `asked` is asked for: `GATEHOUSE_OPENAT2=absent`
/// (kernels before 5.6) says that `openat2` falls back to the walk here.
pub fn expected_backend(asked: gatehouse::paths::Backend) -> gatehouse::paths::Backend {
    use gatehouse::paths::Backend;
    match (asked, std::env::var("GATEHOUSE_OPENAT2").as_deref()) {
        (Backend::Openat2, Ok("absent")) => Backend::Walk,
        (b, _) => b,
    }
}

/// The one way a test skips (xtask/src/skip.rs, shared by every crate's tests): one line,
/// `GATEHOUSE-SKIP: <what>: <why>`, on the test's output, from which `cargo xtask test`
/// counts the test as skipped and not passed. A test calls it only where it states the
/// reason; a missing fence backend is a failure unless [`backends`] says otherwise.
#[path = "../../../xtask/src/skip.rs"]
mod skip_line;
pub use skip_line::skip;

/// The backends to run on: native always (its absence fails the test that needs it);
/// bwrap where it is installed, else skipped with a line saying so, unless
/// `GATEHOUSE_TEST_BWRAP=1` (set by `.ci/run`, which installs it) makes its absence a
/// failure.
pub fn backends() -> Vec<&'static str> {
    let mut b = vec!["native"];
    if Path::new("/usr/bin/bwrap").exists() {
        b.push("bwrap");
    } else {
        assert!(
            std::env::var_os("GATEHOUSE_TEST_BWRAP").is_none(),
            "GATEHOUSE_TEST_BWRAP is set but /usr/bin/bwrap is missing"
        );
        skip(
            "the bwrap backend",
            "/usr/bin/bwrap is not installed (GATEHOUSE_TEST_BWRAP=1 makes this a failure)",
        );
    }
    b
}

/// Asserts that `gatehouse exec`'s standard error (or a file it was sent to) names
/// `backend` as the fence that held the command: the posture line
/// `gatehouse exec: fence: <backend> ...` it prints before the command runs.
pub fn assert_ran_on(backend: &str, stderr: &str) {
    let line = format!("gatehouse exec: fence: {backend}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&line) && !l[line.len()..].starts_with(char::is_alphanumeric)),
        "expected the {backend} fence to hold the command; stderr: {stderr}"
    );
}
