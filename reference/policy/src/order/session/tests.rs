//! Sessions that are recorded, resumed and damaged.

use super::*;
use crate::gate::Asker;

fn config(ws: &std::path::Path, state: &std::path::Path, resume: bool) -> SessionConfig {
    let mut gate = GateConfig::new(ws);
    gate.asker = Asker::Terminal;
    SessionConfig {
        id: "s-1".into(),
        gate,
        agent: None,
        settings: None,
        flag: None,
        state_dir: state.to_path_buf(),
        roots: vec![ws.to_path_buf()],
        grants: vec![],
        trust: None,
        resume,
    }
}

fn sh(s: &mut GuardedSession, line: &str) -> Ruling {
    let c = s.call("shell", json!({ "cmd": line }), None);
    s.decide(&c).unwrap()
}

#[test]
fn grants_rules_and_mode_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, state) = (dir.path().join("ws"), dir.path().join("state"));
    std::fs::create_dir(&ws).unwrap();
    let mut c = config(&ws, &state, false);
    c.flag = Some(Mode::Balanced);
    let mut s = GuardedSession::open(c).unwrap();
    assert_eq!(sh(&mut s, "git status").decision, Verdict::Ask);
    assert_eq!(
        s.answer(Choice::Family).unwrap().unwrap().saved,
        Some(Grant::family("git"))
    );
    s.add_rule(List::Deny, "shell:cmd=git push*")
        .unwrap()
        .unwrap();
    drop(s);
    let mut s = GuardedSession::open(config(&ws, &state, true)).unwrap();
    assert_eq!(s.policy().mode.mode, Mode::Balanced);
    assert_eq!(sh(&mut s, "git log").decision, Verdict::Allow);
    assert_eq!(sh(&mut s, "git push").decision, Verdict::Deny);
    let outcomes: Vec<&str> = s
        .audit()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["approved", "allowed", "denied"]);
}

#[test]
fn a_corrupt_record_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, state) = (dir.path().join("ws"), dir.path().join("state"));
    std::fs::create_dir(&ws).unwrap();
    drop(GuardedSession::open(config(&ws, &state, false)).unwrap());
    let rec = state.join("sessions/s-1/session.json");
    std::fs::write(&rec, b"{\"version\": 1, \"sess").unwrap();
    let e = GuardedSession::open(config(&ws, &state, true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("session.json: corrupt record"), "{e}");
    assert_eq!(std::fs::read(&rec).unwrap(), b"{\"version\": 1, \"sess");
}

#[test]
fn a_state_directory_inside_the_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let e = GuardedSession::open(config(&ws, &ws.join(".state"), false)).unwrap_err();
    assert!(matches!(
        e,
        SessionError::Record(RecordError::InsideWorkspace { .. })
    ));
}

#[test]
fn resume_without_a_record_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let e = GuardedSession::open(config(&ws, &dir.path().join("st"), true)).unwrap_err();
    assert!(matches!(e, SessionError::NothingToResume(_)));
}
