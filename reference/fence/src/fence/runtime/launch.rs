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
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        // Both were asked for as pipes above; a child without them is not waited for here.
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other("the command's outputs are not pipes"));
    };
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

/// Where one of a launched process's standard streams comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// `/dev/null`.
    Null,
    /// A pipe whose other end the launcher holds ([`Launched::stdin`] and the others).
    Piped,
    /// The launcher's own.
    Inherit,
}

/// The standard streams of a checked command's jail (its stdin, stdout and stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streams(pub [Stream; 3]);

impl Streams {
    /// Every stream a pipe of the launcher's.
    pub const PIPED: Streams = Streams([Stream::Piped; 3]);

    /// Set them on `cmd`, for a jail started by a [`Command`].
    pub fn apply(&self, cmd: &mut Command) {
        let stdio = |s: Stream| match s {
            Stream::Null => Stdio::null(),
            Stream::Piped => Stdio::piped(),
            Stream::Inherit => Stdio::inherit(),
        };
        cmd.stdin(stdio(self.0[0]))
            .stdout(stdio(self.0[1]))
            .stderr(stdio(self.0[2]));
    }

    /// The child's ends of the streams and the launcher's, for a jail started without a
    /// [`Command`] (`None` for a stream the child inherits, or that is not piped).
    #[cfg(target_os = "linux")]
    pub(crate) fn ends(&self) -> std::io::Result<StreamEnds> {
        use std::os::fd::OwnedFd;
        let mut theirs: [Option<OwnedFd>; 3] = [None, None, None];
        let mut ours: [Option<OwnedFd>; 3] = [None, None, None];
        for (n, s) in self.0.iter().enumerate() {
            match s {
                Stream::Inherit => {}
                Stream::Null => {
                    theirs[n] = Some(
                        std::fs::OpenOptions::new()
                            .read(true)
                            .write(true)
                            .open("/dev/null")?
                            .into(),
                    )
                }
                Stream::Piped => {
                    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
                    let (child, launcher) = match n {
                        0 => (read, write),
                        _ => (write, read),
                    };
                    theirs[n] = Some(child);
                    ours[n] = Some(launcher);
                }
            }
        }
        Ok(StreamEnds { theirs, ours })
    }
}

/// What [`Streams::ends`] makes.
#[cfg(target_os = "linux")]
pub(crate) struct StreamEnds {
    pub theirs: [Option<std::os::fd::OwnedFd>; 3],
    pub ours: [Option<std::os::fd::OwnedFd>; 3],
}

/// A checked command's jail as the launcher holds it: the process it waits for and its
/// ends of the standard streams it was given as pipes.
#[derive(Debug)]
pub struct Launched {
    /// Our end of its stdin, where it is a pipe.
    pub stdin: Option<std::os::fd::OwnedFd>,
    /// Our end of its stdout, where it is a pipe.
    pub stdout: Option<std::os::fd::OwnedFd>,
    /// Our end of its stderr, where it is a pipe.
    pub stderr: Option<std::os::fd::OwnedFd>,
    process: Process,
}

#[derive(Debug)]
enum Process {
    /// Started by a [`Command`]: a jail's helper, or bubblewrap, or `sandbox-exec`.
    Spawned(Child),
    /// The jail's init, cloned straight from the launcher ([`crate::sys::ns::clone_init`]).
    #[cfg(target_os = "linux")]
    Cloned {
        pid: u32,
        pidfd: std::os::fd::OwnedFd,
        status: Option<ExitStatus>,
    },
}

impl Launched {
    /// A process started by a [`Command`]; its pipes become ours.
    pub fn spawned(mut child: Child) -> Launched {
        use std::os::fd::OwnedFd;
        Launched {
            stdin: child.stdin.take().map(OwnedFd::from),
            stdout: child.stdout.take().map(OwnedFd::from),
            stderr: child.stderr.take().map(OwnedFd::from),
            process: Process::Spawned(child),
        }
    }

    /// A cloned init and our ends of its streams.
    #[cfg(target_os = "linux")]
    pub(crate) fn cloned(
        init: crate::sys::ns::ClonedInit,
        ours: [Option<std::os::fd::OwnedFd>; 3],
    ) -> Launched {
        let [stdin, stdout, stderr] = ours;
        Launched {
            stdin,
            stdout,
            stderr,
            process: Process::Cloned {
                pid: init.pid,
                pidfd: init.pidfd,
                status: None,
            },
        }
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        match &self.process {
            Process::Spawned(c) => c.id(),
            #[cfg(target_os = "linux")]
            Process::Cloned { pid, .. } => *pid,
        }
    }

    /// Whether it is the jail's init itself (no helper between it and us).
    pub fn is_init(&self) -> bool {
        match &self.process {
            Process::Spawned(_) => false,
            #[cfg(target_os = "linux")]
            Process::Cloned { .. } => true,
        }
    }

    /// `SIGKILL` it, unless it has been reaped already.
    pub fn kill(&mut self) -> std::io::Result<()> {
        match &mut self.process {
            Process::Spawned(c) => c.kill(),
            #[cfg(target_os = "linux")]
            Process::Cloned { pidfd, status, .. } => match status {
                Some(_) => Ok(()),
                None => crate::sys::ns::kill_pidfd(pidfd),
            },
        }
    }

    /// Wait for it to end and reap it (once; later calls give the same status).
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match &mut self.process {
            Process::Spawned(c) => c.wait(),
            #[cfg(target_os = "linux")]
            Process::Cloned { pid, status, .. } => {
                if let Some(s) = status {
                    return Ok(*s);
                }
                use std::os::unix::process::ExitStatusExt;
                let raw = crate::sys::ns::reap(*pid, true)?
                    .ok_or_else(|| std::io::Error::other("the jail's init was not reaped"))?;
                Ok(*status.insert(ExitStatus::from_raw(raw)))
            }
        }
    }

    /// Wait for it until `deadline`; `Ok(None)` when it is still running then.
    pub fn wait_by(&mut self, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
        match &mut self.process {
            Process::Spawned(c) => wait_by(c, deadline),
            #[cfg(target_os = "linux")]
            Process::Cloned { pidfd, status, .. } => {
                if status.is_some() || crate::sys::handoff::readable_by(&*pidfd, deadline)? {
                    self.wait().map(Some)
                } else {
                    Ok(None)
                }
            }
        }
    }
}
