//! `gatehouse exec` under a real outer terminal (FENCE-TTY-1, FENCE-TTY-5): the test opens
//! a pseudo-terminal, starts `gatehouse exec` on its slave as the leader of a session whose
//! controlling terminal it is (as a shell would), and plays the person at the master. The
//! jailed command gets a terminal of the jail's own, the person's comes back exactly as
//! it was on every way out, and `--no-tty` gives pipes. Also: a jail whose setup step
//! fails is refused naming that step (FENCE-PROBE-5). On every Linux backend.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::backends;
use std::os::fd::OwnedFd;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use gatehouse::fence::launch::{Stream, Streams};
use gatehouse::sys::pty;
use rustix::termios::{tcgetattr, tcsetwinsize, LocalModes, Termios, Winsize};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// A guard against a hang, never a measurement: a run that has not ended by then failed.
const HANG: Duration = Duration::from_secs(120);

/// The person's side: the outer terminal's master and `gatehouse exec` on its slave.
struct Person {
    master: OwnedFd,
    /// The outer terminal's settings before `gatehouse exec` started.
    before: Termios,
    child: Child,
    seen: Vec<u8>,
    _ws: tempfile::TempDir,
}

fn winsize(rows: u16, cols: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Person {
    fn start(backend: &str, extra: &[&str], script: &str) -> Person {
        let pair = pty::open_pair().expect("an outer pseudo-terminal");
        tcsetwinsize(&pair.master, winsize(33, 101)).unwrap();
        let before = tcgetattr(&pair.master).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(BIN);
        cmd.arg("exec")
            .arg("--workspace")
            .arg(ws.path())
            .args(extra)
            .args(["--", "sh", "-c", script])
            .env("GATEHOUSE_FENCE", backend)
            .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
            .env_remove(gatehouse::fence::plan::FAULT_ENV);
        pty::controlling(&mut cmd, pair.slave).unwrap();
        let child = cmd.spawn().expect("gatehouse exec starts");
        drop(cmd);
        Person {
            master: pair.master,
            before,
            child,
            seen: Vec::new(),
            _ws: ws,
        }
    }

    fn settings(&self) -> Termios {
        tcgetattr(&self.master).unwrap()
    }

    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Read what the terminal shows until `needle` appears (`None`: until it hangs up).
    fn read_until(&mut self, needle: Option<&str>) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let deadline = Instant::now() + HANG;
        let mut buf = [0u8; 4096];
        loop {
            if needle.is_some_and(|n| self.seen().contains(n)) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "hung; the terminal showed {:?}",
                self.seen()
            );
            let t = Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: 0,
            };
            let mut fds = [PollFd::new(&self.master, PollFlags::IN)];
            match poll(&mut fds, Some(&t)) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => panic!("poll: {e}"),
            }
            match rustix::io::read(&self.master, &mut buf) {
                Ok(0) | Err(rustix::io::Errno::IO) => {
                    assert!(
                        needle.is_none(),
                        "hung up before {needle:?}: {:?}",
                        self.seen()
                    );
                    return;
                }
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    fn type_line(&self, line: &str) {
        let bytes = format!("{line}\n");
        assert_eq!(
            rustix::io::write(&self.master, bytes.as_bytes()).unwrap(),
            bytes.len()
        );
    }

    fn wait(&mut self) -> std::process::ExitStatus {
        self.read_until(None);
        self.child.wait().unwrap()
    }

    /// The outer terminal's line discipline, through its slave opened anew.
    fn line_discipline(&self) -> i32 {
        let name = rustix::pty::ptsname(&self.master, Vec::new()).unwrap();
        let slave = rustix::fs::open(
            name.as_c_str(),
            rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        pty::line_discipline(&slave).unwrap()
    }
}

fn same_settings(a: &Termios, b: &Termios) -> bool {
    a.input_modes == b.input_modes
        && a.output_modes == b.output_modes
        && a.control_modes == b.control_modes
        && a.local_modes == b.local_modes
        && format!("{:?}", a.special_codes) == format!("{:?}", b.special_codes)
}

#[test]
fn an_interactive_round_trip_on_a_terminal_of_the_jails_own() {
    for backend in backends() {
        let script = "[ -t 0 ] && [ -t 1 ] && echo INNER-TERMINAL; tty; stty size; \
                      echo READY; read line; echo \"echo:$line\"; exit 5";
        let mut p = Person::start(backend, &[], script);
        let before = p.before.clone();
        p.read_until(Some("READY"));
        // While the command runs, the person's terminal is raw: the inner one edits lines.
        assert!(
            !p.settings().local_modes.contains(LocalModes::ICANON),
            "{backend}: outer terminal not in raw mode"
        );
        p.type_line("hello-jail");
        let status = p.wait();
        let seen = p.seen();
        assert_eq!(status.code(), Some(5), "{backend}: {seen}");
        assert!(seen.contains("INNER-TERMINAL"), "{backend}: {seen}");
        assert!(seen.contains("/dev/pts/0"), "{backend}: {seen}");
        assert!(seen.contains("33 101"), "{backend}: window size: {seen}");
        assert!(seen.contains("echo:hello-jail"), "{backend}: {seen}");
        assert!(
            same_settings(&before, &p.settings()),
            "{backend}: outer terminal not restored"
        );
        assert_eq!(p.line_discipline(), 0, "{backend}: line discipline changed");
    }
}

#[test]
fn a_window_change_reaches_the_jails_terminal() {
    for backend in backends() {
        let script = "echo READY; while read x; do echo \"size:$(stty size):end\"; done";
        let mut p = Person::start(backend, &[], script);
        p.read_until(Some("READY"));
        tcsetwinsize(&p.master, winsize(40, 120)).unwrap();
        // SIGWINCH reaches the launcher on the kernel's schedule: ask again until the inner
        // terminal shows the new size, a bounded number of times.
        for _ in 0..50 {
            p.seen.clear();
            p.type_line("q");
            p.read_until(Some(":end"));
            if p.seen().contains("size:40 120:end") {
                break;
            }
        }
        assert!(
            p.seen().contains("size:40 120:end"),
            "{backend}: {}",
            p.seen()
        );
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&p.child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        p.wait();
    }
}

#[test]
fn the_terminal_comes_back_after_a_signal_and_after_a_killed_command() {
    for backend in backends() {
        let mut p = Person::start(backend, &[], "echo READY; sleep 600");
        let before = p.before.clone();
        p.read_until(Some("READY"));
        assert!(!p.settings().local_modes.contains(LocalModes::ICANON));
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&p.child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        let status = p.wait();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(15), "{backend}: {status:?}");
        assert!(
            same_settings(&before, &p.settings()),
            "{backend}: not restored after SIGTERM"
        );

        let mut p = Person::start(backend, &[], "echo READY; kill -KILL $$");
        let before = p.before.clone();
        let status = p.wait();
        assert_eq!(status.code(), Some(128 + 9), "{backend}: {}", p.seen());
        assert!(
            same_settings(&before, &p.settings()),
            "{backend}: not restored after the command was killed"
        );
    }
}

