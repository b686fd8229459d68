//! `cargo xtask`: the project's own commands, run through the alias in `.cargo/config.toml`.
//!
//! - `cargo xtask test [ARGS...]`: the README's test command. It makes sure cargo-nextest is
//!   there (installing the pinned version with `cargo install --locked` when it is not),
//!   then runs the workspace's tests under it with the profile of `.config/nextest.toml`
//!   (`NEXTEST_PROFILE=ci` in CI). ARGS go to `cargo nextest run` as they are. It counts
//!   the run from its JUnit file ([`junit`]): passed, skipped (each skipped test named
//!   with its reasons: a test that printed [`skip`]'s line never counts as passed) and
//!   failed; the tests nextest did not run at all (`#[ignore]`d, or left out by a filter),
//!   which its JUnit file leaves out, are counted as skipped too, from nextest's own
//!   summary line (its standard error is relayed line by line as it comes). Then the
//!   Python package's unit tests (`pyproject.toml`: the adapters and the fakes).
//!
//! This crate touches nothing but the processes it starts and the JUnit file it reads; it
//! has no dependencies.

mod junit;
// The tests' skip helper, included here for its marker (the tests call `skip` itself).
#[allow(dead_code)]
mod skip;

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

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
        // A file left by an earlier run must not be counted as this one's.
        let report = junit_path(&extra);
        let _ = std::fs::remove_file(&report);
        let (tests, not_run) = nextest_step(&nextest, &extra);
        // A run that failed before any test ran has no file to count: its failure says why.
        let counted = if tests.is_ok() || report.exists() {
            count(&report, not_run)
        } else {
            Ok(())
        };
        tests?;
        counted?;
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

/// The nextest profile of this run: `--profile`/`-P` among ARGS, else `NEXTEST_PROFILE`,
/// else `default`.
fn profile(extra: &[String]) -> String {
    let mut args = extra.iter();
    let mut named = None;
    while let Some(a) = args.next() {
        if a == "--profile" || a == "-P" {
            named = args.next().cloned();
        } else if let Some(p) = a.strip_prefix("--profile=") {
            named = Some(p.to_string());
        }
    }
    named
        .or_else(|| std::env::var("NEXTEST_PROFILE").ok())
        .unwrap_or_else(|| "default".into())
}

/// Where nextest writes the profile's JUnit file: `target/nextest/<profile>/junit.xml`
/// under the workspace's root whatever `CARGO_TARGET_DIR` says (`[store]` and
/// `junit.path` in `.config/nextest.toml`; nextest takes the store's directory from the
/// workspace root).
fn junit_path(extra: &[String]) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/nextest")
        .join(profile(extra))
        .join("junit.xml")
}

/// Runs `cargo nextest run` as [`cargo_step`] does, relaying its standard error line by
/// line, and returns with its result the number of tests its summary line says it
/// skipped (`None` when no such line was seen).
fn nextest_step(args: &[&str], extra: &[String]) -> (Result<(), ExitCode>, Option<usize>) {
    let mut cmd = cargo();
    cmd.args(args).args(extra).stderr(Stdio::piped());
    // Piped, nextest would drop its colours; a terminal keeps them.
    let color_given = extra.iter().any(|a| a.starts_with("--color"));
    if std::io::stderr().is_terminal() && !color_given {
        cmd.arg("--color=always");
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cargo xtask: cannot run cargo for the tests: {e}");
            return (Err(ExitCode::FAILURE), None);
        }
    };
    let mut not_run = None;
    if let Some(err) = child.stderr.take() {
        let mut out = std::io::stderr();
        for line in BufReader::new(err).split(b'\n').map_while(Result::ok) {
            let _ = out.write_all(&line);
            let _ = out.write_all(b"\n");
            if let Some(n) = junit::nextest_skipped(&String::from_utf8_lossy(&line)) {
                not_run = Some(n);
            }
        }
    }
    let result = match child.wait() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => {
            eprintln!("cargo xtask: the tests failed ({s})");
            Err(ExitCode::from(
                s.code().map_or(1, |c| c.clamp(1, 255) as u8),
            ))
        }
        Err(e) => {
            eprintln!("cargo xtask: cannot wait for the tests: {e}");
            Err(ExitCode::FAILURE)
        }
    };
    (result, not_run)
}

/// Prints the count of the run's JUnit file, with the `not_run` tests nextest skipped
/// (absent from the file) counted as skipped; `Err` when there is none to read (the run
/// did not get as far as writing it) or it cannot be read.
fn count(report: &std::path::Path, not_run: Option<usize>) -> Result<(), ExitCode> {
    let xml = std::fs::read_to_string(report).map_err(|e| {
        eprintln!(
            "cargo xtask: no count of passed and skipped tests: cannot read {}: {e}",
            report.display()
        );
        ExitCode::FAILURE
    })?;
    let cases = junit::parse(&xml).map_err(|e| {
        eprintln!("cargo xtask: {}: {e}", report.display());
        ExitCode::FAILURE
    })?;
    for line in junit::summary(&cases, not_run.unwrap_or(0)) {
        eprintln!("cargo xtask: {line}");
    }
    Ok(())
}
