//! Pseudo-terminals and the caller's terminal (Linux): a pair from `/dev/ptmx` as this
//! process sees it (`posix_openpt(3)`; the slave through `TIOCGPTPEER`, Linux 4.13, or
//! `ptsname` before it), a command made the leader of a session whose controlling terminal
//! is that slave (`setsid(2)`, `TIOCSCTTY`), and the caller's terminal in raw mode for the
//! duration of a relay, restored on every exit path: when the guard drops, and from the
//! handlers of the terminating signals (`SIGHUP`, `SIGINT`, `SIGQUIT`, `SIGTERM`), which
//! restore and then die of the same signal. The window size is copied to the relay's
//! master at start and from the `SIGWINCH` handler (`TIOCGWINSZ`/`TIOCSWINSZ`).
//!
//! Used by `gatehouse::fence::tty` only. Everything a signal handler calls is a single system
//! call (`ioctl`, `sigaction`, `kill`) on descriptors and a saved `termios` kept in statics.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use rustix::pty::{grantpt, ioctl_tiocgptpeer, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcgetattr, tcgetwinsize, tcsetattr, tcsetwinsize, OptionalActions, Termios};

/// A pseudo-terminal's two ends, both close-on-exec and neither a controlling terminal of
/// this process.
#[derive(Debug)]
pub struct Pair {
    /// The master: whoever holds it types into the terminal and reads what it shows.
    pub master: OwnedFd,
    /// The slave: the terminal a command is given.
    pub slave: OwnedFd,
}

/// Open a new pseudo-terminal from `/dev/ptmx` as this process's mount tree has it: in a
/// jail, the jail's own devpts instance.
pub fn open_pair() -> io::Result<Pair> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let master = openpt(flags)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let slave = match ioctl_tiocgptpeer(&master, flags) {
        Ok(s) => s,
        Err(_) => {
            let name = ptsname(&master, Vec::new())?;
            rustix::fs::open(
                name.as_c_str(),
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?
        }
    };
    Ok(Pair { master, slave })
}

/// Give `cmd` the terminal `slave` as its standard streams and as the controlling terminal
/// of a new session it leads: between fork and exec it calls `setsid` (a process that
/// already leads its session keeps it) and `TIOCSCTTY` on descriptor 0 (the slave by then).
pub fn controlling(cmd: &mut Command, slave: OwnedFd) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    // SAFETY: the closure runs in the forked child before exec, after the standard streams
    // were set up; it makes only the async-signal-safe system calls `setsid`, `getsid`,
    // `getpid` and `ioctl(0, TIOCSCTTY)`, allocating nothing and taking no lock.
    // Descriptor 0 is open for the whole closure (the slave, just duplicated onto it), so
    // borrowing it is sound.
    unsafe {
        cmd.pre_exec(|| {
            if let Err(e) = rustix::process::setsid() {
                if !super::ns::leads_session() {
                    return Err(io::Error::from(e));
                }
            }
            rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0)).map_err(io::Error::from)
        });
    }
    Ok(())
}

/// The saved settings of the caller's terminal while a [`RawMode`] holds it; never freed
/// (one small leak per relay), so a signal handler can always read what it points to.
static SAVED: AtomicPtr<Termios> = AtomicPtr::new(std::ptr::null_mut());
/// The caller's terminal while a [`RawMode`] holds it, or -1.
static OUTER: AtomicI32 = AtomicI32::new(-1);
/// The relay's master while a [`RawMode`] follows the window size into it, or -1.
static MASTER: AtomicI32 = AtomicI32::new(-1);

/// The signals that end the process by default and after which the terminal must be back.
const ENDING: [libc::c_int; 4] = super::ending::SIGNALS;

fn restore_saved() {
    let (p, fd) = (SAVED.load(Ordering::SeqCst), OUTER.load(Ordering::SeqCst));
    if p.is_null() || fd < 0 {
        return;
    }
    // SAFETY: a non-null SAVED points to a leaked, never-freed Termios (see `RawMode::enter`),
    // and OUTER names the terminal the guard holds open until it clears OUTER first.
    let (saved, fd) = unsafe { (&*p, BorrowedFd::borrow_raw(fd)) };
    let _ = tcsetattr(fd, OptionalActions::Now, saved);
}

