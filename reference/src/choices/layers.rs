//! The choices of one `gatehouse exec`, merged from the user's file, the project's file
//! and the command line, each value with the place it came from.
//!
//! Order: built-in defaults, then the user's file, then the project's file (only when the
//! project is trusted: listed in the user's `trusted-projects`, or `--trust-project-config`
//! given), then the command line. A scalar takes the last value given; a list gathers
//! every layer's entries, each keeping its own source; `env.set` takes the last value per
//! name. Secret-looking variables (`env.pass-secrets`) can be named only by the user's
//! file or the command line: a project file cannot ask for the person's secrets.

use std::fmt;
use std::path::{Path, PathBuf};

use super::file::{FileError, Parsed};
use super::name::EnvName;

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in default.
    Default,
    /// A line of a configuration file.
    File {
        /// The file.
        file: PathBuf,
        /// The line.
        line: usize,
    },
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { file, line } => write!(f, "{}:{line}", file.display()),
            Source::Flag(name) => write!(f, "--{name}"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its source.
    pub source: Source,
}

impl<T> Sourced<T> {
    /// A value from `source`.
    pub fn new(value: T, source: Source) -> Sourced<T> {
        Sourced { value, source }
    }
}

/// The jail's network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkMode {
    /// A network namespace of its own with only a loopback interface (the default).
    #[default]
    Off,
    /// The host's network (the host's UNIX sockets stay unreachable).
    Host,
    /// A network namespace of its own; out only through the reference's proxy, to the
    /// allow-listed domains.
    AllowList,
}

/// A network mode that is none of `off`, `host`, `allow-list`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown network mode `{given}` (off, host, allow-list)")]
pub struct UnknownNetworkMode {
    /// The mode as given.
    pub given: String,
}

impl std::str::FromStr for NetworkMode {
    type Err = UnknownNetworkMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(NetworkMode::Off),
            "host" => Ok(NetworkMode::Host),
            "allow-list" => Ok(NetworkMode::AllowList),
            other => Err(UnknownNetworkMode {
                given: other.to_string(),
            }),
        }
    }
}

impl fmt::Display for NetworkMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NetworkMode::Off => "off",
            NetworkMode::Host => "host",
            NetworkMode::AllowList => "allow-list",
        })
    }
}

/// Choices with their sources: one layer (a file or the command line, `N` an optional
/// network mode, unset when the layer does not say) or their merge ([`Choices`], the mode
/// always set). The lists are the same in both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen<N> {
    /// `network.mode` / `--network`.
    pub network: N,
    /// `network.allow-domains` / `--allow-domain` (used in `allow-list` mode).
    pub allow_domains: Vec<Sourced<String>>,
    /// `env.pass` / `--pass-env`: variables passed by name.
    pub pass_env: Vec<Sourced<EnvName>>,
    /// `env.pass-secrets` / `--pass-secret-env`: secret-looking variables passed on purpose.
    pub pass_secrets: Vec<Sourced<EnvName>>,
    /// `env.set` / `--set-env`: variables set to a value (one per name once merged).
    pub set_env: Vec<Sourced<(EnvName, String)>>,
    /// `paths.read-only` / `--ro`: visible read-only.
    pub read_only: Vec<Sourced<PathBuf>>,
    /// `paths.writable` / `--rw`: extra writable roots.
    pub writable: Vec<Sourced<PathBuf>>,
    /// `paths.hidden` / `--hide`: absent inside the jail.
    pub hidden: Vec<Sourced<PathBuf>>,
    /// Merged: the files read, and files found but not honoured with the reason (a layer
    /// leaves it empty).
    pub files: Vec<(PathBuf, Option<String>)>,
}

/// One layer of choices: a file or the command line.
pub type Layer = Chosen<Option<Sourced<NetworkMode>>>;

/// The merged choices.
pub type Choices = Chosen<Sourced<NetworkMode>>;

