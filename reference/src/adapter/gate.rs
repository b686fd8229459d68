//! The control `gate`: turns the `setup` of an `open` request into the gate's
//! configuration and the grants saved before the session, strictly: a value it cannot
//! honour is `unsupported` (PROTO-SESSION-2); and answers the ops `decide`, `answer`,
//! `grants`, `revoke` and `audit`, each one call of the session's guarded order of
//! [`super::order`] (the gate is its first stage).
//!
//! Touches the filesystem only to resolve the workspace.

use super::control::{parse_as, Control, Opening, Sessions};
use super::order::{act_fields, decide_one, input_object};
use super::wire::gate::{GateRequest, OPS};
use super::wire::{Body, WireError};
use gatehouse::gate::{Asker, CardWindows, GateConfig, Grant, Host, Tool, UnknownTool};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

super::control::setup! {
    /// The setup fields of the gate (the workspace and home are every capability's).
    pub struct GateSetup {
        /// The workspace (required).
        workspace: PathBuf,
        /// The home directory: accepted and needs nothing here (a leading `~` is outside
        /// whatever it names); the workspace session and the plane read it.
        home: PathBuf,
        /// The host the gate behaves as.
        host: Host,
        /// How a card reaches a person.
        asker: Asker,
        /// The allow list.
        allow_list: Vec<String>,
        /// The grants saved before the session.
        grants: Vec<Grant>,
        /// The card window of the asker's channel, in milliseconds.
        card_window_ms: u64,
    }
}

/// The gate's configuration and the grants saved before the session, from its setup.
pub fn gate_config(setup: &GateSetup) -> Result<(GateConfig, Vec<Grant>), WireError> {
    let workspace = setup
        .workspace
        .clone()
        .ok_or_else(|| WireError::error("setup needs a \"workspace\""))?;
    let host = setup.host.unwrap_or_default();
    let asker = setup.asker.unwrap_or_default();
    let allow_list = setup.allow_list.clone().unwrap_or_default();
    let grants = setup.grants.clone().unwrap_or_default();
    let window_ms = setup.card_window_ms;

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

/// The control `gate`.
pub struct Gate;

impl Control for Gate {
    const CAPABILITIES: &'static [&'static str] = &["gate"];
    const OPS: &'static [&'static str] = OPS;
    type Setup = GateSetup;
    /// The gate's configuration and saved grants, until the order's `open` takes them
    /// into the guarded session, where the gate lives for the rest of the session.
    type State = (GateConfig, Vec<Grant>);
    type Request = GateRequest;

    fn open(opening: &mut Opening<'_>) -> Result<Self::State, WireError> {
        gate_config(&opening.setup.gate)
    }

    fn parse(op: &str, request: &Value) -> Result<GateRequest, WireError> {
        parse_as(op, request)
    }

    fn answer(request: GateRequest, sessions: &mut dyn Sessions) -> Result<Body, WireError> {
        match request {
            GateRequest::Decide {
                session,
                tool,
                input,
            } => {
                let tool: Tool = tool
                    .parse()
                    .map_err(|e: UnknownTool| WireError::unsupported(e.to_string()))?;
                let input = input_object(tool.name(), &Value::String(input));
                decide_one(sessions.started(&session)?, tool.name(), input, None)
            }
            GateRequest::Answer { session, choice }
                if sessions.started(&session)?.card_is_acted() =>
            {
                // The card of a call acted on: approving it runs the call in the fence.
                let (s, plane) = sessions.with_plane(&session)?;
                let (answered, acted) = s
                    .answer_act(choice, plane, gatehouse::workspace::Answer::No)
                    .map_err(|e| WireError::error(e.to_string()))?
                    .map_err(|e| WireError::error(e.to_string()))?;
                let mut m = acted.map(act_fields).unwrap_or_default();
                m.insert("outcome".into(), json!(answered.outcome));
                m.insert("saved".into(), json!(answered.saved));
                m.insert("ran".into(), json!(m.get("ran") == Some(&json!(true))));
                Ok(Body::Fields(m))
            }
            GateRequest::Answer { session, choice } => {
                let answer = sessions
                    .started(&session)?
                    .answer(choice)
                    .map_err(|e| WireError::error(e.to_string()))?
                    .map_err(|e| WireError::error(e.to_string()))?;
                Ok(Body::Answer {
                    outcome: answer.outcome,
                    saved: answer.saved,
                })
            }
            GateRequest::Grants { session } => Ok(Body::Grants {
                grants: sessions.started(&session)?.grants().list().to_vec(),
            }),
            GateRequest::Revoke { session, target } => Ok(Body::Revoked {
                revoked: sessions
                    .started(&session)?
                    .revoke(&target)
                    .map_err(|e| WireError::error(e.to_string()))?,
            }),
            GateRequest::Audit { session } => Ok(Body::Audit {
                records: sessions
                    .started(&session)?
                    .audit()
                    .into_iter()
                    .map(audit_record)
                    .collect(),
            }),
        }
    }
}