#[test]
fn no_tty_gives_pipes_even_from_a_terminal() {
    for backend in backends() {
        // /dev/tty must open nothing: a command left in the launcher's session would reach
        // the person's terminal through it (write to it, read from it, change it).
        let script = "[ -t 0 ] || [ -t 1 ] || [ -t 2 ] || echo PIPES; tty; \
                      (echo through-dev-tty > /dev/tty) 2>/dev/null && echo REACHED-TTY; \
                      echo READY; read x";
        let mut p = Person::start(backend, &["--no-tty"], script);
        let before = p.before.clone();
        p.read_until(Some("READY"));
        assert!(
            p.settings().local_modes.contains(LocalModes::ICANON),
            "{backend}: --no-tty must leave the terminal alone"
        );
        p.type_line("bye");
        let status = p.wait();
        let seen = p.seen();
        assert!(seen.contains("PIPES"), "{backend}: {seen}");
        assert!(seen.contains("not a tty"), "{backend}: {seen}");
        assert!(!seen.contains("REACHED-TTY"), "{backend}: {seen}");
        assert!(!seen.contains("through-dev-tty"), "{backend}: {seen}");
        assert_eq!(status.code(), Some(0), "{backend}: {seen}");
        assert!(same_settings(&before, &p.settings()));
    }
}

