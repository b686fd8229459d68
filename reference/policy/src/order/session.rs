//! A guarded session: the controls of one session (gate, grants, patterns, hooks, mode,
//! and, when the session has them, the trust map and its roots) with the card waiting for
//! an answer, and its records under the state directory: the grant table and the session
//! record replaced whole, the audit journal appended one record per write
//! (ORDER-REC-1 to -5). Resuming reads them back; a corrupt one is an error, never reset.
//!
//! May touch: the state directory (through [`crate::records`]), the process table (hooks),
//! the filesystem through the gate's jail.

use super::decide::{decide, Call, Controls, Policy};
use super::ruling::Ruling;
use crate::config::agent::LoadedAgent;
use crate::config::settings::LoadedSettings;
use crate::gate::{
    AnswerOutcome, Choice, Gate, GateConfig, GateError, Grant, GrantTable, PendingCard, Tool,
    Verdict,
};
use crate::hooks::{HookRunner, HooksConfig};
use crate::paths::Roots;
use crate::permissions::{
    List, LoadError, Mode, ModeCandidates, ModeChoice, ModeSource, RuleSet, Source,
};
use crate::records::atomic::write_json;
use crate::records::{read_json, Journal, RecordError, StateDir};
use crate::trust::{TrustMap, TrustRecord};
use crate::workspace::{ResumeOutcome, Session as Workspace, WorkspaceError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::PathBuf;

/// The version of the session record's layout.
pub const RECORD_VERSION: u32 = 1;

/// What `--resume` restores (ORDER-REC-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRecord {
    /// [`RECORD_VERSION`].
    pub version: u32,
    /// The session's id.
    pub session_id: String,
    /// The mode in force.
    pub mode: Mode,
    /// Where it came from when it was first chosen.
    pub mode_source: ModeSource,
    /// The id hooks are told (a UUID made when the session first opened).
    pub hook_session_id: String,
    /// Patterns the person added in the session, `(list, pattern)`.
    pub session_rules: Vec<(List, String)>,
    /// The trust map, its rules and the directories opened beside the working directory.
    pub trust: Option<TrustRecord>,
}

/// How to open a session.
#[derive(Debug)]
pub struct SessionConfig {
    /// The session's name: its record's folder under the state directory (letters,
    /// digits, `-`, `_`).
    pub id: String,
    /// The gate's configuration.
    pub gate: GateConfig,
    /// The agent file, loaded.
    pub agent: Option<LoadedAgent>,
    /// The person's settings file, loaded.
    pub settings: Option<LoadedSettings>,
    /// `--safety` / `--yolo` on this start.
    pub flag: Option<Mode>,
    /// The state directory.
    pub state_dir: PathBuf,
    /// Every workspace root of the session (the state directory must lie outside them).
    pub roots: Vec<PathBuf>,
    /// Grants given at the start (added to the table).
    pub grants: Vec<Grant>,
    /// The trust map and its roots, when the session has them (replaced by the record's
    /// map on resume).
    pub trust: Option<(TrustMap, Roots)>,
    /// Resume from the record instead of starting afresh.
    pub resume: bool,
}

/// Opening a session failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A record cannot be used.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The gate cannot be built.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// A pattern of the record cannot be read.
    #[error(transparent)]
    Pattern(#[from] LoadError),
    /// The recorded trust map cannot be restored into the workspace session.
    #[error("cannot restore the recorded trust map: {0}")]
    Restore(#[from] WorkspaceError),
    /// `resume` without a record.
    #[error("{0}: there is no session record to resume")]
    NothingToResume(PathBuf),
}

/// Sets each decision record's outcome from the answer records that follow it, and what
/// ran from its act record (a journal read back holds all three).
fn fold_answers(records: &mut [Value]) {
    for i in 0..records.len() {
        fold_one(records, i);
    }
}

/// Folds record `i` (an answer or an act record) into the decision it follows.
pub(super) fn fold_one(records: &mut [Value], i: usize) {
    let kind = records[i].get("kind").and_then(Value::as_str);
    let fields: &[&str] = match kind {
        Some("answer") => &["outcome"],
        Some("act") => &["ran", "not_run", "exit", "withheld"],
        _ => return,
    };
    let id = records[i]["tool_use_id"].clone();
    let values: Vec<(&str, Value)> = fields
        .iter()
        .map(|f| (*f, records[i][*f].clone()))
        .collect();
    if let Some(d) = records[..i].iter_mut().rev().find(|r| {
        r.get("kind").and_then(Value::as_str) == Some("decision") && r["tool_use_id"] == id
    }) {
        for (f, v) in values {
            d[f] = v;
        }
    }
}

/// The person's answer to the open card, as the session saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// `approved`, `refused`, `expired` or `not_offered`.
    pub outcome: AnswerOutcome,
    /// The grant saved, if any.
    pub saved: Option<Grant>,
}

