//! The translator of capability `gate`: turns the `setup` of an `open` request into the
//! gate's configuration and the grants saved before the session, strictly: a value it cannot honour is `unsupported`
//! (PROTO-SESSION-2). The session is the guarded one of [`super::order`], through
//! whose order the steps (`decide`, `answer`, `grants`, `revoke`, `audit`) go.
//!
//! Touches the filesystem only to resolve the workspace.

use super::wire::{field, WireError};
use gatehouse::gate::{Asker, CardWindows, GateConfig, Grant, Host};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

/// The setup fields of the gate (the workspace and home are every capability's).
pub const SETUP_FIELDS: &[&str] = &[
    "workspace",
    "home",
    "host",
    "asker",
    "allow_list",
    "grants",
    "card_window_ms",
];

/// The gate's configuration and the grants saved before the session, from the setup.
pub fn gate_config(setup: &Map<String, Value>) -> Result<(GateConfig, Vec<Grant>), WireError> {
    let workspace: PathBuf = field(setup, "workspace")?
        .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
    // `home` is accepted and needs nothing: a leading `~` is outside whatever it names.
    let _home: Option<PathBuf> = field(setup, "home")?;
    let host: Host = field(setup, "host")?.unwrap_or_default();
    let asker: Asker = field(setup, "asker")?.unwrap_or_default();
    let allow_list: Vec<String> = field(setup, "allow_list")?.unwrap_or_default();
    let grants: Vec<Grant> = field(setup, "grants")?.unwrap_or_default();
    let window_ms: Option<u64> = field(setup, "card_window_ms")?;

    let mut windows = CardWindows::default();
    if let (Some(ms), Some(channel)) = (window_ms, asker.channel()) {
        windows = windows
            .with(channel, Duration::from_millis(ms))
            .map_err(|e| WireError::unsupported(e.to_string()))?;
    }
    let config = GateConfig {
        workspace,
        host,
        asker,
        allow_list,
        windows,
    };
    if !config.workspace.is_dir() {
        return Err(WireError::error(format!(
            "the workspace {} is not a directory",
            config.workspace.display()
        )));
    }
    Ok((config, grants))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn opens_a_full_setup() {
        let dir = tempfile::tempdir().unwrap();
        let (_, grants) = gate_config(&setup(json!({
            "workspace": dir.path(), "home": "/nonexistent", "host": "posix",
            "asker": "terminal", "allow_list": [],
            "grants": [{"kind": "family", "key": "git"}, {"kind": "exact", "key": "x", "tool": "execute_code"}],
            "card_window_ms": null
        })))
        .unwrap();
        assert_eq!(grants.len(), 2);
    }

    #[test]
    fn unknown_fields_and_values_are_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            json!({"workspace": dir.path(), "host": "plan9"}),
            json!({"workspace": dir.path(), "asker": "pigeon"}),
            json!({"workspace": dir.path(), "grants": [{"kind": "glob", "key": "x"}]}),
            json!({"workspace": dir.path(), "grants": [{"kind": "exact", "key": "x", "scope": 1}]}),
            json!({"workspace": dir.path(), "asker": "speech", "card_window_ms": 60000}),
            json!({"workspace": dir.path(), "card_window_ms": -1}),
        ] {
            let err = gate_config(&setup(bad.clone())).unwrap_err();
            assert_eq!(
                err.kind,
                super::super::wire::ErrorKind::Unsupported,
                "{bad}"
            );
        }
    }

    #[test]
    fn a_missing_workspace_is_an_error() {
        let err = gate_config(&setup(json!({"workspace": "/nonexistent/gatehouse"}))).unwrap_err();
        assert_eq!(err.kind, super::super::wire::ErrorKind::Error);
        let err = gate_config(&setup(json!({}))).unwrap_err();
        assert_eq!(err.kind, super::super::wire::ErrorKind::Error);
    }
}
