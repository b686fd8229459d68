//! Namespaces and process lifetime: `unshare(2)`, uid/gid maps, `fork(2)`, parent-death
//! signal, reaping.
//!
//! User namespaces need Linux 3.8 (unprivileged use depends on distribution settings);
//! `PR_SET_PDEATHSIG` is Linux 2.1.57.
#![allow(unsafe_code)]

use std::io;

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use rustix::thread::UnshareFlags;

/// `unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
/// CLONE_NEWNET)`: one call, so the user namespace is created first and owns the others.
/// The caller must be single-threaded (the kernel refuses `CLONE_NEWUSER` otherwise).
pub fn unshare_all() -> io::Result<()> {
    let flags = UnshareFlags::NEWUSER
        | UnshareFlags::NEWNS
        | UnshareFlags::NEWPID
        | UnshareFlags::NEWIPC
        | UnshareFlags::NEWUTS
        | UnshareFlags::NEWNET;
    // SAFETY: the flags do not include CLONE_FILES, so no file-descriptor table is split
    // between threads; the jail helper is single-threaded at this point.
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(io::Error::from)
}

/// Map `uid` and `gid` inside the new user namespace to the same ids outside (root stays
/// 0 → 0; its capabilities are dropped later). `setgroups` is denied first, as the kernel
/// requires before an unprivileged `gid_map` write.
pub fn write_id_maps(uid: u32, gid: u32) -> io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny").or_else(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Ok(())
        } else {
            Err(e)
        }
    })?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// The caller's real uid and gid.
pub fn ids() -> (u32, u32) {
    (
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
    )
}

/// Which side of a fork we are on.
pub enum Forked {
    /// The parent, with the child's pid.
    Parent(i32),
    /// The child.
    Child,
}

/// `fork(2)`. Only for single-threaded callers (the jail helper before it starts threads).
pub fn fork() -> io::Result<Forked> {
    // SAFETY: the jail helper calls this while single-threaded, so the child inherits no
    // lock held by another thread; the child only continues the helper's own code.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Ask the kernel to SIGKILL us when the parent thread exits; then check the parent is
/// still `expected` (it may have died before the request was made).
pub fn die_with_parent(expected: Option<u32>) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if let Some(expected) = expected {
        let ppid = rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32);
        if ppid != Some(expected) {
            return Err(io::Error::other("the parent process is gone"));
        }
    }
    Ok(())
}

/// Our pid (1 when we are the init of a new PID namespace).
pub fn pid() -> u32 {
    rustix::process::getpid().as_raw_nonzero().get() as u32
}

/// Parent pid.
pub fn parent_pid() -> u32 {
    rustix::process::getppid()
        .map(|p| p.as_raw_nonzero().get() as u32)
        .unwrap_or(0)
}

/// How a child ended, as a shell reports it: the exit code, or 128 + the signal number.
pub fn exit_code(status: WaitStatus) -> i32 {
    if let Some(code) = status.exit_status() {
        code
    } else if let Some(sig) = status.terminating_signal() {
        128 + sig
    } else {
        125
    }
}

/// Wait for `child` to end, reaping every other child that ends meanwhile (the duty of a
/// PID namespace's init). Returns `child`'s exit code.
pub fn reap_until(child: i32) -> io::Result<i32> {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) => {
                if pid.as_raw_nonzero().get() == child {
                    return Ok(exit_code(status));
                }
            }
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reap every already-ended child without blocking (orphans adopted by an init).
pub fn reap_orphans() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

/// Wait for one specific child.
pub fn wait_for(child: i32) -> io::Result<i32> {
    let pid = Pid::from_raw(child).ok_or_else(|| io::Error::other("invalid pid"))?;
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return Ok(exit_code(status)),
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Set the host name of the (new) UTS namespace.
pub fn set_hostname(name: &str) -> io::Result<()> {
    rustix::system::sethostname(name.as_bytes()).map_err(io::Error::from)
}

/// Mark every file descriptor from `first` upwards close-on-exec, so that nothing the
/// helper inherited from the agent (or from whatever started the agent) reaches the jailed
/// command (FENCE-JAIL-9). `close_range(2)` with `CLOSE_RANGE_CLOEXEC` (Linux 5.11);
/// on older kernels each descriptor listed in `/proc/self/fd` gets `FD_CLOEXEC`.
pub fn cloexec_from(first: u32) -> io::Result<()> {
    // SAFETY: with CLOSE_RANGE_CLOEXEC the call only sets a flag on descriptors and closes
    // none, so no descriptor owned elsewhere in this process is invalidated.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::ENOSYS) {
        return Err(err);
    }
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd >= first as i32)
        .collect();
    for fd in fds {
        // SAFETY: F_SETFD only changes the descriptor's close-on-exec flag; a descriptor
        // that was the directory listing's own and is closed by now yields EBADF, ignored.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}
