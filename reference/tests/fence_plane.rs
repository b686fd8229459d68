//! The execution plane, for real: a broker with a pool of fenced executors runs commands,
//! scrubs the environment, survives an executor's death, keeps its session log out of the
//! tools' reach, and switches a session's fence off only with the confirmation. Effects are
//! checked from outside.

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
