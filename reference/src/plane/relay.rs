//! The streams of a command that `gatehouse exec` runs on pipes (FENCE-JAIL-15): its
//! stdout and stderr copied to ours and our stdin to its, by one `poll(2)` loop in the
//! calling thread, no thread per stream. The loop ends once the command's stdout and
//! stderr are both closed, which for a jail is when its last process is gone.
//!
//! What it may touch: our descriptors 0, 1 and 2 (never made non-blocking: their file
//! descriptions are shared with whoever started us) and the child's pipe ends, which are
//! ours alone (the one to its stdin is made non-blocking, so that a command that does not
//! read cannot stall its output).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::Child;

use rustix::event::{poll, PollFd, PollFlags};

/// How much is read at once.
const CHUNK: usize = 64 << 10;

/// Copy `child`'s piped stdout and stderr to ours and our stdin to its stdin, until its
/// stdout and stderr are both closed (each at the end of its data, or when ours refuses a
/// write: the command then sees its pipe closed, as it would writing to ours). Where the
/// command closed both but its stdin is still being fed, a thread goes on feeding it (not
/// joined: our stdin may be a terminal the command never reads; it ends with the process,
/// or at the first write the closed pipe refuses).
pub fn copy(child: &mut Child) {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    copy_between(child, stdin.as_fd(), [stdout.as_fd(), stderr.as_fd()]);
}

/// [`copy`] with `input` in place of our stdin and `output` of our stdout and stderr.
fn copy_between(child: &mut Child, input: BorrowedFd<'_>, output: [BorrowedFd<'_>; 2]) {
    let out = child.stdout.take().map(OwnedFd::from);
    let err = child.stderr.take().map(OwnedFd::from);
    let to_child = child.stdin.take().map(OwnedFd::from).and_then(|fd| {
        rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::NONBLOCK)
            .ok()
            .map(|()| fd)
    });
    let mut relay = Relay {
        from: [out, err],
        to_child,
        pending: Vec::new(),
        stdin_open: true,
    };
    relay.run(input, output);
    if let Some(feed) = relay.to_child.take() {
        if let Ok(input) = input.try_clone_to_owned() {
            let pending = std::mem::take(&mut relay.pending);
            let more = relay.stdin_open;
            std::thread::spawn(move || feed_blocking(feed, pending, input, more));
        }
    }
}

/// The loop's state.
struct Relay {
    /// The command's stdout and stderr, `None` once closed.
    from: [Option<OwnedFd>; 2],
    /// Our end of its stdin, `None` once closed.
    to_child: Option<OwnedFd>,
    /// Read from our stdin, not yet written to its.
    pending: Vec<u8>,
    /// Whether our stdin may still give data.
    stdin_open: bool,
}

/// What a slot of the poll set watches.
#[derive(Clone, Copy)]
enum Slot {
    /// The command's stdout (0) or stderr (1).
    From(usize),
    /// Our stdin, read only while nothing is pending.
    OurStdin,
    /// The command's stdin, written while something is pending.
    ToChild,
}

