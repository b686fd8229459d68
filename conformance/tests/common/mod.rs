//! Helpers for the integration tests: a tiny spec and scenario tree in a temporary
//! directory, and running the real `gatehouse-conform` binary on it against a fake.
// The tests' helpers panic to fail the test that called them.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// A spec chapter defining the IDs the test scenarios cite.
pub const CHAPTER: &str = "# Test chapter\n\n\
- **[GATE-T-1]** The gate MUST ask for what is not read-only.\n\
- **[GATE-T-2]** The gate MUST save what it says it saved.\n\
- **[GATE-T-3]** The gate SHOULD keep a card open for its window.\n";

/// A temporary suite: `spec/` and `scenarios/` side by side.
pub struct Suite {
    pub dir: tempfile::TempDir,
}

impl Suite {
    pub fn new() -> Suite {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("spec")).unwrap();
        std::fs::create_dir_all(dir.path().join("scenarios/gate")).unwrap();
        std::fs::write(dir.path().join("spec/test-chapter.md"), CHAPTER).unwrap();
        Suite { dir }
    }

    pub fn scenario(&self, id: &str, toml: &str) -> &Self {
        let path = self.dir.path().join("scenarios").join(format!("{id}.toml"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, toml).unwrap();
        self
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `gatehouse-conform run` against a fake, JSON to stdout.
    pub fn run(&self, fake: &str, extra: &[&str]) -> Run {
        let mut args = vec!["run", "--format", "json", "--quiet"];
        args.extend_from_slice(extra);
        let imp = fake_command(fake);
        args.extend_from_slice(&["--impl", &imp]);
        run_cli(self.dir.path(), &args)
    }
}

impl Suite {
    /// `gatehouse-conform run` against the adapter command `imp`, JSON to stdout.
    pub fn run_with_impl(&self, imp: &str) -> Run {
        run_cli(
            self.dir.path(),
            &["run", "--format", "json", "--quiet", "--impl", imp],
        )
    }
}

/// `python3 .../tests/fakes/NAME.py`.
pub fn fake_command(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fakes")
        .join(format!("{name}.py"));
    format!("python3 {}", path.display())
}

/// The result of one invocation.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The scenario record with this id.
    pub fn scenario(&self, id: &str) -> Value {
        let json = self.json();
        json["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no scenario {id} in {json:#}"))
    }

    /// The ids of the scenarios the JSON report lists, in its order.
    pub fn ids(&self) -> Vec<String> {
        ids_of(&self.json())
    }
}

/// The ids of the scenarios a JSON report lists, in its order.
pub fn ids_of(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .expect("a report lists its scenarios")
        .iter()
        .map(|s| s["id"].as_str().expect("a scenario has an id").to_string())
        .collect()
}

pub fn run_cli(cwd: &Path, args: &[&str]) -> Run {
    let out: Output = std::process::Command::new(env!("CARGO_BIN_EXE_gatehouse-conform"))
        .current_dir(cwd)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(args)
        .output()
        .expect("runner starts");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A table file: `ls` allowed, `ls @OUTSIDE@/secret.txt` asks.
pub const READ_LIST: &str = r#"
title = "`ls` runs, `ls` of a path outside the workspace asks"
requirements = ["GATE-T-1"]
tier = "decision"
capabilities = ["gate"]

[fixture.outside]
files = { "secret.txt" = "not yours\n" }

[[case]]
name = "bare"
decide = "ls"
expect = { decision = "allow" }

[[case]]
name = "outside"
decide = "ls @OUTSIDE@/secret.txt"
expect = { decision = "ask", route = "card" }
"#;

/// A sequence that only lists grants: passes against any fake that shakes hands.
pub const GRANTS_ONLY: &str = r#"
title = "An empty grant table lists empty"
requirements = ["GATE-T-2"]
tier = "decision"

[[step]]
grants = true
expect = { grants = [] }
"#;
