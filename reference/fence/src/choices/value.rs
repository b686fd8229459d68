//! The values every surface of the choices shares: a value with where it came from
//! ([`Sourced`], [`Source`]) and the jail's network mode ([`NetworkMode`]). The table
//! ([`super::table`]) and the layers ([`super::layers`]) both hold them.
//!
//! May touch: nothing (data).

use std::fmt;
use std::path::PathBuf;

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
    /// Found where a toolchain's installer put it (FENCE-TOOL-1): the toolchain and the
    /// variable or default that located it (`rustup: CARGO_HOME`).
    Found(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { file, line } => write!(f, "{}:{line}", file.display()),
            Source::Flag(name) => write!(f, "--{name}"),
            Source::Found(what) => write!(f, "found: {what}"),
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
    /// The `allow-list` mode with the package registries' domains allowed, and the
    /// caches of the toolchains found writable (FENCE-TOOL-4): the person allowed
    /// fetching (`--fetch`).
    Registries,
}

/// A network mode that is none of `off`, `host`, `allow-list`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown network mode `{given}` (off, host, allow-list, registries)")]
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
            "registries" => Ok(NetworkMode::Registries),
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
            NetworkMode::Registries => "registries",
        })
    }
}

impl NetworkMode {
    /// Whether the jail goes out only through the allow-list proxy (`allow-list`,
    /// `registries`).
    pub fn proxied(self) -> bool {
        matches!(self, NetworkMode::AllowList | NetworkMode::Registries)
    }
}

impl Default for Sourced<NetworkMode> {
    /// The built-in mode: `off`.
    fn default() -> Sourced<NetworkMode> {
        Sourced::new(NetworkMode::Off, Source::Default)
    }
}
