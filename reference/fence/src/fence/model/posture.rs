//! The posture: which fence holds the plane's commands, its layers and what each covers,
//! what nothing covers, and why a fence is absent. Never claimed before the probe passed.

use serde::{Deserialize, Serialize};

use crate::fence::coverage::Coverage;
use crate::sys::landlock::Abi;

/// The backend named in the posture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// Namespaces, Landlock and seccomp set up by gatehouse itself.
    Native,
    /// bubblewrap, with Landlock and seccomp applied inside.
    Bwrap,
    /// macOS Seatbelt (`sandbox-exec`).
    Seatbelt,
    /// Switched off by the operator: commands run unfenced, and the posture says so.
    Off,
    /// No fence: the probe failed or no backend exists here; commands are refused.
    None,
}

impl BackendKind {
    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Native => "native",
            BackendKind::Bwrap => "bwrap",
            BackendKind::Seatbelt => "seatbelt",
            BackendKind::Off => "off",
            BackendKind::None => "none",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One enforcement layer and what it covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// `namespaces`, `capabilities`, `landlock`, `seccomp`, `bwrap`, `seatbelt`.
    pub name: String,
    /// What it covers.
    pub covers: Vec<Coverage>,
}

/// The fence's posture, as `gatehouse info` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posture {
    /// Which backend holds the commands.
    pub backend: BackendKind,
    /// Its layers, outermost first.
    pub layers: Vec<Layer>,
    /// The Landlock ABI actually enforced (after any cap), if Landlock is a layer.
    pub landlock_abi: Option<Abi>,
    /// Items no layer covers.
    pub not_covered: Vec<Coverage>,
    /// A required item is not covered and the operator opted in to run anyway.
    pub degraded: bool,
    /// Why the fence is `none` or `off`, or what made it degraded.
    pub reason: Option<String>,
    /// Whether the environment is scrubbed at spawn (false: the plane-wide opt-out).
    pub env_scrubbing: bool,
    /// Whether code run by tools can write the session logs (true when the fence is down).
    pub logs_writable_by_tools: bool,
    /// What the person chose for this session: network, passed secrets, extra paths.
    #[serde(default)]
    pub choices: PostureChoices,
    /// The entries of `PATH` left out of the jail's because jailed code cannot read them
    /// (FENCE-ENV-12), as written, in order.
    #[serde(default)]
    pub path_dropped: Vec<String>,
}

/// The person's choices for a session, as the posture names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostureChoices {
    /// `off`, `host` or `allow-list` (empty: not chosen here, the fence's own network
    /// namespace).
    #[serde(default)]
    pub network: String,
    /// The allowed domains in `allow-list` mode.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Secret-looking variables passed on purpose, by name (never their values).
    #[serde(default)]
    pub passed_secrets: Vec<String>,
    /// Extra paths visible read-only.
    #[serde(default)]
    pub read_only: Vec<std::path::PathBuf>,
    /// Extra writable roots.
    #[serde(default)]
    pub writable: Vec<std::path::PathBuf>,
    /// Paths hidden inside the jail.
    #[serde(default)]
    pub hidden: Vec<std::path::PathBuf>,
}

impl PostureChoices {
    /// The human rendering (empty when nothing was chosen).
    pub fn render(&self) -> String {
        let mut parts = Vec::new();
        if !self.network.is_empty() {
            let mut n = format!("network: {}", self.network);
            if !self.allowed_domains.is_empty() {
                n.push_str(&format!(" ({})", self.allowed_domains.join(", ")));
            }
            parts.push(n);
        }
        if !self.passed_secrets.is_empty() {
            parts.push(format!(
                "SECRET-LOOKING variables passed on purpose: {}",
                self.passed_secrets.join(", ")
            ));
        }
        let list = |v: &[std::path::PathBuf]| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.read_only.is_empty() {
            parts.push(format!("extra read-only: {}", list(&self.read_only)));
        }
        if !self.writable.is_empty() {
            parts.push(format!("extra writable: {}", list(&self.writable)));
        }
        if !self.hidden.is_empty() {
            parts.push(format!("hidden: {}", list(&self.hidden)));
        }
        parts.join("; ")
    }
}

impl Posture {
    /// A posture from layers: computes `not_covered` and `degraded`.
    pub fn fenced(
        backend: BackendKind,
        layers: Vec<Layer>,
        landlock_abi: Option<Abi>,
        reason: Option<String>,
    ) -> Posture {
        let not_covered = uncovered(&layers);
        let mut posture = Posture {
            backend,
            layers,
            landlock_abi,
            not_covered,
            degraded: false,
            reason,
            env_scrubbing: true,
            logs_writable_by_tools: false,
            choices: PostureChoices::default(),
            path_dropped: Vec::new(),
        };
        posture.degraded = !posture.missing_required().is_empty();
        posture
    }

