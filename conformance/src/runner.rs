//! Running scenarios against a [`Client`]: one fresh fixture and session per case (table
//! form) or per file (sequence form), steps sent in order, answers judged, outcomes
//! decided. Emits events; builds no report itself.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::{Client, Failure};
use crate::events::{Event, Reporter};
use crate::fixture;
use crate::judge::judge;
use crate::protocol::{Reply, RequestBody, WireSetup};
use crate::record::{Outcome, ScenarioRecord, StepRecord};
use crate::scenario::{Action, Body, Choice, Grant, Scenario, SetupPatch, Step};

/// How a session ended before its steps were judged.
#[derive(Debug)]
enum End {
    /// Every step was sent and answered.
    Completed,
    /// An `unsupported` answer.
    Skipped(String),
    /// An `error` answer or a failure of the implementation.
    Errored { kind: String, detail: String },
}

/// Runs every scenario, emitting events to `reporters`; returns the records.
pub fn run(
    client: &mut Client,
    scenarios: &[Scenario],
    host_os: &str,
    reporters: &mut [&mut dyn Reporter],
) -> Vec<ScenarioRecord> {
    let mut sessions = 0u64;
    let mut records = Vec::new();
    for scenario in scenarios {
        for r in reporters.iter_mut() {
            r.event(&Event::ScenarioStarted { id: &scenario.id });
        }
        let record = run_scenario(client, scenario, host_os, &mut sessions);
        for r in reporters.iter_mut() {
            r.event(&Event::ScenarioFinished { record: &record });
        }
        records.push(record);
    }
    records
}

fn run_scenario(
    client: &mut Client,
    s: &Scenario,
    host_os: &str,
    sessions: &mut u64,
) -> ScenarioRecord {
    let started = Instant::now();
    let mut rec = ScenarioRecord {
        id: s.id.clone(),
        title: s.title.clone(),
        requirements: s.requirements.clone(),
        tier: s.tier,
        outcome: Outcome::Passed,
        reason: None,
        error_kind: None,
        stderr: Vec::new(),
        duration_ms: 0,
        steps: Vec::new(),
    };
    client.clear_stderr();
    let end = match skip_reason(client, s, host_os) {
        Some(reason) => End::Skipped(reason),
        None => match &s.body {
            Body::Sequence(steps) => {
                run_session(client, s, &s.setup, steps, "step", sessions, &mut rec.steps)
            }
            Body::Table(cases) => {
                let mut end = End::Completed;
                for case in cases {
                    let first = rec.steps.len();
                    let e = run_session(
                        client,
                        s,
                        &case.setup,
                        std::slice::from_ref(&case.step),
                        "case",
                        sessions,
                        &mut rec.steps,
                    );
                    let outcome = match &e {
                        End::Completed
                            if rec.steps[first..]
                                .iter()
                                .any(|st| !st.mismatches.is_empty()) =>
                        {
                            Outcome::Failed
                        }
                        End::Completed => Outcome::Passed,
                        End::Skipped(_) => Outcome::Skipped,
                        End::Errored { .. } => Outcome::Errored,
                    };
                    for st in &mut rec.steps[first..] {
                        st.outcome = Some(outcome);
                        st.requirements = case.requirements.clone();
                    }
                    if let End::Errored { .. } = e {
                        end = e;
                        break;
                    }
                    if let End::Skipped(_) = e {
                        end = e;
                    }
                }
                end
            }
        },
    };
    let first_mismatch = rec
        .steps
        .iter()
        .flat_map(|st| st.mismatches.iter())
        .next()
        .cloned();
    match end {
        End::Errored { kind, detail } => {
            rec.outcome = Outcome::Errored;
            rec.reason = Some(format!("{kind}: {detail}"));
            rec.error_kind = Some(kind);
            rec.stderr = client.stderr_tail();
        }
        _ if first_mismatch.is_some() => {
            rec.outcome = Outcome::Failed;
            rec.reason = first_mismatch;
        }
        End::Skipped(reason) => {
            rec.outcome = Outcome::Skipped;
            rec.reason = Some(reason);
        }
        End::Completed => {}
    }
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec
}

