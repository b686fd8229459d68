//! Namespaces and process lifetime: `unshare(2)`, `clone3(2)` into new namespaces
//! (Linux 5.3; `clone(2)` with `CLONE_PIDFD`, Linux 5.2), uid/gid maps, `fork(2)`,
//! `posix_spawn(3)` into a new session, parent-death signal, pidfds, reaping, sessions,
//! process groups and the child subreaper.
//!
//! User namespaces need Linux 3.8 (unprivileged use depends on distribution settings);
//! `PR_SET_PDEATHSIG` is Linux 2.1.57; `PR_SET_CHILD_SUBREAPER` is Linux 3.4;
//! `pidfd_open(2)` is Linux 5.3 (a thread blocked in `waitid` stands in);
//! `/proc/PID/task/TID/children` needs `CONFIG_PROC_CHILDREN` (a scan of `/proc` stands in).

use std::io;

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use rustix::thread::UnshareFlags;

/// `unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
/// CLONE_NEWNET)`: one call, so the user namespace is created first and owns the others.
/// `network: false` (the `host` network mode) leaves `CLONE_NEWNET` out.
/// The caller must be single-threaded (the kernel refuses `CLONE_NEWUSER` otherwise).
pub fn unshare_all(network: bool) -> io::Result<()> {
    let mut flags = UnshareFlags::NEWUSER
        | UnshareFlags::NEWNS
        | UnshareFlags::NEWPID
        | UnshareFlags::NEWIPC
        | UnshareFlags::NEWUTS;
    if network {
        flags |= UnshareFlags::NEWNET;
    }
    // SAFETY: the flags do not include CLONE_FILES, so no file-descriptor table is split
    // between threads; the jail helper is single-threaded at this point.
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(io::Error::from)
}

/// `unshare(CLONE_NEWNET)`: a network namespace of its own for this process, owned by its
/// user namespace (the jail's helper, after [`unshare_all`] without it, while the jail's
/// init builds the mount tree: see [`super::net::NetworkHandoff`]).
pub fn unshare_network() -> io::Result<()> {
    // SAFETY: as in `unshare_all`: no CLONE_FILES, and the caller is single-threaded.
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) }.map_err(io::Error::from)
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

/// Whether this process leads its session. Read with the raw `getsid(0)`: where the
/// session's leader lies outside our PID namespace (a container started by a process that
/// kept its own session, as CI harnesses do) the kernel answers 0, and `rustix` asserts on
/// that instead of returning it. Async-signal-safe: callable between fork and exec.
pub fn leads_session() -> bool {
    // SAFETY: `getsid` takes a plain integer and touches no memory of ours.
    let sid = unsafe { libc::getsid(0) };
    sid > 0 && sid == rustix::process::getpid().as_raw_nonzero().get()
}

/// The id of this process's session as the kernel reports it here: `None` on an error,
/// `Some(0)` where the session's leader lies outside our PID namespace.
pub fn session_id() -> Option<u32> {
    // SAFETY: as in `leads_session`.
    let sid = unsafe { libc::getsid(0) };
    u32::try_from(sid).ok()
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
    reap_ended();
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
/// Before 5.9 there is no `close_range` (`ENOSYS`); 5.9 and 5.10 have it without the
/// flag and answer `EINVAL` (seen on Debian's 5.10): both take the listing.
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
    if !lacks_cloexec_range(err.raw_os_error()) {
        return Err(err);
    }
    cloexec_listed(first)
}

/// Whether `close_range`'s error says the kernel cannot do `CLOSE_RANGE_CLOEXEC` (no call,
/// or the call without the flag), rather than a real failure.
fn lacks_cloexec_range(errno: Option<i32>) -> bool {
    matches!(errno, Some(libc::ENOSYS) | Some(libc::EINVAL))
}

