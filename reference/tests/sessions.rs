//! The library's sessions as an embedding agent uses them, without the protocol: a plane
//! session's toggle (refused without the confirmation, off with it, back on through a
//! fresh probe) and a workspace session's file tools (confinement and the trust map
//! together). Effects are checked from outside.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use gatehouse::fence::{BackendChoice, BackendKind, FenceOptions};
use gatehouse::paths::Backend;
use gatehouse::plane::session::{Refusal, RunTool, Session, SessionSetup, Switch};
use gatehouse::trust::Trust;
use gatehouse::workspace::{self, Answer, Config, Start};

fn helper() -> PathBuf {
    std::env::var_os("GATEHOUSE_JAIL_HELPER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gatehouse")))
}

fn operator() -> FenceOptions {
    FenceOptions {
        backend: BackendChoice::Native,
        helper: Some(helper()),
        ..FenceOptions::default()
    }
}

#[test]
fn the_plane_switches_off_only_with_the_confirmation_and_back_on_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    let mut s = Session::open("embed", SessionSetup::new(&ws), operator()).unwrap();
    assert_eq!(s.posture().backend, BackendKind::Native, "{}", s.posture());

    let refused = s.toggle(Switch::Off, false).unwrap();
    assert_eq!(refused.refused, Some(Refusal::ConfirmationRequired));
    assert_eq!(refused.posture.backend, BackendKind::Native);

    let off = s.toggle(Switch::Off, true).unwrap();
    assert_eq!(off.refused, None);
    assert_eq!(off.posture.backend, BackendKind::Off);
    let ran = s.run(RunTool::Shell, "echo unfenced", None).unwrap();
    assert_eq!((ran.exit, ran.posture.held_by()), (Some(0), "off"));

    let on = s.toggle(Switch::On, false).unwrap();
    assert_eq!(on.posture.backend, BackendKind::Native);
    let ran = s
        .run(RunTool::Shell, "echo x > /etc/gatehouse-escape", None)
        .unwrap();
    assert_ne!(ran.exit, Some(0), "a write outside is refused once back on");
    assert!(!std::path::Path::new("/etc/gatehouse-escape").exists());
    s.close();
}

#[test]
fn a_workspace_session_confines_and_trusts_together() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("proj");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "hi\n").unwrap();
    std::fs::write(base.join("secret.txt"), "no\n").unwrap();
    let config = Config {
        backend: Backend::detect(),
        no_asker: false,
        skip_permissions: false,
        home: None,
    };
    let (mut s, started) = workspace::Session::open(&ws, config, &Start::default()).unwrap();
    assert!(started.started);

    let read = s.read("notes.txt", Answer::No);
    assert_eq!(
        (read.result, read.content.as_deref()),
        ("read", Some("hi\n"))
    );
    assert_eq!(s.read("../secret.txt", Answer::Yes).result, "escape");

    let wrote = s.write("new.txt", b"made\n", Trust::Trusted, Answer::No);
    assert_eq!(wrote.result, "written");
    assert_eq!(std::fs::read(ws.join("new.txt")).unwrap(), b"made\n");
    let outside = s.write("../made.txt", b"x", Trust::Trusted, Answer::Yes);
    assert_eq!(outside.result, "escape");
    assert!(!base.join("made.txt").exists());
}

/// A guarded session over `ws` with its state in `state`: strict, an allow pattern for
/// `cat` and `printf`, a deny for `rm`, and a post_tool_use hook logging its stdin.
fn guarded(
    ws: &std::path::Path,
    state: &std::path::Path,
    resume: bool,
) -> gatehouse::order::GuardedSession {
    use gatehouse::config::AgentFile;
    use gatehouse::gate::{Asker, GateConfig};
    use gatehouse::order::{GuardedSession, SessionConfig};
    let agent = state.with_extension("agent.yaml");
    std::fs::write(
        &agent,
        "agents:\n  root:\n    hooks:\n      post_tool_use:\n        - hooks:\n            - type: command\n              command: \"cat >> post.jsonl; echo '{}'\"\npermissions:\n  allow: [\"shell:cmd=cat*\", \"shell:cmd=printf*\"]\n  deny: [\"shell:cmd=rm*\"]\n",
    )
    .unwrap();
    let mut gate = GateConfig::new(ws);
    gate.asker = Asker::Terminal;
    let mut s = GuardedSession::open(SessionConfig {
        id: "embed".into(),
        gate,
        agent: Some(AgentFile::load(&agent).unwrap()),
        settings: None,
        flag: Some(gatehouse::permissions::Mode::Strict),
        state_dir: state.to_path_buf(),
        roots: vec![ws.to_path_buf()],
        grants: vec![],
        trust: None,
        resume,
    })
    .unwrap();
    let config = Config {
        backend: Backend::detect(),
        no_asker: false,
        skip_permissions: false,
        home: None,
    };
    let (files, _) = workspace::Session::open(ws, config, &Start::default()).unwrap();
    s.attach_files(files).unwrap();
    s
}

#[test]
fn an_acted_call_runs_fenced_and_its_hooks_and_trust_marks_outlive_the_process() {
    use gatehouse::order::session::act::NotRun;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, state) = (root.join("ws"), root.join("state"));
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        ws.join("notes.txt"),
        "alpha\nsk-abcdefghijklmnopqrstuvwxyz0123\n",
    )
    .unwrap();
    std::fs::write(ws.join("victim.txt"), "keep\n").unwrap();
    let mut plane = Session::open("embed", SessionSetup::new(&ws), operator()).unwrap();
    let mut s = guarded(&ws, &state, false);

    let c = s.call("shell", serde_json::json!({"cmd": "cat notes.txt"}), None);
    let a = s.act(&c, &mut plane, Answer::No).unwrap();
    assert_eq!(a.not_run, None);
    let run = a.run.unwrap();
    assert_eq!(run.exit, Some(0));
    assert_eq!(
        run.stdout, "alpha\n[REDACTED]\n",
        "redacted before the model sees it"
    );
    let logged = std::fs::read_to_string(ws.join("post.jsonl")).unwrap();
    let seen: serde_json::Value = serde_json::from_str(logged.lines().next().unwrap()).unwrap();
    assert_eq!(seen["tool_response"]["stdout"], "alpha\n[REDACTED]\n");

    let c = s.call("shell", serde_json::json!({"cmd": "rm victim.txt"}), None);
    assert_eq!(
        s.act(&c, &mut plane, Answer::Yes).unwrap().not_run,
        Some(NotRun::Denied)
    );
    assert!(ws.join("victim.txt").exists(), "a denied call does not run");

    let c = s.call(
        "shell",
        serde_json::json!({"cmd": "printf x > notes.txt"}),
        None,
    );
    let a = s.act(&c, &mut plane, Answer::Yes).unwrap();
    assert_eq!(
        a.marked,
        vec![("notes.txt".to_string(), "marked_untrusted")]
    );
    assert_eq!(std::fs::read_to_string(ws.join("notes.txt")).unwrap(), "x");
    plane.close();
    drop(s);

    // A process started afresh resumes from the record: the mark is there.
    let s = guarded(&ws, &state, true);
    let key = gatehouse::trust::TrustKey::rel("notes.txt");
    assert_eq!(
        s.files().unwrap().map().decision(&key),
        Some(Trust::Untrusted)
    );
    let fresh = guarded(&ws, &root.join("other-state"), false);
    assert_eq!(
        fresh.files().unwrap().map().decision(&key),
        Some(Trust::Trusted),
        "without the record the startup rule trusts it"
    );
}
