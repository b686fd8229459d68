//! `cargo xtask`: the project's own commands, run through the alias in `.cargo/config.toml`.
//!
//! - `cargo xtask test [ARGS...]`: the README's test command. It makes sure cargo-nextest is
//!   there (installing the pinned version with `cargo install --locked` when it is not),
//!   then runs the workspace's tests under it with the profile of `.config/nextest.toml`
//!   (`--profile ci` in CI, for the JUnit file). ARGS go to `cargo nextest run` as they are.
//!   Then the Python package's unit tests (`pyproject.toml`: the adapters and the fakes).
//!
//! This crate touches nothing but the processes it starts; it has no dependencies.

use std::process::{Command, ExitCode};

/// The cargo-nextest installed when none is found: the version this machine's image ships.
const NEXTEST_VERSION: &str = "0.9.143";

const USAGE: &str = "usage: cargo xtask test [ARGS...]   (ARGS go to `cargo nextest run`)";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("test") => test(args.collect()),
        Some("help") | Some("--help") | Some("-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
        Some(other) => {
            eprintln!("cargo xtask: unknown command `{other}` (try `cargo xtask help`)");
            ExitCode::from(2)
        }
    }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Whether `cargo nextest` answers.
fn nextest_present() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cargo ARGS...`; `Err` with the exit code to end with (its own status, or 1 when
/// cargo could not start), after one line saying which step failed.
fn cargo_step(what: &str, args: &[&str], extra: &[String]) -> Result<(), ExitCode> {
    match cargo().args(args).args(extra).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => {
            eprintln!("cargo xtask: {what} failed ({s})");
            Err(ExitCode::from(
                s.code().map_or(1, |c| c.clamp(1, 255) as u8),
            ))
        }
        Err(e) => {
            eprintln!("cargo xtask: cannot run cargo for {what}: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

fn test(extra: Vec<String>) -> ExitCode {
    let steps = || -> Result<(), ExitCode> {
        if !nextest_present() {
            eprintln!(
                "cargo xtask: cargo-nextest is not installed; installing {NEXTEST_VERSION} with `cargo install --locked` (once per machine)"
            );
            let install = [
                "install",
                "--locked",
                "cargo-nextest",
                "--version",
                NEXTEST_VERSION,
            ];
            cargo_step("installing cargo-nextest", &install, &[])?;
        }
        // The benches crate holds no tests; `.ci/run` compiles its benchmarks on their own.
        let workspace = ["--workspace", "--exclude", "gatehouse-benches", "--locked"];
        let nextest = [&["nextest", "run"][..], &workspace].concat();
        cargo_step("the tests", &nextest, &extra)?;
        // nextest runs no doctests; the one example in the reference's docs is compiled here.
        let doctests = [&["test", "--doc", "-q"][..], &workspace].concat();
        cargo_step("the doctests", &doctests, &[])?;
        python_tests()
    };
    match steps() {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// The Python package's unit tests (conformance/adapters/**/test_*.py), run from the
/// repository's root, the package's import root; `Err` as `cargo_step` gives it.
fn python_tests() -> Result<(), ExitCode> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let discover = "-m unittest discover -s conformance/adapters -t .".split(' ');
    let python = Command::new("python3")
        .args(discover)
        .current_dir(&root)
        .status();
    match python {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => {
            eprintln!("cargo xtask: the Python unit tests failed ({s})");
            Err(ExitCode::from(
                s.code().map_or(1, |c| c.clamp(1, 255) as u8),
            ))
        }
        Err(e) => {
            eprintln!("cargo xtask: cannot run python3 for the Python unit tests: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}
