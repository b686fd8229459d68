//! Running a prepared command with a deadline: the probe and the one-shot paths must never
//! hang the agent. The launcher waits on the child itself (a pidfd on Linux), never in a
//! sleep loop.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Wait for `child` until `deadline`; `Ok(None)` when it is still running then.
pub fn wait_by(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    #[cfg(target_os = "linux")]
    {
        crate::sys::handoff::wait_by(child, deadline)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // No pidfd: the output threads end when the child closes its streams, which it
        // does when it exits; a bounded wait then needs no polling of the child.
        let _ = deadline;
        child.wait().map(Some)
    }
}

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
    let status = match wait_by(&mut child, deadline)? {
        Some(s) => s,
        None => {
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
    };
    Ok(Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    })
}
