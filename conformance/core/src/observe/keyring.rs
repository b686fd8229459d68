//! The keyring bait (FENCE-JAIL-19): on Linux the runner starts the implementation in a
//! session keyring of its own, named for the run, holding one user key whose payload is a
//! token fresh for the run. Everything the implementation starts inherits that session
//! keyring, as every process inherits its launcher's, so a jail that leaves the kernel's
//! keyrings reachable lets jailed code read, change or add to it. `check.no_bait` knows
//! the payload, and `check.keyring_unchanged` reads the keyring back after a step.
//!
//! The runner has no unsafe code and the standard library no keyring call, so python3
//! (which every `execute_code` scenario needs anyway) does the two system calls: it
//! plants the key and then becomes the implementation by `exec` (`keyring.py plant`), and
//! it joins the named keyring to list it (`keyring.py check`). Where python3 or the
//! kernel's keys are missing nothing is planted, the implementation starts as given, and
//! scenarios that declare `[platform] keyring_bait = true` are skipped with the reason.
//!
//! May touch: one directory of its own under the system's temporary directory (the
//! script and the planting's status), removed when the run ends.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::protocol::client::ImplCommand;

/// The helper script, written beside the status file.
const SCRIPT: &str = include_str!("keyring.py");
/// The description of the planted key.
pub const KEY: &str = "gatehouse-bait";

/// A keyring bait for one run.
#[derive(Debug, Clone)]
pub struct Keyring {
    /// The session keyring's name (fresh for the run).
    name: String,
    /// The planted key's payload.
    pub payload: String,
    /// The python interpreter's own path (`sys.executable`).
    python: String,
    dir: PathBuf,
}

impl Keyring {
    /// A bait for the run whose token is `token`: `None` off Linux or without python3.
    pub fn new(token: &str) -> Option<Keyring> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        // The interpreter itself, not a version manager's shim in front of it: a shim
        // (pyenv, asdf) changes `PATH` before it starts python, and the implementation,
        // which the planting script becomes, must start with the environment the runner
        // gave it, not with the shim's `PATH` (a jail then looks for its own python3 in
        // a directory it hides).
        let found = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let python = String::from_utf8(found.stdout).ok()?.trim().to_string();
        if python.is_empty() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "gatehouse-conform-keyring-{}-{token}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(dir.join("keyring.py"), SCRIPT).ok()?;
        Some(Keyring {
            name: format!("gatehouse-conform-{token}"),
            payload: format!("FAKE-KEYRING-KEY-{token}"),
            python,
            dir,
        })
    }

    fn status_file(&self) -> PathBuf {
        self.dir.join("status")
    }

    fn script(&self) -> String {
        self.dir.join("keyring.py").display().to_string()
    }

    /// `command` started through the planting script (which `exec`s it).
    pub fn wrap(&self, command: &ImplCommand) -> ImplCommand {
        let head = vec![
            self.python.clone(),
            self.script(),
            "plant".to_string(),
            self.name.clone(),
            self.payload.clone(),
            self.status_file().display().to_string(),
            "--".to_string(),
        ];
        match command {
            ImplCommand::Argv(argv) => {
                ImplCommand::Argv(head.into_iter().chain(argv.clone()).collect())
            }
            // Still one shell, so that the runner's process group holds the whole tree.
            ImplCommand::Shell(s) => {
                let words: Vec<String> = head
                    .iter()
                    .chain(["sh".to_string(), "-c".to_string(), s.clone()].iter())
                    .map(|w| quote(w))
                    .collect();
                ImplCommand::Shell(format!("exec {}", words.join(" ")))
            }
        }
    }

    /// Whether the last start planted the key: `Err` with the script's reason.
    pub fn planted(&self) -> Result<(), NotPlanted> {
        let status = std::fs::read_to_string(self.status_file()).map_err(NotPlanted::NoStatus)?;
        match status.trim_end().strip_prefix("planted ") {
            Some(_) => Ok(()),
            None => Err(NotPlanted::Refused(status.trim_end().to_string())),
        }
    }

    /// What differs in the named keyring from the one key planted, as check lines.
    pub fn changed(&self) -> Vec<String> {
        if let Err(why) = self.planted() {
            return vec![format!("no key was planted: {why}")];
        }
        let out = Command::new("python3")
            .args([self.script(), "check".to_string(), self.name.clone()])
            .stdin(Stdio::null())
            .output();
        let out = match out {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                return vec![format!(
                    "the keyring cannot be read back: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )]
            }
            Err(e) => return vec![format!("the keyring cannot be read back: {e}")],
        };
        let want = format!("{KEY}\t{}", hex(self.payload.as_bytes()));
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        let mut m = Vec::new();
        if !lines.contains(&want.as_str()) {
            m.push(format!(
                "the planted key `{KEY}` is gone or its payload changed"
            ));
        }
        for l in lines.iter().filter(|l| **l != want) {
            m.push(format!(
                "the keyring holds a key the runner did not plant: {l}"
            ));
        }
        m
    }

    /// Removes the script and the status (the keyring dies with its last process).
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One word for `sh`, single-quoted.
fn quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

/// Why the keyring bait is not in place.
#[derive(Debug, thiserror::Error)]
pub enum NotPlanted {
    /// The planting script left no status file.
    #[error("the planting left no status: {0}")]
    NoStatus(std::io::Error),
    /// The script said why it could not plant the key.
    #[error("{0}")]
    Refused(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_command_stays_one_shell() {
        let k = Keyring {
            name: "n".into(),
            payload: "p".into(),
            python: "/usr/bin/python3".into(),
            dir: "/t".into(),
        };
        let ImplCommand::Shell(s) = k.wrap(&ImplCommand::Shell("a 'b' | c".into())) else {
            panic!("not a shell command");
        };
        assert_eq!(
            s,
            r"exec '/usr/bin/python3' '/t/keyring.py' 'plant' 'n' 'p' '/t/status' '--' 'sh' '-c' 'a '\''b'\'' | c'"
        );
        let ImplCommand::Argv(a) = k.wrap(&ImplCommand::Argv(vec!["x".into()])) else {
            panic!("not argv");
        };
        assert_eq!(a.last().map(String::as_str), Some("x"));
        assert_eq!(hex(b"AZ"), "415a");
    }
}
