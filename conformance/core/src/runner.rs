//! Running scenarios against a [`Client`]: one fresh fixture and session per case (table
//! form) or per file (sequence form), steps sent in order, answers judged, outcomes
//! decided. Emits events; builds no report itself.

use std::time::{Duration, Instant};

use serde_json::Value;

use serde_json::Map;

use crate::check;
use crate::controls::{ByRunner, RunnerEnv, Setup, SetupPatch};
use crate::events::{Event, Reporter};
use crate::fixture::Placeholders;
use crate::fixture::{self, Built};
use crate::observe::bait::Bait;
use crate::protocol::client::{Client, Failure};
use crate::protocol::{Reply, RequestBody, SessionDirs, SessionOp};
use crate::record::{verdict, Outcome, ScenarioRecord, StepRecord};
use crate::scenario::{Body, Scenario, Step, Tier};
use crate::verdict::{Difference, Level};

/// How a session ended before its steps were judged.
#[derive(Debug)]
enum End {
    /// Every step was sent and answered.
    Completed,
    /// Skipped for the platform or a capability the implementation does not declare.
    Skipped(String),
    /// An `unsupported` answer to a setup field or a step the scenario needs: skipped,
    /// and where the scenario pins safety, not shown safe (PROTO-OBSERVE-6).
    Unsupported(String),
    /// An `error` answer or a failure of the implementation.
    Errored { kind: String, detail: String },
}

