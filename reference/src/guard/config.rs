//! The guard's configuration (`guard.toml`), read strictly: where the state lives, the
//! agent file and settings file whose patterns, hooks and mode the library applies, the
//! allow-list, fixed workspace roots, and the fence's choices every allowed command is
//! run with (`[exec]`: network, environment, extra paths).
//!
//! ```toml
//! # Optional: fixed roots. Default: the directory the agent reports at the session's
//! # first call, kept for the whole session.
//! workspaces = ["/home/me/src/app"]
//! settings-file = "/home/me/.config/gatehouse/settings.yaml"
//! allow = ["make test"]
//! [exec]
//! network = "allow-list"
//! allow-domains = ["registry.npmjs.org"]
//! pass-env = ["CARGO_HOME"]
//! ```
//!
//! Found at `--config FILE`, else `$GATEHOUSE_GUARD_CONFIG`, else
//! `$XDG_CONFIG_HOME/gatehouse/guard.toml` (or `~/.config/gatehouse/guard.toml`). A
//! missing or invalid file is an error: the guard blocks every call until it is fixed.
//!
//! Reads one file; writes nothing.

use crate::choices::table::{Flags, KnownKey, Raw, Slot, TABLE};
use crate::permissions::Mode;
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable naming the configuration file.
pub const CONFIG_ENV: &str = "GATEHOUSE_GUARD_CONFIG";

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GuardConfig {
    /// Fixed workspace roots (absolute); empty: the session's first `cwd`.
    #[serde(default)]
    pub workspaces: Vec<PathBuf>,
    /// The state directory (absolute); default `$XDG_STATE_HOME/gatehouse/guard`.
    #[serde(default)]
    pub state_dir: Option<PathBuf>,
    /// An agent file (permissions, hooks, `redact_secrets`).
    #[serde(default)]
    pub agent_file: Option<PathBuf>,
    /// The person's settings file (permissions, safety mode).
    #[serde(default)]
    pub settings_file: Option<PathBuf>,
    /// The safety mode, as a start flag would give it.
    #[serde(default)]
    pub safety: Option<String>,
    /// Literal lines of the installation's allow-list.
    #[serde(default)]
    pub allow: Vec<String>,
    /// The shell an allowed command line runs with in the fence (default `/bin/bash`
    /// where it exists, else `/bin/sh`).
    #[serde(default)]
    pub shell: Option<PathBuf>,
    /// The `gatehouse` program the rewritten command calls (default: this program).
    #[serde(default)]
    pub gatehouse: Option<PathBuf>,
    /// The fence's choices.
    #[serde(default)]
    pub exec: ExecChoices,
    /// The file it was read from (not a key of the file): what the guard keeps out of
    /// every workspace root and out of the jail's reach.
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

/// The fence's choices for every allowed command, as `gatehouse exec` flags: the rows of
/// the table of choices ([`crate::choices::table`]) with a `guard` key, each read in its
/// kind's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecChoices(pub Flags);

impl ExecChoices {
    /// The choices as given.
    pub fn flags(&self) -> &Flags {
        &self.0
    }
}

/// The `[exec]` keys, in the table's order: what an unknown key's error lists.
fn exec_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| TABLE.iter().filter_map(|s| s.guard).collect())
}

impl<'de> Deserialize<'de> for ExecChoices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ExecChoices, D::Error> {
        struct Exec;
        impl<'de> Visitor<'de> for Exec {
            type Value = ExecChoices;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the [exec] table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ExecChoices, A::Error> {
                let mut flags = Flags::default();
                while let Some(key) = m.next_key_seed(KnownKey(exec_keys()))? {
                    let Some(spec) = TABLE.iter().find(|s| s.guard == Some(key.as_str())) else {
                        return Err(A::Error::unknown_field(&key, exec_keys()));
                    };
                    let raw = match spec.slot {
                        Slot::Switch => Raw::Switch(m.next_value()?),
                        Slot::Paths => Raw::Paths(m.next_value()?),
                        Slot::Pairs => Raw::Map(
                            m.next_value::<BTreeMap<String, String>>()?
                                .into_iter()
                                .collect(),
                        ),
                        Slot::Domains | Slot::Names => Raw::List(m.next_value()?),
                        Slot::Mode | Slot::Text => Raw::One(m.next_value()?),
                    };
                    flags.set(spec, raw);
                }
                Ok(ExecChoices(flags))
            }
        }
        d.deserialize_map(Exec)
    }
}

