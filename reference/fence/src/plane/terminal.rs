//! A plane run on a terminal (FENCE-TTY-6): the command gets a fresh pseudo-terminal of
//! its jail's own, as `gatehouse exec` gives one from a terminal. It runs in a one-shot
//! checked jail ([`Fence::spawn_checked`]) rather than on a pooled executor, so that the
//! terminal's master is held here, outside every jail, exactly as the CLI holds it; the
//! request's input is typed into the terminal followed by end-of-input, and what the
//! terminal shows is the run's standard output (a terminal has one stream for both).
//!
//! May touch: the fence it is given, the run's captured bytes.

use std::fs::File;
use std::time::{Duration, Instant};

use super::protocol::ExitInfo;
use crate::fence::launch::{Stream, Streams};
use crate::fence::tty::{AtEnd, Captured, Relay};
use crate::fence::{Fence, FenceError};

/// What a terminal run produced.
#[derive(Debug)]
pub struct TerminalOutcome {
    /// How the command ended.
    pub exit: ExitInfo,
    /// What the terminal showed (the command's stdout and stderr, interleaved).
    pub shown: Vec<u8>,
    /// What the jail's helper itself wrote on stderr (a failed step, a missing program).
    pub helper_stderr: Vec<u8>,
    /// Killed at the deadline.
    pub timed_out: bool,
}

fn io_failed(what: &str, e: std::io::Error) -> FenceError {
    FenceError::ProbeFailed {
        backend: "jail".into(),
        leg: what.into(),
        detail: e.to_string(),
    }
}

/// Run `argv` in `fence` (at `cwd`, with exactly `env`) on a terminal, killing it at
/// `timeout`. Blocking.
pub fn run(
    fence: &Fence,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<std::path::PathBuf>,
    input: &[u8],
    timeout: Duration,
) -> Result<TerminalOutcome, FenceError> {
    let fence = fence.at(cwd);
    let mut checked = fence.spawn_checked(
        argv,
        env,
        None,
        true,
        Streams([Stream::Null, Stream::Piped, Stream::Piped]),
    )?;
    let master = checked
        .take_terminal()
        .ok_or_else(|| FenceError::ProbeFailed {
            backend: fence.posture().backend.to_string(),
            leg: "terminal".into(),
            detail: "the jail handed out no terminal".into(),
        })?;
    let drain = |s: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut s) = s {
                let _ = s.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        checked
            .child
            .stdout
            .take()
            .map(|s| Box::new(File::from(s)) as _),
    );
    let err = drain(
        checked
            .child
            .stderr
            .take()
            .map(|s| Box::new(File::from(s)) as _),
    );
    let shown = Captured::with_limit(super::executor::DEFAULT_MAX_OUTPUT);
    let relay = Relay::start(
        master,
        Box::new(std::io::Cursor::new(input.to_vec())),
        AtEnd::SendEof,
        Box::new(shown.clone()),
        // What the terminal showed goes to the agent, which may show it on the person's
        // terminal in turn; that is assumed to read UTF-8.
        crate::fence::control_strings::ControlStrings::new(true),
    )
    .map_err(|e| io_failed("terminal", e))?;
    checked.start()?;
    let deadline = Instant::now() + timeout;
    let timed_out = checked
        .child
        .wait_by(deadline)
        .map_err(|e| io_failed("wait", e))?
        .is_none();
    if timed_out {
        let _ = checked.child.kill();
    }
    let status = checked.wait().map_err(|e| io_failed("wait", e))?;
    relay.finish().map_err(|e| io_failed("terminal", e))?;
    let _ = out.join();
    let helper_stderr = err.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    Ok(TerminalOutcome {
        exit: ExitInfo {
            code: status.code(),
            signal: status.signal(),
        },
        shown: shown.bytes(),
        helper_stderr,
        timed_out,
    })
}
