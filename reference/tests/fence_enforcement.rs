//! The fence, enforced for real: every test runs a command inside a jail of a given backend
//! and then checks the files (and processes, and sockets) from outside. The implementation's
//! word is never taken: exit codes only decide which way a twin went, the effects decide
//! the verdict.
//!
//! The same attack set runs against the native and the bubblewrap backends; the `off`
//! module runs the attacks unfenced to prove each one really works without a fence; the
//! `degraded` module runs as if the kernel had no user namespaces and Landlock ABI 2.
//!
//! The helper executable is `GATEHOUSE_JAIL_HELPER` when set, else the crate's own binary
//! (whose `main` dispatches `__jail`).
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gatehouse::fence::{
    Action, BackendChoice, BackendKind, Coverage, Fence, FenceError, FenceOptions, Policy,
};
use gatehouse::plane::env::jail_env;

const VICTIM_TEXT: &str = "outside: must survive\n";
const SECRET_KEY: &str = "-----BEGIN FAKE PRIVATE KEY----- gatehouse-fixture";
const SECRET_TOKEN: &str = "ghp_gatehouseFakeTokenValue0123456789";

fn helper() -> PathBuf {
    std::env::var_os("GATEHOUSE_JAIL_HELPER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gatehouse")))
}

/// The fixture: a workspace, a scratch dir, an outside tree bound read-only (so attacks meet
/// the mechanism, not a missing path), a fake home with secrets, a sibling session's
/// workspace, a socket directory, a log directory.
struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    scratch: PathBuf,
    outside: PathBuf,
    home: PathBuf,
    sibling: PathBuf,
    sockets: PathBuf,
    logs: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let d = |p: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(&p).unwrap();
            p
        };
        let fx = Fx {
            ws: d("ws"),
            scratch: d("scratch"),
            outside: d("outside"),
            home: d("home"),
            sibling: d("sibling"),
            sockets: d("sockets"),
            logs: d("logs"),
            root,
            _dir: dir,
        };
        std::fs::write(fx.victim(), VICTIM_TEXT).unwrap();
        std::fs::set_permissions(fx.victim(), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::create_dir_all(fx.home.join(".ssh")).unwrap();
        std::fs::write(fx.home.join(".ssh/id_ed25519"), SECRET_KEY).unwrap();
        std::fs::write(fx.sibling.join("notes.txt"), "sibling secret").unwrap();
        std::fs::write(fx.logs.join("session.jsonl"), "{\"kind\":\"start\"}\n").unwrap();
        fx
    }

    fn victim(&self) -> PathBuf {
        self.outside.join("victim.txt")
    }

    fn policy(&self) -> Policy {
        let mut p = Policy::new(vec![self.ws.clone()], self.scratch.clone());
        p.read_only = vec![self.outside.clone(), self.sockets.clone()];
        p.log_dir = Some(self.logs.clone());
        p
    }

    fn victim_intact(&self) -> bool {
        std::fs::read_to_string(self.victim()).unwrap() == VICTIM_TEXT
    }
}

fn options(backend: BackendChoice) -> FenceOptions {
    FenceOptions {
        backend,
        helper: Some(helper()),
        ..FenceOptions::default()
    }
}

fn degraded_options(allow: bool) -> FenceOptions {
    FenceOptions {
        backend: BackendChoice::Native,
        max_landlock_abi: Some(2),
        no_user_namespaces: true,
        allow_degraded: allow,
        helper: Some(helper()),
        ..FenceOptions::default()
    }
}

fn prepare(fx: &Fx, options: &FenceOptions) -> Fence {
    match Fence::prepare(fx.policy(), options) {
        Ok(f) => {
            // The backend asked for is the one that holds the commands: never another
            // that happened to work (FENCE-RUN-5's posture says which).
            let asked = match options.backend {
                BackendChoice::Native => Some(BackendKind::Native),
                BackendChoice::Bwrap => Some(BackendKind::Bwrap),
                BackendChoice::Off => Some(BackendKind::Off),
                _ => None,
            };
            if let Some(kind) = asked {
                assert_eq!(f.posture().backend, kind, "{}", f.posture().render());
            }
            f
        }
        Err(e) => panic!(
            "fence {:?} not available: {e}\n(is `__jail` dispatched by {}?)",
            options.backend,
            helper().display()
        ),
    }
}

