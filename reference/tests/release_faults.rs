//! A release build holds no test fault. `GATEHOUSE_JAIL_FAULT` (`fence::plan::Fault`)
//! makes a layer of the jail fail silently; this crate's own tests compile it in through
//! the `test-faults` feature (a dev-dependency on itself), and no release build enables
//! it. Here the binary that `cargo build --release -p gatehouse` makes (the features of
//! `cargo build-static` too) runs with the variable set, on every Linux backend: the
//! read-only bind still holds and the jail keeps its own network namespace. The twin: the
//! test build, run with the same variable, is refused by its own probe, so the variable
//! does something where the feature is on.
//!
//! The release binary is `GATEHOUSE_RELEASE_BIN` when set, else built here. Ignored in
//! the README's test command, which must stay quick; `.ci/run` runs it with
//! `GATEHOUSE_RELEASE_BIN` naming the static binary it certifies and ships.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gatehouse::fence::plan::FAULT_ENV;

const TEST_BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// The release binary: `GATEHOUSE_RELEASE_BIN`, else `cargo build --release -p gatehouse`,
/// found by cargo's own report of the executable it made.
fn release_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("GATEHOUSE_RELEASE_BIN") {
        return PathBuf::from(p);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "gatehouse",
            "--bin",
            "gatehouse",
        ])
        .args(["--message-format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build --release: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["executable"].as_str().map(PathBuf::from))
        .find(|p| p.file_name().is_some_and(|n| n == "gatehouse"))
        .expect("cargo named no gatehouse executable")
}

fn exec(bin: &Path, dir: &Path, backend: &str, fault: &str, args: &[&str], script: &str) -> Output {
    Command::new(bin)
        .arg("exec")
        .arg("--workspace")
        .arg(dir.join("ws"))
        .args(args)
        .args(["--", "sh", "-c", script])
        .env("GATEHOUSE_FENCE", backend)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env(FAULT_ENV, fault)
        .output()
        .unwrap()
}

#[test]
#[ignore = "builds the release binary (about 100 s); .ci/run runs it against the shipped static build: cargo test -p gatehouse --test release_faults -- --ignored"]
fn the_release_binary_ignores_the_fault_switch() {
    let release = release_bin();
    for b in common::backends() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ws", "outside", "config"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let data = dir.path().join("outside/data.txt");
        std::fs::write(&data, "outside data\n").unwrap();
        let ro = dir.path().join("outside");
        let args = ["--ro", ro.to_str().unwrap()];
        let script = format!(
            "cat {0}; if echo x > {0}; then echo WROTE; fi; echo ran",
            data.display()
        );
        let o = exec(&release, dir.path(), b, "read-only-hole", &args, &script);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(0), "{b}: {err}");
        common::assert_ran_on(b, &err);
        assert!(
            out.contains("outside data") && out.contains("ran"),
            "{b}: {out}"
        );
        assert!(
            !out.contains("WROTE"),
            "{b}: the read-only bind was writable: {out}"
        );
        assert_eq!(
            std::fs::read_to_string(&data).unwrap(),
            "outside data\n",
            "{b}"
        );
        // The twin: the test build reads the variable, and its probe refuses the jail.
        let o = exec(
            Path::new(TEST_BIN),
            dir.path(),
            b,
            "read-only-hole",
            &args,
            &script,
        );
        assert_eq!(
            o.status.code(),
            Some(125),
            "{b}: the test build ignored the fault: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&data).unwrap(),
            "outside data\n",
            "{b}"
        );
    }
    // The network fault: the release binary's jail still joins a namespace of its own.
    let dir = tempfile::tempdir().unwrap();
    for d in ["ws", "config"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    let host_ns = std::fs::read_link("/proc/self/ns/net").unwrap();
    let o = exec(
        &release,
        dir.path(),
        "native",
        "shared-network",
        &["--network", "off"],
        "readlink /proc/self/ns/net",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    common::assert_ran_on("native", &err);
    let jail_ns = String::from_utf8_lossy(&o.stdout);
    assert!(jail_ns.starts_with("net:["), "{jail_ns}");
    assert_ne!(
        jail_ns.trim(),
        host_ns.to_string_lossy(),
        "the jail shares the host's network"
    );
    let o = exec(
        Path::new(TEST_BIN),
        dir.path(),
        "native",
        "shared-network",
        &["--network", "off"],
        "readlink /proc/self/ns/net",
    );
    assert_eq!(
        o.status.code(),
        Some(125),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
