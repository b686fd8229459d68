//! A session of the gate: one [`Gate`], its grant table, the card waiting for an answer
//! and the audit trail, as the adapter (or an agent) drives them call by call.
//!
//! Holds everything in memory; touches the filesystem only through the gate's jail and
//! the clock only through an unanswered card.

use super::card::{Answer, AuditOutcome, AuditRecord, Choice, PendingCard};
use super::codes::Verdict;
use super::decision::{Decision, Gate};
use super::grants::{Grant, GrantTable};
use super::tool::Tool;

/// An answer arrived with no card to answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no card is waiting for an answer: the last call of this session did not ask")]
pub struct NoCard;

/// One session: a gate, its grants, its open card and its audit trail.
#[derive(Debug, Clone)]
pub struct Session {
    gate: Gate,
    grants: GrantTable,
    pending: Option<(PendingCard, usize)>,
    audit: Vec<AuditRecord>,
}

impl Session {
    /// A session starting from exactly `grants` (PROTO-SESSION-1).
    pub fn new(gate: Gate, grants: GrantTable) -> Self {
        Session {
            gate,
            grants,
            pending: None,
            audit: Vec::new(),
        }
    }

    /// The session's gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Decides one call and records it. When the gate asks, its card becomes the one the
    /// next [`Session::answer`] answers; any earlier unanswered card stays `pending` in
    /// the trail.
    pub fn decide(&mut self, tool: Tool, input: &str) -> Decision {
        let decision = self.gate.decide(tool, input, &self.grants);
        self.audit.push(AuditRecord {
            tool,
            input: input.to_string(),
            outcome: AuditOutcome::of(decision.decision),
        });
        self.pending = match (decision.decision, decision.card) {
            (Verdict::Ask, Some(spec)) => Some((
                PendingCard {
                    tool,
                    input: input.to_string(),
                    offers: decision.offers.clone(),
                    spec,
                },
                self.audit.len() - 1,
            )),
            _ => None,
        };
        decision
    }

    /// Applies the person's answer to the open card, saves the grant it names, and
    /// records the outcome. `silence` blocks for the card's window. A `not_offered`
    /// answer changes nothing: the card stays open and can still be answered.
    pub fn answer(&mut self, choice: Choice) -> Result<Answer, NoCard> {
        let (card, index) = self.pending.as_ref().ok_or(NoCard)?;
        let answer = card.answer(choice);
        if let Some(outcome) = AuditOutcome::of_answer(answer.outcome) {
            self.audit[*index].outcome = outcome;
            self.pending = None;
        }
        if let Some(grant) = &answer.saved {
            self.grants.add(grant.clone());
        }
        Ok(answer)
    }

    /// The grant table.
    pub fn grants(&self) -> &GrantTable {
        &self.grants
    }

    /// Takes grants back by key or number, without asking (GATE-REVOKE-3).
    pub fn revoke(&mut self, target: &str) -> Vec<Grant> {
        self.grants.revoke(target)
    }

    /// The audit trail, one record per call, in order.
    pub fn audit(&self) -> &[AuditRecord] {
        &self.audit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{AnswerOutcome, CardWindows, Channel};
    use crate::decision::GateConfig;
    use std::time::Duration;

    fn session(dir: &tempfile::TempDir) -> Session {
        let mut config = GateConfig::new(dir.path());
        config.windows = CardWindows::default()
            .with(Channel::Terminal, Duration::from_millis(30))
            .unwrap();
        Session::new(Gate::new(config).unwrap(), GrantTable::new())
    }

    fn outcomes(s: &Session) -> Vec<AuditOutcome> {
        s.audit().iter().map(|r| r.outcome).collect()
    }

    #[test]
    fn saving_a_family_then_revoking_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = session(&dir);
        assert_eq!(s.decide(Tool::Shell, "git status").decision, Verdict::Ask);
        let a = s.answer(Choice::Family).unwrap();
        assert_eq!(a.outcome, AnswerOutcome::Approved);
        assert_eq!(a.saved, Some(Grant::family("git")));
        assert_eq!(s.decide(Tool::Shell, "git push").decision, Verdict::Allow);
        assert_eq!(s.revoke("1"), [Grant::family("git")]);
        assert_eq!(s.decide(Tool::Shell, "git push").decision, Verdict::Ask);
        assert_eq!(
            outcomes(&s),
            [
                AuditOutcome::Approved,
                AuditOutcome::Allowed,
                AuditOutcome::Pending
            ]
        );
    }

    #[test]
    fn silence_expires_and_is_not_a_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = session(&dir);
        s.decide(Tool::Shell, "ls /etc");
        assert_eq!(
            s.answer(Choice::Silence).unwrap().outcome,
            AnswerOutcome::Expired
        );
        s.decide(Tool::Shell, "ls /etc");
        assert_eq!(
            s.answer(Choice::Refuse).unwrap().outcome,
            AnswerOutcome::Refused
        );
        assert_eq!(outcomes(&s), [AuditOutcome::Expired, AuditOutcome::Refused]);
        assert_eq!(s.answer(Choice::Once), Err(NoCard));
    }

    #[test]
    fn an_unoffered_key_leaves_the_card_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = session(&dir);
        s.decide(Tool::Shell, "rm -rf x");
        assert_eq!(
            s.answer(Choice::Exact).unwrap().outcome,
            AnswerOutcome::NotOffered
        );
        assert!(s.grants().is_empty());
        assert_eq!(outcomes(&s), [AuditOutcome::Pending]);
        assert_eq!(
            s.answer(Choice::Once).unwrap().outcome,
            AnswerOutcome::Approved
        );
        assert_eq!(outcomes(&s), [AuditOutcome::Approved]);
    }

    #[test]
    fn allowed_calls_leave_no_card() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = session(&dir);
        s.decide(Tool::Shell, "ls");
        assert_eq!(s.answer(Choice::Once), Err(NoCard));
        assert_eq!(outcomes(&s), [AuditOutcome::Allowed]);
    }
}
