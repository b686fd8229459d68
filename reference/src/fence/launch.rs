//! Running a prepared command with a deadline: the probe and the one-shot paths must never
//! hang the agent.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `cmd` with stdin closed and both outputs captured; kill it at `timeout`.
pub fn output_bounded(mut cmd: Command, timeout: Duration) -> std::io::Result<Output> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let s = child.wait()?;
            let stdout = t_out.join().unwrap_or_default();
            let mut stderr = t_err.join().unwrap_or_default();
            stderr.extend_from_slice(b"\ngatehouse: killed at the deadline\n");
            return Ok(Output {
                status: s,
                stdout,
                stderr,
            });
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    })
}