    /// The required protections (FENCE-LAYER-5) no layer covers, in the chapter's order.
    pub fn missing_required(&self) -> Vec<Coverage> {
        self.not_covered
            .iter()
            .copied()
            .filter(|c| c.is_required())
            .collect()
    }

    /// The name of what holds the commands: the backend, or `off` / `none`.
    pub fn held_by(&self) -> &'static str {
        self.backend.name()
    }

    /// No fence at all (`off` or `none`), with the reason.
    pub fn unfenced(backend: BackendKind, reason: impl Into<String>) -> Posture {
        Posture {
            backend,
            layers: Vec::new(),
            landlock_abi: None,
            not_covered: Coverage::ALL.to_vec(),
            degraded: false,
            reason: Some(reason.into()),
            env_scrubbing: true,
            logs_writable_by_tools: true,
            choices: PostureChoices::default(),
            path_dropped: Vec::new(),
        }
    }

    /// Whether commands may run at all (`none` refuses).
    pub fn runs_commands(&self) -> bool {
        self.backend != BackendKind::None
    }

    /// Whether a fence holds the commands (not `off`, not `none`).
    pub fn is_fenced(&self) -> bool {
        !matches!(self.backend, BackendKind::Off | BackendKind::None)
    }

    /// The single-line human rendering.
    pub fn render(&self) -> String {
        let mut out = format!("fence: {}", self.backend);
        match self.backend {
            BackendKind::None | BackendKind::Off => {
                if let Some(r) = &self.reason {
                    out.push_str(" — ");
                    out.push_str(r);
                }
            }
            _ => {
                if self.degraded {
                    out.push_str(" DEGRADED");
                }
                let layers: Vec<String> = self
                    .layers
                    .iter()
                    .map(|l| {
                        let covers: Vec<&str> = l.covers.iter().map(|c| c.name()).collect();
                        format!("{}: {}", l.name, covers.join(", "))
                    })
                    .collect();
                out.push_str(&format!(" ({})", layers.join("; ")));
                if !self.not_covered.is_empty() {
                    let nc: Vec<&str> = self.not_covered.iter().map(|c| c.name()).collect();
                    out.push_str(&format!(" — not covered: {}", nc.join(", ")));
                }
                if let Some(r) = &self.reason {
                    out.push_str(&format!(" — {r}"));
                }
            }
        }
        if !self.env_scrubbing {
            out.push_str(" — environment NOT scrubbed (plane-wide opt-out): secrets reach tools");
        }
        if self.logs_writable_by_tools {
            out.push_str(" — session logs writable by tools");
        }
        if !self.path_dropped.is_empty() {
            out.push_str(&format!(
                " — PATH entries the jail cannot read, left out: {}",
                self.path_dropped.join(", ")
            ));
        }
        let chosen = self.choices.render();
        if !chosen.is_empty() {
            out.push_str(" — ");
            out.push_str(&chosen);
        }
        out
    }

    /// Pretty JSON.
    // serde_json fails only on a map key that is not a string or a hand-written `Serialize`
    // that errs: the posture's derived fields have neither.
    #[allow(clippy::expect_used)]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a posture always serializes")
    }
}

impl std::fmt::Display for Posture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

fn uncovered(layers: &[Layer]) -> Vec<Coverage> {
    Coverage::missing(layers.iter().map(|l| l.covers.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degraded_when_required_item_missing() {
        let p = Posture::fenced(
            BackendKind::Native,
            vec![Layer {
                name: "landlock ABI 2".into(),
                covers: vec![Coverage::Write, Coverage::RenameLink, Coverage::Hidden],
            }],
            Some(Abi::V2),
            None,
        );
        assert!(p.degraded);
        assert!(p.not_covered.contains(&Coverage::Truncate));
        assert!(p.not_covered.contains(&Coverage::Metadata));
        assert!(p
            .render()
            .starts_with("fence: native DEGRADED (landlock ABI 2: write, rename_link, hidden)"));
    }

    #[test]
    fn none_renders_reason() {
        let p = Posture::unfenced(BackendKind::None, "probe: write outside succeeded");
        assert_eq!(
            p.render(),
            "fence: none — probe: write outside succeeded — session logs writable by tools"
        );
        let json: Posture = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(json, p);
    }
}
