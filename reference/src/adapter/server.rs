//! The protocol server, at the top of the adapter: reads one JSON request per line,
//! dispatches it to the translator of its capability for the session it names, and writes
//! one JSON answer per line, flushed at once.
//!
//! Touches only its input and output streams; the sessions do the rest.

use super::gate::gate_config;
use super::order::{input_object, ruling_fields};
use super::wire::{parse_request, Body, Reply, Request, WireError};
use super::{CAPABILITIES, PROTOCOL_VERSION};
use gatehouse::gate::Tool;
use gatehouse::order::session::act::ActError;
use gatehouse::order::GuardedSession;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

/// The adapter's state: the open sessions by name.
#[derive(Debug, Default)]
pub struct Server {
    /// Each session's guarded controls: every tool call goes through their order.
    sessions: HashMap<String, GuardedSession>,
    /// Each session's plane (capability `fence`).
    fences: super::fence::Fences,
    /// The private state directory made for a session that named none, removed when the
    /// session closes or is replaced, and when the adapter ends: a suite run opens some
    /// 1,500 sessions, whose directories were left in the system's temporary directory.
    private_state: HashMap<String, std::path::PathBuf>,
}

impl Server {
    /// Let go of the private state directory of `session`, if it has one.
    fn drop_private_state(&mut self, session: &str) {
        if let Some(dir) = self.private_state.remove(session) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The sessions first: they may still write to their state directories.
        self.sessions.clear();
        for (_, dir) in self.private_state.drain() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Refuses a setup field no capability takes (PROTO-SESSION-2).
fn check_fields(setup: &Map<String, Value>) -> Result<(), WireError> {
    let known = |k: &str| {
        super::gate::SETUP_FIELDS.contains(&k)
            || super::order::SETUP_FIELDS.contains(&k)
            || super::files::SETUP_FIELDS.contains(&k)
            || super::fence::SETUP_FIELDS.contains(&k)
    };
    match setup.keys().find(|k| !known(k)) {
        Some(unknown) => Err(WireError::unsupported(format!(
            "unknown setup field {unknown:?}"
        ))),
        None => Ok(()),
    }
}

/// A private state directory not yet handed to the server: removed if the `open` that made
/// it fails after all.
struct PrivateDir(Option<std::path::PathBuf>);

impl PrivateDir {
    fn keep(mut self) -> Option<std::path::PathBuf> {
        self.0.take()
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// What to do after answering a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next request.
    Continue,
    /// `bye`: stop.
    Stop,
}

impl Server {
    /// A server with no sessions.
    pub fn new() -> Self {
        Server::default()
    }

    fn session(&mut self, name: &str) -> Result<&mut GuardedSession, WireError> {
        let s = self
            .sessions
            .get_mut(name)
            .ok_or_else(|| WireError::error(format!("no open session {name:?}")))?;
        if s.files().is_some_and(|f| !f.started()) {
            // PROTO-SETUP-2: after `started: false` no step but `close`.
            return Err(WireError::error(format!("session {name:?} did not start")));
        }
        Ok(s)
    }

    /// Answers one request line.
    pub fn handle_line(&mut self, line: &str) -> (Reply, Flow) {
        let (id, request) = parse_request(line);
        let request = match request {
            Ok(r) => r,
            Err(e) => return (Reply::failed(id, e), Flow::Continue),
        };
        let flow = if request == Request::Bye {
            Flow::Stop
        } else {
            Flow::Continue
        };
        let reply = match self.handle(request) {
            Ok(body) => Reply::ok(id, body),
            Err(e) => Reply::failed(id, e),
        };
        (reply, flow)
    }

    fn handle(&mut self, request: Request) -> Result<Body, WireError> {
        match request {
            Request::Hello { .. } => Ok(Body::Hello {
                protocol: PROTOCOL_VERSION,
                name: "gatehouse",
                version: env!("CARGO_PKG_VERSION"),
                capabilities: CAPABILITIES,
                environment: super::environment::with_fence(),
            }),
            Request::Open { session, setup } => {
                // Replacing a session of the same name starts it afresh (PROTO-SESSION-1).
                check_fields(&setup)?;
                let (gate, grants) = gate_config(&setup)?;
                let (mut fresh, private) =
                    super::order::open_session(&session, &setup, gate, grants)?;
                // Held until the session is in place (and the one it replaces gone).
                let private = PrivateDir(private);
                let (files, mut opened) = super::files::open(&setup)?;
                if let Some(restored) = fresh
                    .attach_files(files)
                    .map_err(|e| WireError::refused(e.to_string()))?
                {
                    opened.insert("started".into(), json!(true));
                    opened.insert("unreopened".into(), json!(restored.unreopened));
                }
                if !fresh.notices().is_empty() {
                    opened.insert("notices".into(), json!(fresh.notices()));
                }
                let posture = self.fences.open(&session, &setup)?;
                self.sessions.insert(session.clone(), fresh);
                self.drop_private_state(&session);
                if let Some(dir) = private.keep() {
                    self.private_state.insert(session, dir);
                }
                Ok(posture
                    .map_or(Body::Done {}, |posture| Body::Posture { posture })
                    .with(opened))
            }
            Request::Run {
                session,
                tool,
                input,
                cwd,
                tty,
            } => {
                self.session(&session)?;
                Ok(Body::Run(self.fences.run(
                    &session,
                    &tool,
                    &input,
                    cwd.as_deref(),
                    tty,
                )?))
            }
            Request::Posture { session } => {
                self.session(&session)?;
                let posture = self.fences.posture(&session)?;
                Ok(Body::Posture { posture })
            }
            Request::Toggle {
                session,
                to,
                confirmed,
            } => {
                self.session(&session)?;
                Ok(Body::Toggle(self.fences.toggle(&session, &to, confirmed)?))
            }
            Request::Decide {
                session,
                tool,
                input,
            } => {
                let tool: Tool = tool.parse().map_err(|e: gatehouse::gate::UnknownTool| {
                    WireError::unsupported(e.to_string())
                })?;
                let input = input_object(tool.name(), &Value::String(input));
                self.call(&session, tool.name(), input, None)
            }
            Request::Call {
                session,
                tool,
                input,
                call_id,
            } => {
                let input = input_object(&tool, &input);
                self.call(&session, &tool, input, call_id)
            }
            Request::Act {
                session,
                tool,
                input,
                call_id,
                if_asked,
            } => {
                let input = input_object(&tool, &input);
                let s = self.session(&session)?;
                let call = s.call(&tool, input, call_id);
                let plane = self.fences.plane(&session)?;
                let s = self
                    .sessions
                    .get_mut(&session)
                    .ok_or_else(|| WireError::error(format!("no open session {session:?}")))?;
                let acted = s.act(&call, plane, if_asked).map_err(|e| match e {
                    ActError::NotRunnable(_) => WireError::unsupported(e.to_string()),
                    _ => WireError::error(e.to_string()),
                })?;
                Ok(Body::Fields(super::order::act_fields(acted)))
            }
            Request::Calls { session, calls } => {
                let s = self.session(&session)?;
                let calls: Vec<_> = calls
                    .iter()
                    .map(|c| s.call(&c.tool, input_object(&c.tool, &c.input), c.call_id.clone()))
                    .collect();
                let rulings = s
                    .decide_many(&calls)
                    .map_err(|e| WireError::error(e.to_string()))?;
                let mut m = Map::new();
                m.insert(
                    "rulings".into(),
                    Value::Array(
                        rulings
                            .iter()
                            .map(|r| Value::Object(ruling_fields(r)))
                            .collect(),
                    ),
                );
                Ok(Body::Fields(m))
            }
            Request::Rule {
                session,
                list,
                pattern,
            } => Ok(Body::Fields(super::order::rule(
                self.session(&session)?,
                &list,
                &pattern,
            )?)),
            Request::Load { fields } => Ok(Body::Fields(super::order::load(&fields)?)),
            Request::CrashAt { session, point } => {
                self.session(&session)?;
                Ok(Body::Fields(super::order::crash_at(&point)?))
            }
            Request::Answer { session, choice } if self.session(&session)?.card_is_acted() => {
                // The card of a call acted on: approving it runs the call in the fence.
                let plane = self.fences.plane(&session)?;
                let s = self
                    .sessions
                    .get_mut(&session)
                    .ok_or_else(|| WireError::error(format!("no open session {session:?}")))?;
                let (answered, acted) = s
                    .answer_act(choice, plane, gatehouse::workspace::Answer::No)
                    .map_err(|e| WireError::error(e.to_string()))?
                    .map_err(|e| WireError::error(e.to_string()))?;
                let mut m = acted.map(super::order::act_fields).unwrap_or_default();
                m.insert("outcome".into(), json!(answered.outcome));
                m.insert("saved".into(), json!(answered.saved));
                m.insert("ran".into(), json!(m.get("ran") == Some(&json!(true))));
                Ok(Body::Fields(m))
            }
            Request::Answer { session, choice } => {
                let answer = self
                    .session(&session)?
                    .answer(choice)
                    .map_err(|e| WireError::error(e.to_string()))?
                    .map_err(|e| WireError::error(e.to_string()))?;
                Ok(Body::Answer {
                    outcome: answer.outcome,
                    saved: answer.saved,
                })
            }
            Request::Grants { session } => Ok(Body::Grants {
                grants: self.session(&session)?.grants().list().to_vec(),
            }),
            Request::Revoke { session, target } => Ok(Body::Revoked {
                revoked: self
                    .session(&session)?
                    .revoke(&target)
                    .map_err(|e| WireError::error(e.to_string()))?,
            }),
            Request::Audit { session } => Ok(Body::Audit {
                records: self
                    .session(&session)?
                    .audit()
                    .into_iter()
                    .map(audit_record)
                    .collect(),
            }),
            Request::Files(step) => {
                let name = step.session().to_string();
                let answer = self
                    .sessions
                    .get_mut(&name)
                    .ok_or_else(|| WireError::error(format!("no open session {name:?}")))?
                    .with_files(|files| super::files::step(files, step))
                    .map_err(|e| WireError::error(e.to_string()))?
                    .ok_or_else(|| WireError::error(format!("session {name:?} has no files")))?;
                Ok(Body::Fields(answer?))
            }
            Request::Close { session } => {
                self.sessions
                    .remove(&session)
                    .ok_or_else(|| WireError::error(format!("no open session {session:?}")))?;
                self.fences.close(&session);
                self.drop_private_state(&session);
                Ok(Body::Done {})
            }
            Request::Bye => Ok(Body::Done {}),
        }
    }
}

impl Server {
    /// One call through the session's order, with the trust map and roots of the
    /// session's file tools for its redirections.
    fn call(
        &mut self,
        session: &str,
        tool: &str,
        input: Value,
        id: Option<String>,
    ) -> Result<Body, WireError> {
        let s = self.session(session)?;
        let call = s.call(tool, input, id);
        let ruling = s
            .decide(&call)
            .map_err(|e| WireError::error(e.to_string()))?;
        Ok(Body::Decision(ruling_fields(&ruling)))
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

/// Serves the protocol until `bye` or the end of `input`: one answer line per request
/// line, flushed after each.
pub fn serve(mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut server = Server::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let (reply, flow) = server.handle_line(line);
        output.write_all(reply.to_line().as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
        if flow == Flow::Stop {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn run(requests: &[Value]) -> Vec<Value> {
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_whole_conversation() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "hi\n").unwrap();
        let ws = dir.path().to_str().unwrap();
        let replies = run(&[
            json!({"id": 0, "op": "hello", "protocol": "1.0"}),
            json!({"id": 1, "op": "open", "session": "s1", "setup": {
                "workspace": ws, "home": "/tmp", "host": "posix", "asker": "terminal",
                "allow_list": [], "grants": [{"kind": "family", "key": "git"}],
                "card_window_ms": 20}}),
            json!({"id": 2, "op": "decide", "session": "s1", "tool": "shell", "input": "ls /etc"}),
            json!({"id": 3, "op": "answer", "session": "s1", "choice": "silence"}),
            json!({"id": 4, "op": "decide", "session": "s1", "tool": "shell", "input": "npm test"}),
            json!({"id": 5, "op": "answer", "session": "s1", "choice": "exact"}),
            json!({"id": 6, "op": "grants", "session": "s1"}),
            json!({"id": 7, "op": "revoke", "session": "s1", "target": "1"}),
            json!({"id": 8, "op": "audit", "session": "s1"}),
            json!({"id": 9, "op": "decide", "session": "s1", "tool": "browser", "input": "x"}),
            json!({"id": 10, "op": "close", "session": "s1"}),
            json!({"id": 11, "op": "bye"}),
            json!({"id": 12, "op": "hello"}),
        ]);
        assert_eq!(replies.len(), 12, "stops at bye");
        assert_eq!(replies[0]["name"], "gatehouse");
        assert_eq!(replies[0]["protocol"], super::PROTOCOL_VERSION);
        assert_eq!(replies[0]["capabilities"], json!(super::CAPABILITIES));
        assert_eq!(
            (&replies[1]["id"], &replies[1]["ok"]),
            (&json!(1), &json!(true))
        );
        assert_eq!(
            replies[1]["started"], true,
            "the trust map's session started"
        );
        let pick = |v: &Value, keys: &[&str]| -> Value {
            Value::Object(
                keys.iter()
                    .map(|k| (k.to_string(), v[*k].clone()))
                    .collect(),
            )
        };
        let gate_keys = ["id", "ok", "decision", "route", "reason", "offers", "card"];
        assert_eq!(replies[2]["stage"], "mode", "the order's stage is told too");
        assert_eq!(
            pick(&replies[2], &gate_keys),
            json!({"id": 2, "ok": true, "decision": "ask", "route": "card", "reason": "path_outside",
                   "offers": {"exact": true, "exact_withheld": null, "family": "ls",
                              "family_withheld": null, "text": null},
                   "card": {"channel": "terminal", "window_ms": 20}})
        );
        assert_eq!(
            replies[3],
            json!({"id": 3, "ok": true, "outcome": "expired", "saved": null})
        );
        assert_eq!(
            replies[5],
            json!({"id": 5, "ok": true, "outcome": "approved",
                   "saved": {"kind": "exact", "key": "npm test"}})
        );
        assert_eq!(
            replies[6]["grants"],
            json!([{"kind": "family", "key": "git"}, {"kind": "exact", "key": "npm test"}])
        );
        assert_eq!(
            replies[7]["revoked"],
            json!([{"kind": "family", "key": "git"}])
        );
        let records: Vec<Value> = replies[8]["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| pick(r, &["tool", "input", "outcome"]))
            .collect();
        assert_eq!(
            records,
            [
                json!({"tool": "shell", "input": "ls /etc", "outcome": "expired"}),
                json!({"tool": "shell", "input": "npm test", "outcome": "approved"})
            ]
        );
        assert_eq!(replies[9]["ok"], false);
        assert_eq!(replies[9]["error"]["kind"], "unsupported");
        assert_eq!(replies[10], json!({"id": 10, "ok": true}));
        assert_eq!(replies[11], json!({"id": 11, "ok": true}));
    }

    #[test]
    fn an_unknown_setup_field_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        let replies = run(&[json!({"id": 1, "op": "open", "session": "s", "setup": {
                "workspace": dir.path(), "sandbox": true}})]);
        assert_eq!(replies[0]["ok"], false);
        assert_eq!(replies[0]["error"]["kind"], "unsupported");
    }

    #[test]
    fn bad_lines_are_answered_and_the_server_goes_on() {
        let mut out = Vec::new();
        serve(
            "garbage\n{\"id\": 3, \"op\": \"decide\", \"session\": \"nope\", \"tool\": \"shell\", \"input\": \"ls\"}\n{\"id\": 4, \"op\": \"bye\"}\n"
                .as_bytes(),
            &mut out,
        )
        .unwrap();
        let replies: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies[0]["id"], Value::Null);
        assert_eq!(replies[0]["error"]["kind"], "error");
        assert_eq!(replies[1]["id"], 3);
        assert_eq!(replies[1]["ok"], false);
        assert_eq!(replies[2], json!({"id": 4, "ok": true}));
    }
}
