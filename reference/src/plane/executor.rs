//! The executor: a long-lived process already inside the fence (the helper's `serve`
//! action) that runs one command per request and answers in the protocol. Because the
//! fence is set up once per executor, a warm request costs a fork and an exec.
//!
//! Every command runs as the leader of a session and process group of its own, and when it
//! ends (or its deadline passes) the whole group is killed: nothing a call started outlives
//! the call (FENCE-PLANE-5), PID namespace or not. On Linux the executor is also a child
//! subreaper, so a process that left the group (`setsid`, a double fork) is re-parented to
//! it and ended too; it reaps every orphan between requests (inside a PID namespace it is
//! PID 1 and would inherit them anyway).

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::protocol::{ExecRequest, ExecutorMessage, ExitInfo};
use crate::fence::{Enforcement, Plan};

/// Default cap on each output stream.
pub const DEFAULT_MAX_OUTPUT: usize = 16 << 20;

/// Serve requests from stdin until it closes; returns the exit code.
pub fn serve(plan: &Plan, enforcement: &Enforcement) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    // Best effort: without it (a kernel before 3.4) the process group still holds, and
    // only what left it escapes to the namespace's init.
    #[cfg(target_os = "linux")]
    let _ = crate::sys::ns::become_subreaper();
    let ready = ExecutorMessage::Ready {
        pid: std::process::id(),
        enforcement: enforcement.clone(),
    };
    if write_message(&mut out, &ready).is_err() {
        return 1;
    }
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let msg = match serde_json::from_str::<ExecRequest>(&line) {
            Ok(req) => run_one(plan, &req),
            Err(e) => ExecutorMessage::Done {
                id: 0,
                exit: ExitInfo {
                    code: Some(crate::exit::SETUP_FAILED),
                    signal: None,
                },
                stdout: Vec::new(),
                stderr: format!("gatehouse executor: bad request: {e}\n").into_bytes(),
                timed_out: false,
                truncated: false,
            },
        };
        if write_message(&mut out, &msg).is_err() {
            break;
        }
        #[cfg(target_os = "linux")]
        crate::sys::ns::reap_orphans();
    }
    0
}

fn write_message(out: &mut impl Write, msg: &ExecutorMessage) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

fn read_bounded(mut r: impl Read, max: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut truncated = false;
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

fn run_one(plan: &Plan, req: &ExecRequest) -> ExecutorMessage {
    let failed = |code: i32, msg: String| ExecutorMessage::Done {
        id: req.id,
        exit: ExitInfo {
            code: Some(code),
            signal: None,
        },
        stdout: Vec::new(),
        stderr: msg.into_bytes(),
        timed_out: false,
        truncated: false,
    };
    let Some(program) = req.argv.first() else {
        return failed(crate::exit::SETUP_FAILED, "empty command\n".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(&req.argv[1..])
        .env_clear()
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .current_dir(req.cwd.as_ref().unwrap_or(&plan.cwd))
        .stdin(if req.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own session and process group (the group's id is the command's pid), so that
    // its end, or its deadline, kills whatever it started.
    #[cfg(target_os = "linux")]
    crate::sys::ns::in_new_session(&mut cmd);
    #[cfg(not(target_os = "linux"))]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                crate::exit::NOT_FOUND
            } else {
                crate::exit::CANNOT_EXECUTE
            };
            return failed(
                code,
                format!("gatehouse executor: cannot run {program}: {e}\n"),
            );
        }
    };
    let max = req.max_output.unwrap_or(DEFAULT_MAX_OUTPUT);
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let t_out = std::thread::spawn(move || read_bounded(stdout, max));
    let t_err = std::thread::spawn(move || read_bounded(stderr, max));
    if let (Some(mut w), Some(bytes)) = (child.stdin.take(), req.stdin.clone()) {
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    // Wait for the leader to exit without reaping it: while it is a zombie its pid, which
    // is its group's id, cannot be reused, so killing the group below reaches only what the
    // command started.
    std::thread::spawn(move || {
        let _ = tx.send(wait_exited(pid));
    });
    let mut timed_out = false;
    let waited = match req.timeout_ms {
        Some(ms) => rx.recv_timeout(Duration::from_millis(ms)),
        None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
    };
    if let Err(e) = waited {
        // The deadline (or, should the waiting thread be lost, at once): the group goes,
        // then the leader is waited for below.
        timed_out = e == mpsc::RecvTimeoutError::Timeout;
        kill_group(pid);
        let _ = rx.recv();
    }
    // The command has ended: so has everything it left in its group (FENCE-PLANE-5).
    kill_group(pid);
    let status = child.wait();
    // And whatever left the group, re-parented to us as the subreaper.
    #[cfg(target_os = "linux")]
    crate::sys::ns::end_children(Duration::from_secs(5));
    let exit = match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            ExitInfo {
                code: s.code(),
                signal: s.signal(),
            }
        }
        Err(_) => ExitInfo {
            code: Some(crate::exit::SETUP_FAILED),
            signal: None,
        },
    };
    // Nothing of the command is left to hold the pipes open: the readers end.
    let (stdout, t1) = t_out.join().unwrap_or_default();
    let (stderr, t2) = t_err.join().unwrap_or_default();
    ExecutorMessage::Done {
        id: req.id,
        exit,
        stdout,
        stderr,
        timed_out,
        truncated: t1 || t2,
    }
}

/// Wait until the child `pid` has exited, leaving it to be reaped by `Child::wait`.
fn wait_exited(pid: u32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        crate::sys::ns::wait_exited(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        use rustix::process::{WaitId, WaitIdOptions};
        let p = rustix::process::Pid::from_raw(pid as i32)
            .ok_or_else(|| std::io::Error::other("invalid pid"))?;
        loop {
            match rustix::process::waitid(
                WaitId::Pid(p),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// SIGKILL the process group `pid` leads (or led: the leader may be a zombie).
fn kill_group(pid: u32) {
    #[cfg(target_os = "linux")]
    crate::sys::ns::kill_group(pid);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = std::process::Command::new("/bin/kill")
            .arg("-KILL")
            .arg(format!("-{pid}"))
            .status();
    }
}