/// An audit record as the protocol gives it: the tool, its text input, the outcome, what
/// decided, and for a call acted on whether it ran (`null` for a call only decided).
fn audit_record(r: &Value) -> Value {
    let input = ["cmd", "code", "input"]
        .iter()
        .find_map(|k| r["input"].get(*k).and_then(Value::as_str))
        .map_or_else(|| r["input"].clone(), |s| json!(s));
    json!({
        "tool": r["tool"], "input": input, "outcome": r["outcome"],
        "stage": r["stage"], "route": r["route"], "reason": r["reason"],
        "source": r["source"], "tool_use_id": r["tool_use_id"], "hooks": r["hooks"],
        "ran": r.get("ran"), "not_run": r.get("not_run"), "withheld": r.get("withheld"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::control::Setup;
    use super::*;
    use serde_json::json;

    fn setup(v: Value) -> Result<GateSetup, WireError> {
        match v {
            Value::Object(m) => GateSetup::read(&m),
            _ => unreachable!(),
        }
    }

    fn gate_config(
        setup: Result<GateSetup, WireError>,
    ) -> Result<(GateConfig, Vec<Grant>), WireError> {
        super::gate_config(&setup?)
    }

    #[test]
    fn opens_a_full_setup() {
        let dir = tempfile::tempdir().unwrap();
        let (_, grants) = gate_config(setup(json!({
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
            let err = gate_config(setup(bad.clone())).unwrap_err();
            assert_eq!(
                err.kind,
                super::super::wire::ErrorKind::Unsupported,
                "{bad}"
            );
        }
    }

    #[test]
    fn parses_its_requests() {
        let r = Gate::parse(
            "decide",
            &json!({"id": 2, "op": "decide", "session": "s1", "tool": "shell", "input": "ls /etc"}),
        );
        assert_eq!(
            r.unwrap(),
            GateRequest::Decide {
                session: "s1".into(),
                tool: "shell".into(),
                input: "ls /etc".into()
            }
        );
        let r = Gate::parse(
            "answer",
            &json!({"id": 3, "op": "answer", "session": "s1", "choice": "family"}),
        );
        assert_eq!(
            r.unwrap(),
            GateRequest::Answer {
                session: "s1".into(),
                choice: gatehouse::gate::Choice::Family
            }
        );
        let r = Gate::parse(
            "answer",
            &json!({"id": 5, "op": "answer", "session": "s1", "choice": "maybe"}),
        );
        assert_eq!(r.unwrap_err().kind, super::super::wire::ErrorKind::Error);
    }

    #[test]
    fn a_missing_workspace_is_an_error() {
        let err = gate_config(setup(json!({"workspace": "/nonexistent/gatehouse"}))).unwrap_err();
        assert_eq!(err.kind, super::super::wire::ErrorKind::Error);
        let err = gate_config(setup(json!({}))).unwrap_err();
        assert_eq!(err.kind, super::super::wire::ErrorKind::Error);
    }
}