/// A network mode that the other choices contradict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// A mode other than `allow-list` named beside an allowed domain.
    #[error(
        "network mode `{}` ({}) conflicts with the allowed domain `{}` ({}): domains are allowed only in the `allow-list` mode",
        mode.value, mode.source, domain.value, domain.source
    )]
    Conflict {
        /// The mode, where it was named.
        mode: Sourced<NetworkMode>,
        /// The first allowed domain, where it was named.
        domain: Sourced<String>,
    },
    /// `allow-list` with nothing allowed.
    #[error("network mode `allow-list` ({named_at}) with no allowed domain (--allow-domain NAME)")]
    NoDomain {
        /// Where the mode was named.
        named_at: Source,
    },
}

/// Which file a layer was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `$XDG_CONFIG_HOME/gatehouse/config.toml`.
    User,
    /// `<project>/.gatehouse/config.toml`.
    Project,
}

/// A path of a file: `~/` is the person's home; relative means relative to the project
/// root in a project file and is refused in the user's file.
fn file_path(
    p: &Parsed,
    v: &toml::Spanned<String>,
    kind: FileKind,
    home: Option<&Path>,
    project: &Path,
) -> Result<PathBuf, FileError> {
    let s = v.get_ref();
    if let Some(rest) = s.strip_prefix("~/") {
        return match home {
            Some(h) => Ok(h.join(rest)),
            None => Err(p.invalid(v, format!("`{s}`: `~` but HOME is not set"))),
        };
    }
    let path = PathBuf::from(s);
    if path.is_absolute() {
        return Ok(path);
    }
    match kind {
        FileKind::Project => Ok(project.join(path)),
        FileKind::User => Err(p.invalid(
            v,
            format!("`{s}`: a path in the user's file is absolute or starts with `~/`"),
        )),
    }
}

impl Layer {
    /// The layer a parsed file gives. `project` is the project root (for relative paths of
    /// a project file), `home` the person's home (for `~/`).
    pub fn from_file(
        p: &Parsed,
        kind: FileKind,
        home: Option<&Path>,
        project: &Path,
    ) -> Result<Layer, FileError> {
        let c = &p.config;
        let src = |line: usize| Source::File {
            file: p.file.clone(),
            line,
        };
        let mut l = Layer::default();
        if kind == FileKind::Project {
            if let Some(v) = c.trusted_projects.first() {
                return Err(p.invalid(
                    v,
                    "`trusted-projects` belongs in the user's file only".into(),
                ));
            }
            if let Some(v) = c.env.pass_secrets.first() {
                return Err(p.invalid(
                    v,
                    "`env.pass-secrets` is honoured only in the user's file or on the command line: a project cannot ask for the person's secrets".into(),
                ));
            }
        }
        if let Some(m) = &c.network.mode {
            let mode = m
                .get_ref()
                .parse::<NetworkMode>()
                .map_err(|e| p.invalid(m, format!("network.mode: {e}")))?;
            l.network = Some(Sourced::new(mode, src(p.line(m))));
        }
        for d in &c.network.allow_domains {
            crate::net::DomainPattern::parse(d.get_ref())
                .map_err(|e| p.invalid(d, format!("network.allow-domains: {e}")))?;
            l.allow_domains
                .push(Sourced::new(d.get_ref().clone(), src(p.line(d))));
        }
        for (list, out, key) in [
            (&c.env.pass, &mut l.pass_env, "env.pass"),
            (&c.env.pass_secrets, &mut l.pass_secrets, "env.pass-secrets"),
        ] {
            for v in list {
                let name = EnvName::new(v.get_ref().as_str())
                    .map_err(|e| p.invalid(v, format!("{key}: {e}")))?;
                out.push(Sourced::new(name, src(p.line(v))));
            }
        }
        for (k, v) in &c.env.set {
            let set = EnvName::new(k.as_str())
                .map_err(|e| e.to_string())
                .and_then(|n| n.with_value(v.get_ref().clone()).map_err(|e| e.to_string()))
                .map_err(|e| p.invalid(v, format!("env.set: {e}")))?;
            l.set_env.push(Sourced::new(set, src(p.line(v))));
        }
        for (list, out) in [
            (&c.paths.read_only, &mut l.read_only),
            (&c.paths.writable, &mut l.writable),
            (&c.paths.hidden, &mut l.hidden),
        ] {
            for v in list {
                out.push(Sourced::new(
                    file_path(p, v, kind, home, project)?,
                    src(p.line(v)),
                ));
            }
        }
        Ok(l)
    }
}

