//! The card (section 13): the channels a card reaches a person through, their windows
//! (GATE-CARD-4), what a person may answer (GATE-CARD-2), expiry (GATE-CARD-3) and the
//! audit record every call leaves (GATE-CARD-5).
//!
//! Touches the real clock and nothing else: a card nobody answers blocks the calling
//! thread for its whole window.

use super::codes::Verdict;
use super::grants::Grant;
use super::offers::Offers;
use super::tool::Tool;
use serde::{Deserialize, Serialize, Serializer};
use std::time::Duration;

/// How a card reaches the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// A terminal prompt.
    Terminal,
    /// A web client.
    Web,
    /// A voice turn.
    Speech,
}

/// The longest window a speech card may have: the platform times out a silent turn and
/// re-fires it, which would orphan a longer card (GATE-CARD-4).
pub const SPEECH_WINDOW_MAX: Duration = Duration::from_secs(25);

/// A window configuration the gate refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    /// A speech window above [`SPEECH_WINDOW_MAX`].
    #[error(
        "a speech card window of {} ms is refused: the platform re-fires a silent turn after 25000 ms",
        .0.as_millis()
    )]
    SpeechWindowTooLong(Duration),
}

/// How long an unanswered card stays open on each channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardWindows {
    terminal: Duration,
    web: Duration,
    speech: Duration,
}

impl Default for CardWindows {
    /// Terminal 300 s, web 600 s, speech 25 s (GATE-CARD-4).
    fn default() -> Self {
        CardWindows {
            terminal: Duration::from_secs(300),
            web: Duration::from_secs(600),
            speech: SPEECH_WINDOW_MAX,
        }
    }
}

impl CardWindows {
    /// Windows per channel; a speech window above 25 s is refused.
    pub fn new(terminal: Duration, web: Duration, speech: Duration) -> Result<Self, CardError> {
        if speech > SPEECH_WINDOW_MAX {
            return Err(CardError::SpeechWindowTooLong(speech));
        }
        Ok(CardWindows {
            terminal,
            web,
            speech,
        })
    }

    /// These windows with `channel`'s replaced by `window`.
    pub fn with(self, channel: Channel, window: Duration) -> Result<Self, CardError> {
        let mut w = self;
        match channel {
            Channel::Terminal => w.terminal = window,
            Channel::Web => w.web = window,
            Channel::Speech => w.speech = window,
        }
        CardWindows::new(w.terminal, w.web, w.speech)
    }

    /// The window of `channel`.
    pub fn window(&self, channel: Channel) -> Duration {
        match channel {
            Channel::Terminal => self.terminal,
            Channel::Web => self.web,
            Channel::Speech => self.speech,
        }
    }
}

fn as_millis<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The card shown for one call: where, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CardSpec {
    /// The channel it is shown on.
    pub channel: Channel,
    /// How long it stays open unanswered.
    #[serde(rename = "window_ms", serialize_with = "as_millis")]
    pub window: Duration,
}

/// What a person did with a card (GATE-CARD-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Approve this run only.
    Once,
    /// Refuse.
    Refuse,
    /// Approve and save the exact line.
    Exact,
    /// Approve and save the family.
    Family,
    /// Nobody answers.
    Silence,
}

/// What came of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerOutcome {
    /// The call runs.
    Approved,
    /// The person refused it.
    Refused,
    /// Nobody answered within the window.
    Expired,
    /// The person pressed a key the card did not offer: nothing approved, nothing saved.
    NotOffered,
}

/// The result of answering a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// What came of it.
    pub outcome: AnswerOutcome,
    /// The grant to save, if the answer saves one.
    pub saved: Option<Grant>,
}

/// The outcome an audit record carries (GATE-CARD-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditOutcome {
    /// An automatic route let it run.
    Allowed,
    /// The person approved it.
    Approved,
    /// The person refused it.
    Refused,
    /// Its card expired unanswered.
    Expired,
    /// No way to ask: denied.
    Denied,
    /// Its card has not been answered yet.
    Pending,
}

impl AuditOutcome {
    /// The outcome a decision leaves before any answer.
    pub fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Allow => AuditOutcome::Allowed,
            Verdict::Ask => AuditOutcome::Pending,
            Verdict::Deny => AuditOutcome::Denied,
        }
    }

    /// The outcome an answer leaves; `None` for `not_offered`, which leaves the card open.
    pub fn of_answer(outcome: AnswerOutcome) -> Option<Self> {
        match outcome {
            AnswerOutcome::Approved => Some(AuditOutcome::Approved),
            AnswerOutcome::Refused => Some(AuditOutcome::Refused),
            AnswerOutcome::Expired => Some(AuditOutcome::Expired),
            AnswerOutcome::NotOffered => None,
        }
    }
}

