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

use super::file::{FileError, FileValue, Parsed};
use super::name::EnvName;
use super::table::{SlotMut, SlotRef, TABLE};

pub use super::value::{NetworkMode, Source, Sourced, UnknownNetworkMode};

pub use super::table::Chosen;

/// One layer of choices: a file or the command line.
pub type Layer = Chosen<Option<Sourced<NetworkMode>>>;

/// The merged choices.
pub type Choices = Chosen<Sourced<NetworkMode>>;

/// A network mode that the other choices contradict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// A mode other than `allow-list` or `registries` named beside an allowed domain.
    #[error(
        "network mode `{}` ({}) conflicts with the allowed domain `{}` ({}): domains are allowed only in the `allow-list` and `registries` modes",
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
            for spec in TABLE.iter().filter(|s| s.secret) {
                if let (Some(key), Some(v)) = (spec.file, c.values.get(spec.name)) {
                    if v.is_empty() {
                        continue;
                    }
                    return Err(p.invalid_at(
                        v.line(p),
                        format!("`{key}` is honoured only in the user's file or on the command line: a project cannot ask for the person's secrets"),
                    ));
                }
            }
        }
        for (spec, slot) in l.slots_mut() {
            let (Some(key), Some(value)) = (spec.file, c.values.get(spec.name)) else {
                continue;
            };
            match (slot, value) {
                (SlotMut::Mode(out), FileValue::One(m)) => {
                    let mode = m
                        .get_ref()
                        .parse::<NetworkMode>()
                        .map_err(|e| p.invalid(m, format!("{key}: {e}")))?;
                    *out = Some(Sourced::new(mode, src(p.line(m))));
                }
                (SlotMut::Text(out), FileValue::One(v)) => {
                    *out = Some(Sourced::new(v.get_ref().clone(), src(p.line(v))));
                }
                (SlotMut::Domains(out), FileValue::List(list)) => {
                    for d in list {
                        crate::net::DomainPattern::parse(d.get_ref())
                            .map_err(|e| p.invalid(d, format!("{key}: {e}")))?;
                        out.push(Sourced::new(d.get_ref().clone(), src(p.line(d))));
                    }
                }
                (SlotMut::Names(out), FileValue::List(list)) => {
                    for v in list {
                        let name = EnvName::new(v.get_ref().as_str())
                            .map_err(|e| p.invalid(v, format!("{key}: {e}")))?;
                        out.push(Sourced::new(name, src(p.line(v))));
                    }
                }
                (SlotMut::Pairs(out), FileValue::Map(map)) => {
                    for (k, v) in map {
                        let set = EnvName::new(k.as_str())
                            .map_err(|e| e.to_string())
                            .and_then(|n| {
                                n.with_value(v.get_ref().clone()).map_err(|e| e.to_string())
                            })
                            .map_err(|e| p.invalid(v, format!("{key}: {e}")))?;
                        out.push(Sourced::new(set, src(p.line(v))));
                    }
                }
                (SlotMut::Paths(out), FileValue::List(list)) => {
                    for v in list {
                        out.push(Sourced::new(
                            file_path(p, v, kind, home, project)?,
                            src(p.line(v)),
                        ));
                    }
                }
                // The file's reader holds each row's values in its slot's kind.
                _ => {}
            }
        }
        Ok(l)
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
        for ((_, from), (_, into)) in l.slots().into_iter().zip(self.slots_mut()) {
            match (from, into) {
                (SlotRef::Mode(Some(n)), SlotMut::Mode(into)) => *into = n.clone(),
                (SlotRef::Text(Some(v)), SlotMut::Text(into)) => *into = Some(v.clone()),
                (SlotRef::Domains(from), SlotMut::Domains(into)) => gather(into, from),
                (SlotRef::Names(from), SlotMut::Names(into)) => gather(into, from),
                (SlotRef::Pairs(from), SlotMut::Pairs(into)) => {
                    for s in from {
                        into.retain(|x| x.value.0 != s.value.0);
                        into.push(s.clone());
                    }
                }
                (SlotRef::Paths(from), SlotMut::Paths(into)) => gather(into, from),
                // Unset in the layer (or, never, rows out of step: one table for both).
                _ => {}
            }
        }
    }

    /// Checks across choices: an allow-list needs the `allow-list` mode, and a mode
    /// named explicitly wins over the implication of `--allow-domain`.
    pub fn finish(mut self) -> Result<Choices, ModeError> {
        if !self.allow_domains.is_empty() {
            match self.network.value {
                NetworkMode::AllowList | NetworkMode::Registries => {}
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
        let mut out = Vec::new();
        for (spec, slot) in self.slots() {
            let name = spec.name;
            let line = |v: &dyn fmt::Display, s: &Source| format!("{name} {v}  ({s})");
            match slot {
                SlotRef::Mode(n) => out.push(format!("{name} = {}  ({})", n.value, n.source)),
                SlotRef::Text(v) => out.extend(
                    v.iter()
                        .map(|v| format!("{name} = {}  ({})", v.value, v.source)),
                ),
                SlotRef::Domains(list) => {
                    out.extend(list.iter().map(|v| line(&v.value, &v.source)))
                }
                SlotRef::Names(list) => out.extend(list.iter().map(|v| line(&v.value, &v.source))),
                SlotRef::Pairs(list) => {
                    out.extend(list.iter().map(|v| line(&v.value.0, &v.source)))
                }
                SlotRef::Paths(list) => {
                    out.extend(list.iter().map(|v| line(&v.value.display(), &v.source)))
                }
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