/// Runs every scenario, emitting events to `reporters`; returns the records.
pub fn run(
    client: &mut Client,
    scenarios: &[Scenario],
    host_os: &str,
    bait: &Bait,
    reporters: &mut [&mut dyn Reporter],
) -> Vec<ScenarioRecord> {
    let mut sessions = 0u64;
    let mut records = Vec::new();
    for scenario in scenarios {
        for r in reporters.iter_mut() {
            r.event(&Event::ScenarioStarted { id: &scenario.id });
        }
        let record = run_scenario(client, scenario, host_os, bait, &mut sessions);
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
    bait: &Bait,
    sessions: &mut u64,
) -> ScenarioRecord {
    let started = Instant::now();
    let mut rec = ScenarioRecord {
        id: s.id.clone(),
        path: s.path.clone(),
        title: s.title.clone(),
        requirements: s.requirements.clone(),
        tier: s.tier,
        outcome: Outcome::Passed,
        safety: Outcome::Passed,
        exactness: Outcome::Passed,
        reason: None,
        error_kind: None,
        stderr: Vec::new(),
        duration_ms: 0,
        steps: Vec::new(),
    };
    client.clear_stderr();
    // A scenario some field of which can fail safety: skipping it hides what it shows.
    let pins_safety = s
        .pinned()
        .iter()
        .any(|(_, level, _)| *level == Level::Safety);
    let mut unshown = false;
    let mut defaulted: Option<String> = None;
    let end = match skip_reason(client, s, host_os).or_else(|| keyring_missing(s, bait)) {
        Some(reason) => End::Skipped(reason),
        None => match &s.body {
            Body::Sequence(steps) => run_session(
                client,
                s,
                &s.setup,
                steps,
                "step",
                (bait, sessions),
                (&mut rec.steps, &mut defaulted),
            ),
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
                        (bait, &mut *sessions),
                        (&mut rec.steps, &mut defaulted),
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
                        End::Skipped(_) | End::Unsupported(_) => Outcome::Skipped,
                        End::Errored { .. } => Outcome::Errored,
                    };
                    let diffs: Vec<&Difference> = rec.steps[first..]
                        .iter()
                        .flat_map(|st| &st.differences)
                        .collect();
                    let mut safety = verdict(Level::Safety, outcome, &diffs);
                    if matches!(e, End::Unsupported(_)) && pins_safety {
                        safety = Outcome::NotShown;
                    }
                    for st in &mut rec.steps[first..] {
                        st.outcome = Some(outcome);
                        st.safety = Some(safety);
                        st.requirements = case.requirements.clone();
                    }
                    if let End::Errored { .. } = e {
                        end = e;
                        break;
                    }
                    if let End::Skipped(_) | End::Unsupported(_) = e {
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
        End::Unsupported(reason) => {
            rec.outcome = Outcome::Skipped;
            rec.reason = Some(reason);
            unshown = pins_safety;
        }
        End::Completed => {}
    }
    let diffs: Vec<&Difference> = rec.steps.iter().flat_map(|st| &st.differences).collect();
    rec.safety = verdict(Level::Safety, rec.outcome, &diffs);
    rec.exactness = verdict(Level::Exactness, rec.outcome, &diffs);
    if unshown && rec.safety == Outcome::Skipped {
        rec.safety = Outcome::NotShown;
    }
    if let Some(note) = defaulted {
        // Judged on the implementation's default: its safety holds, its exactness is
        // of another setup than the scenario's.
        if rec.exactness != Outcome::Errored {
            rec.exactness = Outcome::Skipped;
        }
        rec.reason = Some(match rec.reason.take() {
            Some(r) => format!("{r} ({note})"),
            None => note,
        });
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
    if let Some(reason) = environment_mismatch(client, s) {
        return Some(reason);
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

/// `[platform] keyring_bait` and `arch`: the runner's own host, not the implementation's word.
fn keyring_missing(s: &Scenario, bait: &Bait) -> Option<String> {
    if let Some(arch) = &s.platform.arch {
        let here = std::env::consts::ARCH;
        if !arch.iter().any(|a| a == here) {
            return Some(format!(
                "platform: runs on {}; this host is {here}",
                arch.join(", ")
            ));
        }
    }
    if !s.platform.keyring_bait {
        return None;
    }
    match &bait.keyring {
        None => Some(
            "platform: needs the keyring bait; the runner plants none here (Linux with python3 only)"
                .to_string(),
        ),
        Some(k) => k
            .planted()
            .err()
            .map(|why| format!("platform: needs the keyring bait; planting it failed: {why}")),
    }
}

fn errored(f: Failure) -> End {
    End::Errored {
        kind: f.kind().to_string(),
        detail: f.detail(),
    }
}

/// The `[platform]` ranges over the environment the implementation declared.
fn environment_mismatch(client: &Client, s: &Scenario) -> Option<String> {
    let env = client
        .hello()
        .map(|h| h.environment.clone())
        .unwrap_or_default();
    if let Some(range) = &s.platform.landlock_abi {
        let abi = env.get("landlock_abi").and_then(serde_json::Value::as_i64);
        if !range.holds(abi) {
            return Some(format!(
                "platform: needs landlock_abi {}; the implementation declares {}",
                range.describe(),
                abi.map_or_else(|| "null".to_string(), |a| a.to_string())
            ));
        }
    }
    if s.platform.needs_fence && env.get("fence_backend").and_then(Value::as_str).is_none() {
        return Some(
            "platform: needs a fence; the implementation declares fence_backend null (it builds none on this host)"
                .to_string(),
        );
    }
    if s.platform.fixture_xattrs {
        if let Err(why) = fixture::user_xattrs() {
            return Some(format!(
                "platform: needs user.* extended attributes on the fixture filesystem; {why}"
            ));
        }
    }
    if let Some(backends) = &s.platform.fence_backend {
        // `none` stands for null, as in `--expect-fence-backend none`.
        let b = env
            .get("fence_backend")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("none");
        if !backends.iter().any(|x| x == b) {
            return Some(format!(
                "platform: needs fence_backend {}; the implementation declares {b}",
                backends.join(" or "),
            ));
        }
    }
    None
}

fn open(
    client: &mut Client,
    session: &str,
    setup: Map<String, Value>,
) -> Result<Map<String, serde_json::Value>, End> {
    let open = RequestBody::Session(SessionOp::Open {
        session: session.to_string(),
        setup,
    });
    match client.send(open, Duration::ZERO) {
        Ok((Reply::Ok(obj), _)) => Ok(obj),
        Ok((Reply::Unsupported(m), _)) => Err(End::Unsupported(format!("unsupported setup: {m}"))),
        Ok((Reply::Error(m), _)) => Err(End::Errored {
            kind: "error".into(),
            detail: format!("open: {m}"),
        }),
        Err(f) => Err(errored(f)),
    }
}

fn run_session(
    client: &mut Client,
    s: &Scenario,
    setup: &SetupPatch,
    steps: &[Step],
    what: &str,
    (bait, sessions): (&Bait, &mut u64),
    (out, defaulted): (&mut Vec<StepRecord>, &mut Option<String>),
) -> End {
    if let Err(f) = client.ensure_running() {
        return errored(f);
    }
    // The person's key is planted where a step can reach the home: through the fence, or
    // through an agent's file tools behind its guard.
    let reaches_home = s.capabilities.iter().any(|c| c == "fence" || c == "guard");
    let extras = fixture::Extras {
        home_secret: reaches_home.then_some(bait.home_secret.as_str()),
        runner_process: s.uses_runner_pid,
        sink: s.uses_sink,
    };
    let mut built = match fixture::build(&s.fixture, extras) {
        Ok(b) => b,
        Err(e) => {
            return End::Errored {
                kind: "fixture".into(),
                detail: format!("cannot build the fixture: {e}"),
            }
        }
    };
    let setup = setup.resolve();
    let mut sibling = None;
    if s.uses_sibling {
        *sessions += 1;
        let name = format!("s{sessions}");
        let wire = wire_setup(&setup, &s.capabilities, &built.paths, true);
        if let Err(end) = open(client, &name, wire) {
            return end;
        }
        sibling = Some(name);
    }
    *sessions += 1;
    let session = format!("s{sessions}");
    let wire = wire_setup(&setup, &s.capabilities, &built.paths, false);
    let opened = match open(client, &session, wire.clone()) {
        Ok(obj) => obj,
        Err(End::Unsupported(m)) if defaultable(&wire).is_some() => {
            // A field that says how, not what: the scenario is judged on the
            // implementation's own choice rather than skipped (PROTO-OBSERVE-6).
            let (field, bare) = defaultable(&wire).unwrap_or_default();
            match open(client, &session, bare) {
                Ok(obj) => {
                    *defaulted = Some(format!(
                        "judged on the implementation's default `{field}`: it answered {m}"
                    ));
                    obj
                }
                Err(end) => return end,
            }
        }
        Err(end) => return end,
    };
    let end = run_steps(
        client, s, &setup, steps, what, &session, &opened, &mut built, bait, out,
    );
    if let End::Errored { kind, .. } = &end {
        if kind != "error" {
            return end;
        }
    }
    for name in [Some(session), sibling].into_iter().flatten() {
        let close = RequestBody::Session(SessionOp::Close { session: name });
        if let Err(f) = client.send(close, Duration::ZERO) {
            if matches!(end, End::Completed) {
                return errored(f);
            }
        }
    }
    end
}

#[allow(clippy::too_many_arguments)]
fn run_steps(
    client: &mut Client,
    s: &Scenario,
    setup: &Setup,
    steps: &[Step],
    what: &str,
    session: &str,
    opened: &Map<String, serde_json::Value>,
    built: &mut Built,
    bait: &Bait,
    out: &mut Vec<StepRecord>,
) -> End {
    let mut window = setup.gate.card_window_ms;
    // Secrets the session passes on purpose are no leak where they show.
    let passed: Vec<String> = setup
        .fence
        .choices
        .as_ref()
        .map(|c| c.secrets())
        .unwrap_or_default();
    let ctx = setup.ctx();
    for step in steps {
        let p = built.paths.clone();
        let sub = |x: &str| p.apply(x);
        let label = step.label(what);
        let env = RunnerEnv {
            session,
            sub: &sub,
            locate: &|x: &str| p.locate(x),
            has_bait: &|t: &str| !bait.found_in(t).is_empty(),
        };
        if let Some(by) = step.action.by_runner(&env) {
            // Steps the runner answers itself, or that end and restart the implementation.
            let obj = match by {
                ByRunner::Answer(obj) => obj,
                ByRunner::Restart { kill } => {
                    client.stop(kill);
                    resume(client, s, setup, built, session, false)
                }
                ByRunner::Crash { arm, inner } => {
                    if let Err(f) = client.send(RequestBody::Step(arm), Duration::ZERO) {
                        return errored(f);
                    }
                    let died = client
                        .send(RequestBody::Step(inner), Duration::ZERO)
                        .is_err();
                    if !died {
                        client.stop(true);
                    }
                    resume(client, s, setup, built, session, died)
                }
            };
            let mut rec = StepRecord::new(step, serde_json::json!({"runner": step.action.label()}));
            rec.add(step.judge(what, &obj, &sub, ctx));
            rec.answer = Value::Object(obj);
            out.push(rec);
            continue;
        }
        let Some(body) = step.action.request(session, setup, &sub) else {
            // `opened`: judge the answer `open` already gave.
            let mut rec = StepRecord::new(step, serde_json::json!({"op": "open"}));
            rec.add(step.judge(what, opened, &sub, ctx));
            rec.answer = Value::Object(opened.clone());
            out.push(rec);
            continue;
        };
        let guarded =
            s.tier == Tier::Enforcement && step.action.is_run() && step.check.guard != Some(false);
        let guard = if guarded {
            check::guard_paths(s.uses_sibling)
        } else {
            Vec::new()
        };
        let before = check::before(&step.check, &guard, built);
        let silence = step.action.is_silence();
        let body = RequestBody::Step(body);
        let extra = if silence {
            Duration::from_millis(window.unwrap_or(0))
        } else {
            Duration::ZERO
        };
        let mut rec = StepRecord::new(step, serde_json::to_value(&body).unwrap_or(Value::Null));
        match client.send(body, extra) {
            Ok((Reply::Ok(obj), elapsed)) => {
                rec.add(step.judge(what, &obj, &sub, ctx));
                if let (true, Some(w)) = (silence, window) {
                    if elapsed < Duration::from_millis(w) {
                        // The card window is exactness (PROTO-VERDICT-3): the outcome of
                        // the silence is judged by `outcome`.
                        rec.add(vec![Difference {
                            level: Level::Exactness,
                            field: "card.window_ms".into(),
                            message: format!(
                                "{label}: answered after {} ms, before the card window of {w} ms ran out (PROTO-GATE-2)",
                                elapsed.as_millis()
                            ),
                        }]);
                    }
                }
                if step.action.is_call() && setup.gate.card_window_ms.is_none() {
                    if let Some(w) = obj
                        .get("card")
                        .and_then(|c| c.get("window_ms"))
                        .and_then(Value::as_u64)
                    {
                        window = Some(w);
                    }
                }
                let checks = check::after(
                    &step.check,
                    step.action.is_run(),
                    before,
                    Some(&obj),
                    built,
                    (bait, &passed),
                );
                rec.add(check::differences(checks, &label));
                rec.answer = Value::Object(obj);
                out.push(rec);
            }
            Ok((Reply::Unsupported(m), _)) => {
                out.push(rec);
                return End::Unsupported(format!("unsupported: {m}"));
            }
            Ok((Reply::Error(m), _)) => {
                out.push(rec);
                return End::Errored {
                    kind: "error".into(),
                    detail: format!("{what} {}: {m}", step.index),
                };
            }
            Err(f) => {
                // The implementation is gone; what it did to the files is still judged.
                rec.add(check::differences(
                    check::after(
                        &step.check,
                        step.action.is_run(),
                        before,
                        None,
                        built,
                        (bait, &passed),
                    ),
                    &label,
                ));
                out.push(rec);
                return errored(f);
            }
        }
    }
    End::Completed
}

/// Starts the implementation again and opens `session` from its record
/// (`resume: true`, the same setup): what came of it, as an answer to judge.
fn resume(
    client: &mut Client,
    s: &Scenario,
    setup: &Setup,
    built: &Built,
    session: &str,
    died: bool,
) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("died".into(), Value::Bool(died));
    if let Err(f) = client.ensure_running() {
        obj.insert("resumed".into(), Value::Bool(false));
        obj.insert("error".into(), Value::String(f.detail()));
        return obj;
    }
    let mut wire = wire_setup(setup, &s.capabilities, &built.paths, false);
    wire.insert("resume".into(), Value::Bool(true));
    let open = RequestBody::Session(SessionOp::Open {
        session: session.to_string(),
        setup: wire,
    });
    match client.send(open, Duration::ZERO) {
        Ok((Reply::Ok(answer), _)) => {
            obj.insert("resumed".into(), Value::Bool(true));
            if let Some(n) = answer.get("notices") {
                obj.insert("notices".into(), n.clone());
            }
        }
        Ok((Reply::Unsupported(m) | Reply::Error(m), _)) => {
            obj.insert("resumed".into(), Value::Bool(false));
            obj.insert("error".into(), Value::String(m));
        }
        Err(f) => {
            obj.insert("resumed".into(), Value::Bool(false));
            obj.insert("error".into(), Value::String(f.detail()));
        }
    }
    obj
}

/// The setup fields that choose how an implementation does something, not what it must
/// do: a scenario whose setup names one the implementation answers `unsupported` is run
/// on the implementation's own choice and judged for safety (PROTO-OBSERVE-6).
pub const DEFAULTABLE: &[&str] = &["resolver"];

/// The first field of [`DEFAULTABLE`] `wire` sets, and `wire` without any of them.
fn defaultable(wire: &Map<String, Value>) -> Option<(String, Map<String, Value>)> {
    let field = DEFAULTABLE
        .iter()
        .find(|k| wire.get(**k).is_some_and(|v| !v.is_null()))?;
    let mut bare = wire.clone();
    for k in DEFAULTABLE {
        bare.remove(*k);
    }
    Some((field.to_string(), bare))
}

/// The setup sent in `open`; `sibling`: the second session, in its own workspace.
fn wire_setup(
    setup: &Setup,
    caps: &[String],
    p: &Placeholders,
    sibling: bool,
) -> Map<String, Value> {
    let s_ = |x: &std::path::Path| x.to_string_lossy().into_owned();
    let dirs = SessionDirs {
        workspace: s_(if sibling { &p.sibling } else { &p.workspace }),
        home: s_(&p.home),
        log_dir: s_(&if sibling {
            p.log.join("sibling")
        } else {
            p.log.clone()
        }),
        sibling,
    };
    setup.wire(caps, &dirs, &|x: &str| p.apply(x))
}
