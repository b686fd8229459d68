//! The execution plane, for real: a broker with a pool of fenced executors runs commands,
//! scrubs the environment, survives an executor's death, keeps its session log out of the
//! tools' reach, and switches a session's fence off only with the confirmation. Effects are
//! checked from outside.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use gatehouse::fence::{BackendChoice, BackendKind, FenceOptions, Policy};
use gatehouse::plane::{Broker, PlaneConfig, PlaneError, PlaneEvent, RunRequest, CONFIRM_OFF};

const SECRET_TOKEN: &str = "ghp_gatehousePlaneFakeToken0123456789";

fn helper() -> PathBuf {
    std::env::var_os("GATEHOUSE_JAIL_HELPER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gatehouse")))
}

struct Fx {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    logs: PathBuf,
    scratch: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mk = |p: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(&p).unwrap();
            p
        };
        Fx {
            ws: mk("ws"),
            outside: mk("outside"),
            logs: mk("logs"),
            scratch: mk("scratch"),
            _dir: dir,
        }
    }

    fn config(&self, pool: usize) -> PlaneConfig {
        let mut policy = Policy::new(vec![self.ws.clone()], self.scratch.clone());
        policy.read_only = vec![self.outside.clone()];
        policy.log_dir = Some(self.logs.clone());
        let options = FenceOptions {
            backend: BackendChoice::Native,
            helper: Some(helper()),
            ..FenceOptions::default()
        };
        let mut c = PlaneConfig::new(policy, options, "test-session");
        c.pool_size = pool;
        c.default_timeout = Duration::from_secs(30);
        c.parent_env = Some(
            [
                ("PATH", "/usr/bin:/bin"),
                ("GITHUB_TOKEN", SECRET_TOKEN),
                ("LC_ALL", "C"),
            ]
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect(),
        );
        c
    }
}

async fn start(config: PlaneConfig) -> Broker {
    match tokio::time::timeout(Duration::from_secs(60), Broker::start(config)).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => panic!("broker did not start: {e} (helper {})", helper().display()),
        Err(_) => panic!("broker start timed out"),
    }
}

fn sh(script: &str) -> RunRequest {
    RunRequest::new(["/bin/sh", "-c", script])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn a_command_runs_in_the_fence_and_the_second_one_takes_the_warm_path() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    let first = broker
        .run(sh("echo out; echo err >&2; exit 3"))
        .await
        .unwrap();
    assert_eq!(first.exit.code, Some(3));
    assert_eq!(text(&first.stdout), "out\n");
    assert_eq!(text(&first.stderr), "err\n");
    assert_eq!(first.posture.backend, BackendKind::Native);
    assert!(first.warm, "the pool was started before the request");
    let second = broker.run(RunRequest::new(["true"])).await.unwrap();
    assert!(second.exit.success() && second.warm);
    assert_eq!(second.executor, first.executor);
    // Fenced: a write outside is refused, the outside file untouched.
    let victim = fx.outside.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let out = broker
        .run(sh(&format!("echo pwned > {}", victim.display())))
        .await
        .unwrap();
    assert!(!out.exit.success());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    broker.shutdown().await;
}

#[tokio::test]
async fn the_environment_is_scrubbed_and_the_opt_out_is_reported() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    let env = text(&broker.run(RunRequest::new(["env"])).await.unwrap().stdout);
    assert!(!env.contains(SECRET_TOKEN), "{env}");
    assert!(env.contains("LC_ALL=C"), "{env}");
    assert!(broker.posture().env_scrubbing);
    broker.shutdown().await;

    let mut config = fx.config(1);
    config.env_scrubbing = false;
    let broker = start(config).await;
    let env = text(&broker.run(RunRequest::new(["env"])).await.unwrap().stdout);
    assert!(
        env.contains(SECRET_TOKEN),
        "the opt-out hands the full environment"
    );
    assert!(!broker.posture().env_scrubbing);
    assert!(broker.posture().render().contains("NOT scrubbed"));
    broker.shutdown().await;
}

#[tokio::test]
async fn a_crashed_executor_is_an_event_and_is_replaced() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    let pids = broker.executor_pids();
    assert_eq!(pids.len(), 1);
    // Kill the executor from outside (jailed code cannot: it is PID 1 of its namespace).
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(50)).await;
    match broker.run(RunRequest::new(["true"])).await {
        Err(PlaneError::ExecutorCrashed { .. }) => {}
        other => panic!("expected a crash report, got {other:?}"),
    }
    let events = broker.events();
    assert!(events
        .iter()
        .any(|e| matches!(e, PlaneEvent::ExecutorCrashed { .. })));
    assert!(events
        .iter()
        .any(|e| matches!(e, PlaneEvent::ExecutorReplaced { .. })));
    // The broker lives on, on the replacement.
    let again = broker.run(sh("echo alive")).await.unwrap();
    assert_eq!(text(&again.stdout), "alive\n");
    assert!(again.warm);
    let log = std::fs::read_to_string(broker.log_path().unwrap()).unwrap();
    assert!(log.contains("executor-crashed"), "{log}");
    broker.shutdown().await;
}