fn copy_window() {
    let (from, to) = (OUTER.load(Ordering::SeqCst), MASTER.load(Ordering::SeqCst));
    if from < 0 || to < 0 {
        return;
    }
    // SAFETY: both descriptors stay open while they are published (the guard and the relay
    // clear the statics before closing them).
    let (from, to) = unsafe { (BorrowedFd::borrow_raw(from), BorrowedFd::borrow_raw(to)) };
    if let Ok(size) = tcgetwinsize(from) {
        let _ = tcsetwinsize(to, size);
    }
}

extern "C" fn on_ending(sig: libc::c_int) {
    restore_saved();
    // A jail running: it is ended, and the launcher dies of the signal once it has put
    // the workspace back (super::ending).
    if super::ending::end_jail(sig) {
        return;
    }
    // SAFETY: `signal` and `raise` are async-signal-safe; with the default action back, the
    // re-raised signal ends the process as it would have without us.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

extern "C" fn on_winch(_: libc::c_int) {
    copy_window();
}

fn put_back(sig: libc::c_int, old: &libc::sigaction) {
    // SAFETY: `old` is an action the kernel handed back for this signal.
    unsafe {
        libc::sigaction(sig, old, std::ptr::null_mut());
    }
}

/// The caller's terminal in raw mode until this guard drops (or a terminating signal
/// arrives); one at a time per process.
#[derive(Debug)]
pub struct RawMode {
    fd: RawFd,
    saved: &'static Termios,
    replaced: Vec<(libc::c_int, SigAction)>,
}

/// A replaced signal action, kept to put back.
struct SigAction(libc::sigaction);

impl std::fmt::Debug for SigAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("sigaction")
    }
}

impl RawMode {
    /// Save `terminal`'s settings, install the handlers, then switch it to raw mode.
    /// `terminal` must stay open until the guard drops (the CLI passes its standard input).
    pub fn enter(terminal: BorrowedFd<'_>) -> io::Result<RawMode> {
        let saved: &'static Termios = Box::leak(Box::new(tcgetattr(terminal)?));
        let fd = terminal.as_raw_fd();
        SAVED.store(saved as *const Termios as *mut Termios, Ordering::SeqCst);
        OUTER.store(fd, Ordering::SeqCst);
        let mut guard = RawMode {
            fd,
            saved,
            replaced: Vec::new(),
        };
        for sig in ENDING {
            if let Some(old) = super::ending::install(sig, on_ending)? {
                guard.replaced.push((sig, SigAction(old)));
            }
        }
        if let Some(winch) = super::ending::install(libc::SIGWINCH, on_winch)? {
            guard.replaced.push((libc::SIGWINCH, SigAction(winch)));
        }
        let mut raw = saved.clone();
        raw.make_raw();
        tcsetattr(terminal, OptionalActions::Drain, &raw)?;
        Ok(guard)
    }

    /// Copy the terminal's window size into `master` now and on every `SIGWINCH`, until
    /// [`RawMode::stop_following`] or the guard drops.
    pub fn follow_window(&self, master: &OwnedFd) {
        MASTER.store(master.as_raw_fd(), Ordering::SeqCst);
        copy_window();
    }

    /// Stop copying the window size (before the master closes).
    pub fn stop_following(&self) {
        MASTER.store(-1, Ordering::SeqCst);
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        MASTER.store(-1, Ordering::SeqCst);
        // SAFETY: the terminal was open when the guard was made and its owner (the CLI's
        // standard input) outlives the guard.
        let fd = unsafe { BorrowedFd::borrow_raw(self.fd) };
        let _ = tcsetattr(fd, OptionalActions::Now, self.saved);
        for (sig, old) in &self.replaced {
            put_back(*sig, &old.0);
        }
        OUTER.store(-1, Ordering::SeqCst);
        SAVED.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

/// The line discipline of the terminal `fd` (`TIOCGETD`; 0 is `N_TTY`).
pub fn line_discipline(fd: impl AsFd) -> io::Result<i32> {
    let mut ldisc: libc::c_int = -1;
    // SAFETY: TIOCGETD writes one int through the pointer, which points to a live local.
    let r = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::TIOCGETD, &mut ldisc) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ldisc)
}