/// The configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No file was found where it is looked for.
    #[error("no guard configuration at {0} (run `gatehouse guard install`, or set {CONFIG_ENV})")]
    Missing(PathBuf),
    /// Neither `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("no guard configuration: neither {CONFIG_ENV}, XDG_CONFIG_HOME nor HOME is set")]
    Nowhere,
    /// The file cannot be read.
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    /// The file is not valid.
    #[error("{0}: {1}")]
    Invalid(PathBuf, String),
}

/// Where the configuration is looked for: `flag`, else [`CONFIG_ENV`], else the user's
/// configuration directory.
pub fn config_path(flag: Option<&Path>) -> Result<PathBuf, ConfigError> {
    if let Some(f) = flag {
        return Ok(f.to_path_buf());
    }
    if let Some(f) = std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(f));
    }
    user_dir("XDG_CONFIG_HOME", ".config")
        .map(|d| d.join("gatehouse").join("guard.toml"))
        .ok_or(ConfigError::Nowhere)
}

/// `$VAR`, or `$HOME/fallback`, when absolute.
pub fn user_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    let from_var = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    from_var.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(fallback))
    })
}

impl GuardConfig {
    /// Reads and checks `file`.
    pub fn load(file: &Path) -> Result<GuardConfig, ConfigError> {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ConfigError::Missing(file.to_path_buf()))
            }
            Err(e) => return Err(ConfigError::Read(file.to_path_buf(), e)),
        };
        GuardConfig::parse(file, &text)
    }

    /// Parses and checks `text` as the contents of `file`.
    pub fn parse(file: &Path, text: &str) -> Result<GuardConfig, ConfigError> {
        let invalid = |m: String| ConfigError::Invalid(file.to_path_buf(), m);
        let c: GuardConfig = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if let Some(s) = &c.safety {
            if Mode::parse(s).is_none() {
                return Err(invalid(format!("safety: unknown mode {s:?}")));
            }
        }
        let paths = c
            .workspaces
            .iter()
            .chain(&c.state_dir)
            .chain(&c.agent_file)
            .chain(&c.settings_file)
            .chain(&c.shell)
            .chain(&c.gatehouse);
        for p in paths {
            if !p.is_absolute() {
                return Err(invalid(format!("{} is not an absolute path", p.display())));
            }
        }
        // Each choice checked by its slot, before it is written into a command line: a
        // name `gatehouse exec` would refuse (FENCE-ENV-11) is refused here with its key.
        for (spec, raw) in c.exec.0.given() {
            let key = spec.guard.unwrap_or(spec.name);
            match raw {
                Raw::One(v) => spec
                    .slot
                    .check_one(v)
                    .map_err(|e| invalid(format!("exec.{key}: {e}")))?,
                Raw::Paths(ps) => {
                    if let Some(p) = ps.iter().find(|p| !p.is_absolute()) {
                        return Err(invalid(format!("{} is not an absolute path", p.display())));
                    }
                }
                Raw::Map(kv) => {
                    if let Some((k, _)) = kv.iter().find(|(k, v)| {
                        k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0')
                    }) {
                        return Err(invalid(format!("exec.{key}: {k:?} cannot be set")));
                    }
                }
                Raw::List(names) if spec.slot == Slot::Names => {
                    if let Some(n) = names.iter().find(|n| {
                        n.is_empty() || n.contains('=') || n.chars().any(char::is_control)
                    }) {
                        return Err(invalid(format!("exec.{key}: {n:?} is no variable name")));
                    }
                }
                Raw::List(_) | Raw::Switch(_) => {}
            }
        }
        let mut c = c;
        c.file = Some(file.to_path_buf());
        Ok(c)
    }

    /// The mode a start flag would give, checked at load.
    pub fn mode(&self) -> Option<Mode> {
        self.safety.as_deref().and_then(Mode::parse)
    }

    /// The state directory.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir.clone().or_else(|| {
            user_dir("XDG_STATE_HOME", ".local/state").map(|d| d.join("gatehouse").join("guard"))
        })
    }
}
