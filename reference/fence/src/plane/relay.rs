//! The streams of a command that `gatehouse exec` runs on pipes (FENCE-JAIL-15): its
//! stdout and stderr copied to ours and our stdin to its, by one `poll(2)` loop in the
//! calling thread, no thread per stream. The loop ends once the command's stdout and
//! stderr are both closed, which for a jail is when its last process is gone. Where our
//! stdout or stderr is a terminal, what goes there is filtered as the jail's own
//! terminal's output is ([`crate::fence::control_strings`], FENCE-TTY-7).
//!
//! What it may touch: our descriptors 0, 1 and 2 (never made non-blocking: their file
//! descriptions are shared with whoever started us) and the child's pipe ends, which are
//! ours alone (the one to its stdin is made non-blocking, so that a command that does not
//! read cannot stall its output).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::fence::launch::Launched;

use rustix::event::{poll, PollFd, PollFlags};

use crate::fence::control_strings::ControlStrings;

/// How much is read at once.
const CHUNK: usize = 64 << 10;

/// How much is written at once to one of ours that is not a regular file: at most what a
/// pipe that `poll` calls writable takes without blocking (`PIPE_BUF`), so that a reader
/// who is slow on one of our streams never holds up the other.
const PIPE_BUF: usize = 4096;

/// Copy `child`'s piped stdout and stderr to ours and our stdin to its stdin, until its
/// stdout and stderr are both closed (each at the end of its data, or when ours refuses a
/// write: the command then sees its pipe closed, as it would writing to ours) and, while
/// it still reads, until it has ended. Each of ours is written only when `poll` says it
/// takes more, so a reader who does not read our stdout holds up neither our stderr nor
/// the command's input.
pub fn copy(child: &mut Launched) {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    copy_between(child, stdin.as_fd(), [stdout.as_fd(), stderr.as_fd()]);
}

/// [`copy`] with `input` in place of our stdin and `output` of our stdout and stderr.
fn copy_between(child: &mut Launched, input: BorrowedFd<'_>, output: [BorrowedFd<'_>; 2]) {
    let from = [child.stdout.take(), child.stderr.take()];
    let to_child = child.stdin.take().and_then(|fd| {
        rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::NONBLOCK)
            .ok()
            .map(|()| fd)
    });
    // Readable once the child has ended: what keeps the command's input flowing after it
    // closed its output, and stops it once it is gone.
    #[cfg(target_os = "linux")]
    let exited = crate::sys::ns::exit_notice(child.id()).ok();
    #[cfg(not(target_os = "linux"))]
    let exited: Option<OwnedFd> = None;
    let [out, err] = from;
    // Where ours is a terminal, what the command writes there is filtered as its own
    // terminal's output would be. Where both are, one filter reads both streams in the
    // order they are written, and neither is written while the other has a piece under
    // way: two filters side by side could each pass half of a sequence (an `ESC` ending
    // a piece of one, `]52;...` beginning a piece of the other) that the terminal, which
    // sees both, joins. (Both may be one terminal under two names, `/dev/pts/N` and
    // `/dev/tty`: any two terminals are taken as one.)
    let terminal = output.map(rustix::termios::isatty);
    let shared = terminal[0] && terminal[1];
    let filters = [
        terminal[0].then(ControlStrings::for_our_terminal),
        (terminal[1] && !shared).then(ControlStrings::for_our_terminal),
    ];
    let mut relay = Relay {
        outs: [Out::new(out, output[0]), Out::new(err, output[1])],
        filters,
        filter_of: [
            terminal[0].then_some(0),
            terminal[1].then_some(if shared { 0 } else { 1 }),
        ],
        shared,
        to_child,
        pending: Vec::new(),
        stdin_open: true,
        exited,
    };
    relay.run(input, output);
    if let Some(feed) = relay.to_child.take() {
        // Only where nothing says when the command ends: a thread goes on feeding it (not
        // joined: our stdin may be a terminal it never reads; it ends with the process, or
        // at the first write the closed pipe refuses).
        if let Ok(input) = input.try_clone_to_owned() {
            let pending = std::mem::take(&mut relay.pending);
            let more = relay.stdin_open;
            std::thread::spawn(move || feed_blocking(feed, pending, input, more));
        }
    }
}

/// One of the command's output streams on its way to one of ours.
struct Out {
    /// The command's end, `None` once closed.
    from: Option<OwnedFd>,
    /// Read from it (filtered where ours is a terminal), not yet written to ours.
    pending: Vec<u8>,
    /// How much of `pending` is written.
    written: usize,
    /// How much one write to ours may carry.
    limit: usize,
}