#[test]
fn typing_into_the_terminal_from_inside_is_refused_and_reaches_nobody() {
    for backend in backends() {
        // TIOCSTI on every descriptor the command has and on /dev/tty: refused, and the
        // person's terminal receives nothing it did not type; TIOCSETD on them changes
        // the jail's terminal at most, never the person's.
        let code = "import fcntl, termios, os, errno\n\
                    fds = [0, 1, 2, os.open('/dev/tty', os.O_RDWR)]\n\
                    for fd in fds:\n    \
                    try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b'Z')\n        print('INJECTED', fd)\n    \
                    except OSError as e:\n        print('refused', errno.errorcode[e.errno])\n\
                    for fd in fds:\n    \
                    try:\n        fcntl.ioctl(fd, termios.TIOCSETD, (1).to_bytes(4, 'little'))\n    \
                    except OSError as e:\n        pass\n\
                    print('DONE')";
        let script = format!("python3 -c \"{code}\"");
        let mut p = Person::start(backend, &[], &script);
        let status = p.wait();
        let seen = p.seen();
        assert_eq!(status.code(), Some(0), "{backend}: {seen}");
        assert!(!seen.contains("INJECTED"), "{backend}: {seen}");
        assert_eq!(
            seen.matches("refused EPERM").count(),
            4,
            "{backend}: {seen}"
        );
        assert!(seen.contains("DONE"), "{backend}: {seen}");
        // Whatever line discipline the command set, it set it on the jail's terminal.
        assert_eq!(
            p.line_discipline(),
            0,
            "{backend}: the outer line discipline changed"
        );
    }
}

#[test]
fn a_jail_whose_setup_step_fails_is_refused_naming_that_step() {
    use gatehouse::fence::{Fence, FenceOptions, Policy};
    let d = tempfile::tempdir().unwrap();
    let (ws, ro, scratch) = (
        d.path().join("ws"),
        d.path().join("sdk"),
        d.path().join("s"),
    );
    for p in [&ws, &ro, &scratch] {
        std::fs::create_dir_all(p).unwrap();
    }
    let mut policy = Policy::new(vec![ws], scratch);
    policy.read_only = vec![ro.clone()];
    let options = FenceOptions {
        helper: Some(BIN.into()),
        ..FenceOptions::default()
    };
    let fence = Fence::prepare_for_checked(policy, &options).unwrap();
    // Resolved and planned, then gone before the jail binds it: the mount step fails.
    std::fs::remove_dir(&ro).unwrap();
    let err = fence
        .spawn_checked(
            vec!["true".into()],
            vec![],
            None,
            false,
            Streams([Stream::Null, Stream::Piped, Stream::Piped]),
        )
        .expect_err("a jail that cannot bind its read-only path is refused")
        .to_string();
    eprintln!("refusal: {err}");
    assert!(err.contains("bind-read-only"), "{err}");
    assert!(err.contains(&ro.display().to_string()), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

#[test]
fn without_a_mount_namespace_the_persons_terminals_stay_out_of_reach() {
    // Landlock alone (the degraded opt-in) has no devpts of the jail's own: the host's
    // /dev/pts holds the person's terminals, and a path rule under it would let the
    // command open them by number. Every number is tried; none may show on the
    // person's terminal, whose output is read here.
    let script = "for n in $(seq 0 63); do (echo INJECTED-$n > /dev/pts/$n) 2>/dev/null; done; \
                  echo DONE";
    let mut p = Person::start(
        "native",
        &["--emulate-no-userns", "--allow-degraded"],
        script,
    );
    let status = p.wait();
    let seen = p.seen();
    assert_eq!(status.code(), Some(0), "{seen}");
    assert!(seen.contains("DONE"), "{seen}");
    assert!(
        !seen.contains("INJECTED"),
        "a terminal of the host was opened: {seen}"
    );
}
