//! A fresh clone from an ordinary environment (issue 44): the README's commands started
//! from a Python that pyenv runs (a tox or CI script, an activated virtualenv or conda)
//! have a `PATH` that starts inside the person's home, which no jail can read. The
//! degraded scenarios, whose Landlock-only fence can still look such an entry up, must
//! pass all the same (FENCE-ENV-12): the jail's `PATH` leaves the entry out.
//!
//! The test makes that layout itself, so that it needs no pyenv: a home of its own with
//! `.pyenv/versions/9.9/bin/python3` (a wrapper that runs the real `python3`, so that the
//! runner's own uses of `python3` work) and the landmark `lib/python3.N/os.py` by which
//! the real `python3`, finding itself through `PATH` there, would take that directory for
//! its prefix and fail to read its standard library.
// A test's helpers panic on a broken setup, as the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The first executable `python3` of this process's `PATH`, as `execvp` finds it.
fn real_python() -> PathBuf {
    let path = std::env::var_os("PATH").expect("the test has a PATH");
    std::env::split_paths(&path)
        .map(|d| d.join("python3"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .expect("python3 in PATH (the fence scenarios need it)")
}

/// A pyenv version in `home`; returns its `bin`.
fn pyenv_layout(home: &Path) -> PathBuf {
    let python = real_python();
    let version = std::process::Command::new(&python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .expect("python3 runs");
    let version = String::from_utf8(version.stdout).unwrap();
    let prefix = home.join(".pyenv/versions/9.9");
    let bin = prefix.join("bin");
    let lib = prefix.join(format!("lib/python{}", version.trim()));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("os.py"), "").unwrap();
    let wrapper = bin.join("python3");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} \"$@\"\n", python.display()),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn degraded_scenarios_pass_with_a_path_starting_in_a_hidden_home() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let bin = pyenv_layout(&home);
    let old_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let mut path = std::ffi::OsString::from(bin.as_os_str());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse-conform"));
    cmd.current_dir(repo())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PATH", &path)
        .env("HOME", &home)
        .args([
            "run",
            "--quiet",
            "--format",
            "json",
            "--filter",
            "fence/degraded",
        ]);
    // The home is the made-up one; cargo and rustup, which build the reference, keep
    // theirs.
    for (name, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        let value = std::env::var_os(name).map_or_else(|| old_home.join(default), PathBuf::from);
        if value.exists() {
            cmd.env(name, value);
        }
    }
    let out = cmd.output().expect("the runner starts");
    let run = common::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let report = run.json();
    let failed: Vec<String> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] != "passed" && s["outcome"] != "skipped")
        .map(|s| format!("{s:#}"))
        .collect();
    assert!(
        failed.is_empty() && run.code == 0,
        "with PATH starting at {}:\n{}\n{}",
        bin.display(),
        failed.join("\n"),
        run.stderr
    );
    assert!(
        report["summary"]["passed"].as_u64().unwrap() > 0,
        "fence/degraded ran nothing here"
    );
}
