//! The executor: a long-lived process already inside the fence (the helper's `serve`
//! action) that runs one command per request and answers in the protocol. Because the
//! fence is set up once per executor, a warm request costs a fork and an exec.
//!
//! Inside a PID namespace the executor is PID 1: it reaps orphans between requests.

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
                    code: Some(crate::fence::jail::EXIT_SETUP_FAILED),
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
        if enforcement.pid1 {
            crate::fence::sys::ns::reap_orphans();
        }
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
        return failed(
            crate::fence::jail::EXIT_SETUP_FAILED,
            "empty command\n".into(),
        );
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
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so a deadline kills whatever it started.
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                crate::fence::jail::EXIT_NOT_FOUND
            } else {
                crate::fence::jail::EXIT_CANNOT_EXECUTE
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
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let mut timed_out = false;
    let status = match req.timeout_ms {
        Some(ms) => match rx.recv_timeout(Duration::from_millis(ms)) {
            Ok(s) => s,
            Err(_) => {
                timed_out = true;
                kill_group(pid);
                rx.recv()
                    .unwrap_or_else(|_| Err(std::io::Error::other("lost")))
            }
        },
        None => rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("lost"))),
    };
    let exit = match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            ExitInfo {
                code: s.code(),
                signal: s.signal(),
            }
        }
        Err(_) => ExitInfo {
            code: Some(crate::fence::jail::EXIT_SETUP_FAILED),
            signal: None,
        },
    };
    if timed_out {
        // The group may still hold the pipes open: make sure it is gone before joining.
        kill_group(pid);
    }
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

fn kill_group(pid: u32) {
    #[cfg(target_os = "linux")]
    if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = std::process::Command::new("/bin/kill")
            .arg("-KILL")
            .arg(format!("-{pid}"))
            .status();
    }
}
