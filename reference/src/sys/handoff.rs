//! Descriptors handed from the launcher to the jail helper across `exec`, and waiting on
//! a child or a pipe with a deadline, never by sleeping: `pipe2(2)`, `fcntl(2)`,
//! `poll(2)` and `pidfd_open(2)` (Linux 5.3; without it a thread blocked in `waitpid`
//! stands in).

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::{fcntl_setfd, FdFlags};
use rustix::pipe::{pipe_with, PipeFlags};

/// A pipe whose `child_end` survives `exec` (for exactly one spawn: the caller drops it
/// right after) and whose `parent_end` does not.
pub struct Handoff {
    /// The end the launcher keeps (close-on-exec).
    pub parent_end: OwnedFd,
    /// The end the helper inherits.
    pub child_end: OwnedFd,
}

fn inheritable(fd: &OwnedFd) -> io::Result<()> {
    fcntl_setfd(fd, FdFlags::empty()).map_err(io::Error::from)
}

/// A pipe the helper writes to (`child_end` is the write end).
pub fn pipe_from_child() -> io::Result<Handoff> {
    let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
    inheritable(&w)?;
    Ok(Handoff {
        parent_end: r,
        child_end: w,
    })
}

/// A pipe the helper reads from (`child_end` is the read end).
pub fn pipe_to_child() -> io::Result<Handoff> {
    let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
    inheritable(&r)?;
    Ok(Handoff {
        parent_end: w,
        child_end: r,
    })
}

/// Take ownership of a descriptor the plan says the launcher left open for this helper.
/// Refuses a descriptor that is not open; marks it close-on-exec so the jailed command
/// never inherits it.
pub fn adopt(raw: RawFd) -> io::Result<OwnedFd> {
    if raw < 3 {
        return Err(io::Error::other(format!(
            "descriptor {raw} is a standard stream, not a handoff"
        )));
    }
    // SAFETY: `fcntl(F_GETFD)` on an arbitrary number only queries; it fails with EBADF
    // when the descriptor is not open and touches nothing otherwise.
    if unsafe { libc::fcntl(raw, libc::F_GETFD) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor is open (checked above) and was inherited across exec for
    // this one purpose; the helper is single-threaded and nothing else in it refers to
    // this number, so the OwnedFd is its only owner and closes it exactly once.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    fcntl_setfd(&fd, FdFlags::CLOEXEC)?;
    Ok(fd)
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs() as _,
        tv_nsec: d.subsec_nanos() as _,
    }
}

/// Wait until `fd` is readable (or its writer closed) or `deadline` passes. Returns
/// whether it became readable.
pub fn readable_by(fd: impl AsFd, deadline: Instant) -> io::Result<bool> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timespec(left))) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Read one line from `fd` (up to and without its `\n`), or everything until every writer
/// closed it; fail at `deadline`. A line, because a writer that forked may leave a copy of
/// the write end open in a process that stays.
pub fn read_line_by(fd: &OwnedFd, deadline: Instant, limit: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if !readable_by(fd, deadline)? {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no answer by the deadline",
            ));
        }
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if let Some(end) = out.iter().position(|b| *b == b'\n') {
                    out.truncate(end);
                    return Ok(out);
                }
                if out.len() > limit {
                    return Err(io::Error::other("answer longer than expected"));
                }
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Wait for `child` until `deadline`; `Ok(None)` when it is still running then. Waits
/// on its exit notice ([`super::ns::exit_notice`]: a pidfd, or where `pidfd_open` is
/// missing a pipe a thread blocked in `waitid` closes), which leaves the status to reap.
pub fn wait_by(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    if let Some(s) = child.try_wait()? {
        return Ok(Some(s));
    }
    let notice = super::ns::exit_notice(child.id())?;
    if readable_by(&notice, deadline)? {
        child.wait().map(Some)
    } else {
        Ok(None)
    }
}

/// The raw number of a descriptor, for the plan.
pub fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}