fn skip_reason(client: &mut Client, s: &Scenario, host_os: &str) -> Option<String> {
    if let Some(os) = &s.platform_os {
        if !os.iter().any(|o| o == host_os) {
            return Some(format!(
                "platform: runs on {}; this host is {host_os}",
                os.join(", ")
            ));
        }
    }
    // A restart may be pending; the capabilities are those of the running implementation.
    if client.ensure_running().is_err() {
        return None;
    }
    let caps = client
        .hello()
        .map(|h| h.capabilities.clone())
        .unwrap_or_default();
    let missing: Vec<&String> = s
        .capabilities
        .iter()
        .filter(|c| !caps.contains(c))
        .collect();
    match missing.as_slice() {
        [] => None,
        [one] => Some(format!("missing capability `{one}`")),
        many => Some(format!(
            "missing capabilities {}",
            many.iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn errored(f: Failure) -> End {
    End::Errored {
        kind: f.kind().to_string(),
        detail: f.detail(),
    }
}

fn run_session(
    client: &mut Client,
    s: &Scenario,
    setup: &SetupPatch,
    steps: &[Step],
    what: &str,
    sessions: &mut u64,
    out: &mut Vec<StepRecord>,
) -> End {
    if let Err(f) = client.ensure_running() {
        return errored(f);
    }
    let built = match fixture::build(&s.fixture) {
        Ok(b) => b,
        Err(e) => {
            return End::Errored {
                kind: "fixture".into(),
                detail: format!("cannot build the fixture: {e}"),
            }
        }
    };
    let p = &built.paths;
    *sessions += 1;
    let session = format!("s{sessions}");
    let setup = setup.resolve();
    let open = RequestBody::Open {
        session: session.clone(),
        setup: WireSetup {
            workspace: p.workspace.to_string_lossy().into_owned(),
            home: p.home.to_string_lossy().into_owned(),
            host: setup.host,
            asker: setup.asker,
            allow_list: setup.allow_list.iter().map(|a| p.apply(a)).collect(),
            grants: setup
                .grants
                .iter()
                .map(|g| Grant {
                    key: p.apply(&g.key),
                    ..g.clone()
                })
                .collect(),
            card_window_ms: setup.card_window_ms,
        },
    };
    match client.send(open, Duration::ZERO) {
        Ok((Reply::Ok(_), _)) => {}
        Ok((Reply::Unsupported(m), _)) => return End::Skipped(format!("unsupported setup: {m}")),
        Ok((Reply::Error(m), _)) => {
            return End::Errored {
                kind: "error".into(),
                detail: format!("open: {m}"),
            }
        }
        Err(f) => return errored(f),
    }
    let mut window = setup.card_window_ms;
    let mut end = End::Completed;
    for step in steps {
        let body = request(&step.action, &session, |x| p.apply(x));
        let silence = matches!(step.action, Action::Answer(Choice::Silence));
        let extra = if silence {
            Duration::from_millis(window.unwrap_or(0))
        } else {
            Duration::ZERO
        };
        let request_json = serde_json::to_value(&body).unwrap_or(Value::Null);
        let mut rec = StepRecord {
            index: step.index,
            name: step.name.clone(),
            request: request_json,
            answer: Value::Null,
            mismatches: Vec::new(),
            outcome: None,
            requirements: Vec::new(),
        };
        match client.send(body, extra) {
            Ok((Reply::Ok(obj), elapsed)) => {
                rec.mismatches = judge(what, step, &obj);
                if let (true, Some(w)) = (silence, window) {
                    if elapsed < Duration::from_millis(w) {
                        rec.mismatches.push(format!(
                            "{what} {} ({}): answered after {} ms, before the card window of {w} ms ran out (PROTO-GATE-2)",
                            step.index,
                            step.action.label(),
                            elapsed.as_millis()
                        ));
                    }
                }
                if matches!(step.action, Action::Call { .. }) && setup.card_window_ms.is_none() {
                    if let Some(w) = obj
                        .get("card")
                        .and_then(|c| c.get("window_ms"))
                        .and_then(Value::as_u64)
                    {
                        window = Some(w);
                    }
                }
                rec.answer = Value::Object(obj);
                out.push(rec);
            }
            Ok((Reply::Unsupported(m), _)) => {
                out.push(rec);
                end = End::Skipped(format!("unsupported: {m}"));
                break;
            }
            Ok((Reply::Error(m), _)) => {
                out.push(rec);
                end = End::Errored {
                    kind: "error".into(),
                    detail: format!("{what} {}: {m}", step.index),
                };
                break;
            }
            Err(f) => {
                out.push(rec);
                return errored(f);
            }
        }
    }
    if let Err(f) = client.send(RequestBody::Close { session }, Duration::ZERO) {
        if matches!(end, End::Completed) {
            return errored(f);
        }
    }
    end
}

/// The request for one action, every string passed through `sub` (placeholders).
fn request(action: &Action, session: &str, sub: impl Fn(&str) -> String) -> RequestBody {
    let session = session.to_string();
    match action {
        Action::Call { tool, input, .. } => RequestBody::Decide {
            session,
            tool: sub(tool),
            input: sub(input),
        },
        Action::Answer(c) => RequestBody::Answer {
            session,
            choice: c.as_str().to_string(),
        },
        Action::Grants => RequestBody::Grants { session },
        Action::Revoke(t) => RequestBody::Revoke {
            session,
            target: sub(t),
        },
        Action::Audit => RequestBody::Audit { session },
    }
}
