//! The person's settings file (PERM-FILE-1, -3): `settings:` with the person's own
//! `safety` mode and `permissions`, read strictly.
//!
//! ```yaml
//! settings:
//!   safety: restricted
//!   permissions:
//!     deny: ["shell:cmd=git push*"]
//! ```

use super::{parse_yaml, read_yaml, ConfigError};
use crate::permissions::{Mode, PatternLists, RuleSet, Source};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    /// The settings.
    #[serde(default)]
    pub settings: Settings,
}

/// The person's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The person's mode.
    #[serde(default)]
    pub safety: Option<String>,
    /// The person's patterns.
    #[serde(default)]
    pub permissions: PatternLists,
}

/// A settings file that loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSettings {
    /// The file.
    pub file: PathBuf,
    /// The person's mode.
    pub safety: Option<Mode>,
    /// The person's patterns.
    pub permissions: PatternLists,
}

impl SettingsFile {
    /// Reads and checks `file`.
    pub fn load(file: &Path) -> Result<LoadedSettings, ConfigError> {
        let parsed: SettingsFile = read_yaml(file)?;
        parsed.check(file)
    }

    /// Parses and checks `text` as the contents of `file`.
    pub fn parse(file: &Path, text: &str) -> Result<LoadedSettings, ConfigError> {
        let parsed: SettingsFile = parse_yaml(file, text)?;
        parsed.check(file)
    }

    fn check(self, file: &Path) -> Result<LoadedSettings, ConfigError> {
        let safety = match self.settings.safety.as_deref() {
            None => None,
            Some(s) => Some(Mode::parse(s).ok_or_else(|| ConfigError::Invalid {
                file: file.to_path_buf(),
                path: "settings.safety".into(),
                message: format!("`{s}` is not a mode (strict, balanced, restricted, autonomous)"),
            })?),
        };
        RuleSet::new().add(
            Source::Settings(file.to_path_buf()),
            &self.settings.permissions,
        )?;
        Ok(LoadedSettings {
            file: file.to_path_buf(),
            safety,
            permissions: self.settings.permissions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_and_refuses_strictly() {
        let p = Path::new("config.yaml");
        let s = SettingsFile::parse(
            p,
            "settings:\n  safety: yolo\n  permissions:\n    deny: [\"shell:cmd=git push*\"]\n",
        )
        .unwrap();
        assert_eq!(s.safety, Some(Mode::Autonomous));
        assert_eq!(s.permissions.deny.len(), 1);
        let e = SettingsFile::parse(p, "settings:\n  safty: strict\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("config.yaml: settings: unknown field `safty`"),
            "{e}"
        );
        let e = SettingsFile::parse(p, "settings:\n  permissions:\n    ask: [\"shell:\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("settings config.yaml: permissions.ask[0] \"shell:\": position 6"),
            "{e}"
        );
        assert_eq!(SettingsFile::parse(p, "{}\n").unwrap().safety, None);
    }
}