impl Out {
    fn new(from: Option<OwnedFd>, to: BorrowedFd<'_>) -> Out {
        let regular = rustix::fs::fstat(to)
            .map(|st| {
                let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
                matches!(
                    kind,
                    rustix::fs::FileType::RegularFile | rustix::fs::FileType::BlockDevice
                )
            })
            .unwrap_or(false);
        Out {
            from,
            pending: Vec::new(),
            written: 0,
            limit: if regular { CHUNK } else { PIPE_BUF },
        }
    }

    /// Whether something of this stream is still to come or to go.
    fn busy(&self) -> bool {
        self.from.is_some() || self.has_pending()
    }

    /// Whether a piece of it is under way to ours.
    fn has_pending(&self) -> bool {
        self.written < self.pending.len()
    }

    /// One write of `pending` to ours, which `poll` said takes more.
    fn write(&mut self, to: BorrowedFd<'_>) {
        let end = self.pending.len().min(self.written + self.limit);
        match rustix::io::write(to, &self.pending[self.written..end]) {
            Ok(n) => self.written += n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            // Ours refuses: the command's pipe is closed, as writing to ours would be.
            Err(_) => {
                self.from = None;
                self.pending.clear();
                self.written = 0;
            }
        }
        if self.written >= self.pending.len() {
            self.pending.clear();
            self.written = 0;
        }
    }
}

/// The loop's state.
struct Relay {
    /// The command's stdout and stderr.
    outs: [Out; 2],
    /// The filters of a terminal's control strings (FENCE-TTY-7), by slot.
    filters: [Option<ControlStrings>; 2],
    /// Which filter each stream goes through (where ours is a terminal).
    filter_of: [Option<usize>; 2],
    /// Whether both streams share filter 0 (both of ours are terminals).
    shared: bool,
    /// Our end of its stdin, `None` once closed.
    to_child: Option<OwnedFd>,
    /// Read from our stdin, not yet written to its.
    pending: Vec<u8>,
    /// Whether our stdin may still give data.
    stdin_open: bool,
    /// Readable once the child has ended (`None` once it has, or where nothing says).
    exited: Option<OwnedFd>,
}

/// What a slot of the poll set watches.
#[derive(Clone, Copy)]
enum Slot {
    /// The command's stdout (0) or stderr (1), to read.
    From(usize),
    /// Our stdout (0) or stderr (1), to write.
    To(usize),
    /// Our stdin, read only while nothing is pending.
    OurStdin,
    /// The command's stdin, written while something is pending.
    ToChild,
    /// The child's end.
    Exited,
}

impl Relay {
    /// Whether the loop goes on: output still to come or to go, or input still to feed to
    /// a command that has not ended.
    fn going(&self) -> bool {
        self.outs.iter().any(Out::busy) || (self.to_child.is_some() && self.exited.is_some())
    }

