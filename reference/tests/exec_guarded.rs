//! `gatehouse exec` refuses a writable root that is the home directory, holds it, or holds
//! the fence's own configuration, with `HOME` and `XDG_*` spelled as a person's shell may
//! spell them (FENCE-PATHS-3, issue 29 item 1); a project below the home runs. Each case
//! runs on every backend this host has, and nothing runs when refused (the command would
//! write a mark).
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

struct Home {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Home {
    /// `base/home/u` with a project below it, and `base/link` -> `base/home`.
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("home/u/project")).unwrap();
        std::fs::create_dir_all(base.join("home/u/.config")).unwrap();
        std::os::unix::fs::symlink(base.join("home"), base.join("link")).unwrap();
        Home { _dir: dir, base }
    }
    fn home(&self) -> PathBuf {
        self.base.join("home/u")
    }
}

fn backends() -> Vec<&'static str> {
    let mut b = vec!["native"];
    if Path::new("/usr/bin/bwrap").exists() {
        b.push("bwrap");
    }
    b
}

fn exec(backend: &str, cwd: &Path, env: &[(&str, PathBuf)], args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.arg("exec")
        .args(args)
        .args(["--", "sh", "-c", "echo ran > mark"])
        .current_dir(cwd)
        .env("GATEHOUSE_FENCE", backend)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove(gatehouse::fence::plan::FAULT_ENV)
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn refused(out: &Output, cwd: &Path, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(err.contains(needle), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!cwd.join("mark").exists(), "the command ran");
}

#[test]
fn the_home_as_the_current_directory_is_refused_in_every_spelling() {
    for backend in backends() {
        let h = Home::new();
        for spelled in [
            h.home(),
            h.base.join("link/u"),
            h.base.join("home/u/project/.."),
        ] {
            let out = exec(backend, &h.home(), &[("HOME", spelled.clone())], &[]);
            refused(&out, &h.home(), "home directory");
        }
        // A parent of the home, named with --workspace.
        let out = exec(
            backend,
            &h.home().join("project"),
            &[("HOME", h.home())],
            &["--workspace", h.base.join("home").to_str().unwrap()],
        );
        refused(&out, &h.base.join("home"), "holds the home directory");
        // The allowed twin: a project below the home.
        let out = exec(
            backend,
            &h.home().join("project"),
            &[("HOME", h.base.join("link/u"))],
            &[],
        );
        assert!(
            out.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(h.home().join("project/mark").exists());
    }
}

#[test]
fn rw_of_the_real_home_with_home_spelled_otherwise_is_refused() {
    for backend in backends() {
        let h = Home::new();
        let cwd = h.home().join("project");
        for spelled in [h.base.join("link/u"), h.base.join("home/./u/../u")] {
            for rw in [h.home(), h.home().join(".config")] {
                let out = exec(
                    backend,
                    &cwd,
                    &[("HOME", spelled.clone())],
                    &["--rw", rw.to_str().unwrap()],
                );
                refused(&out, &cwd, "--rw");
                assert!(!h.home().join(".config/gatehouse").exists());
            }
        }
    }
}

#[test]
fn xdg_directories_inside_the_workspace_are_refused() {
    for backend in backends() {
        let h = Home::new();
        let cwd = h.home().join("project");
        for var in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
        ] {
            let out = exec(
                backend,
                &cwd,
                &[("HOME", h.home()), (var, cwd.join(".xdg"))],
                &[],
            );
            refused(&out, &cwd, "never change");
            // Relative, as the process would open it: from the current directory.
            let out = exec(
                backend,
                &cwd,
                &[("HOME", h.home()), (var, PathBuf::from("xdg"))],
                &[],
            );
            refused(&out, &cwd, "never change");
        }
        // The allowed twin: XDG directories outside the workspace.
        let out = exec(
            backend,
            &cwd,
            &[
                ("HOME", h.home()),
                ("XDG_CONFIG_HOME", h.home().join(".config")),
            ],
            &[],
        );
        assert!(
            out.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
