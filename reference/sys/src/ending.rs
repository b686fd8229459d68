//! The terminating signals (`SIGHUP`, `SIGINT`, `SIGQUIT`, `SIGTERM`) while a checked
//! command's jail runs. By default they end the launcher on the spot, and with it the jail
//! (its helper dies with the launcher), but nothing would then remove the mount points of
//! missing protected paths it made in the workspace (FENCE-PROTECT-12). Instead, from
//! before the jail is spawned: a signal is noted, and ends the jail (SIGKILL to its helper:
//! its init, and with it every jailed process, dies with it) as soon as the helper is
//! known. The launcher goes on as after any end of its command, lets the mount points go,
//! and only then dies of the signal it got ([`die_of`]).
//!
//! Not by blocking the signals: a blocked mask is inherited across `fork` and `exec`
//! (`std::process::Command` no longer empties it), and the jailed command would start with
//! them blocked. A process forked from the launcher puts the default actions back itself
//! ([`default_actions`]); `exec` does that for any other.
//!
//! Everything the handler calls is a single system call (`kill`) and atomics. Unix only.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signals that end a process by default and after which the workspace must be left
/// as it was found.
pub const SIGNALS: [libc::c_int; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM];

/// Whether an [`Ending`] handles [`SIGNALS`].
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The helper of the jail to end, or 0 while it is not known yet.
static JAIL: AtomicI32 = AtomicI32::new(0);
/// A pidfd of that helper (Linux), or -1: signalled rather than the pid, which may name
/// another process once the helper is reaped.
static JAIL_FD: AtomicI32 = AtomicI32::new(-1);
/// The signal noted, or 0.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

fn kill_jail() {
    #[cfg(target_os = "linux")]
    {
        let fd = JAIL_FD.load(Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: a raw system call, async-signal-safe; `fd` is a pidfd this module
            // owns and closes only after clearing JAIL_FD. A reaped helper gives ESRCH.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd,
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            return;
        }
    }
    let pid = JAIL.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: `kill` is async-signal-safe. Without a pidfd (before Linux 5.3) the pid
        // is the helper's, our child, until the launcher reaps it.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// From a handler of one of [`SIGNALS`]: where an [`Ending`] is active, note `sig` and end
/// the jail if its helper is known already. `false` where none is: the caller dies of
/// `sig` as it would have without handlers.
pub fn end_jail(sig: libc::c_int) -> bool {
    if !ACTIVE.load(Ordering::SeqCst) {
        return false;
    }
    SIGNALLED.store(sig, Ordering::SeqCst);
    kill_jail();
    true
}

extern "C" fn on_signal(sig: libc::c_int) {
    if !end_jail(sig) {
        // SAFETY: async-signal-safe calls; with the default action back, the re-raised
        // signal ends the process as it would have without us.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// Install `handler` for `sig` (restarting interrupted calls) and return the action it
/// replaced; a signal the process ignores stays ignored (`None`: nothing replaced).
pub fn install(
    sig: libc::c_int,
    handler: extern "C" fn(libc::c_int),
) -> io::Result<Option<libc::sigaction>> {
    // SAFETY: a zeroed `sigaction` is a valid value (no flags, empty mask); the handler is
    // a plain `extern "C"` function the caller keeps async-signal-safe; `old` is written by
    // the kernel before it is read.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = handler as usize;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        if libc::sigaction(sig, &act, &mut old) != 0 {
            return Err(io::Error::last_os_error());
        }
        if old.sa_sigaction == libc::SIG_IGN {
            libc::sigaction(sig, &old, std::ptr::null_mut());
            return Ok(None);
        }
        Ok(Some(old))
    }
}

/// [`SIGNALS`] handled for one jail; on drop the actions they had are put back.
pub struct Ending {
    replaced: Vec<(libc::c_int, libc::sigaction)>,
}

impl std::fmt::Debug for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ending")
            .field("handled", &self.replaced.len())
            .finish()
    }
}

impl Ending {
    /// Handle [`SIGNALS`] from now on: one that comes is noted ([`noted`]) and
    /// ends the jail once [`Ending::watch`] names it. A signal the process ignores stays
    /// ignored. One at a time per process.
    pub fn hold() -> io::Result<Ending> {
        SIGNALLED.store(0, Ordering::SeqCst);
        JAIL.store(0, Ordering::SeqCst);
        ACTIVE.store(true, Ordering::SeqCst);
        let mut ending = Ending {
            replaced: Vec::new(),
        };
        for sig in SIGNALS {
            if let Some(old) = install(sig, on_signal)? {
                ending.replaced.push((sig, old));
            }
        }
        Ok(ending)
    }

    /// The jail's helper is `helper`: a signal noted already ends it now, a later one at
    /// once.
    pub fn watch(&mut self, helper: u32) {
        #[cfg(target_os = "linux")]
        if let Some(pid) = rustix::process::Pid::from_raw(helper as i32) {
            if let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
                use std::os::fd::IntoRawFd;
                JAIL_FD.store(fd.into_raw_fd(), Ordering::SeqCst);
            }
        }
        JAIL.store(helper as i32, Ordering::SeqCst);
        if SIGNALLED.load(Ordering::SeqCst) != 0 {
            kill_jail();
        }
    }
}

/// The signal the last [`Ending`] noted, also once it is let go: what the launcher dies of
/// on its way out, whichever way it takes.
pub fn noted() -> Option<libc::c_int> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
        JAIL.store(0, Ordering::SeqCst);
        let fd = JAIL_FD.swap(-1, Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: the pidfd `watch` made and nothing else owns; no longer published.
            drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        }
        for (sig, old) in &self.replaced {
            // SAFETY: `old` is an action the kernel handed back for this signal.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// In a process forked from the launcher that does not `exec` (the jail's helper): each
/// of [`SIGNALS`] that this module handles back to its default action, as `exec` would
/// have put it; one the caller ignores stays ignored, as across `exec` (async-signal-safe).
pub fn default_actions() {
    let ours: extern "C" fn(libc::c_int) = on_signal;
    for sig in SIGNALS {
        // SAFETY: `sigaction` is async-signal-safe; `cur` is written by the kernel before
        // it is read, and only this process's own action is changed.
        unsafe {
            let mut cur: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut cur) == 0
                && cur.sa_sigaction == ours as usize
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
}

/// End this process by `sig`, as its default action would have (after the workspace was
/// put back): the exit status a caller sees is the signal's. Falls back to `128 + sig`.
pub fn die_of(sig: libc::c_int) -> ! {
    // SAFETY: plain calls on this process's own signal state.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::process::exit(128 + sig)
}
