//! The library's sessions as an embedding agent uses them, without the protocol: a plane
//! session's toggle (refused without the confirmation, off with it, back on through a
//! fresh probe) and a workspace session's file tools (confinement and the trust map
//! together). Effects are checked from outside.

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
