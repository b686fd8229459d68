//! The end of a `gatehouse exec` jail, on every Linux backend: when the launcher returns,
//! no process of the jail is left running, however many the command left behind, so the
//! placeholders of missing protected paths it has let go meanwhile (FENCE-PROTECT-10) can
//! no longer be written under. Looked at from outside, in `/proc`, right after it returns.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::backends;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// The processes running `argv` (whole command lines; a zombie has none).
fn running(argv: &[&str]) -> usize {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
        .count()
}

/// A command that leaves 400 processes behind, their standard streams closed so that the
/// relay of the command's output does not wait for them: the kernel takes milliseconds to
/// kill so many, and a launcher that returned on its command's end alone (bubblewrap's own init
/// reports only its first child's) left them running while it let the placeholders go (a
/// red-team review had one create `.git` in 9 of 75 runs). Its twin: the command's own
/// output and code come through.
#[test]
fn no_process_of_the_jail_runs_once_the_launcher_returns() {
    for (i, backend) in backends().into_iter().enumerate() {
        let ws = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let marker = format!("30.3{i}7");
        let script = format!(
            "i=0; while [ $i -lt 400 ]; do sleep {marker} <&- >&- 2>&- & i=$((i+1)); done; echo started; exit 3"
        );
        let out = Command::new(BIN)
            .args(["exec", "--workspace"])
            .arg(ws.path())
            .args(["--", "sh", "-c", &script])
            .env("GATEHOUSE_FENCE", backend)
            .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
            .env("TMPDIR", tmp.path())
            .env_remove(gatehouse::fence::plan::FAULT_ENV)
            // The placeholders go as the jail ends (FENCE-PROTECT-20's grace is
            // tests/mount_points.rs's).
            .env(gatehouse::fence::mount_points::ENV_LINGER, "0")
            .output()
            .unwrap();
        let left = running(&["sleep", &marker]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            left, 0,
            "{backend}: {left} of the jail's processes still run"
        );
        assert_eq!(out.status.code(), Some(3), "{backend}: {stderr}");
        assert_eq!(out.stdout, b"started\n", "{backend}: {stderr}");
        for p in [".git", "HEAD", ".gatehouse"] {
            assert!(
                ws.path().join(p).symlink_metadata().is_err(),
                "{backend}: {p} left in the workspace"
            );
        }
    }
}