#[tokio::test]
async fn jailed_code_cannot_write_the_session_log() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    let log = broker.log_path().expect("a session log");
    assert!(log.starts_with(&fx.logs));
    assert!(!broker.posture().logs_writable_by_tools);
    let out = broker
        .run(sh(&format!("echo forged >> {}", log.display())))
        .await
        .unwrap();
    assert!(!out.exit.success());
    let text = std::fs::read_to_string(&log).unwrap();
    // The run record quotes the command; a forged line would stand alone.
    assert!(!text.lines().any(|l| l == "forged"), "{text}");
    assert!(text.contains("\"kind\":\"run\""), "{text}");
    broker.shutdown().await;
}

#[tokio::test]
async fn the_fence_switches_off_only_with_the_confirmation_and_it_is_logged() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    assert!(matches!(
        broker.switch_off("yes").await,
        Err(PlaneError::Unconfirmed)
    ));
    assert_eq!(broker.posture().backend, BackendKind::Native);
    let posture = broker.switch_off(CONFIRM_OFF).await.unwrap();
    assert_eq!(posture.backend, BackendKind::Off);
    assert!(posture.logs_writable_by_tools);
    let victim = fx.outside.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let out = broker
        .run(sh(&format!("echo unfenced > {}", victim.display())))
        .await
        .unwrap();
    assert!(out.exit.success());
    assert_eq!(out.posture.backend, BackendKind::Off);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "unfenced\n");
    let on = broker.switch_on().await.unwrap();
    assert_eq!(on.backend, BackendKind::Native);
    let log = std::fs::read_to_string(broker.log_path().unwrap()).unwrap();
    assert_eq!(log.matches("\"kind\":\"fence-toggle\"").count(), 2, "{log}");
    broker.shutdown().await;
}

#[tokio::test]
async fn a_command_past_its_deadline_is_killed_and_the_executor_serves_on() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    let mut req = RunRequest::new(["sleep", "30"]);
    req.timeout = Some(Duration::from_millis(200));
    let out = broker.run(req).await.unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit.signal, Some(9));
    let next = broker.run(RunRequest::new(["true"])).await.unwrap();
    assert!(next.exit.success() && next.warm);
    broker.shutdown().await;
}

