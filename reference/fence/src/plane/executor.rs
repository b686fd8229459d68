//! The executor: a long-lived process already inside the fence (the helper's `serve`
//! action) that runs one command per request and answers in the protocol. Because the
//! fence is set up once per executor, a warm request costs a spawn and an exec: on Linux a
//! `posix_spawn` (a `vfork`, not a `fork` copying the executor), its streams fed and read
//! by one `poll` loop with the command's pidfd, no thread started.
//!
//! Every command runs as the leader of a session and process group of its own, and when it
//! ends (or its deadline passes) the whole group is killed: nothing a call started outlives
//! the call (FENCE-PLANE-5), PID namespace or not. On Linux the executor is also a child
//! subreaper, so a process that left the group (`setsid`, a double fork) is re-parented to
//! it and ended too; it reaps every orphan between requests (inside a PID namespace it is
//! PID 1 and would inherit them anyway).

#[cfg(target_os = "linux")]
use std::ffi::CString;
use std::io::{BufRead, Write};
#[cfg(target_os = "linux")]
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::protocol::{ExecRequest, ExecutorMessage, ExitInfo};
use crate::fence::{Enforcement, Plan};

/// Default cap on each output stream.
pub const DEFAULT_MAX_OUTPUT: usize = 16 << 20;

/// Serve requests from stdin until it closes; returns the exit code.
pub fn serve(plan: &Plan, enforcement: &Enforcement) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    // Best effort: without it (a kernel before 3.4) the process group still holds, and
    // only what left it escapes to the namespace's init.
    #[cfg(target_os = "linux")]
    let _ = crate::sys::ns::become_subreaper();
    let ready = ExecutorMessage::Ready {
        pid: std::process::id(),
        enforcement: enforcement.clone(),
    };
    if write_message(&mut out, &ready).is_err() {
        return 1;
    }
    let origin = std::env::current_dir().ok();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let msg = match serde_json::from_str::<ExecRequest>(&line) {
            Ok(req) => run_one(plan, &req, origin.as_deref()),
            Err(e) => ExecutorMessage::Done {
                id: 0,
                exit: ExitInfo {
                    code: Some(crate::exit::SETUP_FAILED),
                    signal: None,
                },
                stdout: Vec::new(),
                stderr: format!("gatehouse executor: bad request: {e}\n").into_bytes(),
                timed_out: false,
                truncated: false,
            },
        };
        if write_message(&mut out, &msg).is_err() {
            break;
        }
        #[cfg(target_os = "linux")]
        crate::sys::ns::reap_orphans();
    }
    0
}

fn write_message(out: &mut impl Write, msg: &ExecutorMessage) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// A command under way: its pid (its session's and group's id) and our ends of its streams.
struct Started {
    pid: u32,
    /// The write end of its stdin, when the request gave input.
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

fn run_one(plan: &Plan, req: &ExecRequest, origin: Option<&Path>) -> ExecutorMessage {
    let failed = |code: i32, msg: String| ExecutorMessage::Done {
        id: req.id,
        exit: ExitInfo {
            code: Some(code),
            signal: None,
        },
        stdout: Vec::new(),
        stderr: msg.into_bytes(),
        timed_out: false,
        truncated: false,
    };
    let Some(program) = req.argv.first() else {
        return failed(crate::exit::SETUP_FAILED, "empty command\n".into());
    };
    // The command starts in this process's working directory: a relative one is taken
    // from where the executor started, as a spawn's own `chdir` would.
    let cwd = req.cwd.as_ref().unwrap_or(&plan.cwd);
    let cwd = origin.map(|o| o.join(cwd)).unwrap_or_else(|| cwd.clone());
    let started = std::env::set_current_dir(&cwd).and_then(|()| start(plan, req));
    let started = match started {
        Ok(s) => s,
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                crate::exit::NOT_FOUND
            } else {
                crate::exit::CANNOT_EXECUTE
            };
            return failed(
                code,
                format!("gatehouse executor: cannot run {program}: {e}\n"),
            );
        }
    };
    let max = req.max_output.unwrap_or(DEFAULT_MAX_OUTPUT);
    let deadline = req
        .timeout_ms
        .map(|ms| Instant::now() + Duration::from_millis(ms));
    let w = watch(
        started,
        req.stdin.as_deref().unwrap_or_default(),
        max,
        deadline,
        end_leftovers,
    );
    ExecutorMessage::Done {
        id: req.id,
        exit: w.exit,
        stdout: w.stdout.kept,
        stderr: w.stderr.kept,
        timed_out: w.timed_out,
        truncated: w.stdout.truncated || w.stderr.truncated,
    }
}

