//! Running one command hook as a real child process (HOOK-RUN-1 to -5): `sh -c COMMAND`
//! in the session's working directory, in a process group of its own, with a scrubbed
//! environment plus the hook's `env`; one JSON object on stdin; stdout and stderr read
//! concurrently and bounded; at the timeout the **whole group** is killed (a grandchild
//! holding the pipe open dies with it) and nothing more is read.
//!
//! Plain threads, no runtime: one writes stdin, one reads each of stdout and stderr, one
//! watches for the child's exit without reaping it (`waitid` with `WNOWAIT`, so that the
//! child's pid, and with it its group's id, stays ours until this module reaps it after
//! the group is killed). The caller's thread waits on their four reports up to the
//! deadline; at the deadline it kills the group and the child and stops reading (a pipe a
//! process outside the group still holds is left to its thread, which ends when that
//! process closes it).
//!
//! May touch: the process table (spawn, signal its own group and child, reap). Nothing else.

use super::answer::Exit;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The most a hook may print on stdout or stderr; more is a malformed answer.
pub const MAX_OUTPUT: usize = 1 << 20;

/// How long a killed hook is given to be reaped before it is left (it cannot run on: it
/// was sent SIGKILL).
const REAP_GRACE: Duration = Duration::from_secs(5);

/// What a finished run left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRun {
    /// How it ended.
    pub exit: Exit,
    /// Its stdout (at most [`MAX_OUTPUT`] + 1 bytes).
    pub stdout: Vec<u8>,
    /// Its stderr (at most [`MAX_OUTPUT`] bytes).
    pub stderr: Vec<u8>,
}

impl RawRun {
    fn failed(why: String) -> RawRun {
        RawRun {
            exit: Exit::SpawnFailed(why),
            stdout: vec![],
            stderr: vec![],
        }
    }
}

/// A command hook ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec<'a> {
    /// The shell command line.
    pub command: &'a str,
    /// Extra environment.
    pub env: &'a BTreeMap<String, String>,
    /// The timeout.
    pub timeout: Duration,
    /// The working directory.
    pub cwd: &'a Path,
}

/// The environment a hook starts with: the plane's allow-list of the agent's own
/// environment (`PATH`, `LANG`, `LC_*`, `TERM`, `TZ`), `HOME`, then the hook's `env`.
/// Provider keys and tokens never reach a hook unless its declaration names them.
fn base_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| crate::plane::env::passes(k) || k == "HOME")
        .collect();
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), crate::plane::env::DEFAULT_PATH.into()));
    }
    env
}

/// Reads `r` to its end, keeping at most `limit + 1` bytes (one more than allowed shows
/// that the limit was passed) and draining the rest so that the writer never blocks.
fn read_bounded(mut r: impl Read, limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return out,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return out,
            Ok(n) => {
                if out.len() <= limit {
                    let take = n.min(limit + 1 - out.len());
                    out.extend_from_slice(&buf[..take]);
                }
            }
        }
    }
}