/// An answer arrived with no card open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no card is waiting for an answer: the last call of this session did not ask")]
pub struct NoCard;

/// A fresh random UUID (version 4), from the kernel's random source.
pub fn fresh_uuid() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if read.is_err() {
        // No random source: a time-and-pid id keeps sessions apart, though guessable.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b[..16].copy_from_slice(&(t ^ u128::from(std::process::id())).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// One guarded session.
#[derive(Debug)]
pub struct GuardedSession {
    id: String,
    hook_session_id: String,
    gate: Gate,
    grants: GrantTable,
    policy: Policy,
    runner: HookRunner,
    trust: Option<(TrustMap, Roots)>,
    files: Option<Workspace>,
    stored_trust: Option<TrustRecord>,
    state: StateDir,
    record_file: PathBuf,
    journal: Journal,
    audit: Vec<Value>,
    pending: Option<(Ruling, usize)>,
    /// The call of the open card, when it was acted on: it runs if the card is approved.
    pending_act: Option<Call>,
    notices: Vec<String>,
    seq: u64,
}

impl GuardedSession {
    /// Opens (or, with `resume`, restores) a session.
    pub fn open(config: SessionConfig) -> Result<GuardedSession, SessionError> {
        GuardedSession::open_with(config, None)
    }

    /// [`GuardedSession::open`] reading back only the records of the journal's last
    /// `window` bytes (its audit trail, [`GuardedSession::audit`], holds those only), so
    /// that a process that opens the session for one call costs the same at its
    /// thousandth call as at its first (GUARD-FAIL-3). A call without an id is numbered
    /// from the journal's length, which grows with every call.
    pub fn open_recent(config: SessionConfig, window: u64) -> Result<GuardedSession, SessionError> {
        GuardedSession::open_with(config, Some(window))
    }

    fn open_with(
        config: SessionConfig,
        window: Option<u64>,
    ) -> Result<GuardedSession, SessionError> {
        let roots: Vec<&std::path::Path> = config.roots.iter().map(PathBuf::as_path).collect();
        let state = StateDir::open(&config.state_dir, &roots)?;
        let dir = state.session(&config.id)?;
        let record_file = dir.join("session.json");
        let stored: Option<SessionRecord> = read_json(&record_file)?;
        let on_disk = stored.clone();
        if config.resume && stored.is_none() {
            return Err(SessionError::NothingToResume(record_file));
        }
        let stored = if config.resume { stored } else { None };
        let mut grants: GrantTable = read_json(&state.grants())?.unwrap_or_default();
        for g in config.grants {
            grants.add(g);
        }
        let mut rules = RuleSet::new();
        let mut hooks = HooksConfig::default();
        let (mut redact, mut agent_name) = (true, "root".to_string());
        let mut candidates = ModeCandidates {
            flag: config.flag,
            ..Default::default()
        };
        if let Some(a) = &config.agent {
            rules.add(Source::AgentFile(a.file.clone()), &a.permissions)?;
            hooks = a.agent.hooks.clone();
            redact = a.redact_secrets();
            agent_name = a.name.clone();
            candidates.agent_file = a.safety;
        }
        if let Some(s) = &config.settings {
            rules.add(Source::Settings(s.file.clone()), &s.permissions)?;
            candidates.settings = s.safety;
        }
        let mut trust = config.trust;
        if let Some(r) = &stored {
            candidates.resumed = Some(r.mode);
            for (list, p) in &r.session_rules {
                rules.add_session(*list, p)?;
            }
            if let (Some(rec), Some((map, roots))) = (&r.trust, trust.as_mut()) {
                *map = TrustMap::resume(rec);
                map.reopen(roots);
            }
        }
        let mut mode = candidates.resolve();
        if mode.source == ModeSource::Resumed {
            // The stored source says who first chose it.
            if let Some(r) = &stored {
                mode = ModeChoice {
                    mode: r.mode,
                    source: if r.mode_source == ModeSource::Default {
                        ModeSource::Default
                    } else {
                        ModeSource::Resumed
                    },
                };
            }
        }
        let (journal, opened, seq) = match window {
            None => {
                let (j, o) = Journal::open(&dir.join("audit.jsonl"))?;
                let n = o.records.len() as u64;
                (j, o, n)
            }
            Some(w) => Journal::open_tail(&dir.join("audit.jsonl"), w)?,
        };
        let gate = Gate::new(config.gate)?;
        let runner = HookRunner::new(gate.workspace());
        let hook_session_id = stored
            .as_ref()
            .map(|r| r.hook_session_id.clone())
            .unwrap_or_else(fresh_uuid);
        let mut s = GuardedSession {
            id: config.id,
            hook_session_id,
            gate,
            grants,
            policy: Policy {
                rules,
                hooks,
                redact,
                mode,
                agent_name,
            },
            runner,
            trust,
            files: None,
            stored_trust: stored.as_ref().and_then(|r| r.trust.clone()),
            state,
            record_file,
            journal,
            audit: opened.records,
            pending: None,
            pending_act: None,
            notices: opened.torn.into_iter().collect(),
            seq: 0,
        };
        s.seq = seq;
        fold_answers(&mut s.audit);
        for n in s.notices.clone() {
            s.append(json!({ "kind": "notice", "message": n }))?;
        }
        // The grant table is written when it changes (or the setup brought grants); the
        // record at once, so that the session can be resumed from its first step (unless
        // the file already holds exactly this record: a resumed session that changed
        // nothing is not written again, which spares a hook process per call its syncs).
        if !s.grants.is_empty() {
            s.save_grants()?;
        }
        if on_disk.as_ref() != Some(&s.session_record()) {
            s.save_record()?;
        }
        Ok(s)
    }

    /// The session's name.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id hooks are told.
    pub fn hook_session_id(&self) -> &str {
        &self.hook_session_id
    }

    /// The gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The policy (patterns, hooks, mode).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The trust map and its roots.
    pub fn trust_mut(&mut self) -> Option<&mut (TrustMap, Roots)> {
        self.trust.as_mut()
    }

    /// Gives the session its file tools and trust map (a [`Workspace`] session): from now
    /// on the session record holds that map, and every call's redirections are planned and
    /// marked in it. A resumed session restores the recorded map into it (ORDER-REC-2) and
    /// says what it could not reopen.
    pub fn attach_files(
        &mut self,
        mut files: Workspace,
    ) -> Result<Option<ResumeOutcome>, SessionError> {
        let restored = match self.stored_trust.take() {
            Some(rec) => Some(files.restore(&rec)?),
            None => None,
        };
        self.files = Some(files);
        self.save_record()?;
        Ok(restored)
    }

    /// The attached file tools and trust map.
    pub fn files(&self) -> Option<&Workspace> {
        self.files.as_ref()
    }

    /// Runs `step` on the attached file tools, then records the trust map when the step
    /// changed it (before the step's answer is given, ORDER-REC-3). `None` without them.
    pub fn with_files<R>(
        &mut self,
        step: impl FnOnce(&mut Workspace) -> R,
    ) -> Result<Option<R>, RecordError> {
        let Some(files) = self.files.as_mut() else {
            return Ok(None);
        };
        let before = files.trust_record();
        let out = step(files);
        if files.trust_record() != before {
            self.save_record()?;
        }
        Ok(Some(out))
    }

    /// Lines the session has to tell (an interrupted append set aside at open).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The ruling on `call`, without recording it. `trust` is the trust map and roots the
    /// call's redirections are planned against, when the caller keeps them (otherwise the
    /// session's own).
    pub fn rule(&self, call: &Call, trust: Option<(&TrustMap, &Roots)>) -> Ruling {
        decide(
            Controls {
                gate: &self.gate,
                grants: &self.grants,
                hooks: &self.runner,
                trust: trust
                    .or(self.files.as_ref().map(|f| (f.map(), f.roots())))
                    .or(self.trust.as_ref().map(|(m, r)| (m, r))),
            },
            &self.policy,
            call,
        )
    }

    /// A call for this session.
    pub fn call(&mut self, tool: &str, input: Value, tool_use_id: Option<String>) -> Call {
        self.seq += 1;
        Call {
            tool: tool.to_string(),
            input,
            tool_use_id: tool_use_id.unwrap_or_else(|| format!("call-{}", self.seq)),
            session_id: self.hook_session_id.clone(),
        }
    }

    /// Decides one call and records it (one journal write, synced, before it returns).
    pub fn decide(&mut self, call: &Call) -> Result<Ruling, RecordError> {
        self.decide_with(call, None)
    }

    /// [`GuardedSession::decide`] with the caller's trust map and roots.
    pub fn decide_with(
        &mut self,
        call: &Call,
        trust: Option<(&TrustMap, &Roots)>,
    ) -> Result<Ruling, RecordError> {
        let ruling = self.rule(call, trust);
        self.record(&ruling)?;
        Ok(ruling)
    }

    /// Decides several calls at once (their hooks run at the same time), recording each.
    pub fn decide_many(&mut self, calls: &[Call]) -> Result<Vec<Ruling>, RecordError> {
        let rulings: Vec<Ruling> = std::thread::scope(|scope| {
            let handles: Vec<_> = calls
                .iter()
                .map(|c| scope.spawn(|| self.rule(c, None)))
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        for r in &rulings {
            self.record(r)?;
        }
        Ok(rulings)
    }

    fn record(&mut self, ruling: &Ruling) -> Result<(), RecordError> {
        let outcome = match ruling.decision {
            Verdict::Allow => "allowed",
            Verdict::Ask => "pending",
            Verdict::Deny => "denied",
        };
        let mut v = serde_json::to_value(ruling).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("kind".into(), json!("decision"));
            m.insert("session".into(), json!(self.id));
            m.insert("outcome".into(), json!(outcome));
        }
        self.append(v)?;
        self.pending =
            (ruling.decision == Verdict::Ask).then(|| (ruling.clone(), self.audit.len() - 1));
        self.pending_act = None;
        Ok(())
    }

    fn append(&mut self, record: Value) -> Result<(), RecordError> {
        self.journal.append(&record)?;
        self.audit.push(record);
        Ok(())
    }

    /// Applies the person's answer to the open card (GATE-CARD-2, -3): saves the grant it
    /// names (the grant table replaced whole before the answer is acknowledged) and
    /// records the outcome as its own journal record.
    pub fn answer(&mut self, choice: Choice) -> Result<Result<Answered, NoCard>, RecordError> {
        let Some((ruling, index)) = self.pending.clone() else {
            return Ok(Err(NoCard));
        };
        let gated: Option<Tool> = ruling.tool.parse().ok();
        let answered = match (gated, &ruling.offers, ruling.card) {
            (Some(tool), Some(offers), Some(spec)) => {
                let text = ["cmd", "code", "input"]
                    .iter()
                    .find_map(|k| ruling.input.get(*k).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string();
                let a = PendingCard {
                    tool,
                    input: text,
                    offers: offers.clone(),
                    spec,
                }
                .answer(choice);
                Answered {
                    outcome: a.outcome,
                    saved: a.saved,
                }
            }
            (_, _, spec) => {
                let outcome = match choice {
                    Choice::Once => AnswerOutcome::Approved,
                    Choice::Refuse => AnswerOutcome::Refused,
                    Choice::Silence => {
                        if let Some(s) = spec {
                            std::thread::sleep(s.window);
                        }
                        AnswerOutcome::Expired
                    }
                    Choice::Exact | Choice::Family => AnswerOutcome::NotOffered,
                };
                Answered {
                    outcome,
                    saved: None,
                }
            }
        };
        if answered.outcome == AnswerOutcome::NotOffered {
            return Ok(Ok(answered));
        }
        if let Some(g) = &answered.saved {
            self.grants.add(g.clone());
            self.save_grants()?;
        }
        let outcome = serde_json::to_value(answered.outcome).unwrap_or(Value::Null);
        if let Some(Value::Object(m)) = self.audit.get_mut(index) {
            m.insert("outcome".into(), outcome.clone());
        }
        let record = json!({
            "kind": "answer",
            "session": self.id,
            "tool_use_id": ruling.tool_use_id,
            "outcome": outcome,
            "saved": answered.saved,
        });
        self.journal.append(&record)?;
        self.pending = None;
        Ok(Ok(answered))
    }

    /// Records that the agent ran a call this session decided, as its post-tool event
    /// says (GUARD-STATE-2): a call that asked was approved by the person (the agent's
    /// own prompt), and it ran. Both are journal records folded into the decision, as
    /// [`GuardedSession::answer`] and an act record are. Returns `false` (recording
    /// nothing) when no decision of this session has the id.
    pub fn note_ran(&mut self, tool_use_id: &str) -> Result<bool, RecordError> {
        let id = json!(tool_use_id);
        let Some(outcome) = self
            .audit
            .iter()
            .rev()
            .find(|r| {
                r.get("kind").and_then(Value::as_str) == Some("decision") && r["tool_use_id"] == id
            })
            .map(|d| d["outcome"].clone())
        else {
            return Ok(false);
        };
        if outcome == json!("pending") {
            self.append(json!({
                "kind": "answer",
                "session": self.id,
                "tool_use_id": tool_use_id,
                "outcome": "approved",
                "saved": null,
            }))?;
            let last = self.audit.len() - 1;
            fold_one(&mut self.audit, last);
        }
        self.append(json!({
            "kind": "act",
            "session": self.id,
            "tool_use_id": tool_use_id,
            "ran": true,
            "not_run": null,
            "exit": null,
            "withheld": false,
        }))?;
        let last = self.audit.len() - 1;
        fold_one(&mut self.audit, last);
        Ok(true)
    }

    /// The grant table.
    pub fn grants(&self) -> &GrantTable {
        &self.grants
    }

    /// Takes grants back (GATE-REVOKE-2), saving the table.
    pub fn revoke(&mut self, target: &str) -> Result<Vec<Grant>, RecordError> {
        let gone = self.grants.revoke(target);
        if !gone.is_empty() {
            self.save_grants()?;
        }
        Ok(gone)
    }

    /// Adds a pattern in the session (PERM-ASK-2), saving the session record.
    pub fn add_rule(
        &mut self,
        list: List,
        pattern: &str,
    ) -> Result<Result<(), LoadError>, RecordError> {
        if let Err(e) = self.policy.rules.add_session(list, pattern) {
            return Ok(Err(e));
        }
        self.save_record()?;
        Ok(Ok(()))
    }

    /// The audit trail: every decision record, with its outcome as answered since.
    pub fn audit(&self) -> Vec<&Value> {
        self.audit
            .iter()
            .filter(|r| r.get("kind").and_then(Value::as_str) == Some("decision"))
            .collect()
    }

    /// The session record as it stands.
    pub fn session_record(&self) -> SessionRecord {
        SessionRecord {
            version: RECORD_VERSION,
            session_id: self.id.clone(),
            hook_session_id: self.hook_session_id.clone(),
            mode: self.policy.mode.mode,
            mode_source: self.policy.mode.source,
            session_rules: self.policy.rules.session_rules(),
            trust: match &self.files {
                Some(f) => Some(f.trust_record()),
                None => self.trust.as_ref().map(|(m, _)| m.record()),
            },
        }
    }

    /// Writes the session record (after a change of the trust map, for instance).
    pub fn save_record(&self) -> Result<(), RecordError> {
        write_json(&self.record_file, &self.session_record())
    }

    fn save_grants(&self) -> Result<(), RecordError> {
        write_json(&self.state.grants(), &self.grants)
    }
}

pub mod act;

#[cfg(test)]
mod tests;
