//! The decision (section 2): for one call, walk the dangerous list, the Windows rule, the
//! allow-list, the saved grants and auto-safe in that order, and either allow, ask through
//! a card, or deny when there is no way to ask.
//!
//! Reads the filesystem only through the [`Jail`] (and only after every text check has
//! passed); never runs anything, never changes the grant table.

use super::card::{CardError, CardSpec, CardWindows, Channel};
use super::codes::{Reason, Route, Verdict};
use super::danger::is_dangerous;
use super::flags::has_escape_flag;
use super::grants::GrantTable;
use super::jail::{Jail, JailError, JailRefusal};
use super::lists::{is_read_command, never_savable};
use super::offers::{is_family_key, offers_for, Offers};
use super::tool::Tool;
use super::words::{first_word, has_metacharacter, read_words};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The kind of host the gate behaves as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Host {
    /// A POSIX shell reads the lines.
    #[default]
    Posix,
    /// PowerShell reads them: every automatic route for `shell` closes (GATE-WIN-1).
    Windows,
}

/// How a card reaches a person, or that nothing can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Asker {
    /// A terminal prompt.
    #[default]
    Terminal,
    /// A web client.
    Web,
    /// A voice turn.
    Speech,
    /// No way to ask: every call that would ask is denied (GATE-ASK-1).
    None,
}

impl Asker {
    /// The card channel, or `None` when there is no way to ask.
    pub fn channel(self) -> Option<Channel> {
        match self {
            Asker::Terminal => Some(Channel::Terminal),
            Asker::Web => Some(Channel::Web),
            Asker::Speech => Some(Channel::Speech),
            Asker::None => None,
        }
    }
}

/// How an installation configures its gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateConfig {
    /// The working directory auto-safe reads are jailed to.
    pub workspace: PathBuf,
    /// The kind of host.
    pub host: Host,
    /// How a card reaches the person.
    pub asker: Asker,
    /// Literal lines that always pass (GATE-ORDER-3); empty by default.
    pub allow_list: Vec<String>,
    /// How long a card stays open on each channel.
    pub windows: CardWindows,
}

impl GateConfig {
    /// The default install for `workspace`: POSIX host, terminal asker, empty allow-list,
    /// default windows.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        GateConfig {
            workspace: workspace.into(),
            host: Host::Posix,
            asker: Asker::Terminal,
            allow_list: Vec::new(),
            windows: CardWindows::default(),
        }
    }
}

/// Building a gate failed.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The working directory cannot be resolved.
    #[error(transparent)]
    Workspace(#[from] JailError),
    /// A card window is refused.
    #[error(transparent)]
    Window(#[from] CardError),
}

/// What the gate decided for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Allow, ask or deny.
    pub decision: Verdict,
    /// The stage that decided.
    pub route: Route,
    /// The reason code.
    pub reason: Reason,
    /// What a card for this call offers (computed whether or not one is shown).
    pub offers: Offers,
    /// The card shown, when the gate asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardSpec>,
}

/// The approval gate of one installation and working directory.
#[derive(Debug, Clone)]
pub struct Gate {
    jail: Jail,
    host: Host,
    asker: Asker,
    allow_list: Vec<String>,
    windows: CardWindows,
}

impl Gate {
    /// Builds the gate; resolves the working directory once.
    pub fn new(config: GateConfig) -> Result<Self, GateError> {
        Ok(Gate {
            jail: Jail::new(&config.workspace)?,
            host: config.host,
            asker: config.asker,
            allow_list: config.allow_list,
            windows: config.windows,
        })
    }

    /// The resolved working directory.
    pub fn workspace(&self) -> &std::path::Path {
        self.jail.root()
    }

    /// The kind of host.
    pub fn host(&self) -> Host {
        self.host
    }

    /// How cards reach the person.
    pub fn asker(&self) -> Asker {
        self.asker
    }

    /// Decides one call to `tool` with `input`, given the saved `grants`.
    pub fn decide(&self, tool: Tool, input: &str, grants: &GrantTable) -> Decision {
        match tool {
            Tool::Shell => self.decide_shell(input, grants),
            Tool::ExecuteCode => {
                let offers = offers_for(tool, input, false, false);
                // Literal actions pass for code too; Windows closes only shell routes
                // (GATE-WIN-3).
                if self.allow_list.iter().any(|a| a == input) {
                    return allow(Route::AllowList, Reason::AllowList, offers);
                }
                if grants.has_exact(tool, input) {
                    return allow(Route::GrantExact, Reason::GrantExact, offers);
                }
                self.ask(Reason::Code, offers)
            }
            Tool::McpInstall | Tool::McpConnect => {
                self.ask(Reason::CardOnly, offers_for(tool, input, false, false))
            }
        }
    }

