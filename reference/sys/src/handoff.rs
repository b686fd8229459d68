//! Descriptors handed from the launcher to the jail helper across `exec` (or a fork), and
//! waiting on a child or a channel with a deadline, never by sleeping: `socketpair(2)`,
//! `fcntl(2)`, `poll(2)` and `pidfd_open(2)` (Linux 5.3; without it a thread blocked in
//! `waitpid` stands in).

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::{fcntl_setfd, FdFlags};
use rustix::net::{shutdown, socketpair, AddressFamily, Shutdown, SocketFlags, SocketType};

/// A one-way channel whose `child_end` survives `exec` (for exactly one spawn: the caller
/// drops it right after) and whose `parent_end` does not: a connected pair of UNIX stream
/// sockets with the other direction shut, not a pipe. Any process of the same user that
/// may read a process's `/proc/PID/fd` (a weaker right than tracing it, which Yama's
/// default leaves to every such process) can open a pipe's end there again, for writing
/// too, and write a report, a go or a plan of its own into it; a socket cannot be opened
/// so (`ENXIO`).
pub struct Handoff {
    /// The end the launcher keeps (close-on-exec).
    pub parent_end: OwnedFd,
    /// The end the helper inherits.
    pub child_end: OwnedFd,
}

fn inheritable(fd: &OwnedFd) -> io::Result<()> {
    fcntl_setfd(fd, FdFlags::empty()).map_err(io::Error::from)
}

/// A connected pair of UNIX stream sockets, both close-on-exec.
pub fn stream_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(io::Error::from)
}

/// A channel the helper writes to and the launcher reads (`child_end` writes).
pub fn channel_from_child() -> io::Result<Handoff> {
    let (r, w) = stream_pair()?;
    shutdown(&r, Shutdown::Write)?;
    shutdown(&w, Shutdown::Read)?;
    inheritable(&w)?;
    Ok(Handoff {
        parent_end: r,
        child_end: w,
    })
}

/// A channel the launcher writes to and the helper reads (`child_end` reads).
pub fn channel_to_child() -> io::Result<Handoff> {
    let (r, w) = stream_pair()?;
    shutdown(&r, Shutdown::Write)?;
    shutdown(&w, Shutdown::Read)?;
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
        if let Some(end) = out.iter().position(|b| *b == b'\n') {
            out.truncate(end);
            return Ok(out);
        }
        if out.len() > limit {
            return Err(io::Error::other("answer longer than expected"));
        }
        if !readable_by(fd, deadline)? {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no answer by the deadline",
            ));
        }
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// No end of a handoff can be opened again through `/proc/self/fd` (as any process of
    /// the same user that may read that directory could do with a pipe's end, and write a
    /// plan, a report or a go of its own into it): the kernel refuses to open a socket so.
    #[test]
    fn no_end_of_a_handoff_can_be_opened_again() {
        for h in [channel_from_child().unwrap(), channel_to_child().unwrap()] {
            for end in [&h.parent_end, &h.child_end] {
                let path = format!("/proc/self/fd/{}", raw(end));
                for write in [false, true] {
                    let opened = std::fs::OpenOptions::new()
                        .read(!write)
                        .write(write)
                        .open(&path);
                    assert!(opened.is_err(), "{path} opened again (write: {write})");
                }
            }
        }
    }

    /// What the child end writes reaches the parent end and no other way round, and a
    /// closed writer reads as the end.
    #[test]
    fn a_handoff_carries_one_way() {
        let from = channel_from_child().unwrap();
        rustix::io::write(&from.child_end, b"report\n").unwrap();
        assert!(rustix::io::write(&from.parent_end, b"x").is_err());
        drop(from.child_end);
        let got = read_line_by(
            &from.parent_end,
            Instant::now() + Duration::from_secs(5),
            64,
        );
        assert_eq!(got.unwrap(), b"report");
        let to = channel_to_child().unwrap();
        assert!(rustix::io::write(&to.child_end, b"x").is_err());
        rustix::io::write(&to.parent_end, b"g").unwrap();
        drop(to.parent_end);
        let mut buf = [0u8; 4];
        assert_eq!(rustix::io::read(&to.child_end, &mut buf).unwrap(), 1);
        assert_eq!(rustix::io::read(&to.child_end, &mut buf).unwrap(), 0);
    }

    /// A line is read up to its `\n`, the rest of the channel up to its end where no
    /// `\n` comes; a line over the limit is refused.
    #[test]
    fn a_line_is_read_whole_and_a_long_one_refused() {
        let deadline = Instant::now() + Duration::from_secs(5);
        let to = channel_to_child().unwrap();
        rustix::io::write(&to.parent_end, b"report\nmore").unwrap();
        assert_eq!(
            read_line_by(&to.child_end, deadline, 64).unwrap(),
            b"report"
        );
        let tail = channel_to_child().unwrap();
        rustix::io::write(&tail.parent_end, b"no newline").unwrap();
        drop(tail.parent_end);
        assert_eq!(
            read_line_by(&tail.child_end, deadline, 64).unwrap(),
            b"no newline"
        );
        let long = channel_to_child().unwrap();
        rustix::io::write(&long.parent_end, &[b'x'; 100]).unwrap();
        assert!(read_line_by(&long.child_end, deadline, 64).is_err());
    }
}
