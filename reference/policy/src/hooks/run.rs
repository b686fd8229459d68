//! Running one command hook as a real child process (HOOK-RUN-1 to -5): `sh -c COMMAND`
//! in the session's working directory, in a process group of its own, with a scrubbed
//! environment plus the hook's `env`; one JSON object on stdin; stdout and stderr read
//! concurrently and bounded; at the timeout the **whole group** is killed (a grandchild
//! holding the pipe open dies with it) and nothing more is read.
//!
//! May touch: the process table (spawn, signal its own group, reap). Nothing else.

use super::answer::Exit;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most a hook may print on stdout or stderr; more is a malformed answer.
pub const MAX_OUTPUT: usize = 1 << 20;

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

async fn read_bounded<R: tokio::io::AsyncRead + Unpin>(mut r: R, limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return out,
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

/// Runs `spec` with `stdin` as its input.
pub async fn run_command(spec: &CommandSpec<'_>, stdin: &[u8]) -> RawRun {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(base_env())
        .envs(spec.env.iter())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RawRun {
                exit: Exit::SpawnFailed(e.to_string()),
                stdout: vec![],
                stderr: vec![],
            }
        }
    };
    let Some(pgid) = child.id() else {
        return RawRun {
            exit: Exit::SpawnFailed("the hook exited before it could be watched".into()),
            stdout: vec![],
            stderr: vec![],
        };
    };
    let mut input = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let payload = stdin.to_vec();
    let work = async {
        let write = async {
            if let Some(mut i) = input.take() {
                // A hook that never reads its stdin is not a failure: EPIPE is ignored.
                let _ = i.write_all(&payload).await;
                let _ = i.shutdown().await;
            }
        };
        let out = async {
            match stdout {
                Some(s) => read_bounded(s, MAX_OUTPUT).await,
                None => vec![],
            }
        };
        let err = async {
            match stderr {
                Some(s) => read_bounded(s, MAX_OUTPUT - 1).await,
                None => vec![],
            }
        };
        let ((), out, err, status) = tokio::join!(write, out, err, child.wait());
        (out, err, status)
    };
    match tokio::time::timeout(spec.timeout, work).await {
        Ok((stdout, stderr, status)) => {
            // Whatever the hook left running in its group (not holding the pipes) goes
            // too: nothing a hook started outlives its run.
            kill_group(pgid);
            let exit = match status {
                Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(sig)) => Exit::Signal(sig),
                    (None, None) => Exit::Signal(0),
                },
                Err(e) => Exit::SpawnFailed(e.to_string()),
            };
            RawRun {
                exit,
                stdout,
                stderr,
            }
        }
        Err(_) => {
            kill_group(pgid);
            // Reap the direct child; the pipes are dropped unread.
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            RawRun {
                exit: Exit::TimedOut,
                stdout: vec![],
                stderr: vec![],
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn run(command: &str, timeout: Duration) -> RawRun {
        let dir = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([("GH_TEST".to_string(), "v".to_string())]);
        let spec = CommandSpec {
            command,
            env: &env,
            timeout,
            cwd: dir.path(),
        };
        rt().block_on(run_command(&spec, b"{\"x\":1}\n"))
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

    #[test]
    fn a_grandchild_holding_the_pipe_dies_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let r = run(
            &format!("sleep 30 & echo $! > {}; wait", pidfile.display()),
            Duration::from_millis(300),
        );
        assert_eq!(r.exit, Exit::TimedOut);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild was killed with its group: give the kernel a moment to reap.
        let mut alive = true;
        for _ in 0..50 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.is_empty() || stat.contains(") Z ") {
                alive = false;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive, "grandchild {pid} outlived its hook");
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
        assert!(matches!(
            rt().block_on(run_command(&spec, b"")).exit,
            Exit::SpawnFailed(_)
        ));
    }
}