/// Start the request's command in the current directory, as the leader of a session (or,
/// off Linux, a process group) of its own, so that its end, or its deadline, kills
/// whatever it started.
fn start(plan: &Plan, req: &ExecRequest) -> std::io::Result<Started> {
    #[cfg(target_os = "linux")]
    if let Some(started) = spawn_direct(plan, req)? {
        return Ok(started);
    }
    spawn_forked(plan, req)
}

/// The warm path's spawn: the program looked for in the plan's `PATH` here, as
/// `execvp(3)` looks, and each candidate spawned with `posix_spawn` and
/// `POSIX_SPAWN_SETSID` (a `vfork`, not a `fork` copying this process). A candidate the
/// kernel will not execute (`EACCES`: a directory of `PATH` that Landlock hides, on the
/// Landlock-only fence, is still there to `stat`) passes the search on to the next, as
/// `execvp` does. `None` for what only the forking spawn does as `execvp` would: nothing
/// found or executable (the error it reports), a file without `#!` (glibc's `execvp` runs
/// it with `/bin/sh`), a C library without the flag, a NUL byte (refused there with its
/// own error).
#[cfg(target_os = "linux")]
fn spawn_direct(plan: &Plan, req: &ExecRequest) -> std::io::Result<Option<Started>> {
    use std::os::unix::ffi::OsStrExt;
    let path = plan
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let name = &req.argv[0];
    let searched = !name.contains('/');
    let Ok(argv) = req
        .argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
    else {
        return Ok(None);
    };
    let Ok(env) = plan
        .env
        .iter()
        .map(|(k, v)| CString::new(format!("{k}={v}")))
        .collect::<Result<Vec<_>, _>>()
    else {
        return Ok(None);
    };
    let flags = rustix::pipe::PipeFlags::CLOEXEC;
    let (stdin_r, stdin_w) = match req.stdin {
        Some(_) => {
            let (r, w) = rustix::pipe::pipe_with(flags)?;
            (r, Some(w))
        }
        None => (
            rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?,
            None,
        ),
    };
    let (stdout_r, stdout_w) = rustix::pipe::pipe_with(flags)?;
    let (stderr_r, stderr_w) = rustix::pipe::pipe_with(flags)?;
    for program in crate::fence::jail::program_candidates(name, path) {
        let Ok(program) = CString::new(program.as_os_str().as_bytes()) else {
            return Ok(None);
        };
        let spawned = crate::sys::ns::spawn_session_leader(
            &program,
            &argv,
            &env,
            [stdin_r.as_fd(), stdout_w.as_fd(), stderr_w.as_fd()],
        );
        match spawned {
            Ok(pid) => {
                return Ok(Some(Started {
                    pid,
                    stdin: stdin_w,
                    stdout: stdout_r,
                    stderr: stderr_r,
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => return Ok(None),
            Err(e) => match e.raw_os_error() {
                Some(libc::ENOEXEC) => return Ok(None),
                // `execvp`'s own list of errors that move the search on.
                Some(
                    libc::EACCES
                    | libc::ENOENT
                    | libc::ENOTDIR
                    | libc::ESTALE
                    | libc::ENODEV
                    | libc::ETIMEDOUT,
                ) if searched => continue,
                _ => return Err(e),
            },
        }
    }
    Ok(None)
}

/// The spawn through `std` with a step between fork and exec (`setsid`; off Linux, a
/// process group of its own): everything [`spawn_direct`] leaves to it.
fn spawn_forked(plan: &Plan, req: &ExecRequest) -> std::io::Result<Started> {
    let mut cmd = Command::new(&req.argv[0]);
    cmd.args(&req.argv[1..])
        .env_clear()
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stdin(if req.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(target_os = "linux")]
    crate::sys::ns::in_new_session(&mut cmd);
    #[cfg(not(target_os = "linux"))]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    // Dropping the `Child` neither waits nor kills: the pid is reaped in `watch`.
    let mut child = cmd.spawn()?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        // Both were asked for as pipes above.
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other("the command's outputs are not pipes"));
    };
    Ok(Started {
        pid: child.id(),
        stdin: child.stdin.take().map(OwnedFd::from),
        stdout: OwnedFd::from(stdout),
        stderr: OwnedFd::from(stderr),
    })
}

/// One output stream, kept up to a cap.
struct Capture {
    kept: Vec<u8>,
    max: usize,
    truncated: bool,
}

impl Capture {
    fn new(max: usize) -> Capture {
        Capture {
            kept: Vec::new(),
            max,
            truncated: false,
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = self.max.saturating_sub(self.kept.len());
        if bytes.len() > room {
            self.truncated = true;
        }
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// What a command did.
struct Watched {
    exit: ExitInfo,
    stdout: Capture,
    stderr: Capture,
    timed_out: bool,
}

/// The descriptors [`watch`] polls, by slot.
const OUT: usize = 0;
const ERR: usize = 1;
const FEED: usize = 2;
const EXITED: usize = 3;

/// What one `poll` said.
enum Polled {
    /// These slots are ready.
    Ready(Vec<usize>),
    /// The deadline passed.
    Expired,
    /// Interrupted: look again.
    Again,
    /// Polling failed.
    Broken,
}

/// Feed the command its input and collect its output in this one thread (`poll(2)`; no
/// thread per stream), until its leader has exited or its deadline has passed, then kill
/// it. Once the leader has exited: the group goes (the leader, a zombie until reaped,
/// still holds the group's id, so the kill reaches only what the command started), the
/// leader is reaped, `leftovers` ends whatever left the group (re-parented to us as the
/// subreaper, FENCE-PLANE-5), and what they all wrote is read to the end.
fn watch(
    s: Started,
    input: &[u8],
    max: usize,
    deadline: Option<Instant>,
    leftovers: impl Fn(),
) -> Watched {
    let pid = s.pid;
    let mut captured = [Capture::new(max), Capture::new(max)];
    let mut streams = [Some(s.stdout), Some(s.stderr)];
    // Our end of its stdin, non-blocking so that a command that does not read cannot stall
    // the output; closed once all is written, so that it sees the end of its input.
    let mut feed = s.stdin.filter(|_| !input.is_empty()).and_then(|fd| {
        rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::NONBLOCK)
            .ok()
            .map(|()| fd)
    });
    let mut fed = 0;
    let mut exited = exit_notice(pid).ok();
    if exited.is_none() {
        // Nothing would say when it ends: it does not run unwatched.
        kill_group(pid);
    }
    let mut timed_out = false;
    let mut exit = None;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        if exited.is_none() && exit.is_none() {
            kill_group(pid);
            exit = Some(reap(pid));
            leftovers();
            feed = None;
        }
        if exit.is_some() && streams.iter().all(Option::is_none) {
            break;
        }
        let timeout = match (exit.is_none() && !timed_out, deadline) {
            (true, Some(d)) => {
                let left = d.saturating_duration_since(Instant::now());
                Some(Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                })
            }
            _ => None,
        };
        let polled = {
            let watched = [
                (OUT, streams[OUT].as_ref(), PollFlags::IN),
                (ERR, streams[ERR].as_ref(), PollFlags::IN),
                (FEED, feed.as_ref(), PollFlags::OUT),
                (EXITED, exited.as_ref(), PollFlags::IN),
            ];
            let mut slots = Vec::with_capacity(4);
            let mut fds = Vec::with_capacity(4);
            for (slot, fd, flags) in watched {
                if let Some(fd) = fd {
                    slots.push(slot);
                    fds.push(PollFd::new(fd, flags));
                }
            }
            match poll(&mut fds, timeout.as_ref()) {
                Ok(0) if timeout.is_some() => Polled::Expired,
                Ok(_) => Polled::Ready(
                    slots
                        .into_iter()
                        .zip(&fds)
                        .filter(|(_, fd)| !fd.revents().is_empty())
                        .map(|(slot, _)| slot)
                        .collect(),
                ),
                Err(rustix::io::Errno::INTR) => Polled::Again,
                Err(_) => Polled::Broken,
            }
        };
        let ready = match polled {
            Polled::Ready(ready) => ready,
            Polled::Again => continue,
            Polled::Expired => {
                timed_out = true;
                kill_group(pid);
                continue;
            }
            Polled::Broken => {
                // Cannot wait any more: end it, and keep nothing more of its output.
                kill_group(pid);
                exited = None;
                streams = [None, None];
                continue;
            }
        };
        for slot in ready {
            match slot {
                OUT | ERR => {
                    let Some(fd) = &streams[slot] else { continue };
                    match rustix::io::read(fd, &mut buf) {
                        Ok(0) => streams[slot] = None,
                        Ok(n) => captured[slot].take(&buf[..n]),
                        Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                        Err(_) => streams[slot] = None,
                    }
                }
                FEED => {
                    let Some(fd) = &feed else { continue };
                    match rustix::io::write(fd, &input[fed..]) {
                        Ok(n) => {
                            fed += n;
                            if fed >= input.len() {
                                feed = None;
                            }
                        }
                        Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                        Err(_) => feed = None,
                    }
                }
                _ => exited = None,
            }
        }
    }
    let [stdout, stderr] = captured;
    Watched {
        exit: exit.unwrap_or(ExitInfo {
            code: Some(crate::exit::SETUP_FAILED),
            signal: None,
        }),
        stdout,
        stderr,
        timed_out,
    }
}

/// End whatever the command left outside its group: its orphans, re-parented to the
/// executor as the subreaper (or as the PID namespace's init).
fn end_leftovers() {
    #[cfg(target_os = "linux")]
    crate::sys::ns::end_children(Duration::from_secs(5));
}

/// Reap `pid` and say how it ended.
fn reap(pid: u32) -> ExitInfo {
    let failed = ExitInfo {
        code: Some(crate::exit::SETUP_FAILED),
        signal: None,
    };
    let Some(p) = rustix::process::Pid::from_raw(pid as i32) else {
        return failed;
    };
    loop {
        match rustix::process::waitpid(Some(p), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => {
                return ExitInfo {
                    code: status.exit_status(),
                    signal: status.terminating_signal(),
                }
            }
            Err(rustix::io::Errno::INTR) => continue,
            Ok(None) | Err(_) => return failed,
        }
    }
}

/// A descriptor that becomes readable once `pid` has exited (not reaped).
fn exit_notice(pid: u32) -> std::io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        crate::sys::ns::exit_notice(pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let (r, w) = rustix::pipe::pipe()?;
        rustix::io::fcntl_setfd(&r, rustix::io::FdFlags::CLOEXEC)?;
        rustix::io::fcntl_setfd(&w, rustix::io::FdFlags::CLOEXEC)?;
        std::thread::spawn(move || {
            let _ = wait_exited(pid);
            drop(w);
        });
        Ok(r)
    }
}

/// Wait until the child `pid` has exited, leaving it to be reaped.
#[cfg(not(target_os = "linux"))]
fn wait_exited(pid: u32) -> std::io::Result<()> {
    {
        use rustix::process::{WaitId, WaitIdOptions};
        let p = rustix::process::Pid::from_raw(pid as i32)
            .ok_or_else(|| std::io::Error::other("invalid pid"))?;
        loop {
            match rustix::process::waitid(
                WaitId::Pid(p),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// SIGKILL the process group `pid` leads (or led: the leader may be a zombie).
fn kill_group(pid: u32) {
    #[cfg(target_os = "linux")]
    crate::sys::ns::kill_group(pid);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = std::process::Command::new("/bin/kill")
            .arg("-KILL")
            .arg(format!("-{pid}"))
            .status();
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;
    use crate::fence::{Action, BackendKind};

    fn plan() -> Plan {
        Plan {
            backend: BackendKind::Off,
            steps: Vec::new(),
            action: Action::Serve { listener: None },
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: "/".into(),
            parent_pid: None,
            #[cfg(feature = "test-faults")]
            fault: None,
            host_network: false,
        }
    }

    /// Start and watch `argv` as the executor does, without chdir (the tests share this
    /// process) and without ending leftovers (the other tests' children are ours too).
    fn run(argv: &[&str], input: Option<Vec<u8>>, max: usize, timeout_ms: Option<u64>) -> Watched {
        let req = ExecRequest {
            id: 1,
            argv: argv.iter().map(|a| a.to_string()).collect(),
            cwd: None,
            stdin: input,
            timeout_ms,
            max_output: Some(max),
        };
        let started = start(&plan(), &req).expect("started");
        let deadline = timeout_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
        watch(
            started,
            req.stdin.as_deref().unwrap_or_default(),
            max,
            deadline,
            || {},
        )
    }

    fn text(c: &Capture) -> String {
        String::from_utf8_lossy(&c.kept).into_owned()
    }

    #[test]
    fn input_past_a_pipe_arrives_whole_and_output_past_the_cap_is_cut() {
        let w = run(
            &["/bin/sh", "-c", "wc -c; head -c 300000 /dev/zero >&2"],
            Some(vec![b'x'; 1 << 20]),
            100_000,
            None,
        );
        assert_eq!(w.exit.code, Some(0));
        assert_eq!(text(&w.stdout).trim(), (1 << 20).to_string());
        assert!(!w.stdout.truncated);
        assert_eq!(w.stderr.kept.len(), 100_000);
        assert!(w.stderr.truncated);
    }

    #[test]
    fn input_the_command_never_reads_does_not_hold_the_call() {
        let w = run(&["true"], Some(vec![b'x'; 1 << 20]), 1 << 10, None);
        assert_eq!(w.exit.code, Some(0));
        assert!(!w.timed_out);
    }

    #[test]
    fn the_command_leads_a_session_of_its_own() {
        // `cut` is in the shell's session: its session id is the shell's pid only when the
        // shell leads that session.
        let w = run(
            &["sh", "-c", "echo $$; cut -d' ' -f6 /proc/self/stat"],
            None,
            1 << 10,
            None,
        );
        let out = text(&w.stdout);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(lines[0], lines[1], "{out}");
        // The test's own session may be 0 here (its leader outside our PID namespace).
        let ours = crate::sys::ns::session_id().expect("getsid");
        assert_ne!(lines[0], ours.to_string());
    }

    #[test]
    fn the_deadline_kills_the_whole_group() {
        // The background sleep holds stdout: the call returns only because the group goes.
        let w = run(
            &["/bin/sh", "-c", "sleep 30 & echo started; sleep 30"],
            None,
            1 << 10,
            Some(200),
        );
        assert!(w.timed_out);
        assert_eq!(w.exit.signal, Some(libc::SIGKILL));
        assert_eq!(text(&w.stdout), "started\n");
    }

    #[test]
    fn a_file_without_a_shebang_runs_under_sh_as_execvp_runs_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo ran-by-sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let w = run(&[script.to_str().unwrap()], None, 1 << 10, None);
        assert_eq!(w.exit.code, Some(0), "{}", text(&w.stderr));
        assert_eq!(text(&w.stdout), "ran-by-sh\n");
    }

    #[test]
    fn a_program_not_in_path_is_not_found() {
        let req = ExecRequest {
            id: 1,
            argv: vec!["gatehouse-no-such-program".into()],
            cwd: None,
            stdin: None,
            timeout_ms: None,
            max_output: None,
        };
        let err = start(&plan(), &req).err().expect("not started");
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
