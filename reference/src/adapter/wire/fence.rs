//! The JSON shapes of capability `fence`: its requests ([`FenceRequest`]), the posture
//! object (execution-plane chapter, section 13) and the answers to `run` and `toggle`,
//! each a direct rendering of the library's own value ([`Posture`], [`RunAnswer`],
//! [`ToggleAnswer`]): the protections carry the chapter's codes already, so nothing is
//! recomputed here.
//!
//! Pure data and serde: touches nothing.

use serde::Serialize;

use gatehouse::fence::{Abi, BackendKind, Posture};
use gatehouse::plane::session::{RunAnswer, ToggleAnswer};

/// One layer as the protocol shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireLayer {
    /// The layer's name.
    pub name: String,
    /// The protections it covers.
    pub covers: Vec<&'static str>,
}

/// The posture object of the protocol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WirePosture {
    /// `fence`, `off` or `none`.
    pub state: &'static str,
    /// The backend holding the commands, `null` when `off` or `none`.
    pub backend: Option<&'static str>,
    /// The layers present and what each covers.
    pub layers: Vec<WireLayer>,
    /// The Landlock ABI in force.
    pub landlock_abi: Option<Abi>,
    /// The protections no layer covers.
    pub not_covered: Vec<&'static str>,
    /// The fence lacks a required protection.
    pub degraded: bool,
    /// Why `off` or `none`, or what made it degraded.
    pub reason: Option<String>,
    /// `scrubbed` or `full`.
    pub env: &'static str,
    /// `protected` or `unprotected`.
    pub session_log: &'static str,
    /// The person's choices (protocol 1.4): the network mode, every secret-looking
    /// variable passed on purpose, every extra path.
    pub choices: WireChoices,
    /// The entries of `PATH` left out because the jail cannot read them (FENCE-ENV-12).
    pub path_dropped: Vec<String>,
}

/// The choices the posture names (FENCE-NET-1, FENCE-ENV-9, FENCE-PATHS-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireChoices {
    /// `off`, `allow-list` or `host`.
    pub network: String,
    /// The allowed domains.
    pub allowed_domains: Vec<String>,
    /// Secret-looking names passed or set on purpose (never their values).
    pub passed_secrets: Vec<String>,
    /// Extra read-only paths, resolved.
    pub ro: Vec<String>,
    /// Extra writable roots, resolved.
    pub rw: Vec<String>,
    /// Hidden paths, resolved.
    pub hide: Vec<String>,
}

impl WirePosture {
    /// The wire form of a posture of the reference.
    pub fn of(p: &Posture) -> WirePosture {
        let state = match p.backend {
            BackendKind::Off => "off",
            BackendKind::None => "none",
            _ => "fence",
        };
        WirePosture {
            state,
            backend: p.is_fenced().then(|| p.backend.name()),
            layers: p
                .layers
                .iter()
                .map(|l| WireLayer {
                    name: l.name.clone(),
                    covers: l.covers.iter().map(|c| c.name()).collect(),
                })
                .collect(),
            landlock_abi: p.landlock_abi,
            not_covered: p.not_covered.iter().map(|c| c.name()).collect(),
            degraded: p.is_fenced() && p.degraded,
            reason: p.reason.clone(),
            env: if p.env_scrubbing { "scrubbed" } else { "full" },
            session_log: if p.logs_writable_by_tools {
                "unprotected"
            } else {
                "protected"
            },
            choices: {
                let c = &p.choices;
                let shown =
                    |v: &[std::path::PathBuf]| v.iter().map(|x| x.display().to_string()).collect();
                WireChoices {
                    network: if c.network.is_empty() {
                        "off".to_string()
                    } else {
                        c.network.clone()
                    },
                    allowed_domains: c.allowed_domains.clone(),
                    passed_secrets: c.passed_secrets.clone(),
                    ro: shown(&c.read_only),
                    rw: shown(&c.writable),
                    hide: shown(&c.hidden),
                }
            },
            path_dropped: p.path_dropped.clone(),
        }
    }
}

/// The answer to `run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireRun {
    /// The exit status, `null` when killed by a signal or refused.
    pub exit: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// The fence that held it.
    pub held_by: &'static str,
    /// The refusal code, or `null` when it ran.
    pub refused: Option<&'static str>,
    /// The posture in force.
    pub posture: WirePosture,
}

impl WireRun {
    /// The wire form of a run's answer.
    pub fn of(a: RunAnswer) -> WireRun {
        WireRun {
            exit: a.exit,
            signal: a.signal,
            stdout: a.stdout,
            stderr: a.stderr,
            held_by: a.posture.held_by(),
            refused: a.refused.map(|r| r.code()),
            posture: WirePosture::of(&a.posture),
        }
    }
}

/// The answer to `toggle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireToggle {
    /// `confirmation_required` or `choice_refused`, or `null` when the switch happened.
    pub refused: Option<&'static str>,
    /// The posture now in force.
    pub posture: WirePosture,
}

impl WireToggle {
    /// The wire form of a toggle's answer.
    pub fn of(a: ToggleAnswer) -> WireToggle {
        WireToggle {
            refused: a.refused.map(|r| r.code()),
            posture: WirePosture::of(&a.posture),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse::fence::{Coverage, Layer};

    #[test]
    fn postures_speak_in_protections() {
        let p = Posture::fenced(
            BackendKind::Native,
            vec![Layer {
                name: "landlock ABI 2".into(),
                covers: vec![Coverage::Write, Coverage::RenameLink, Coverage::Hidden],
            }],
            Some(Abi::V2),
            None,
        );
        let w = WirePosture::of(&p);
        assert_eq!(w.state, "fence");
        assert_eq!(w.backend, Some("native"));
        assert_eq!(w.layers[0].covers, vec!["write", "rename_link", "hidden"]);
        assert!(w.degraded);
        assert!(w.not_covered.contains(&"truncate"));
        assert!(w.not_covered.contains(&"metadata"));
        assert!(!w.not_covered.contains(&"write"));
        let off = WirePosture::of(&Posture::unfenced(BackendKind::Off, "toggle"));
        assert_eq!(off.state, "off");
        assert_eq!(off.backend, None);
        assert_eq!(off.not_covered.len(), Coverage::ALL.len());
        assert!(!off.degraded);
        assert_eq!(off.session_log, "unprotected");
    }
}

/// The ops of `fence`.
pub const OPS: &[&str] = &["run", "posture", "toggle"];

/// One request of `fence`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FenceRequest {
    /// Runs one command in the plane as an approved call.
    Run {
        /// The session's name.
        session: String,
        /// `shell` or `execute_code`.
        tool: String,
        /// The line or code.
        input: String,
        /// Absolute, or relative to the workspace; `null` is the workspace.
        #[serde(default)]
        cwd: Option<String>,
        /// Run it on a fresh pseudo-terminal of the jail's own (protocol 1.5,
        /// PROTO-FENCE-5); its stdout is then what the terminal showed.
        #[serde(default)]
        tty: bool,
    },
    /// The session's posture.
    Posture {
        /// The session's name.
        session: String,
    },
    /// The session's runtime toggle.
    Toggle {
        /// The session's name.
        session: String,
        /// `on` or `off`.
        to: String,
        /// Whether the person confirmed (switching off needs it).
        #[serde(default)]
        confirmed: bool,
    },
}
