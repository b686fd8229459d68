//! `gatehouse exec` on the native backend, whose jail helper is a fork of the launcher and
//! whose scratch directory exists only inside the jail: the launcher's memory stays out of
//! the jail's reach, and nothing of the scratch is left on (or made on) the host. Each
//! check beside its allowed twin, the files looked at from outside afterwards.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// A value only the launcher's environment holds (the jail's environment is scrubbed).
const BAIT: &str = "gatehouse-fork-bait-5f3a";

/// `gatehouse exec --workspace ws -- command...` on the native backend, with no
/// configuration of the person's and no injected fault.
fn launcher(ws: &std::path::Path, tmp: &std::path::Path, command: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("exec")
        .arg("--workspace")
        .arg(ws)
        .arg("--")
        .args(command)
        .env("GATEHOUSE_FENCE", "native")
        .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
        .env("TMPDIR", tmp)
        .env_remove(gatehouse::fence::plan::FAULT_ENV)
        // The last jail out removes the placeholders at once (FENCE-PROTECT-20's grace
        // is tests/mount_points.rs's).
        .env(gatehouse::fence::mount_points::ENV_LINGER, "0");
    c
}

fn exec(ws: &std::path::Path, tmp: &std::path::Path, script: &str) -> Output {
    launcher(ws, tmp, &["sh", "-c", script])
        .env("GATEHOUSE_BAIT_TOKEN", BAIT)
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn no_jailed_process_reads_the_launchers_memory() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // Every process the command can see: its environment and memory maps. The init is a
    // fork of the launcher, whose environment holds the bait.
    let script = format!(
        "for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr '\\0' '\\n'; \
         dd if=$p/mem bs=1 count=1 2>/dev/null; done | grep -c {BAIT}; \
         cat /proc/self/environ | tr '\\0' '\\n' | grep -c '^PATH='"
    );
    let o = exec(ws.path(), tmp.path(), &script);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let counts: Vec<&str> = out.lines().collect();
    assert_eq!(counts.first(), Some(&"0"), "the bait was read: {}", err(&o));
    // The allowed twin: the command reads its own environment.
    assert_eq!(counts.get(1), Some(&"1"), "{out} {}", err(&o));
}

