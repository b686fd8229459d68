//! The common toolchains in the fence with no flag but `--fetch` (FENCE-TOOL-1 to 6): a
//! real build of a small Rust, Python, Node and Go project by `gatehouse exec`, from a
//! fresh temporary home, with each toolchain where its installer put it on this machine
//! (rustup's `RUSTUP_HOME`, pyenv's `PYENV_ROOT`, Debian's `node`, `npm` and `go`), and
//! the guard's rewritten `cargo build` and `cargo test` in a Rust project (issue 46,
//! item 4).
//!
//! Ignored by default: they need the toolchains installed and crates.io, PyPI and the npm
//! registry reachable. `.ci/steps/toolchains.sh` runs them (`-- --ignored`) and times
//! them. A missing toolchain fails the test: nothing here skips.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::backends;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// The variables of the person's shell a fresh home keeps: the certificate authorities
/// this host's tools trust, and the fence's own options.
const KEPT: [&str; 9] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "NODE_EXTRA_CA_CERTS",
    "CURL_CA_BUNDLE",
    "GATEHOUSE_LANDLOCK_MAX_ABI",
    "GATEHOUSE_EMULATE_NO_USERNS",
    "LANG",
];

/// A toolchain's directory: its variable in this process's environment, else its
/// installer's default below this process's home. It must exist.
fn installed(var: &str, default: &str) -> PathBuf {
    let p = std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(default));
    assert!(
        p.is_dir(),
        "{var}: {} is not installed here (these tests need it; .ci/steps/tools.sh)",
        p.display()
    );
    p
}

