//! The repository's own suite against the fakes: an implementation that allows everything
//! and one that denies everything must each fail somewhere. Skips (with a note) while
//! `scenarios/gate` holds no scenario yet.

mod common;

use std::path::Path;

use common::{fake_command, run_cli};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn has_scenarios() -> bool {
    let gate = repo().join("scenarios/gate");
    let any = std::fs::read_dir(&gate)
        .map(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.path().extension().is_some_and(|x| x == "toml"))
        })
        .unwrap_or(false);
    if !any {
        eprintln!("note: {} holds no scenario yet; skipping", gate.display());
    }
    any
}

fn failed_against(fake: &str) -> u64 {
    let imp = fake_command(fake);
    let run = run_cli(
        repo(),
        &["run", "--quiet", "--format", "json", "--impl", &imp],
    );
    assert_eq!(
        run.code, 1,
        "{fake} must not pass the suite\n{}",
        run.stderr
    );
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json report");
    json["summary"]["failed"].as_u64().unwrap()
}

#[test]
fn allow_all_fails_the_repository_suite() {
    if has_scenarios() {
        assert!(failed_against("allow_all") > 0);
    }
}

#[test]
fn deny_all_fails_the_repository_suite() {
    if has_scenarios() {
        assert!(failed_against("deny_all") > 0);
    }
}