/// The fallback: `FD_CLOEXEC` on each descriptor from `first` listed in `/proc/self/fd`.
fn cloexec_listed(first: u32) -> io::Result<()> {
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

/// Make the calling process a child subreaper (`PR_SET_CHILD_SUBREAPER`, Linux 3.4): a
/// process orphaned below it is re-parented to it rather than to the init of its PID
/// namespace (the host's, for Landlock alone), so that whatever a command leaves behind,
/// even outside its process group, can still be found and ended by the executor.
pub fn become_subreaper() -> io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(io::Error::from)
}

/// Start `cmd` as the leader of a session of its own (`setsid(2)` between fork and exec):
/// a new process group whose id is the command's pid, and no controlling terminal.
pub fn in_new_session(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec; it only makes the
    // async-signal-safe `setsid` system call and converts an errno, allocating nothing and
    // taking no lock.
    unsafe {
        cmd.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
    }
}

/// `posix_spawn(3)` of `program` (a path: no `PATH` search) with exactly `argv` and `env`,
/// as the leader of a session of its own (`POSIX_SPAWN_SETSID`, glibc 2.26, musl 1.2.2):
/// a new process group whose id is the command's pid, and no controlling terminal, as
/// [`in_new_session`] gives, without the `fork(2)` copy of the caller that a `pre_exec`
/// costs (a `clone(CLONE_VM | CLONE_VFORK)` instead). The child's standard streams are
/// `stdio` (each above 2), its signal mask empty and `SIGPIPE` back to its default, as
/// `std` leaves them. Returns the child's pid; the caller reaps it. `Unsupported` when
/// the C library refuses the flag (an older glibc), so that the caller can take the
/// `fork` path instead; an exec failure (`ENOENT`, `ENOEXEC`, ...) is the error itself.
pub fn spawn_session_leader(
    program: &std::ffi::CStr,
    argv: &[std::ffi::CString],
    env: &[std::ffi::CString],
    stdio: [std::os::fd::BorrowedFd<'_>; 3],
) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    if stdio.iter().any(|fd| fd.as_raw_fd() <= 2) {
        return Err(io::Error::other(
            "a standard stream of the spawn is below 3",
        ));
    }
    let ptrs = |v: &[std::ffi::CString]| -> Vec<*mut libc::c_char> {
        v.iter()
            .map(|s| s.as_ptr() as *mut libc::c_char)
            .chain(std::iter::once(std::ptr::null_mut()))
            .collect()
    };
    let argv = ptrs(argv);
    let env = ptrs(env);
    let errno = |r: libc::c_int| {
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(r))
        }
    };
    struct Attr(libc::posix_spawnattr_t);
    impl Drop for Attr {
        fn drop(&mut self) {
            // SAFETY: initialised by `posix_spawnattr_init` below, destroyed once.
            unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
        }
    }
    struct Actions(libc::posix_spawn_file_actions_t);
    impl Drop for Actions {
        fn drop(&mut self) {
            // SAFETY: initialised by `posix_spawn_file_actions_init` below, destroyed once.
            unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
        }
    }
    // SAFETY: each object is initialised by its `_init` call before any other use and
    // destroyed once by its guard; every pointer handed to `posix_spawn` (the program,
    // the null-terminated `argv` and `env` arrays and the strings they point into) lives
    // until the call returns, and the child execs or exits without returning into Rust
    // (the C library's own child code runs between clone and exec, no closure of ours).
    unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        errno(libc::posix_spawnattr_init(attr.as_mut_ptr()))?;
        let mut attr = Attr(attr.assume_init());
        let flags = libc::POSIX_SPAWN_SETSID as libc::c_short
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
        match libc::posix_spawnattr_setflags(&mut attr.0, flags) {
            0 => {}
            libc::EINVAL => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the C library has no POSIX_SPAWN_SETSID",
                ))
            }
            r => return Err(io::Error::from_raw_os_error(r)),
        }
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        errno(libc::posix_spawnattr_setsigmask(&mut attr.0, set.as_ptr()))?;
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        errno(libc::posix_spawnattr_setsigdefault(
            &mut attr.0,
            set.as_ptr(),
        ))?;
        let mut actions = std::mem::MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        errno(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
        let mut actions = Actions(actions.assume_init());
        for (fd, target) in stdio.iter().zip(0..) {
            errno(libc::posix_spawn_file_actions_adddup2(
                &mut actions.0,
                fd.as_raw_fd(),
                target,
            ))?;
        }
        let mut pid: libc::pid_t = 0;
        errno(libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            &actions.0,
            &attr.0,
            argv.as_ptr(),
            env.as_ptr(),
        ))?;
        Ok(pid as u32)
    }
}