/// A fresh home with a project directory below it.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let project = home.join("project");
        std::fs::create_dir_all(&project).unwrap();
        Home {
            _dir: dir,
            home,
            project,
        }
    }

    /// A command with this home, `path` as `PATH`, `vars` set, and nothing else of this
    /// process's environment but [`KEPT`].
    fn command(&self, program: &str, path: &str, vars: &[(&str, OsString)]) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("PATH", path);
        for k in KEPT {
            if let Some(v) = std::env::var_os(k) {
                c.env(k, v);
            }
        }
        for (k, v) in vars {
            c.env(k, v);
        }
        c
    }

    /// `gatehouse exec FLAGS -- sh -c SCRIPT` in the project, on `backend`.
    fn exec(
        &self,
        backend: &str,
        path: &str,
        vars: &[(&str, OsString)],
        flags: &[&str],
        script: &str,
    ) -> Output {
        let out = self
            .command(BIN, path, vars)
            .env("GATEHOUSE_FENCE", backend)
            .arg("exec")
            .args(flags)
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{backend}: `{script}` with {flags:?} failed ({:?}):\n{}\n{err}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
        common::assert_ran_on(backend, &err);
        out
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn os(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

/// The toolchain rustup runs by default: the first installed one, stable preferred.
fn rust_toolchain_bin(rustup: &Path) -> PathBuf {
    let mut names: Vec<PathBuf> = std::fs::read_dir(rustup.join("toolchains"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("bin/cargo").is_file())
        .collect();
    names.sort_by_key(|p| {
        !p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("stable")
    });
    names
        .first()
        .expect("no rustup toolchain with cargo installed")
        .join("bin")
}

/// Rust: `cargo new` and `cargo build` with no flag through rustup's proxies (the person's
/// `CARGO_HOME` and `RUSTUP_HOME`, a fresh `HOME`), then a new dependency downloaded from
/// crates.io with `--fetch` alone into a fresh `CARGO_HOME`, whose registry is the one
/// writable directory of its read-only tree; on every backend.
#[test]
#[ignore = "needs rustup installed and crates.io reachable (.ci/steps/toolchains.sh)"]
fn rust_cargo_new_build_and_a_new_dependency() {
    let cargo_home = installed("CARGO_HOME", ".cargo");
    let rustup = installed("RUSTUP_HOME", ".rustup");
    for b in backends() {
        let h = Home::new();
        // The person's layout: rustup's proxies first in PATH.
        let path = format!("{}:/usr/bin:/bin", cargo_home.join("bin").display());
        let vars = [
            ("CARGO_HOME", os(&cargo_home)),
            ("RUSTUP_HOME", os(&rustup)),
        ];
        let o = h.exec(
            b,
            &path,
            &vars,
            &[],
            "cargo new --vcs none -q hello && cd hello && cargo build -q --offline && ./target/debug/hello",
        );
        assert_eq!(stdout(&o), "Hello, world!\n", "{b}");

        // A fresh CARGO_HOME (the registry's first download), the toolchain's binaries
        // where rustup installed them.
        let fresh = h.home.join("cargo-home");
        std::fs::create_dir_all(&fresh).unwrap();
        let path = format!("{}:/usr/bin:/bin", rust_toolchain_bin(&rustup).display());
        let vars = [("CARGO_HOME", os(&fresh)), ("RUSTUP_HOME", os(&rustup))];
        let script = "cargo new --vcs none -q dep && cd dep \
             && printf 'itoa = \"1\"\\n' >> Cargo.toml \
             && printf 'fn main() { println!(\"{}\", itoa::Buffer::new().format(46)); }\\n' > src/main.rs \
             && cargo build -q && ./target/debug/dep";
        let o = h.exec(b, &path, &vars, &["--fetch"], script);
        assert_eq!(stdout(&o), "46\n", "{b}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "extra writable: {}",
                fresh.join("registry").display()
            )),
            "{b}: the posture names the writable registry: {err}"
        );
        assert!(
            std::fs::read_dir(fresh.join("registry/cache"))
                .unwrap()
                .next()
                .is_some(),
            "{b}: the crate was downloaded into the fresh registry"
        );
        // Without --fetch the registry is read-only and the network off.
        let o = h
            .command(BIN, &path, &vars)
            .env("GATEHOUSE_FENCE", b)
            .args([
                "exec",
                "--",
                "sh",
                "-c",
                "touch $CARGO_HOME/registry/planted",
            ])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{b}");
        assert!(!fresh.join("registry/planted").exists(), "{b}");
    }
}

/// A crates.io token in the `CARGO_HOME` made visible stays hidden (FENCE-TOOL-2).
#[test]
#[ignore = "needs rustup installed (.ci/steps/toolchains.sh)"]
fn cargo_credentials_stay_hidden() {
    let rustup = installed("RUSTUP_HOME", ".rustup");
    let h = Home::new();
    let cargo_home = h.home.join(".cargo");
    std::fs::create_dir_all(cargo_home.join("bin")).unwrap();
    std::fs::write(
        cargo_home.join("credentials.toml"),
        "token = \"cio_bait\"\n",
    )
    .unwrap();
    let path = format!("{}:/usr/bin:/bin", rust_toolchain_bin(&rustup).display());
    let o = h.exec(
        "native",
        &path,
        &[("RUSTUP_HOME", os(&rustup))],
        &[],
        "ls $CARGO_HOME/bin >/dev/null || exit 9; cat $CARGO_HOME/credentials.toml || true",
    );
    assert!(!stdout(&o).contains("cio_bait"), "{}", stdout(&o));
}

/// Python: pyenv's `python3` (not the system's) makes a venv and pip installs a package
/// from PyPI into it with `--fetch` alone.
#[test]
#[ignore = "needs pyenv installed and PyPI reachable (.ci/steps/toolchains.sh)"]
fn python_venv_and_pip_install() {
    let pyenv = installed("PYENV_ROOT", ".pyenv");
    let h = Home::new();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        pyenv.join("shims").display(),
        pyenv.join("bin").display()
    );
    let o = h.exec(
        "native",
        &path,
        &[("PYENV_ROOT", os(&pyenv))],
        &["--fetch"],
        "python3 -m venv .venv && .venv/bin/pip install -q --disable-pip-version-check six \
         && .venv/bin/python -c 'import six, sys; print(sys.base_prefix); print(six.__name__)'",
    );
    let out = stdout(&o);
    let mut lines = out.lines();
    let prefix = lines.next().unwrap_or_default();
    assert!(
        Path::new(prefix).starts_with(&pyenv),
        "the venv's python is pyenv's, not the system's: {out}"
    );
    assert_eq!(lines.next(), Some("six"), "{out}");
}