impl Default for Choices {
    fn default() -> Choices {
        Chosen {
            network: Sourced::new(NetworkMode::Off, Source::Default),
            allow_domains: Vec::new(),
            pass_env: Vec::new(),
            pass_secrets: Vec::new(),
            set_env: Vec::new(),
            read_only: Vec::new(),
            writable: Vec::new(),
            hidden: Vec::new(),
            files: Vec::new(),
        }
    }
}

fn gather<T: PartialEq + Clone>(into: &mut Vec<Sourced<T>>, from: &[Sourced<T>]) {
    for v in from {
        if !into.iter().any(|x| x.value == v.value) {
            into.push(v.clone());
        }
    }
}

impl Choices {
    /// Apply one layer on top.
    pub fn apply(&mut self, l: &Layer) {
        if let Some(n) = &l.network {
            self.network = n.clone();
        }
        gather(&mut self.allow_domains, &l.allow_domains);
        gather(&mut self.pass_env, &l.pass_env);
        gather(&mut self.pass_secrets, &l.pass_secrets);
        for s in &l.set_env {
            self.set_env.retain(|x| x.value.0 != s.value.0);
            self.set_env.push(s.clone());
        }
        gather(&mut self.read_only, &l.read_only);
        gather(&mut self.writable, &l.writable);
        gather(&mut self.hidden, &l.hidden);
    }

    /// Checks across choices: an allow-list needs the `allow-list` mode, and a mode
    /// named explicitly wins over the implication of `--allow-domain`.
    pub fn finish(mut self) -> Result<Choices, ModeError> {
        if !self.allow_domains.is_empty() {
            match self.network.value {
                NetworkMode::AllowList => {}
                NetworkMode::Off if self.network.source == Source::Default => {
                    self.network =
                        Sourced::new(NetworkMode::AllowList, self.allow_domains[0].source.clone());
                }
                mode => {
                    return Err(ModeError::Conflict {
                        mode: Sourced::new(mode, self.network.source.clone()),
                        domain: self.allow_domains[0].clone(),
                    })
                }
            }
        }
        if self.network.value == NetworkMode::AllowList && self.allow_domains.is_empty() {
            return Err(ModeError::NoDomain {
                named_at: self.network.source.clone(),
            });
        }
        Ok(self)
    }

    /// One line per setting that is not the default, with its source, for `gatehouse info`.
    pub fn provenance(&self) -> Vec<String> {
        let mut out = vec![format!(
            "network = {}  ({})",
            self.network.value, self.network.source
        )];
        for d in &self.allow_domains {
            out.push(format!("allow-domain {}  ({})", d.value, d.source));
        }
        for v in &self.pass_env {
            out.push(format!("pass-env {}  ({})", v.value, v.source));
        }
        for v in &self.pass_secrets {
            out.push(format!("pass-secret-env {}  ({})", v.value, v.source));
        }
        for v in &self.set_env {
            out.push(format!("set-env {}  ({})", v.value.0, v.source));
        }
        for (what, list) in [
            ("ro", &self.read_only),
            ("rw", &self.writable),
            ("hide", &self.hidden),
        ] {
            for v in list {
                out.push(format!("{what} {}  ({})", v.value.display(), v.source));
            }
        }
        for (f, why) in &self.files {
            match why {
                None => out.push(format!("read {}", f.display())),
                Some(w) => out.push(format!("ignored {}: {w}", f.display())),
            }
        }
        out
    }
}