/// A descriptor that becomes readable once `child` has exited (it is not reaped): its
/// pidfd (`pidfd_open(2)`, Linux 5.3), or, where there is none, the read end of a pipe
/// whose write end a thread blocked in [`wait_exited`] closes.
pub fn exit_notice(child: u32) -> io::Result<std::os::fd::OwnedFd> {
    let pid = Pid::from_raw(child as i32).ok_or_else(|| io::Error::other("invalid pid"))?;
    if let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
        return Ok(fd);
    }
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    std::thread::spawn(move || {
        let _ = wait_exited(child);
        drop(w);
    });
    Ok(r)
}

/// A pidfd of a process that is not our child (`pidfd_open(2)`, Linux 5.3): readable once
/// it has exited. `None` where the kernel has no `pidfd_open`.
pub fn pidfd_of(pid: u32) -> Option<std::os::fd::OwnedFd> {
    let pid = Pid::from_raw(pid as i32)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// `/dev/null` for reading and writing, close-on-exec.
pub fn open_null() -> io::Result<std::os::fd::OwnedFd> {
    rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// This process's standard streams onto `/dev/null`, so that it holds no copy of the pipes
/// or the terminal it was given: whoever reads them sees them end without waiting for it.
/// Best effort: where `/dev/null` cannot be opened the streams stay.
pub fn streams_to_null() {
    if let Ok(null) = open_null() {
        streams_onto(&null);
    }
}

/// Standard streams 0, 1 and 2 onto `null`; the descriptors they were are closed.
fn streams_onto(null: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    for fd in 0..3 {
        // SAFETY: dup2 onto a standard stream of this process, which nothing in it owns as
        // an `OwnedFd`; the old descriptor is closed by the kernel.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}

/// Wait until `child` has exited, without reaping it (`waitid(P_PID, WEXITED | WNOWAIT)`):
/// as a zombie it keeps its pid, and with it the id of the process group it led, from being
/// reused, so the group can still be killed safely.
pub fn wait_exited(child: u32) -> io::Result<()> {
    use rustix::process::{WaitId, WaitIdOptions};
    let pid = Pid::from_raw(child as i32).ok_or_else(|| io::Error::other("invalid pid"))?;
    loop {
        match rustix::process::waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// As PID 1 of a PID namespace: SIGKILL every other process of the namespace and reap
/// until this process has no child left (`ECHILD`). A killed process can no longer fork
/// (a fork fails while a fatal signal is pending), and a process of the namespace that
/// outlives its parent becomes this one's child, so once this returns `Ok` no process
/// this one started, nor any they started, is left. Refused anywhere but as PID 1, where
/// `kill(-1)` would reach every process of the user. Every process of a jail runs as the
/// jail's one mapped user, without capabilities and without a way to another uid (no new
/// privileges), so the kill reaches them all; the kernel does not report a process
/// `kill(-1)` may not signal, and one such would make the wait below last as long as it.
pub fn end_the_rest_of_the_namespace() -> io::Result<()> {
    if pid() != 1 {
        return Err(io::Error::other(
            "only PID 1 of a PID namespace ends all of it",
        ));
    }
    // SAFETY: kill(2) with pid -1 signals every process the caller may signal but itself;
    // as PID 1 (checked above) those are the other processes of its PID namespace. No
    // memory is involved.
    if unsafe { libc::kill(-1, libc::SIGKILL) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) writes the status into `status`, a local this call owns.
        // `__WALL`: a child whose exit signal is not SIGCHLD (clone's) is waited for too.
        if unsafe { libc::waitpid(-1, &mut status, libc::__WALL) } >= 0 {
            continue;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(()),
            _ => return Err(e),
        }
    }
}

/// SIGKILL every process of the group `pgid`; a group already empty is not an error.
pub fn kill_group(pgid: u32) {
    if let Some(p) = Pid::from_raw(pgid as i32) {
        let _ = rustix::process::kill_process_group(p, Signal::KILL);
    }
}

/// The children of the calling process (live or zombie), from `/proc/self/task/*/children`
/// (every thread's own list: an orphan is adopted by any live thread of a subreaper), or,
/// where the kernel lacks those files, from the parent field of every `/proc/*/stat`.
pub fn children() -> Vec<u32> {
    children_of(pid())
}

/// The children of process `parent`, as [`children`] finds the caller's.
pub fn children_of(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut listed = false;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) {
        for task in tasks.flatten() {
            if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
                listed = true;
                found.extend(
                    list.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    if !listed {
        if let Ok(procs) = std::fs::read_dir("/proc") {
            for entry in procs.flatten() {
                let Some(child) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                // `pid (comm) state ppid ...`: the name may hold spaces and parentheses.
                let ppid = stat
                    .rfind(')')
                    .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                    .and_then(|p| p.parse::<u32>().ok());
                if ppid == Some(parent) {
                    found.push(child);
                }
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Whether process `pid` is in the caller's own network namespace, as the kernel names
/// both (`/proc/PID/ns/net`, Linux 3.8; the device and inode of a namespace identify it).
pub fn shares_network_namespace(pid: u32) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let theirs = std::fs::metadata(format!("/proc/{pid}/ns/net"))?;
    let ours = std::fs::metadata("/proc/thread-self/ns/net")?;
    Ok(theirs.dev() == ours.dev() && theirs.ino() == ours.ino())
}

/// End every child the calling process still has (as a subreaper, every orphan left below
/// it), and every child those leave behind in turn: SIGKILL, reap, look again, until none
/// is left or `limit` has passed. Only for a caller none of whose children is wanted: the
/// executor between two commands. Returns whether none is left.
/// The common case costs one `wait4`: once every ended child is reaped, `ECHILD` says
/// there is no child at all (of any thread), so nothing is listed. What is left is killed,
/// and the next look waits on the killed children's pidfds until one of them has ended,
/// rather than sleeping (1 ms naps where pidfds are missing).
pub fn end_children(limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if !reap_ended() {
            return true;
        }
        let left = children();
        if left.is_empty() {
            return true;
        }
        let mut ending = Vec::new();
        for child in left {
            if let Some(p) = Pid::from_raw(child as i32) {
                if let Ok(fd) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty())
                {
                    ending.push(fd);
                }
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return false;
        }
        if ending.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        let mut fds: Vec<rustix::event::PollFd<'_>> = ending
            .iter()
            .map(|fd| rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN))
            .collect();
        let left = (deadline - now).min(std::time::Duration::from_millis(100));
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
    }
}

/// Reap every already-ended child without blocking; whether any child is still left
/// (`false` only on `ECHILD`: none at all, live or zombie).
fn reap_ended() -> bool {
    loop {
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some(_)) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::CHILD) => return false,
            Ok(None) | Err(_) => return true,
        }
    }
}

/// The number of threads of this process (the entries of `/proc/self/task`).
pub fn threads() -> io::Result<usize> {
    Ok(std::fs::read_dir("/proc/self/task")?.count())
}

/// Make `cmd`'s spawn a plain `fork(2)` whose child runs `body` and leaves with its code,
/// never executing `cmd`'s program: the jail helper without a second load of this binary.
/// Refused (`Err`, nothing changed) unless this process is single-threaded, so that the
/// child inherits no lock another thread held and may run ordinary code (allocate, build
/// the jail) before it execs the jailed command. `cmd`'s standard streams and empty
/// environment apply as for an exec. The child holds a copy of the launcher's memory,
/// environment included: `body` must make whatever process the jail can reach
/// non-dumpable ([`not_dumpable`]) before any jailed code runs. In the child, first:
/// `SIGPIPE` is ignored as in a fresh Rust process, core files are off (`RLIMIT_CORE` 0),
/// and every descriptor from 3 up other than `keep` is closed, the spawn's own
/// error pipe among them, which is what tells the parent's `spawn` that the child is
/// under way. The launcher's ends of the pipes it shares with the child are closed too,
/// so the child sees them close when the launcher does. `close_range(2)` (Linux 5.9), or
/// the listing of `/proc/self/fd`.
pub fn fork_instead_of_exec(
    cmd: &mut std::process::Command,
    keep: &[i32],
    body: impl Fn() -> i32 + Send + Sync + 'static,
) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    if threads()? != 1 {
        return Err(io::Error::other(
            "the launcher has more than one thread; the helper is executed instead",
        ));
    }
    let mut keep: Vec<i32> = keep.iter().copied().filter(|fd| *fd > 2).collect();
    keep.sort_unstable();
    keep.dedup();
    // SAFETY: `pre_exec` runs the closure in the child of `fork(2)`. The process was
    // single-threaded when checked just above and the caller spawns right away (its own
    // code starts no thread in between), so the child is a copy of one thread holding no
    // lock of another: ordinary code, allocation included, is as safe there as in any
    // single-threaded process. The closure never returns into `std` (it `_exit`s), so the
    // exec that `std` would do next never happens.
    unsafe {
        cmd.pre_exec(move || {
            crate::mark::mark("fork-child");
            // SAFETY: a plain system call on this process's own state.
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            // The terminating signals' default actions, as an exec would give them (the
            // launcher may handle them, super::ending).
            super::ending::default_actions();
            // No core file: this child holds the launcher's whole memory, and a core
            // would be written in its working directory, which may be the workspace. The
            // hard limit too, so nothing it starts raises it again.
            let _ = rustix::process::setrlimit(
                rustix::process::Resource::Core,
                rustix::process::Rlimit {
                    current: Some(0),
                    maximum: Some(0),
                },
            );
            close_all_but(&keep);
            let code = body();
            libc::_exit(code)
        });
    }
    Ok(())
}

/// A jail's init made by [`clone_init`]: a child of the caller, PID 1 of its own PID
/// namespace.
#[derive(Debug)]
pub struct ClonedInit {
    /// The init's pid in the caller's PID namespace.
    pub pid: u32,
    /// A pidfd of the init (`CLONE_PIDFD`): signalled and polled without any race on its pid.
    pub pidfd: std::os::fd::OwnedFd,
}

/// The flags of [`clone_init`]: the namespaces of [`unshare_all`] but the network, which
/// the init makes itself once it knows its plan (the `host` mode makes none).
const INIT_NAMESPACES: u64 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS) as u64;

/// `struct clone_args` of `clone3(2)` as far as its first version (`CLONE_ARGS_SIZE_VER0`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
}

/// Make a jail's init straight from this process: one `clone3(2)` (Linux 5.3; the older
/// `clone(2)` with `CLONE_PIDFD`, Linux 5.2, where a filter answers `ENOSYS` to it, as
/// container runtimes' default profiles do) into a new user, mount, PID, IPC and UTS
/// namespace, as bubblewrap makes its own. No helper stays outside between this process and
/// the init: one process fewer to start, schedule, and wait for at the end. Refused (`Err`,
/// nothing made) unless this process is single-threaded, so that the child inherits no
/// lock another thread held and may run ordinary code (allocate, build the jail), as after
/// [`fork_instead_of_exec`]. The child holds a copy of the launcher's memory,
/// environment included: `body` must make itself non-dumpable ([`not_dumpable`]) before
/// any jailed code runs. In the child, before `body`: `SIGPIPE` is ignored as in a fresh
/// Rust process, the terminating signals have their default actions, core files are off
/// (`RLIMIT_CORE` 0, the hard limit too), each of `stdio` given becomes the standard stream
/// of its index (the others are this process's own), and every descriptor from 3 up other
/// than `keep` is closed, the caller's ends of the pipes among them, so that the child sees
/// them close when the caller does. `body`'s
/// code is the child's exit code; a panic in it exits with 101. The child's uid and gid
/// map are not written: the child writes its own (it is their owner, [`write_id_maps`]).
pub fn clone_init(
    stdio: [Option<std::os::fd::OwnedFd>; 3],
    keep: &[i32],
    body: impl FnOnce() -> i32,
) -> io::Result<ClonedInit> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    if threads()? != 1 {
        return Err(io::Error::other(
            "the launcher has more than one thread; no init is cloned from it",
        ));
    }
    let mut keep: Vec<i32> = keep.iter().copied().filter(|fd| *fd > 2).collect();
    keep.sort_unstable();
    keep.dedup();
    // A stream's descriptor is kept above 2, so that putting one onto its number never
    // overwrites another still to be put.
    let mut child_ends: [Option<OwnedFd>; 3] = [None, None, None];
    for (n, fd) in stdio.into_iter().enumerate() {
        child_ends[n] = match fd {
            Some(fd) if fd.as_raw_fd() <= 2 => {
                Some(rustix::io::fcntl_dupfd_cloexec(&fd, 3).map_err(io::Error::from)?)
            }
            other => other,
        };
    }
    let child_raw: [i32; 3] = std::array::from_fn(|n| {
        child_ends[n]
            .as_ref()
            .map(|fd| fd.as_raw_fd())
            .unwrap_or(-1)
    });
    let mut pidfd: libc::c_int = -1;
    let args = CloneArgs {
        flags: INIT_NAMESPACES | libc::CLONE_PIDFD as u64,
        pidfd: &mut pidfd as *mut libc::c_int as u64,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    // SAFETY: `clone3` without CLONE_VM, CLONE_VFORK or a stack is `fork(2)` with new
    // namespaces: the child gets a copy of this single-threaded process (checked above; the
    // caller starts no thread in between) and runs only the code below, which ends in
    // `_exit`. `args` and `pidfd` outlive the call, which reads the one and writes the other.
    let mut r = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
        // SAFETY: as above: `clone(2)` with no stack is a fork; with CLONE_PIDFD the kernel
        // writes the pidfd through its third argument (the parent's tid pointer on every
        // architecture's order of arguments).
        r = unsafe {
            libc::syscall(
                libc::SYS_clone,
                args.flags | libc::SIGCHLD as u64,
                0usize,
                &mut pidfd as *mut libc::c_int,
                0usize,
                0usize,
            )
        };
    }
    match r {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            crate::mark::mark("init-start");
            // SAFETY: plain system calls on this process's own state.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
            super::ending::default_actions();
            let _ = rustix::process::setrlimit(
                rustix::process::Resource::Core,
                rustix::process::Rlimit {
                    current: Some(0),
                    maximum: Some(0),
                },
            );
            for (n, fd) in child_raw.iter().enumerate() {
                // SAFETY: dup2 of a descriptor this child holds (above 2, made before the
                // clone) onto one of its standard streams; dup2 leaves the copy inheritable.
                if *fd >= 0 && unsafe { libc::dup2(*fd, n as i32) } == -1 {
                    // SAFETY: leaving at once, with nothing of this child's to flush.
                    unsafe { libc::_exit(EXIT_CLONE_FAILED) };
                }
            }
            close_all_but(&keep);
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101);
            // SAFETY: the child's end; nothing of the launcher's is flushed or run here.
            unsafe { libc::_exit(code) }
        }
        pid => {
            drop(child_ends);
            // SAFETY: the kernel wrote a new pidfd, owned by nothing else in this process.
            let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
            Ok(ClonedInit {
                pid: pid as u32,
                pidfd,
            })
        }
    }
}