/// One call in the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// The tool called.
    pub tool: Tool,
    /// The line or code, as given.
    pub input: String,
    /// What became of it.
    pub outcome: AuditOutcome,
}

/// A card on screen, waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCard {
    /// The tool called.
    pub tool: Tool,
    /// The line or code, as given.
    pub input: String,
    /// What the card offers.
    pub offers: Offers,
    /// Where it is shown and for how long.
    pub spec: CardSpec,
}

impl PendingCard {
    /// Applies `choice` to this card. `silence` blocks the calling thread for the card's
    /// whole window on the real clock, then expires (GATE-CARD-3, PROTO-GATE-2).
    /// `exact` and `family` approve and save only when offered; otherwise nothing is
    /// approved or saved (`not_offered`).
    pub fn answer(&self, choice: Choice) -> Answer {
        let (outcome, saved) = match choice {
            Choice::Once => (AnswerOutcome::Approved, None),
            Choice::Refuse => (AnswerOutcome::Refused, None),
            Choice::Silence => {
                std::thread::sleep(self.spec.window);
                (AnswerOutcome::Expired, None)
            }
            Choice::Exact if self.offers.exact => (
                AnswerOutcome::Approved,
                Some(Grant::exact(self.tool, self.input.clone())),
            ),
            Choice::Family => match &self.offers.family {
                Some(key) => (AnswerOutcome::Approved, Some(Grant::family(key.clone()))),
                None => (AnswerOutcome::NotOffered, None),
            },
            Choice::Exact => (AnswerOutcome::NotOffered, None),
        };
        Answer { outcome, saved }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offers::offers_for;
    use std::time::Instant;

    fn card(line: &str, window_ms: u64) -> PendingCard {
        PendingCard {
            tool: Tool::Shell,
            input: line.to_string(),
            offers: offers_for(Tool::Shell, line, false, false),
            spec: CardSpec {
                channel: Channel::Terminal,
                window: Duration::from_millis(window_ms),
            },
        }
    }

    #[test]
    fn default_windows() {
        let w = CardWindows::default();
        assert_eq!(w.window(Channel::Terminal), Duration::from_secs(300));
        assert_eq!(w.window(Channel::Web), Duration::from_secs(600));
        assert_eq!(w.window(Channel::Speech), Duration::from_secs(25));
    }

    #[test]
    fn a_long_speech_window_is_refused() {
        let w = CardWindows::default();
        assert!(w.with(Channel::Speech, Duration::from_secs(26)).is_err());
        assert!(w.with(Channel::Speech, Duration::from_secs(5)).is_ok());
        assert!(w.with(Channel::Terminal, Duration::from_secs(3600)).is_ok());
    }

    #[test]
    fn answers() {
        let c = card("git push", 10);
        assert_eq!(c.answer(Choice::Once).outcome, AnswerOutcome::Approved);
        assert_eq!(c.answer(Choice::Refuse).outcome, AnswerOutcome::Refused);
        assert_eq!(
            c.answer(Choice::Exact).saved,
            Some(Grant::exact(Tool::Shell, "git push"))
        );
        assert_eq!(c.answer(Choice::Family).saved, Some(Grant::family("git")));
    }

    #[test]
    fn unoffered_keys_save_nothing() {
        let c = card("sudo ls", 10);
        let a = c.answer(Choice::Family);
        assert_eq!(a.outcome, AnswerOutcome::NotOffered);
        assert_eq!(a.saved, None);
        let c = card("", 10);
        assert_eq!(c.answer(Choice::Exact).outcome, AnswerOutcome::NotOffered);
    }

    #[test]
    fn silence_waits_the_window() {
        let c = card("ls /etc", 60);
        let start = Instant::now();
        assert_eq!(c.answer(Choice::Silence).outcome, AnswerOutcome::Expired);
        assert!(start.elapsed() >= Duration::from_millis(60));
    }

    #[test]
    fn card_spec_serializes_window_in_ms() {
        let spec = CardSpec {
            channel: Channel::Web,
            window: Duration::from_secs(600),
        };
        assert_eq!(
            serde_json::to_string(&spec).unwrap(),
            r#"{"channel":"web","window_ms":600000}"#
        );
    }
}