#[test]
fn a_one_shot_scratch_is_made_in_the_jail_and_nothing_is_left_on_the_host() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = exec(
        ws.path(),
        tmp.path(),
        "echo kept > \"$HOME/note\" && echo kept > \"$TMPDIR/t\" && echo \"$HOME\"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // The allowed twin: the command wrote its home and its temporary directory.
    let home = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(home.ends_with("/home"), "{home}");
    // Seen from outside: no such home on the host, and nothing left in the temporary
    // directory the launcher was given (the probe's directory is gone too).
    assert!(
        !std::path::Path::new(&home).exists(),
        "{home} exists on the host"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left on the host: {left:?}");
    // The missing protected paths' mount points are gone from the workspace.
    let in_ws: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(in_ws.is_empty(), "left in the workspace: {in_ws:?}");
}

/// A `PATH` directory Landlock alone hides (outside every rule, so its files can be looked
/// at but not run) must not stop the search: the program of the next directory runs. Its
/// twin: a program only the hidden directory holds is not found at all, since the jail's
/// `PATH` leaves out the entries it cannot read, and the posture names the entry
/// (FENCE-ENV-12).
#[test]
fn a_path_directory_landlock_hides_passes_the_search_on() {
    use std::os::unix::fs::PermissionsExt;
    let ws = tempfile::tempdir().unwrap();
    let hidden = tempfile::tempdir().unwrap();
    for name in ["true", "only-hidden"] {
        let p = hidden.path().join(name);
        std::fs::write(&p, "#!/bin/sh\necho from-hidden\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let run = |program: &str| {
        Command::new(BIN)
            .args([
                "exec",
                "--emulate-no-userns",
                "--allow-degraded",
                "--no-tty",
            ])
            .arg("--workspace")
            .arg(ws.path())
            .args(["--", program])
            .env("PATH", format!("{}:/usr/bin:/bin", hidden.path().display()))
            .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
            .env_remove(gatehouse::fence::plan::FAULT_ENV)
            .output()
            .unwrap()
    };
    let o = run("true");
    assert!(o.status.success(), "{}", err(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("from-hidden"));
    let o = run("only-hidden");
    assert_eq!(o.status.code(), Some(127), "{}", err(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("from-hidden"));
    let left_out = format!(
        "PATH entries the jail cannot read, left out: {}",
        hidden.path().display()
    );
    assert!(err(&o).contains(&left_out), "{}", err(&o));
}

/// What `gatehouse exec` leaves behind in an empty workspace: the placeholders of the
/// missing protected paths, if any remain.
fn leftovers(ws: &std::path::Path) -> Vec<String> {
    [".git", "HEAD", ".gatehouse"]
        .iter()
        .filter(|p| ws.join(p).symlink_metadata().is_ok())
        .map(|p| p.to_string())
        .collect()
}

/// The launcher sees the jail end with its init and takes the init's word for the
/// command's code, whatever the command's end; the placeholders go after it.
#[test]
fn the_commands_code_comes_through_and_nothing_is_left() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (script, code) in [
        ("exit 42", 42),
        ("true", 0),
        ("kill -9 $$", 137),
        ("kill -TERM $$", 143),
        ("exec /nonexistent-program", 127),
    ] {
        let o = exec(ws.path(), tmp.path(), script);
        assert_eq!(o.status.code(), Some(code), "{script}: {}", err(&o));
        assert!(
            leftovers(ws.path()).is_empty(),
            "{script}: {:?}",
            leftovers(ws.path())
        );
    }
}

/// A process the command leaves running dies with the jail, before the launcher returns
/// and lets the placeholders go: it never writes a protected path once they are gone, nor
/// anything else. Its twin: what the command itself writes stays.
#[test]
fn a_background_process_dies_with_the_jail_before_the_placeholders_go() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = exec(
        ws.path(),
        tmp.path(),
        "(sleep 0.3; mkdir -p .git; echo x > .git/config; echo x > late) & echo x > now",
    );
    assert!(o.status.success(), "{}", err(&o));
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(ws.path().join("now").exists());
    assert!(!ws.path().join("late").exists());
    assert!(
        leftovers(ws.path()).is_empty(),
        "{:?}",
        leftovers(ws.path())
    );
}

/// An init killed from outside says no word: the launcher reaps it, reports the kill, and
/// still lets the placeholders go once nothing runs.
#[test]
fn an_init_killed_from_outside_is_reported() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut launcher = launcher(ws.path(), tmp.path(), &["sleep", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let children = |pid: u32| gatehouse::sys::ns::children_of(pid);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // The init: the launcher's one child, once the command runs beside it.
    let init = loop {
        assert!(std::time::Instant::now() < deadline, "no jail came up");
        if let [init] = children(launcher.id())[..] {
            if !children(init).is_empty() {
                break init;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(init as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let status = launcher.wait().unwrap();
    assert_eq!(status.code(), Some(137));
    assert!(
        leftovers(ws.path()).is_empty(),
        "{:?}",
        leftovers(ws.path())
    );
}

/// A terminating signal to the launcher ends the jail, puts the workspace back (no
/// placeholder left) and only then ends the launcher by that same signal, so a caller sees
/// the signal's status (a `timeout`, a Ctrl-C on a pipeline). Before, the launcher died at
/// once and left `.git`, `HEAD` and `.gatehouse` in the workspace.
#[test]
fn a_terminating_signal_ends_the_jail_and_leaves_the_workspace_as_found() {
    use std::os::unix::process::ExitStatusExt;
    for sig in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let ws = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut launcher = launcher(
            ws.path(),
            tmp.path(),
            &["sh", "-c", "echo started; sleep 30"],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
        // Once the command runs, the placeholders exist.
        let mut out = launcher.stdout.take().unwrap();
        let mut first = [0u8; 8];
        std::io::Read::read_exact(&mut out, &mut first).unwrap();
        assert_eq!(&first, b"started\n");
        assert!(!leftovers(ws.path()).is_empty());
        let helper = gatehouse::sys::ns::children_of(launcher.id());
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(launcher.id() as i32).unwrap(),
            sig,
        )
        .unwrap();
        let status = launcher.wait().unwrap();
        assert_eq!(status.signal(), Some(sig.as_raw()), "{status:?}");
        assert!(
            leftovers(ws.path()).is_empty(),
            "{:?}",
            leftovers(ws.path())
        );
        // Nothing of the jail is left: its helper is gone, and the helper was its last.
        for pid in helper {
            assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        }
    }
}

/// A terminating signal the caller ignores (`nohup`, `trap '' HUP`, a background job's
/// `SIGINT`) stays ignored in the jailed command, as across any `exec`, though the
/// launcher handles the others while its jail runs. Its twin: one the caller does not
/// ignore is at its default in the command.
#[test]
fn a_signal_the_caller_ignores_stays_ignored_in_the_jail() {
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' HUP; exec '{BIN}' exec --workspace '{}' -- grep SigIgn /proc/self/status",
            ws.path().display()
        ))
        .env("GATEHOUSE_FENCE", "native")
        .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
        .env("TMPDIR", tmp.path())
        .env_remove(gatehouse::fence::plan::FAULT_ENV)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let line = String::from_utf8_lossy(&o.stdout).to_string();
    let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16)
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_ne!(mask & 1, 0, "SIGHUP not ignored in the jail: {line}");
    assert_eq!(
        mask & (1 << (libc::SIGTERM - 1)),
        0,
        "SIGTERM ignored: {line}"
    );
}

#[test]
fn the_launchers_one_child_is_the_jails_init_itself() {
    // No helper stays between the launcher and the jail's init: the launcher clones the
    // init into its namespaces itself (one process fewer to start and wait for). Its one
    // child is PID 1 of another PID namespace, and the command is that init's child.
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut launcher = launcher(ws.path(), tmp.path(), &["sh", "-c", "echo ready; read x"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(launcher.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n", "the command did not start");
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    };
    // The pids of a process in each PID namespace it is in, the outermost first.
    let nspid = |pid: u32| -> Vec<u32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find(|l| l.starts_with("NSpid:")).unwrap();
        line.split_whitespace()
            .skip(1)
            .map(|p| p.parse().unwrap())
            .collect()
    };
    let ours = children(launcher.id());
    let ours_nspid: Vec<Vec<u32>> = ours.iter().map(|p| nspid(*p)).collect();
    let command: Vec<Vec<u32>> = match ours.as_slice() {
        [init] => children(*init).iter().map(|p| nspid(*p)).collect(),
        _ => vec![],
    };
    launcher.stdin.take().unwrap().write_all(b"\n").unwrap();
    let status = launcher.wait().unwrap();
    assert!(status.success(), "{status}");
    let ns_depth = nspid(std::process::id()).len();
    assert_eq!(ours.len(), 1, "the launcher's children: {ours:?}");
    assert_eq!(
        ours_nspid[0].len(),
        ns_depth + 1,
        "the launcher's child is in no PID namespace of its own: {ours_nspid:?}"
    );
    assert_eq!(
        ours_nspid[0].last(),
        Some(&1),
        "its child is not the init: {ours_nspid:?}"
    );
    // The allowed twin: the command is the init's child, in the same namespace, not PID 1.
    assert_eq!(command.len(), 1, "the init's children: {command:?}");
    assert_eq!(command[0].len(), ns_depth + 1, "{command:?}");
    assert_ne!(command[0].last(), Some(&1), "{command:?}");
}

#[test]
fn the_jails_network_is_its_own_loopback_whether_a_thread_or_the_init_makes_it() {
    // The cloned init makes its network namespace on a thread of its own where a core is
    // free, else itself at join-network: both ways give the same jail, a namespace other
    // than ours holding only its loopback.
    let ours = std::fs::read_link("/proc/self/ns/net").unwrap();
    for thread in ["always", "never"] {
        let ws = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let o = launcher(
            ws.path(),
            tmp.path(),
            &["sh", "-c", "readlink /proc/self/ns/net; cat /proc/net/dev"],
        )
        .env("GATEHOUSE_JAIL_NETWORK_THREAD", thread)
        .output()
        .unwrap();
        assert!(o.status.success(), "{thread}: {}", err(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let mut lines = out.lines();
        let theirs = lines.next().unwrap_or_default();
        assert!(theirs.starts_with("net:["), "{thread}: {out}");
        // The allowed twin: ours is a namespace too, and another one.
        assert_ne!(
            theirs,
            ours.to_string_lossy(),
            "{thread}: the host's network"
        );
        let devices: Vec<&str> = lines
            .skip(2)
            .filter_map(|l| l.split(':').next())
            .map(str::trim)
            .collect();
        assert_eq!(devices, ["lo"], "{thread}: {out}");
    }
}

#[test]
fn a_network_thread_hook_that_is_neither_always_nor_never_is_refused_in_one_line() {
    // A misspelt test hook must not fall back to the guess without a word: the run is
    // refused before any jail exists, naming the variable and its value.
    let ws = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let o = launcher(
        ws.path(),
        tmp.path(),
        &["sh", "-c", &format!("touch {}", marker.display())],
    )
    .env("GATEHOUSE_JAIL_NETWORK_THREAD", "sometimes")
    .output()
    .unwrap();
    assert!(!o.status.success(), "{}", err(&o));
    let text = err(&o);
    assert!(
        text.lines()
            .any(|l| l.contains("GATEHOUSE_JAIL_NETWORK_THREAD=sometimes")
                && l.contains("`always` or `never`")),
        "{text}"
    );
    assert!(!marker.exists(), "the command ran: {text}");
    // The allowed twin: both accepted values run the command.
    for thread in ["always", "never"] {
        let o = launcher(
            ws.path(),
            tmp.path(),
            &["sh", "-c", &format!("touch {}", marker.display())],
        )
        .env("GATEHOUSE_JAIL_NETWORK_THREAD", thread)
        .output()
        .unwrap();
        assert!(o.status.success(), "{thread}: {}", err(&o));
        assert!(marker.exists(), "{thread}");
        std::fs::remove_file(&marker).unwrap();
    }
}
