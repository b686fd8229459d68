//! The protocol server, at the top of the adapter: reads one JSON request per line,
//! answers `hello`, `open`, `close` and `bye` itself through the registry
//! ([`super::REGISTRY`], [`Setups`], [`States`]), hands every other op to the control
//! that owns it, and writes one JSON answer per line, flushed at once. It holds the
//! session table, which the controls reach through [`super::control::Sessions`]; it
//! never names a control, an op of one or a setup field.
//!
//! Touches only its input and output streams; the sessions do the rest.

use super::wire::{parse_request, Body, Reply, Request, WireError};
use super::{Setups, States, Table, PROTOCOL_VERSION, REGISTRY};
use serde_json::{Map, Value};
use std::io::{self, BufRead, Write};

/// The capabilities this adapter implements: every control's, in the registry's order.
pub fn capabilities() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .flat_map(|c| c.capabilities)
        .copied()
        .collect()
}

/// The adapter's state: the open sessions by name, each holding every control's state
/// (dropped, private state directories included, when the adapter ends).
#[derive(Default)]
pub struct Server {
    sessions: Table,
}

/// Refuses a setup field no control takes (PROTO-SESSION-2).
fn check_fields(setup: &Map<String, Value>) -> Result<(), WireError> {
    let known = |k: &str| REGISTRY.iter().any(|c| c.setup_fields.contains(&k));
    match setup.keys().find(|k| !known(k)) {
        Some(unknown) => Err(WireError::unsupported(format!(
            "unknown setup field {unknown:?}"
        ))),
        None => Ok(()),
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
                capabilities: capabilities(),
                environment: super::environment::with_fence(),
            }),
            Request::Open { session, setup } => {
                // Replacing a session of the same name starts it afresh (PROTO-SESSION-1).
                check_fields(&setup)?;
                let setup = Setups::read(&setup)?;
                let mut answer = Map::new();
                let replaced = self.sessions.get_mut(&session);
                let opened = States::open(&session, &setup, replaced, &mut answer)?;
                // The session it replaces ends here.
                self.sessions.insert(session, opened);
                Ok(Body::Done {}.with(answer))
            }
            Request::Op { op, request } => {
                let control = REGISTRY
                    .iter()
                    .find(|c| c.ops.contains(&op.as_str()))
                    .ok_or_else(|| WireError::unsupported(format!("unknown op {op:?}")))?;
                (control.handle)(&op, &request, &mut self.sessions)
            }
            Request::Close { session } => {
                self.sessions
                    .remove(&session)
                    .ok_or_else(|| WireError::error(format!("no open session {session:?}")))?
                    .close();
                Ok(Body::Done {})
            }
            Request::Bye => Ok(Body::Done {}),
        }
    }
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
        assert_eq!(replies[0]["capabilities"], json!(capabilities()));
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
    fn every_op_has_one_owner() {
        let mut ops: Vec<&str> = super::super::wire::SERVER_OPS.to_vec();
        for control in REGISTRY {
            ops.extend(control.ops);
        }
        let mut unique = ops.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ops.len(), "an op owned twice: {ops:?}");
    }

    #[test]
    fn unknown_ops_and_bad_requests() {
        let replies = run(&[
            json!({"id": 4, "op": "fly"}),
            json!({"id": 5, "op": "answer", "session": "s1", "choice": "maybe"}),
            json!({"id": 6, "op": "run", "session": "s1"}),
        ]);
        assert_eq!(replies[0]["id"], 4);
        assert_eq!(replies[0]["error"]["kind"], "unsupported");
        assert_eq!(replies[1]["id"], 5);
        assert_eq!(replies[1]["error"]["kind"], "error");
        assert!(replies[1]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("bad \"answer\" request"));
        assert_eq!(replies[2]["error"]["kind"], "error");
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
