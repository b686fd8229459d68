//! Safety modes (PERM-MODE-1 to -6): what the order does with a call no pattern decided,
//! by the call's [`Label`], and which source of a mode is in force.
//!
//! | mode | safe | destructive | unknown |
//! |---|---|---|---|
//! | strict | ask | ask | ask |
//! | balanced | allow | ask | ask |
//! | restricted | allow | deny | deny (and nothing ever prompts) |
//! | autonomous (`--yolo`) | allow | allow | allow |
//! | unset | allow | ask | ask |
//!
//! Pure data: touches nothing.

use super::label::Label;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A safety mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every unmatched call asks.
    Strict,
    /// Safe calls run; the rest ask.
    Balanced,
    /// Safe calls run; the rest are denied; nothing prompts, ever.
    Restricted,
    /// Every unmatched call runs (`--yolo`).
    Autonomous,
    /// No mode was chosen by anyone: the historical default.
    Unset,
}

/// What a mode does with a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeVerdict {
    /// The call runs.
    Allow,
    /// The person is asked (default-lane hooks first).
    Ask,
    /// The call is refused.
    Deny,
}

impl Mode {
    /// Every mode, in the table's order.
    pub const ALL: [Mode; 5] = [
        Mode::Strict,
        Mode::Balanced,
        Mode::Restricted,
        Mode::Autonomous,
        Mode::Unset,
    ];

    /// The mode's name as the flag, the files and the wire spell it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Balanced => "balanced",
            Mode::Restricted => "restricted",
            Mode::Autonomous => "autonomous",
            Mode::Unset => "unset",
        }
    }

    /// Parses a mode name; `yolo` is `autonomous` (PERM-MODE-2).
    pub fn parse(name: &str) -> Option<Mode> {
        Some(match name {
            "strict" => Mode::Strict,
            "balanced" => Mode::Balanced,
            "restricted" => Mode::Restricted,
            "autonomous" | "yolo" => Mode::Autonomous,
            "unset" => Mode::Unset,
            _ => return None,
        })
    }

    /// The table (PERM-MODE-1).
    pub fn verdict(self, label: Label) -> ModeVerdict {
        use ModeVerdict::*;
        match (self, label) {
            (Mode::Strict, _) => Ask,
            (Mode::Autonomous, _) => Allow,
            (_, Label::Safe) => Allow,
            (Mode::Restricted, _) => Deny,
            (Mode::Balanced | Mode::Unset, _) => Ask,
        }
    }

    /// Whether the mode forbids every prompt (PERM-MODE-3): an ask from any stage becomes
    /// a deny.
    pub fn never_prompts(self) -> bool {
        self == Mode::Restricted
    }

    /// The `safety_policy` a hook is told (the seed's spelling; `""` when unset).
    pub fn policy_name(self) -> &'static str {
        match self {
            Mode::Unset => "",
            m => m.name(),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the mode in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeSource {
    /// Nobody chose one.
    Default,
    /// The agent file's author (`safety:` in the agent file): a default only.
    AgentFile,
    /// The person's settings file.
    Settings,
    /// The session record a resumed session was restored from.
    Resumed,
    /// The person's flag on this start (`--safety`, `--yolo`).
    Flag,
}

impl ModeSource {
    /// The source's name.
    pub fn name(self) -> &'static str {
        match self {
            ModeSource::Default => "default",
            ModeSource::AgentFile => "agent_file",
            ModeSource::Settings => "settings",
            ModeSource::Resumed => "resumed",
            ModeSource::Flag => "flag",
        }
    }

    /// Whether the person (not an agent's author) chose the mode (PERM-ASK-1): only then
    /// do the author's ask patterns yield to it.
    pub fn is_persons_choice(self) -> bool {
        matches!(
            self,
            ModeSource::Settings | ModeSource::Resumed | ModeSource::Flag
        )
    }
}

/// The mode in force and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeChoice {
    /// The mode.
    pub mode: Mode,
    /// Its source.
    pub source: ModeSource,
}

/// The candidates for a session's mode, one per source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModeCandidates {
    /// `--safety` or `--yolo` on this start.
    pub flag: Option<Mode>,
    /// The mode stored in the session record being resumed.
    pub resumed: Option<Mode>,
    /// The person's settings file.
    pub settings: Option<Mode>,
    /// The agent file.
    pub agent_file: Option<Mode>,
}

impl ModeCandidates {
    /// The mode in force (PERM-MODE-4, -5): the flag, else the resumed session's own
    /// mode, else the person's settings, else the agent file's default, else unset.
    pub fn resolve(self) -> ModeChoice {
        let pick = [
            (self.flag, ModeSource::Flag),
            (self.resumed, ModeSource::Resumed),
            (self.settings, ModeSource::Settings),
            (self.agent_file, ModeSource::AgentFile),
        ];
        pick.into_iter()
            .find_map(|(m, source)| m.map(|mode| ModeChoice { mode, source }))
            .unwrap_or(ModeChoice {
                mode: Mode::Unset,
                source: ModeSource::Default,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use Label::*;
    use ModeVerdict::*;

    #[rstest]
    #[case(Mode::Strict, [Ask, Ask, Ask])]
    #[case(Mode::Balanced, [Allow, Ask, Ask])]
    #[case(Mode::Restricted, [Allow, Deny, Deny])]
    #[case(Mode::Autonomous, [Allow, Allow, Allow])]
    #[case(Mode::Unset, [Allow, Ask, Ask])]
    fn the_table(#[case] mode: Mode, #[case] row: [ModeVerdict; 3]) {
        assert_eq!(
            [
                mode.verdict(Safe),
                mode.verdict(Destructive),
                mode.verdict(Unknown)
            ],
            row
        );
    }

    #[test]
    fn yolo_is_autonomous() {
        assert_eq!(Mode::parse("yolo"), Some(Mode::Autonomous));
        assert_eq!(Mode::parse("YOLO"), None);
        for m in Mode::ALL {
            assert_eq!(Mode::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn the_persons_choice_outranks_the_author() {
        let c = ModeCandidates {
            settings: Some(Mode::Restricted),
            agent_file: Some(Mode::Autonomous),
            ..Default::default()
        };
        assert_eq!(c.resolve().mode, Mode::Restricted);
        let c = ModeCandidates {
            resumed: Some(Mode::Strict),
            settings: Some(Mode::Autonomous),
            agent_file: Some(Mode::Autonomous),
            ..Default::default()
        };
        assert_eq!(
            c.resolve(),
            ModeChoice {
                mode: Mode::Strict,
                source: ModeSource::Resumed
            }
        );
        let c = ModeCandidates {
            flag: Some(Mode::Balanced),
            resumed: Some(Mode::Strict),
            ..Default::default()
        };
        assert_eq!(c.resolve().source, ModeSource::Flag);
        assert_eq!(ModeCandidates::default().resolve().mode, Mode::Unset);
    }
}
