//! A terminal for a command run in the fence (FENCE-TTY-1..6): a fresh pseudo-terminal
//! from the jail's own devpts instance, never the caller's terminal.
//!
//! The jail's helper, fully fenced and just before the command starts, opens `/dev/ptmx`
//! (inside the jail: its private devpts), hands the master out to the launcher over a
//! socket of the plan and closes its own copy ([`hand_out`]); it keeps only the slave,
//! which becomes the standard streams and the controlling terminal of the command, the
//! leader of a session of its own ([`attach`]). So the slave is named in the jail's
//! `/dev/pts`, and the master (whoever holds it types into the terminal) exists only
//! outside the jail. The launcher copies between the master and its caller ([`Relay`]):
//! the CLI its own terminal in raw mode ([`crate::sys::pty::RawMode`]), the plane the
//! run's input and captured output; what the terminal shows goes through
//! [`crate::fence::control_strings`] on its way out.
//!
//! May touch: the descriptors it is given; the kernel calls are [`crate::sys::pty`]'s.

use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::thread::JoinHandle;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use crate::fence::control_strings::ControlStrings;

/// The byte a terminal in canonical mode reads as end of input (`VEOF`, `^D`).
pub const EOF_BYTE: u8 = 0x04;

/// The helper's side: a pseudo-terminal opened in this (fenced) process, its master sent
/// over the inherited socket `over` of the plan; returns the slave. No copy of the master
/// stays in the jail.
#[cfg(target_os = "linux")]
pub fn hand_out(over: std::os::fd::RawFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsFd;
    let over = crate::sys::handoff::adopt(over)?;
    let pair = crate::sys::pty::open_pair()?;
    crate::sys::net::send_fd(over.as_fd(), pair.master.as_fd())?;
    drop(pair.master);
    Ok(pair.slave)
}

/// Make `slave` the standard streams and the controlling terminal of `cmd`, which leads a
/// new session.
#[cfg(target_os = "linux")]
pub fn attach(cmd: &mut std::process::Command, slave: OwnedFd) -> io::Result<()> {
    crate::sys::pty::controlling(cmd, slave)
}

/// What the relay does when its input ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtEnd {
    /// Type end-of-input into the terminal (`^D`, after a newline if the last line had
    /// none), so a reading command sees EOF: for input that is a finite byte string.
    SendEof,
    /// Nothing: the input is a person's terminal, whose `^D` is a byte like any other.
    Nothing,
}

/// The threads copying between a terminal's master and the caller.
#[derive(Debug)]
pub struct Relay {
    output: JoinHandle<io::Result<()>>,
    stop: OwnedFd,
}

fn is_hangup(e: &io::Error) -> bool {
    // A master whose every slave closed reads EIO: the terminal hung up.
    e.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error())
}

fn copy_once(
    master: &OwnedFd,
    out: &mut dyn Write,
    filter: &mut ControlStrings,
    buf: &mut [u8],
) -> io::Result<bool> {
    match rustix::io::read(master, &mut *buf) {
        Ok(0) => Ok(false),
        Ok(n) => {
            out.write_all(&filter.filtered(&buf[..n]))?;
            out.flush()?;
            Ok(true)
        }
        Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => Ok(true),
        Err(e) => {
            let e = io::Error::from(e);
            if is_hangup(&e) {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

fn readable(fd: &OwnedFd, wait: Option<&Timespec>) -> io::Result<bool> {
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        match poll(&mut fds, wait) {
            Ok(n) => return Ok(n > 0),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

fn pump_output(
    master: OwnedFd,
    stop: OwnedFd,
    mut out: Box<dyn Write + Send>,
    mut filter: ControlStrings,
) -> io::Result<()> {
    let mut buf = [0u8; 8192];
    let copied = pump_filtered(&master, &stop, &mut out, &mut filter, &mut buf);
    let mut rest = Vec::new();
    filter.finish(&mut rest);
    if !rest.is_empty() {
        out.write_all(&rest)?;
        out.flush()?;
    }
    copied
}

fn pump_filtered(
    master: &OwnedFd,
    stop: &OwnedFd,
    out: &mut Box<dyn Write + Send>,
    filter: &mut ControlStrings,
    buf: &mut [u8],
) -> io::Result<()> {
    loop {
        let mut fds = [
            PollFd::new(master, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        let (m, s) = (fds[0].revents(), fds[1].revents());
        if !m.is_empty() {
            if !copy_once(master, out, filter, buf)? {
                return Ok(());
            }
            continue;
        }
        if !s.is_empty() {
            // The command ended: what the terminal still holds is copied, without waiting
            // for a slave some leftover process might keep open.
            let now = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            while readable(master, Some(&now))? {
                if !copy_once(master, out, filter, buf)? {
                    break;
                }
            }
            return Ok(());
        }
    }
}

fn pump_input(master: OwnedFd, mut input: Box<dyn Read + Send>, at_end: AtEnd) {
    let mut buf = [0u8; 8192];
    let mut last = b'\n';
    loop {
        match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if write_all(&master, &buf[..n]).is_err() {
                    return;
                }
                last = buf[n - 1];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
    if at_end == AtEnd::SendEof {
        let eof: &[u8] = if last == b'\n' {
            &[EOF_BYTE]
        } else {
            &[EOF_BYTE, EOF_BYTE]
        };
        let _ = write_all(&master, eof);
    }
}

fn write_all(fd: &OwnedFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::io::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl Relay {
    /// Start copying `input` into the terminal and what it shows into `output`, through
    /// `filter` (FENCE-TTY-7: the terminal's control strings that reach past the jail
    /// stay out). The input thread is not joined (a person's terminal may never be read
    /// again); the output thread ends at [`Relay::finish`].
    pub fn start(
        master: OwnedFd,
        input: Box<dyn Read + Send>,
        at_end: AtEnd,
        output: Box<dyn Write + Send>,
        filter: ControlStrings,
    ) -> io::Result<Relay> {
        let typing = master.try_clone()?;
        let (stop_r, stop_w) = rustix::pipe::pipe()?;
        for end in [&stop_r, &stop_w] {
            rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
        }
        std::thread::spawn(move || pump_input(typing, input, at_end));
        let output = std::thread::spawn(move || pump_output(master, stop_r, output, filter));
        Ok(Relay {
            output,
            stop: stop_w,
        })
    }

    /// After the command ended: copy what the terminal still shows, then stop.
    pub fn finish(self) -> io::Result<()> {
        let _ = rustix::io::write(&self.stop, b"x");
        self.output
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the terminal relay panicked")))
    }
}

/// A writer into a shared buffer (the plane's captured output), which keeps at most its
/// limit and drops the rest (a command printing without end must not grow the plane).
#[derive(Debug, Clone)]
pub struct Captured {
    buf: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    limit: usize,
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut kept = self.buf.lock().map_err(|_| io::Error::other("poisoned"))?;
        let room = self.limit.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// A buffer keeping at most `limit` bytes.
    pub fn with_limit(limit: usize) -> Captured {
        Captured {
            buf: Default::default(),
            limit,
        }
    }

    /// What was written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.buf.lock().map(|v| v.clone()).unwrap_or_default()
    }
}