#[tokio::test]
async fn two_requests_run_concurrently_on_two_executors() {
    let fx = Fx::new();
    let broker = start(fx.config(2)).await;
    let (a, b) = tokio::join!(
        broker.run(sh("echo a > a.txt; cat a.txt")),
        broker.run(sh("echo b > b.txt; cat b.txt"))
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(text(&a.stdout), "a\n");
    assert_eq!(text(&b.stdout), "b\n");
    assert_ne!(a.executor, b.executor);
    assert!(fx.ws.join("a.txt").exists() && fx.ws.join("b.txt").exists());
    broker.shutdown().await;
}

/// The session log's records, parsed.
fn log_records(broker: &Broker) -> Vec<serde_json::Value> {
    let log = std::fs::read_to_string(broker.log_path().expect("a session log")).unwrap();
    log.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test]
async fn every_toggle_is_logged_with_the_posture_before_and_after() {
    let fx = Fx::new();
    let broker = start(fx.config(1)).await;
    // Refused without the confirmation: nothing changed, nothing to log.
    assert!(broker.switch_off("yes").await.is_err());
    broker.switch_off(CONFIRM_OFF).await.unwrap();
    broker.switch_on().await.unwrap();
    let toggles: Vec<serde_json::Value> = log_records(&broker)
        .into_iter()
        .filter(|r| r["kind"] == "fence-toggle")
        .collect();
    assert_eq!(toggles.len(), 2, "{toggles:#?}");
    let (off, on) = (&toggles[0], &toggles[1]);
    assert_eq!(off["to"], "off");
    assert_eq!(off["before"]["backend"], "native", "{off:#}");
    assert_eq!(off["after"]["backend"], "off", "{off:#}");
    assert_eq!(off["before"]["logs_writable_by_tools"], false, "{off:#}");
    assert_eq!(off["after"]["logs_writable_by_tools"], true, "{off:#}");
    assert!(off["rendered_before"]
        .as_str()
        .unwrap()
        .starts_with("fence: native"));
    assert!(off["rendered_after"].as_str().unwrap().contains("UNFENCED"));
    assert_eq!(on["to"], "on");
    assert_eq!(on["before"]["backend"], "off", "{on:#}");
    assert_eq!(on["after"]["backend"], "native", "{on:#}");
    // The events carry both as well.
    let switched: Vec<(String, String)> = broker
        .events()
        .into_iter()
        .filter_map(|e| match e {
            PlaneEvent::FenceSwitched { before, posture } => Some((before, posture)),
            _ => None,
        })
        .collect();
    assert_eq!(switched.len(), 2);
    assert!(switched[0].0.starts_with("fence: native") && switched[0].1.contains("UNFENCED"));
    assert!(switched[1].0.contains("UNFENCED") && switched[1].1.starts_with("fence: native"));
    broker.shutdown().await;
}

/// The Landlock-only fence (no user namespaces, hence no PID namespace), opted in.
fn degraded(abi: Option<u8>) -> FenceOptions {
    FenceOptions {
        backend: BackendChoice::Native,
        no_user_namespaces: true,
        max_landlock_abi: abi,
        allow_degraded: true,
        helper: Some(helper()),
        ..FenceOptions::default()
    }
}

#[tokio::test]
async fn tmpdir_is_the_sessions_scratch_tmp_on_every_backend() {
    let backends = [
        ("native", options_for(BackendChoice::Native)),
        ("bwrap", options_for(BackendChoice::Bwrap)),
        ("landlock-only", degraded(None)),
        ("off", options_for(BackendChoice::Off)),
    ];
    for (name, options) in backends {
        let fx = Fx::new();
        let mut config = fx.config(1);
        config.options = options;
        // The agent's own TMPDIR never passes, scrubbed or not.
        config
            .parent_env
            .as_mut()
            .unwrap()
            .push(("TMPDIR".into(), "/tmp".into()));
        let broker = start(config).await;
        let out = broker
            .run(sh("printf '%s\\n' \"$TMPDIR\"; f=$(mktemp) && printf mine > \"$f\" && basename \"$f\""))
            .await
            .unwrap();
        assert!(out.exit.success(), "{name}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let mut lines = stdout.lines();
        let scratch_tmp = fx.scratch.join("tmp");
        assert_eq!(
            lines.next(),
            Some(scratch_tmp.to_str().unwrap()),
            "{name}: TMPDIR"
        );
        // mktemp honours TMPDIR: the file is in the session's scratch, seen from outside.
        let made = scratch_tmp.join(lines.next().expect("a file name"));
        assert_eq!(std::fs::read_to_string(&made).unwrap(), "mine", "{name}");
        broker.shutdown().await;
    }
}

fn options_for(backend: BackendChoice) -> FenceOptions {
    FenceOptions {
        backend,
        helper: Some(helper()),
        ..FenceOptions::default()
    }
}

/// Whether host process `pid` still exists (a zombie counts: it is not reaped yet).
fn exists(pid: i32) -> bool {
    let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(rustix::io::Errno::SRCH) => false,
        Err(e) => panic!("kill({pid:?}, 0): {e}"),
    }
}

/// Poll until `pid` is gone (true) or a few seconds have passed (false).
async fn gone_within_a_few_seconds(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if !exists(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !exists(pid)
}

fn read_pid(path: &std::path::Path) -> i32 {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    s.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {s:?}: {e}", path.display()))
}

#[tokio::test]
async fn landlock_only_nothing_a_call_started_outlives_the_call() {
    for abi in [Some(2), None] {
        let fx = Fx::new();
        let mut config = fx.config(1);
        config.options = degraded(abi);
        let broker = start(config).await;
        let posture = broker.posture();
        assert_eq!(posture.backend, BackendKind::Native);
        assert!(posture.degraded, "{}", posture.render());
        assert!(
            !posture.layers.iter().any(|l| l.name == "namespaces"),
            "no PID namespace to end them: {}",
            posture.render()
        );
        // A background child in the command's group (its output detached, so the call
        // returns at once), one that left the group with a session of its own, and one that
        // still holds the command's stdout.
        let script = "sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > bg.pid; \
             if command -v setsid > /dev/null; then \
               setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > escaped.pid; \
             fi; \
             sleep 300 & echo $! > holder.pid; \
             echo started";
        let result = tokio::time::timeout(Duration::from_secs(60), broker.run(sh(script))).await;
        // The pids first, whatever the call answered, so that nothing is left on the host.
        let mut pids = Vec::new();
        for (what, file) in [
            ("background", "bg.pid"),
            ("holding stdout", "holder.pid"),
            ("own session", "escaped.pid"),
        ] {
            if fx.ws.join(file).exists() {
                pids.push((what, read_pid(&fx.ws.join(file))));
            }
        }
        let mut survivors = Vec::new();
        for (what, pid) in &pids {
            if !gone_within_a_few_seconds(*pid).await {
                survivors.push(format!("{what} ({pid})"));
                // Do not leave it behind on the host.
                let _ = rustix::process::kill_process(
                    rustix::process::Pid::from_raw(*pid).unwrap(),
                    rustix::process::Signal::KILL,
                );
            }
        }
        let out = result
            .expect("the call returns when its command ends")
            .unwrap();
        assert!(out.exit.success(), "{}", text(&out.stderr));
        assert!(!out.timed_out);
        assert_eq!(text(&out.stdout), "started\n");
        assert!(pids.len() >= 2, "{pids:?}");
        assert!(
            survivors.is_empty(),
            "ABI {abi:?}: outlived the call: {survivors:?}"
        );
        // The executor itself serves on, warm.
        let next = broker.run(sh("echo alive")).await.unwrap();
        assert_eq!(text(&next.stdout), "alive\n");
        assert!(next.warm);
        broker.shutdown().await;
    }
}