    fn decide_shell(&self, line: &str, grants: &GrantTable) -> Decision {
        let windows = self.host == Host::Windows;
        // 1. The dangerous list outranks everything, even on Windows (GATE-ORDER-2).
        let dangerous = is_dangerous(line);
        let offers = offers_for(Tool::Shell, line, dangerous, windows);
        if dangerous {
            return self.ask(Reason::Dangerous, offers);
        }
        // Windows closes every automatic route for shell (GATE-WIN-1).
        if windows {
            return self.ask(Reason::WindowsHost, offers);
        }
        // 2. The allow-list, byte for byte (GATE-ORDER-3).
        if self.allow_list.iter().any(|a| a == line) {
            return allow(Route::AllowList, Reason::AllowList, offers);
        }
        // 3a. An exact grant, byte for byte, for this tool (GATE-EXACT-1 to -3).
        if grants.has_exact(Tool::Shell, line) {
            return allow(Route::GrantExact, Reason::GrantExact, offers);
        }
        // 4. (computed first: a family over a read command needs it too) auto-safe.
        let safe = self.auto_safe(line);
        // 3b. A family grant with its conditions (GATE-FAMILY-1 to -5).
        if self.family_covers(line, grants, safe) {
            return allow(Route::GrantFamily, Reason::GrantFamily, offers);
        }
        match safe {
            Ok(()) => allow(Route::AutoSafe, Reason::AutoSafe, offers),
            // 5./6. Ask, or deny with no asker, with the first failed condition.
            Err(reason) => self.ask(reason, offers),
        }
    }

    /// The four conditions of auto-safe (sections 3 to 6), checked in the priority order
    /// of section 16 so that the first failure is the reported reason: text checks first,
    /// the filesystem last.
    pub fn auto_safe(&self, line: &str) -> Result<(), Reason> {
        if has_metacharacter(line) {
            return Err(Reason::Metacharacter);
        }
        let words = read_words(line).map_err(|_| Reason::Unreadable)?;
        let Some(first) = words.first() else {
            return Err(Reason::Empty);
        };
        if !is_read_command(first.as_str()) {
            return Err(Reason::NotReadList);
        }
        if has_escape_flag(&words) {
            return Err(Reason::EscapeFlag);
        }
        self.jail.check(&words).map_err(|refusal| match refusal {
            JailRefusal::Glob => Reason::Glob,
            JailRefusal::Outside => Reason::PathOutside,
        })
    }

    /// Whether a saved family covers `line`: its first word (after quote removal) is a
    /// command name equal to a saved key, the line has no metacharacter, the family is
    /// savable, and a read command still passes its flags and jail (`safe`).
    ///
    /// **Choice:** a family never covers a first word that is not a command name (a key
    /// holding `=`, a `/` or a glob character written by hand), for the same reason it is
    /// never offered (GATE-FAMILY-6, -7).
    fn family_covers(&self, line: &str, grants: &GrantTable, safe: Result<(), Reason>) -> bool {
        if grants.is_empty() || has_metacharacter(line) {
            return false;
        }
        let Some(Ok(first)) = first_word(line) else {
            return false;
        };
        let name = first.as_str();
        if !is_family_key(name) || !grants.has_family(name) || never_savable(name).is_some() {
            return false;
        }
        !is_read_command(name) || safe.is_ok()
    }

    fn ask(&self, reason: Reason, offers: Offers) -> Decision {
        match self.asker.channel() {
            Some(channel) => Decision {
                decision: Verdict::Ask,
                route: Route::Card,
                reason,
                offers,
                card: Some(CardSpec {
                    channel,
                    window: self.windows.window(channel),
                }),
            },
            None => Decision {
                decision: Verdict::Deny,
                route: Route::NoAsker,
                reason,
                offers,
                card: None,
            },
        }
    }
}

fn allow(route: Route, reason: Reason, offers: Offers) -> Decision {
    Decision {
        decision: Verdict::Allow,
        route,
        reason,
        offers,
        card: None,
    }
}

#[cfg(test)]
mod tests;