impl Relay {
    fn run(&mut self, our_stdin: BorrowedFd<'_>, output: [BorrowedFd<'_>; 2]) {
        let mut buf = vec![0u8; CHUNK];
        while self.from.iter().any(Option::is_some) {
            let mut slots = Vec::with_capacity(4);
            let mut fds = Vec::with_capacity(4);
            for (i, fd) in self.from.iter().enumerate() {
                if let Some(fd) = fd {
                    slots.push(Slot::From(i));
                    fds.push(PollFd::new(fd, PollFlags::IN));
                }
            }
            if let Some(fd) = &self.to_child {
                if !self.pending.is_empty() {
                    slots.push(Slot::ToChild);
                    fds.push(PollFd::new(fd, PollFlags::OUT));
                } else if self.stdin_open {
                    slots.push(Slot::OurStdin);
                    fds.push(PollFd::new(&our_stdin, PollFlags::IN));
                }
            }
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                // Cannot wait any more: what is left of the command's output is dropped,
                // closing its pipes, so that it cannot block on them.
                Err(_) => {
                    self.from = [None, None];
                    self.to_child = None;
                    return;
                }
            }
            let ready: Vec<Slot> = slots
                .into_iter()
                .zip(&fds)
                .filter(|(_, fd)| !fd.revents().is_empty())
                .map(|(slot, _)| slot)
                .collect();
            drop(fds);
            for slot in ready {
                match slot {
                    Slot::From(i) => self.forward(i, output[i], &mut buf),
                    Slot::OurStdin => self.read_stdin(our_stdin, &mut buf),
                    Slot::ToChild => self.write_child(),
                }
            }
        }
    }

    /// One read of the command's stdout (0) or stderr (1), written whole to `to`.
    fn forward(&mut self, i: usize, to: BorrowedFd<'_>, buf: &mut [u8]) {
        let Some(fd) = &self.from[i] else { return };
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => self.from[i] = None,
            Ok(n) => {
                if write_all(to, &buf[..n]).is_err() {
                    self.from[i] = None;
                }
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => self.from[i] = None,
        }
    }

    /// One read of our stdin into `pending`; at its end the command's stdin is closed.
    fn read_stdin(&mut self, our_stdin: BorrowedFd<'_>, buf: &mut [u8]) {
        match rustix::io::read(our_stdin, &mut *buf) {
            Ok(0) => {
                self.stdin_open = false;
                self.to_child = None;
            }
            Ok(n) => {
                self.pending.extend_from_slice(&buf[..n]);
                self.write_child();
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => {
                self.stdin_open = false;
                self.to_child = None;
            }
        }
    }

    /// As much of `pending` as the command's stdin takes now.
    fn write_child(&mut self) {
        let Some(fd) = &self.to_child else { return };
        match rustix::io::write(fd, &self.pending) {
            Ok(n) => {
                self.pending.drain(..n);
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            // The command closed its stdin: nothing more goes to it.
            Err(_) => {
                self.to_child = None;
                self.pending.clear();
                self.stdin_open = false;
            }
        }
    }
}

/// Write all of `data` to `fd`, which may be non-blocking (a description shared with
/// whoever started us): on `EAGAIN` wait until it takes more.
fn write_all(fd: BorrowedFd<'_>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::io::write(fd, data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
                match poll(&mut fds, None) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// After the command closed its output: `pending`, then the rest of `input` (while
/// `more`), fed to it with blocking writes.
fn feed_blocking(feed: OwnedFd, pending: Vec<u8>, input: OwnedFd, more: bool) {
    let _ = rustix::fs::fcntl_setfl(&feed, rustix::fs::OFlags::empty());
    if write_all(feed.as_fd(), &pending).is_err() || !more {
        return;
    }
    let mut buf = vec![0u8; CHUNK];
    loop {
        match rustix::io::read(&input, &mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if write_all(feed.as_fd(), &buf[..n]).is_err() {
                    return;
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::{Command, Stdio};

    fn piped(script: &str) -> Child {
        Command::new("/bin/sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Run `script` relayed, with `input` on its stdin; what reached "our" stdout and
    /// stderr (files, read back).
    fn relayed(script: &str, input: &[u8]) -> (Child, Vec<u8>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in");
        std::fs::write(&path, input).unwrap();
        let input = std::fs::File::open(&path).unwrap();
        let mut out = tempfile::tempfile().unwrap();
        let mut err = tempfile::tempfile().unwrap();
        let mut child = piped(script);
        copy_between(&mut child, input.as_fd(), [out.as_fd(), err.as_fd()]);
        let read = |f: &mut std::fs::File| {
            use std::io::Seek;
            f.rewind().unwrap();
            let mut v = Vec::new();
            f.read_to_end(&mut v).unwrap();
            v
        };
        let (o, e) = (read(&mut out), read(&mut err));
        (child, o, e)
    }

    #[test]
    fn both_streams_arrive_whole_past_what_a_pipe_holds() {
        let (mut child, out, err) = relayed(
            "head -c 300000 /dev/zero; head -c 200000 /dev/zero | tr '\\0' e >&2",
            b"",
        );
        assert!(child.stdout.is_none() && child.stderr.is_none());
        assert!(child.wait().unwrap().success());
        assert_eq!(out.len(), 300_000);
        assert!(out.iter().all(|b| *b == 0));
        assert_eq!(err.len(), 200_000);
        assert!(err.iter().all(|b| *b == b'e'));
    }

    #[test]
    fn input_past_a_pipe_reaches_the_command_while_it_writes() {
        // cat writes back what it reads: with a blocking feed, input and output would wait
        // on each other once both pipes are full.
        let input: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let (mut child, out, _) = relayed("cat", &input);
        assert!(child.wait().unwrap().success());
        assert_eq!(out, input);
    }

    #[test]
    fn a_command_that_never_reads_its_stdin_does_not_stall_its_output() {
        let input = vec![b'x'; 1 << 20];
        let (mut child, out, _) = relayed("exec 0<&-; head -c 200000 /dev/zero", &input);
        assert!(child.wait().unwrap().success());
        assert_eq!(out.len(), 200_000);
    }

    #[test]
    fn input_goes_on_after_the_command_closed_its_output() {
        // The command closes stdout and stderr first, then reads: the loop ends, the rest
        // of the input still arrives (checked through a file the command writes).
        let dir = tempfile::tempdir().unwrap();
        let sink = dir.path().join("sink");
        let script = format!("exec >&- 2>&-; sleep 0.2; cat > {}", sink.display());
        let (mut child, _, _) = relayed(&script, b"late input\n");
        assert!(child.wait().unwrap().success());
        assert_eq!(std::fs::read(&sink).unwrap(), b"late input\n");
    }

    #[test]
    fn a_refused_write_of_ours_closes_the_commands_pipe() {
        // Our stdout a pipe whose reader is gone: the command sees EPIPE, not a hang.
        let (r, w) = rustix::pipe::pipe().unwrap();
        drop(r);
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let mut child = piped("while :; do echo y || exit 7; done");
        copy_between(&mut child, devnull.as_fd(), [w.as_fd(), devnull.as_fd()]);
        let status = child.wait().unwrap();
        assert!(!status.success());
    }
}