/// Node: `npm install is-number` with `--fetch` alone (Debian's node and npm), and an nvm
/// layout found by `NVM_DIR`, its `bin` kept in `PATH`.
#[test]
#[ignore = "needs node and npm installed and the npm registry reachable (.ci/steps/toolchains.sh)"]
fn node_npm_install_and_an_nvm_layout() {
    assert!(Path::new("/usr/bin/npm").is_file(), "npm is not installed");
    let h = Home::new();
    let o = h.exec(
        "native",
        "/usr/bin:/bin",
        &[],
        &["--fetch"],
        "npm install --no-audit --no-fund -q is-number >/dev/null \
         && node -e 'console.log(require(\"is-number\")(46))'",
    );
    assert_eq!(stdout(&o), "true\n");
    assert!(h
        .project
        .join("node_modules/is-number/package.json")
        .is_file());
    // nvm's layout, made by hand: its node a link to the system's.
    let nvm = h.home.join(".nvm");
    let bin = nvm.join("versions/node/v20.0.0/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/node", bin.join("node")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = h.exec(
        "native",
        &path,
        &[("NVM_DIR", os(&nvm))],
        &[],
        "command -v node && node -e 'console.log(process.env.NVM_DIR)'",
    );
    assert_eq!(
        stdout(&o),
        format!("{}\n{}\n", bin.join("node").display(), nvm.display())
    );
}

/// Go: `go build` of a module (Debian's `golang-go`), with no flag. The module has no
/// external dependency: proxy.golang.org is not reachable from the machines this runs
/// on (only crates.io, PyPI, npm and Debian are).
#[test]
#[ignore = "needs golang-go installed (.ci/steps/toolchains.sh)"]
fn go_build_of_a_module() {
    assert!(Path::new("/usr/bin/go").exists(), "go is not installed");
    let h = Home::new();
    std::fs::write(
        h.project.join("go.mod"),
        "module example.com/hello\n\ngo 1.19\n",
    )
    .unwrap();
    std::fs::write(
        h.project.join("main.go"),
        "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from go\") }\n",
    )
    .unwrap();
    let o = h.exec(
        "native",
        "/usr/bin:/bin",
        &[],
        &[],
        "go build -o hello . && ./hello",
    );
    assert_eq!(stdout(&o), "hello from go\n");
}

/// The guard (issue 46, item 4): the command it rewrites `cargo build && cargo test` into
/// runs in a Rust project with a dependency the host fetched before, with nothing in
/// guard.toml but where its state lives: the toolchain found, the registry read-only, no
/// network.
#[test]
#[ignore = "needs rustup installed and crates.io reachable for the host's fetch (.ci/steps/toolchains.sh)"]
fn the_guards_rewritten_cargo_build_and_test_run() {
    let rustup = installed("RUSTUP_HOME", ".rustup");
    let h = Home::new();
    let cargo_home = h.home.join(".cargo");
    std::fs::create_dir_all(&cargo_home).unwrap();
    let path = format!("{}:/usr/bin:/bin", rust_toolchain_bin(&rustup).display());
    let vars = [("RUSTUP_HOME", os(&rustup))];
    // The person's project, its dependency fetched on the host (the default CARGO_HOME,
    // ~/.cargo of this home).
    let host = |args: &[&str]| {
        let o = h
            .command("cargo", &path, &vars)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    host(&["init", "--vcs", "none", "-q", "--name", "app"]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(h.project.join("Cargo.toml"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"itoa = \"1\"\n"))
        .unwrap();
    std::fs::write(
        h.project.join("src/main.rs"),
        "fn main() { println!(\"{}\", itoa::Buffer::new().format(4)); }\n\
         #[test]\nfn formats() { assert_eq!(itoa::Buffer::new().format(6), \"6\"); }\n",
    )
    .unwrap();
    host(&["fetch", "-q"]);
    // What `gatehouse guard install` leaves: a guard.toml with the state's place.
    let config = h.home.join(".config/gatehouse/guard.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "state-dir = {:?}\n",
            h.home.join(".local/state/gatehouse-guard")
        ),
    )
    .unwrap();
    let pre = serde_json::json!({
        "session_id": "46-cargo", "transcript_path": "/tmp/t.jsonl",
        "cwd": h.project.display().to_string(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo build -q && cargo test -q", "description": "d"},
        "tool_use_id": "c46",
    });
    let mut hook = h
        .command(BIN, &path, &vars)
        .args(["guard", "claude-code"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(hook.stdin.as_mut().unwrap(), pre.to_string().as_bytes()).unwrap();
    drop(hook.stdin.take());
    let out = hook.wait_with_output().unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let line = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no rewritten command: {answer}"));
    assert!(line.contains(" exec "), "{line}");
    let ran = h
        .command("/bin/bash", &path, &vars)
        .args(["-c", line])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "{line}\n{err}");
    assert!(err.contains("network: off"), "{err}");
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("test result: ok. 1 passed"),
        "{}",
        String::from_utf8_lossy(&ran.stdout)
    );
}