    fn run(&mut self, our_stdin: BorrowedFd<'_>, output: [BorrowedFd<'_>; 2]) {
        let mut buf = vec![0u8; CHUNK];
        while self.going() {
            let mut slots = Vec::with_capacity(6);
            let mut fds = Vec::with_capacity(6);
            // With a shared filter, nothing more is read while a piece is under way.
            let held_up = self.shared && self.outs.iter().any(Out::has_pending);
            for (i, out) in self.outs.iter().enumerate() {
                if out.has_pending() {
                    slots.push(Slot::To(i));
                    fds.push(PollFd::new(&output[i], PollFlags::OUT));
                } else if let (Some(fd), false) = (&out.from, held_up) {
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
            if let (Some(fd), true) = (&self.exited, self.to_child.is_some()) {
                slots.push(Slot::Exited);
                fds.push(PollFd::new(fd, PollFlags::IN));
            }
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                // Cannot wait any more: what is left of the command's output is dropped,
                // closing its pipes, so that it cannot block on them.
                Err(_) => {
                    for out in &mut self.outs {
                        out.from = None;
                        out.pending.clear();
                    }
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
                    Slot::From(i) => {
                        self.read_from(i, &mut buf);
                        // A shared filter reads one stream at a time: the other waits
                        // for this piece to go.
                        if self.shared && self.outs[i].has_pending() {
                            break;
                        }
                    }
                    Slot::To(i) => self.outs[i].write(output[i]),
                    Slot::OurStdin => self.read_stdin(our_stdin, &mut buf),
                    Slot::ToChild => self.write_child(),
                    Slot::Exited => {
                        self.exited = None;
                        self.to_child = None;
                    }
                }
            }
        }
        // Outputs done and the command gone: nothing more goes to it.
        if self.exited.is_some() {
            self.to_child = None;
        }
    }

    /// One read of the command's stream `i` into its `pending` (which is empty).
    fn read_from(&mut self, i: usize, buf: &mut [u8]) {
        let Some(fd) = &self.outs[i].from else { return };
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => self.close(i),
            Ok(n) => {
                let out = &mut self.outs[i];
                out.pending.clear();
                out.written = 0;
                match self.filter_of[i].and_then(|f| self.filters[f].as_mut()) {
                    Some(f) => f.filter(&buf[..n], &mut out.pending),
                    None => out.pending.extend_from_slice(&buf[..n]),
                }
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => self.close(i),
        }
    }

    /// Stream `i` ends (its end of data, or ours refused it): what its filter held goes
    /// out with the rest, once no other stream still goes through that filter.
    fn close(&mut self, i: usize) {
        self.outs[i].from = None;
        let Some(f) = self.filter_of[i] else { return };
        let others =
            (0..2).any(|j| j != i && self.filter_of[j] == Some(f) && self.outs[j].from.is_some());
        if !others {
            if let Some(filter) = self.filters[f].as_mut() {
                filter.finish(&mut self.outs[i].pending);
            }
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

/// Write all of `data` to `fd` (blocking; the feeding thread's).
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

/// After the command closed its output, where nothing says when it ends: `pending`, then
/// the rest of `input` (while `more`), fed to it with blocking writes.
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

    fn piped(script: &str) -> Launched {
        Launched::spawned(
            Command::new("/bin/sh")
                .args(["-c", script])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    }

    /// Run `script` relayed, with `input` on its stdin; what reached "our" stdout and
    /// stderr (files, read back).
    fn relayed(script: &str, input: &[u8]) -> (Launched, Vec<u8>, Vec<u8>) {
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
    fn a_reader_who_does_not_read_our_stdout_still_gets_our_stderr() {
        // Our stdout a pipe nobody reads (it fills at 64 KiB), our stderr a file: the
        // command's message on stderr after 100 KB of stdout must still come through,
        // which the test sees before it drains stdout.
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut err = tempfile::tempfile().unwrap();
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let mut child = piped("head -c 100000 /dev/zero; echo READY >&2; sleep 1");
        let (out_fd, err_fd) = (
            w.as_fd().try_clone_to_owned().unwrap(),
            err.try_clone().unwrap(),
        );
        let relay = std::thread::spawn(move || {
            copy_between(
                &mut child,
                devnull.as_fd(),
                [out_fd.as_fd(), err_fd.as_fd()],
            );
            child.wait().unwrap()
        });
        drop(w);
        let seen = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            use std::io::Seek;
            let mut text = String::new();
            err.rewind().unwrap();
            err.read_to_string(&mut text).unwrap();
            text.contains("READY")
        });
        let mut drained = Vec::new();
        std::fs::File::from(r).read_to_end(&mut drained).unwrap();
        assert!(relay.join().unwrap().success());
        assert!(seen, "stderr waited for stdout's reader");
        assert_eq!(drained.len(), 100_000);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn two_streams_to_one_terminal_cannot_join_halves_of_a_sequence() {
        // stdout ends pieces with `ESC` (4095 bytes of `ESC [ m`), stderr begins its own
        // with `]52;...`: written in turn to one slow terminal by two filters, the halves
        // met there as an OSC 52 (the red team's reproduction). One filter and one piece
        // at a time keep them apart.
        let pair = crate::sys::pty::open_pair().unwrap();
        let script = r#"
e=$(printf '\033[m'); b=$(printf ']52;c;aGVsbG8K\007Z')
A=""; i=0; while [ $i -lt 1365 ]; do A="$A$e"; i=$((i+1)); done
B=""; i=0; while [ $i -lt 256 ]; do B="$B$b"; i=$((i+1)); done
( j=0; while [ $j -lt 20 ]; do printf '%s' "$A"; j=$((j+1)); done ) &
( j=0; while [ $j -lt 20 ]; do printf '%s' "$B" >&2; j=$((j+1)); done ) &
wait
"#;
        let mut child = piped(script);
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let slave = pair.slave;
        let relay = std::thread::spawn(move || {
            copy_between(&mut child, devnull.as_fd(), [slave.as_fd(), slave.as_fd()]);
            child.wait().unwrap()
        });
        // Let the terminal fill so that both streams wait on it, then drain it.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let mut shown = Vec::new();
        let mut buf = vec![0u8; 65536];
        loop {
            let mut fds = [PollFd::new(&pair.master, PollFlags::IN)];
            let timeout = rustix::event::Timespec {
                tv_sec: 2,
                tv_nsec: 0,
            };
            if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
                break;
            }
            match rustix::io::read(&pair.master, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => shown.extend_from_slice(&buf[..n]),
            }
        }
        assert!(relay.join().unwrap().success());
        assert!(shown.len() > 100_000, "{}", shown.len());
        assert!(
            !shown.windows(3).any(|w| w == b"\x1b]5"),
            "an OSC 52 reached the terminal"
        );
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