/// The agent's environment as the tests pretend it: secrets included.
fn parent_env() -> Vec<(OsString, OsString)> {
    [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("LANG", "C.UTF-8"),
        ("GITHUB_TOKEN", SECRET_TOKEN),
        ("ANTHROPIC_API_KEY", "sk-ant-gatehouse-fake"),
        ("HOME", "/root"),
    ]
    .iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect()
}

/// Run `argv` in the fence, bounded in time, output captured.
fn run(fence: &Fence, argv: &[&str]) -> Output {
    let tmpdir = fence.policy().scratch.join("tmp");
    let env = jail_env(parent_env(), &fence.policy().home(), Some(&tmpdir), true);
    let cmd = fence
        .command(
            Action::Exec {
                argv: argv.iter().map(|s| s.to_string()).collect(),
            },
            env,
        )
        .expect("command");
    bounded(cmd, Duration::from_secs(30))
}

fn sh(fence: &Fence, script: &str) -> Output {
    run(fence, &["/bin/sh", "-c", script])
}

fn bounded(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("command did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// A host process, killed when dropped.
struct HostSleep(std::process::Child);

impl HostSleep {
    fn start() -> HostSleep {
        HostSleep(Command::new("sleep").arg("30").spawn().expect("sleep"))
    }
    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for HostSleep {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn perl_connect(path: &Path) -> String {
    format!(
        "use Socket; socket(S, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect(S, pack_sockaddr_un(\"{}\")) or die \"connect: $!\\n\"; print \"connected\\n\";",
        path.display()
    )
}

/// The attacks and their allowed twins, for a backend that claims the full set.
macro_rules! enforcement_tests {
    ($module:ident, $backend:expr, $erofs:expr) => {
        mod $module {
            use super::*;

            fn fence(fx: &Fx) -> Fence {
                prepare(fx, &options($backend))
            }

            #[test]
            fn posture_names_the_backend_and_covers_every_required_item() {
                let fx = Fx::new();
                let f = fence(&fx);
                let p = f.posture();
                assert!(p.is_fenced() && !p.degraded, "{}", p.render());
                for c in gatehouse::fence::REQUIRED {
                    assert!(!p.not_covered.contains(&c), "{c} not covered: {}", p.render());
                }
                assert_eq!(p.landlock_abi, f.host().landlock_abi);
            }

            #[test]
            fn write_outside_the_workspace_is_refused_and_the_file_is_unchanged() {
                let fx = Fx::new();
                let f = fence(&fx);
                let v = fx.victim();
                let new = fx.outside.join("new.txt");
                let out = sh(
                    &f,
                    &format!("echo pwned > {}; echo pwned >> {}; echo x > {}", v.display(), v.display(), new.display()),
                );
                assert!(!out.status.success());
                assert!(fx.victim_intact());
                assert!(!new.exists());
                if $erofs {
                    assert!(text(&out.stderr).contains("Read-only file system"), "{}", text(&out.stderr));
                }
            }

            #[test]
            fn truncate_outside_is_refused_by_command_and_by_syscall() {
                let fx = Fx::new();
                let f = fence(&fx);
                let v = fx.victim();
                let out = run(&f, &["truncate", "-s0", v.to_str().unwrap()]);
                assert!(!out.status.success());
                let script = format!("truncate(\"{}\", 0) or die \"truncate: $!\\n\"", v.display());
                let out2 = run(&f, &["perl", "-e", &script]);
                assert!(!out2.status.success(), "{}", text(&out2.stderr));
                assert!(fx.victim_intact());
            }

            #[test]
            fn chmod_and_touch_outside_are_refused() {
                let fx = Fx::new();
                let f = fence(&fx);
                let v = fx.victim();
                let before = mtime(&v);
                let out = sh(&f, &format!("chmod 777 {0}; touch -d 2001-01-01 {0}", v.display()));
                assert!(!out.status.success());
                assert_eq!(mode(&v), 0o644);
                assert_eq!(mtime(&v), before);
                if $erofs {
                    assert!(text(&out.stderr).contains("Read-only file system"), "{}", text(&out.stderr));
                }
            }

            #[test]
            fn writing_through_a_symlink_pointing_outside_changes_nothing() {
                let fx = Fx::new();
                let f = fence(&fx);
                std::os::unix::fs::symlink(fx.victim(), fx.ws.join("link")).unwrap();
                let unbound = fx.root.join("unbound.txt");
                std::fs::write(&unbound, "unbound").unwrap();
                std::os::unix::fs::symlink(&unbound, fx.ws.join("link2")).unwrap();
                std::os::unix::fs::symlink(fx.root.join("created-through-dangling"), fx.ws.join("dangling")).unwrap();
                assert!(!sh(&f, "echo pwned > link").status.success());
                // These targets are not bound: inside, the directory of one is absent and
                // the other's is the read-only way to the workspace. Both writes fail
                // loudly (FENCE-JAIL-21), also where the root lies under /tmp, and the host
                // sees nothing.
                assert!(!sh(&f, "echo pwned > link2").status.success());
                let out = sh(&f, "echo pwned > dangling");
                assert!(!out.status.success());
                assert!(text(&out.stderr).contains("Read-only file system"), "{}", text(&out.stderr));
                assert!(fx.victim_intact());
                assert_eq!(std::fs::read_to_string(&unbound).unwrap(), "unbound");
                assert!(!fx.root.join("created-through-dangling").exists());
            }

            #[test]
            fn the_fake_home_and_a_sibling_workspace_are_unreadable() {
                let fx = Fx::new();
                let f = fence(&fx);
                let out = sh(
                    &f,
                    &format!(
                        "cat {}/.ssh/id_ed25519; cat {}/notes.txt; cat /etc/shadow; ls ~",
                        fx.home.display(),
                        fx.sibling.display()
                    ),
                );
                assert!(!out.status.success() || !text(&out.stdout).contains("FAKE"));
                assert!(!text(&out.stdout).contains(SECRET_KEY));
                assert!(!text(&out.stdout).contains("sibling secret"));
            }

            #[test]
            fn secrets_of_the_agent_environment_are_absent() {
                let fx = Fx::new();
                let f = fence(&fx);
                let out = run(&f, &["env"]);
                assert!(out.status.success(), "{}", text(&out.stderr));
                let env = text(&out.stdout);
                assert!(!env.contains(SECRET_TOKEN), "{env}");
                assert!(!env.contains("ANTHROPIC_API_KEY"), "{env}");
                assert!(!env.contains("GATEHOUSE_JAIL_PLAN"), "{env}");
                assert!(env.contains(&format!("HOME={}", fx.scratch.join("home").display())), "{env}");
            }

            #[test]
            fn a_host_process_cannot_be_signalled() {
                let fx = Fx::new();
                let f = fence(&fx);
                let mut sleeper = HostSleep::start();
                let pid = sleeper.0.id().to_string();
                let out = run(&f, &["kill", "-KILL", &pid]);
                assert!(!out.status.success());
                std::thread::sleep(Duration::from_millis(50));
                assert!(sleeper.alive(), "the host process was killed from inside");
            }

            #[test]
            fn twin_a_process_of_the_jail_can_be_signalled_from_inside() {
                let fx = Fx::new();
                let f = fence(&fx);
                // `wait` reports 137 (128 + SIGKILL) only for a child the kill reached.
                let out = sh(&f, "sleep 30 & kill -KILL $! && wait $!; echo \"status=$?\"");
                assert!(out.status.success(), "{}", text(&out.stderr));
                assert_eq!(text(&out.stdout), "status=137\n");
            }

            #[test]
            fn a_host_unix_socket_reachable_in_the_mount_tree_cannot_be_connected() {
                let fx = Fx::new();
                let f = fence(&fx);
                let path = fx.sockets.join("agent.sock");
                let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
                listener.set_nonblocking(true).unwrap();
                let out = run(&f, &["perl", "-e", &perl_connect(&path)]);
                assert!(!out.status.success());
                assert!(!text(&out.stdout).contains("connected"));
                assert!(listener.accept().is_err(), "a connection reached the host socket");
            }

            #[test]
            fn no_capability_remains_even_as_root() {
                let fx = Fx::new();
                let f = fence(&fx);
                let out = run(&f, &["cat", "/proc/self/status"]);
                let status = text(&out.stdout);
                for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
                    let line = status.lines().find(|l| l.starts_with(set)).unwrap_or_else(|| panic!("{set} missing"));
                    assert!(line.ends_with("0000000000000000"), "{line}");
                }
            }

            #[test]
            fn remounting_the_root_read_write_fails() {
                let fx = Fx::new();
                let f = fence(&fx);
                let marker = fx.outside.join("after-remount");
                let out = sh(
                    &f,
                    &format!("mount -o remount,rw / ; mount -o remount,rw {0}; touch {1}", fx.outside.display(), marker.display()),
                );
                assert!(!out.status.success());
                assert!(!marker.exists());
            }

            #[test]
            fn protected_paths_that_do_not_exist_yet_cannot_be_created() {
                let fx = Fx::new();
                let f = fence(&fx);
                let created = gatehouse::fence::missing_protected(f.policy());
                let out = sh(
                    &f,
                    "mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; \
                     mv .git .git-moved; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; \
                     mv .git-moved/hooks .git-moved/hooks2; \
                     mkdir -p .gatehouse; echo evil > .gatehouse/config.toml",
                );
                assert!(!out.status.success());
                assert!(!fx.ws.join(".git/hooks/pre-commit").exists());
                assert!(!fx.ws.join(".git-moved").exists());
                assert!(!fx.ws.join(".gatehouse/config.toml").exists());
                // The empty mount points the fence created go once no jail uses them.
                gatehouse::fence::tidy_protected(&created);
                assert!(!fx.ws.join(".git").exists());
                assert!(!fx.ws.join(".gatehouse").exists());
            }

            #[test]
            fn the_host_tmp_and_the_session_log_are_never_written() {
                let fx = Fx::new();
                let f = fence(&fx);
                let host_tmp = std::env::temp_dir().join(format!("gatehouse-escape-{}", std::process::id()));
                let log = fx.logs.join("session.jsonl");
                let out = sh(&f, &format!("echo x > {}; echo forged >> {}; echo tried", host_tmp.display(), log.display()));
                // The attempts ran: what is refused is the writes, not the command.
                assert_eq!(text(&out.stdout), "tried\n", "{}", text(&out.stderr));
                assert!(!host_tmp.exists());
                assert_eq!(std::fs::read_to_string(&log).unwrap(), "{\"kind\":\"start\"}\n");
            }

            #[test]
            fn twin_the_jails_own_tmp_is_writable() {
                let fx = Fx::new();
                let f = fence(&fx);
                let out = sh(&f, "echo scratch > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"");
                assert!(out.status.success(), "{}", text(&out.stderr));
                assert_eq!(text(&out.stdout), "scratch\n");
                assert_eq!(
                    std::fs::read_to_string(fx.scratch.join("tmp/f")).unwrap(),
                    "scratch\n"
                );
            }

            #[test]
            fn twin_write_truncate_and_chmod_inside_the_workspace_work() {
                let fx = Fx::new();
                let f = fence(&fx);
                std::fs::write(fx.ws.join("big.txt"), "0123456789").unwrap();
                let out = sh(&f, "echo hello > inside.txt && truncate -s0 big.txt && chmod 600 inside.txt && mkdir -p .github && echo ref > .github/HEAD");
                assert!(out.status.success(), "{}", text(&out.stderr));
                assert_eq!(std::fs::read_to_string(fx.ws.join("inside.txt")).unwrap(), "hello\n");
                assert_eq!(std::fs::metadata(fx.ws.join("big.txt")).unwrap().len(), 0);
                assert_eq!(mode(&fx.ws.join("inside.txt")), 0o600);
                assert_eq!(std::fs::read_to_string(fx.ws.join(".github/HEAD")).unwrap(), "ref\n");
                // `.git` is protected whole (FENCE-PROTECT-6): nothing of it is writable.
                let out = sh(&f, "echo ref > .git/HEAD");
                assert!(!out.status.success());
                assert!(!fx.ws.join(".git/HEAD").exists());
            }

            #[test]
            fn twin_the_exit_status_and_output_come_back() {
                let fx = Fx::new();
                let f = fence(&fx);
                let out = sh(&f, "echo out; echo err >&2; exit 7");
                assert_eq!(out.status.code(), Some(7));
                assert_eq!(text(&out.stdout), "out\n");
                assert_eq!(text(&out.stderr), "err\n");
            }
        }
    };
}

enforcement_tests!(native, BackendChoice::Native, true);
enforcement_tests!(bwrap, BackendChoice::Bwrap, true);

#[test]
fn native_posture_reports_namespaces_landlock_and_seccomp() {
    let fx = Fx::new();
    let f = prepare(&fx, &options(BackendChoice::Native));
    let p = f.posture();
    assert_eq!(p.backend, BackendKind::Native);
    let names: Vec<&str> = p.layers.iter().map(|l| l.name.as_str()).collect();
    assert!(names.contains(&"namespaces"), "{names:?}");
    assert!(names.contains(&"seccomp"), "{names:?}");
    assert_eq!(f.host().landlock_abi, common::landlock_abi());
    if let Some(abi) = common::landlock_abi() {
        assert!(
            names.contains(&format!("landlock ABI {abi}").as_str()),
            "{names:?}"
        );
    }
    assert!(p.render().starts_with("fence: native ("), "{}", p.render());
    let json: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    assert_eq!(json["backend"], "native");
}

/// The attacks run without a fence: each one works, which is what makes the fenced runs
/// above meaningful. Environment scrubbing still applies when the fence is off.
mod off {
    use super::*;

    #[test]
    fn unfenced_the_attacks_succeed_and_the_posture_says_off() {
        let fx = Fx::new();
        let f = prepare(&fx, &options(BackendChoice::Off));
        assert_eq!(f.posture().backend, BackendKind::Off);
        assert!(f.posture().logs_writable_by_tools);
        assert!(f.posture().render().contains("UNFENCED"));
        let v = fx.victim();
        let out = sh(
            &f,
            &format!(
                "cat {}/.ssh/id_ed25519; truncate -s0 {}",
                fx.home.display(),
                v.display()
            ),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains(SECRET_KEY));
        assert_eq!(std::fs::metadata(&v).unwrap().len(), 0);
        let path = fx.sockets.join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let out = run(&f, &["perl", "-e", &perl_connect(&path)]);
        assert!(
            text(&out.stdout).contains("connected"),
            "{}",
            text(&out.stderr)
        );
        let env = text(&run(&f, &["env"]).stdout);
        assert!(!env.contains(SECRET_TOKEN), "scrubbing holds even unfenced");
    }
}

/// As if the kernel had no user namespaces and Landlock ABI 2 (Linux 6.1).
mod degraded {
    use super::*;

    #[test]
    fn the_default_refuses_and_names_what_is_missing() {
        let fx = Fx::new();
        match Fence::prepare(fx.policy(), &degraded_options(false)) {
            Err(FenceError::Refused {
                missing, reason, ..
            }) => {
                assert!(missing.contains(&Coverage::Truncate), "{missing:?}");
                assert!(missing.contains(&Coverage::Metadata), "{missing:?}");
                assert!(reason.contains("ABI 2"), "{reason}");
            }
            Err(e) => panic!("expected a refusal, got {e}"),
            Ok(f) => panic!("ran without truncate protection: {}", f.posture().render()),
        }
        assert!(fx.victim_intact());
    }

    #[test]
    fn opted_in_it_runs_landlock_only_and_truncate_outside_goes_through() {
        let fx = Fx::new();
        let f = prepare(&fx, &degraded_options(true));
        let p = f.posture();
        assert!(p.degraded, "{}", p.render());
        assert_eq!(p.landlock_abi, Some(gatehouse::fence::Abi::V2));
        assert!(p.not_covered.contains(&Coverage::Truncate));
        assert!(p.not_covered.contains(&Coverage::Metadata));
        assert!(p.render().contains("DEGRADED"));
        // The honest point: what the posture says is not covered is indeed not covered.
        let v = fx.victim();
        let script = format!(
            "truncate(\"{}\", 0) or die \"truncate: $!\\n\"",
            v.display()
        );
        let out = run(&f, &["perl", "-e", &script]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            std::fs::metadata(&v).unwrap().len(),
            0,
            "truncate(2) went through"
        );
        let out = run(&f, &["chmod", "600", v.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(mode(&v), 0o600, "metadata is not covered by Landlock");
        // What it does claim still holds.
        let new = fx.outside.join("new.txt");
        let out = sh(
            &f,
            &format!(
                "echo x > {}; cat {}/.ssh/id_ed25519",
                new.display(),
                fx.home.display()
            ),
        );
        assert!(!out.status.success());
        assert!(!new.exists());
        assert!(!text(&out.stdout).contains(SECRET_KEY));
        // Twin: the workspace stays writable.
        let out = sh(&f, "echo ok > inside.txt");
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(fx.ws.join("inside.txt").exists());
    }

    #[test]
    fn with_landlock_abi_7_and_no_user_namespaces_metadata_still_refuses() {
        let fx = Fx::new();
        let mut o = degraded_options(false);
        o.max_landlock_abi = None;
        if !common::landlock_abi().is_some_and(|a| a.restricts_truncate()) {
            common::skip(
                "metadata refused while truncation is covered",
                "this kernel's Landlock cannot restrict truncation (ABI 3 and later; GATEHOUSE_TEST_LANDLOCK_ABI makes that a failure)",
            );
            return;
        }
        match Fence::prepare(fx.policy(), &o) {
            Err(FenceError::Refused { missing, .. }) => {
                assert!(missing.contains(&Coverage::Metadata), "{missing:?}");
                assert!(!missing.contains(&Coverage::Truncate), "{missing:?}");
            }
            other => panic!(
                "expected a refusal, got {:?}",
                other.map(|f| f.posture().render())
            ),
        }
    }
}

/// `gatehouse exec`, the one-shot path, sets `TMPDIR` to the session's scratch temporary
/// directory whatever the backend (the agent's own `TMPDIR` never passes), and programs
/// that honour it write there.
#[test]
fn gatehouse_exec_sets_tmpdir_to_the_scratch_tmp_on_every_backend() {
    let script = "printf 'tmpdir=%s\\n' \"$TMPDIR\"; printf 'home=%s\\n' \"$HOME\"; \
                  f=$(mktemp) && printf 'made=%s\\n' \"$f\" && printf ok > \"$f\" && cat \"$f\"";
    let cases: [(&str, &[&str], &str, &str); 4] = [
        ("native", &[], "native", "fence: native"),
        ("bwrap", &[], "bwrap", "fence: bwrap"),
        (
            "landlock-only",
            &["--allow-degraded", "--emulate-no-userns"],
            "native",
            "DEGRADED",
        ),
        ("off", &[], "off", "UNFENCED"),
    ];
    for (name, flags, backend, posture) in cases {
        let fx = Fx::new();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
        cmd.arg("exec")
            .arg("--workspace")
            .arg(&fx.ws)
            .args(flags)
            .args(["--", "/bin/sh", "-c", script])
            .current_dir(&fx.ws)
            .env("TMPDIR", fx.outside.as_os_str())
            .env_remove("GATEHOUSE_EMULATE_NO_USERNS")
            .env_remove("GATEHOUSE_LANDLOCK_MAX_ABI")
            .env("GATEHOUSE_FENCE", backend)
            .env("GATEHOUSE_JAIL_HELPER", helper());
        let out = bounded(cmd, Duration::from_secs(60));
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {stdout}{}",
            text(&out.stderr)
        );
        let field = |key: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_else(|| panic!("{name}: no {key} in {stdout}"))
                .to_string()
        };
        assert!(
            text(&out.stderr).contains(posture),
            "{name}: {}",
            text(&out.stderr)
        );
        let (tmpdir, home) = (field("tmpdir="), field("home="));
        let scratch = Path::new(&home).parent().expect("the scratch directory");
        assert_eq!(Path::new(&tmpdir), scratch.join("tmp"), "{name}: {stdout}");
        assert!(
            field("made=").starts_with(&format!("{tmpdir}/")),
            "{name}: {stdout}"
        );
        assert!(stdout.ends_with("ok"), "{name}: {stdout}");
        assert_eq!(std::fs::read_dir(&fx.outside).unwrap().count(), 1, "{name}");
    }
}
