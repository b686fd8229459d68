//! The repository's own suite against the fakes: an implementation that allows everything
//! and one that denies everything must each fail somewhere. Without the scenarios folder
//! (or with it empty) these tests fail.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{fake_command, run_cli};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The repository's scenarios must be there: a suite that lost its folder fails loudly
/// instead of passing with nothing to run.
fn assert_has_scenarios() {
    let dir = repo().join("scenarios");
    let count = walk(&dir);
    assert!(
        count > 0,
        "{} holds no scenario file: the suite has nothing to run",
        dir.display()
    );
}

fn walk(dir: &Path) -> usize {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .map(|p| {
            if p.is_dir() {
                walk(&p)
            } else {
                usize::from(p.extension().is_some_and(|x| x == "toml"))
            }
        })
        .sum()
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
    assert_has_scenarios();
    assert!(failed_against("allow_all") > 0);
}

#[test]
fn deny_all_fails_the_repository_suite() {
    assert_has_scenarios();
    assert!(failed_against("deny_all") > 0);
}

/// The `MAJOR.MINOR` after `marker` in `text`, e.g. `Protocol version: **1.5**`.
fn version_after(text: &str, marker: &str) -> Option<String> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let version: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Some(version.trim_end_matches('.').to_string())
}

/// The scenario format's page names the protocol version the spec defines: a reader of
/// `scenarios/README.md` must not be sent to an older protocol.
#[test]
fn the_scenarios_readme_names_the_current_protocol_version() {
    let read = |rel: &str| std::fs::read_to_string(repo().join(rel)).expect(rel);
    let spec = version_after(&read("spec/adapter-protocol.md"), "Protocol version:")
        .expect("spec/adapter-protocol.md names its version");
    let readme = version_after(
        &read("scenarios/README.md"),
        "adapter-protocol.md`, version",
    )
    .expect("scenarios/README.md names the protocol version");
    assert_eq!(
        readme, spec,
        "scenarios/README.md names protocol {readme}, the spec defines {spec}"
    );
}