/// Kills every process of the group `pgid` (ESRCH, nothing left, is fine).
fn kill_group(pgid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Blocks until the child `pid` has exited, without reaping it: its pid (and its group's
/// id) cannot be reused before [`Child::wait`] reaps it. An error (the child already
/// reaped elsewhere, say under `SIGCHLD` ignored) ends the wait too: `wait` then reports it.
fn await_exit(pid: u32) {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    let options = rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOWAIT;
    while let Err(rustix::io::Errno::INTR) =
        rustix::process::waitid(rustix::process::WaitId::Pid(pid), options)
    {}
}

/// One report of a run's four threads.
enum Part {
    /// stdin was written (or the hook closed it) and closed.
    Wrote,
    /// stdout reached its end.
    Out(Vec<u8>),
    /// stderr reached its end.
    Err(Vec<u8>),
    /// The child exited (not yet reaped).
    Exited,
}

/// What a run's threads reported by the deadline.
#[derive(Default)]
struct Collected {
    reports: usize,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exited: bool,
}

impl Collected {
    fn take(&mut self, part: Part) {
        self.reports += 1;
        match part {
            Part::Wrote => {}
            Part::Out(v) => self.stdout = v,
            Part::Err(v) => self.stderr = v,
            Part::Exited => self.exited = true,
        }
    }
}

/// Starts the four threads of a run over `child`'s pipes and its pid; each sends one
/// [`Part`] on `tx`. Returns how many were started, or the error of the first that could
/// not be (the pipes of those not started are closed with their closures).
fn start_threads(
    child: &mut Child,
    stdin: &[u8],
    tx: &mpsc::Sender<Part>,
) -> std::io::Result<usize> {
    let mut started = 0;
    let spawn = |name: &str, work: Box<dyn FnOnce() -> Part + Send>| {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("hook-{name}"))
            .spawn(move || {
                let _ = tx.send(work());
            })
            .map(|_| ())
    };
    if let Some(mut input) = child.stdin.take() {
        let payload = stdin.to_vec();
        spawn(
            "stdin",
            Box::new(move || {
                // A hook that never reads its stdin is not a failure: EPIPE is ignored.
                let _ = input.write_all(&payload);
                drop(input);
                Part::Wrote
            }),
        )?;
        started += 1;
    }
    if let Some(out) = child.stdout.take() {
        spawn(
            "stdout",
            Box::new(move || Part::Out(read_bounded(out, MAX_OUTPUT))),
        )?;
        started += 1;
    }
    if let Some(err) = child.stderr.take() {
        spawn(
            "stderr",
            Box::new(move || Part::Err(read_bounded(err, MAX_OUTPUT - 1))),
        )?;
        started += 1;
    }
    let pid = child.id();
    spawn(
        "exit",
        Box::new(move || {
            await_exit(pid);
            Part::Exited
        }),
    )?;
    Ok(started + 1)
}

/// Runs `spec` with `stdin` as its input.
pub fn run_command(spec: &CommandSpec<'_>, stdin: &[u8]) -> RawRun {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(base_env())
        .envs(spec.env.iter())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let deadline = Instant::now() + spec.timeout;
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return RawRun::failed(e.to_string()),
    };
    // The child leads its own group: the group's id is its pid.
    let pgid = child.id();
    let (tx, rx) = mpsc::channel();
    let expected = match start_threads(&mut child, stdin, &tx) {
        Ok(n) => n,
        Err(e) => {
            kill_group(pgid);
            let _ = child.kill();
            let _ = child.wait();
            return RawRun::failed(format!("cannot start the hook's threads: {e}"));
        }
    };
    drop(tx);
    let mut got = Collected::default();
    while got.reports < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(part) => got.take(part),
            Err(_) => break,
        }
    }
    if got.reports == expected {
        // Whatever the hook left running in its group (not holding the pipes) goes too:
        // nothing a hook started outlives its run. The child is not reaped yet, so the
        // group's id is still this run's.
        kill_group(pgid);
        let exit = match child.wait() {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(sig)) => Exit::Signal(sig),
                (None, None) => Exit::Signal(0),
            },
            Err(e) => Exit::SpawnFailed(e.to_string()),
        };
        return RawRun {
            exit,
            stdout: got.stdout,
            stderr: got.stderr,
        };
    }
    // The deadline: the whole group, and the child should it have left its group.
    kill_group(pgid);
    let _ = child.kill();
    let grace = Instant::now() + REAP_GRACE;
    while !got.exited {
        let left = grace.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(part) => got.take(part),
            Err(_) => break,
        }
    }
    if got.exited {
        let _ = child.wait();
    }
    // The pipes are dropped unread.
    RawRun {
        exit: Exit::TimedOut,
        stdout: vec![],
        stderr: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str, timeout: Duration) -> RawRun {
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([("GH_TEST".to_string(), "v".to_string())]);
        let spec = CommandSpec {
            command,
            env: &env,
            timeout,
            cwd: dir.path(),
        };
        run_command(&spec, b"{\"x\":1}\n")
    }

    #[test]
    fn reads_stdin_and_answers() {
        let r = run("cat; echo \"$GH_TEST\" >&2", Duration::from_secs(10));
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout, b"{\"x\":1}\n");
        assert_eq!(r.stderr, b"v\n");
    }

    #[test]
    fn exit_codes_and_signals() {
        assert_eq!(run("exit 2", Duration::from_secs(10)).exit, Exit::Code(2));
        assert_eq!(
            run("kill -9 $$", Duration::from_secs(10)).exit,
            Exit::Signal(9)
        );
    }

    /// Whether the process `pid` is gone (or a zombie) within a second of its kill.
    fn dies(pid: i32) -> bool {
        // The grandchild was killed with its group: give the kernel a moment to reap.
        for _ in 0..50 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.is_empty() || stat.contains(") Z ") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn pid_in(file: &Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn a_grandchild_holding_the_pipe_dies_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let r = run(
            &format!("sleep 30 & echo $! > {}; wait", pidfile.display()),
            Duration::from_millis(300),
        );
        assert_eq!(r.exit, Exit::TimedOut);
        let pid = pid_in(&pidfile);
        assert!(dies(pid), "grandchild {pid} outlived its hook");
    }

    #[test]
    fn a_hook_gone_with_its_pipe_still_held_times_out_and_its_group_dies() {
        // The shell exits at once; the grandchild it left holds stdout open, so the answer
        // never ends: a timeout, and the grandchild goes with the group.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let r = run(
            &format!("sleep 30 & echo $! > {}; exit 0", pidfile.display()),
            Duration::from_millis(300),
        );
        assert_eq!(r.exit, Exit::TimedOut);
        let pid = pid_in(&pidfile);
        assert!(dies(pid), "grandchild {pid} outlived its hook");
    }

    #[test]
    fn output_past_the_cap_is_cut_one_byte_past_it() {
        let r = run(
            "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2",
            Duration::from_secs(10),
        );
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout.len(), MAX_OUTPUT + 1);
        assert_eq!(r.stderr.len(), MAX_OUTPUT);
    }

    #[test]
    fn a_hook_that_never_reads_a_large_stdin_is_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::new();
        let spec = CommandSpec {
            command: "echo done",
            env: &env,
            timeout: Duration::from_secs(10),
            cwd: dir.path(),
        };
        let r = run_command(&spec, &vec![b'x'; 4 << 20]);
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout, b"done\n");
    }

    #[test]
    fn the_agents_secrets_do_not_reach_a_hook() {
        std::env::set_var("GH_RUN_TEST_TOKEN", "sekrit-value-123");
        let r = run("env", Duration::from_secs(10));
        assert!(!String::from_utf8_lossy(&r.stdout).contains("sekrit-value-123"));
        assert!(String::from_utf8_lossy(&r.stdout).contains("GH_TEST=v"));
    }

    #[test]
    fn a_missing_working_directory_is_a_spawn_failure() {
        let env = BTreeMap::new();
        let spec = CommandSpec {
            command: "true",
            env: &env,
            timeout: Duration::from_secs(5),
            cwd: Path::new("/nonexistent/gatehouse"),
        };
        assert!(matches!(run_command(&spec, b"").exit, Exit::SpawnFailed(_)));
    }
}