/// The exit code of a cloned init that could not set its standard streams.
const EXIT_CLONE_FAILED: i32 = 125;

/// Send `SIGKILL` to the process of `pidfd` (`pidfd_send_signal(2)`, Linux 5.1).
pub fn kill_pidfd(pidfd: &std::os::fd::OwnedFd) -> io::Result<()> {
    rustix::process::pidfd_send_signal(pidfd, Signal::KILL).map_err(io::Error::from)
}

/// Reap our child `pid`: its raw wait status. `block: false` returns `None` while it runs.
pub fn reap(pid: u32, block: bool) -> io::Result<Option<i32>> {
    let pid = Pid::from_raw(pid as i32).ok_or_else(|| io::Error::other("invalid pid"))?;
    let options = match block {
        true => WaitOptions::empty(),
        false => WaitOptions::NOHANG,
    };
    loop {
        match rustix::process::waitpid(Some(pid), options) {
            Ok(Some((_, status))) => return Ok(Some(status.as_raw())),
            Ok(None) => return Ok(None),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// `PR_SET_DUMPABLE` 0 (Linux 2.3.20): no process without `CAP_SYS_PTRACE` may trace this
/// one or read its memory (`/proc/PID/mem`, `environ`), and its `/proc` files belong to
/// root; inherited by `fork`, reset by `exec`.
pub fn not_dumpable() -> io::Result<()> {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(io::Error::from)
}

/// Close every descriptor from 3 up except `keep` (sorted, each above 2).
fn close_all_but(keep: &[i32]) {
    let mut from: u32 = 3;
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &k in keep {
        if (k as u32) > from {
            ranges.push((from, k as u32 - 1));
        }
        from = k as u32 + 1;
    }
    ranges.push((from, u32::MAX));
    for (lo, hi) in ranges {
        // SAFETY: in the forked child of `fork_instead_of_exec`, whose descriptors other
        // than `keep` belong to no one there any more.
        let r = unsafe { libc::syscall(libc::SYS_close_range, lo, hi, 0) };
        if r != 0 {
            let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
                .map(|d| {
                    d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            for fd in listed {
                if fd >= lo as i32 && (fd as i64) <= hi as i64 {
                    // SAFETY: as above; the listing's own descriptor gives EBADF.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_the_cloexec_flag_takes_the_listing() {
        // 5.10 answers EINVAL to CLOSE_RANGE_CLOEXEC; before 5.9 there is no close_range.
        assert!(lacks_cloexec_range(Some(libc::EINVAL)));
        assert!(lacks_cloexec_range(Some(libc::ENOSYS)));
        assert!(!lacks_cloexec_range(Some(libc::EBADF)));
        assert!(!lacks_cloexec_range(None));
    }

    #[test]
    fn the_listing_marks_inherited_descriptors_close_on_exec() {
        let file = std::fs::File::open("/proc/self/status").unwrap();
        use std::os::fd::AsRawFd as _;
        // SAFETY: dup returns a new descriptor (without FD_CLOEXEC) that this test owns
        // and closes below; the original stays owned by `file`.
        let fd = unsafe { libc::dup(file.as_raw_fd()) };
        assert!(fd > 2);
        // SAFETY: F_GETFD only reads the flags of the descriptor this test owns.
        let before = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(before & libc::FD_CLOEXEC, 0);
        cloexec_listed(fd as u32).unwrap();
        // SAFETY: as above.
        let after = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        // SAFETY: the test owns `fd` and closes it once.
        unsafe { libc::close(fd) };
        assert_ne!(after & libc::FD_CLOEXEC, 0);
    }
}
