//! The choices given as flags, whether typed on the command line of `gatehouse exec` or
//! sent in the protocol's setup field `choices` (each key one flag): [`Flags`] holds them
//! as given, and [`Layer::from_flags`] is the one constructor that checks them into a
//! layer (variable names by [`EnvName::new`], FENCE-ENV-11; domains by the allow-list's
//! parser). The configuration files check the same names through the same
//! [`EnvName::new`], with their file and line ([`Layer::from_file`]).
//!
//! May touch: nothing (pure checks on data).

use std::path::PathBuf;

use super::layers::{Layer, NetworkMode, Source, Sourced};
use super::name::{EnvName, EnvNameError, EnvValueError};

/// The flags as given: names, values and paths unchecked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--network` (already read: a mode the caller cannot read is its own error).
    pub network: Option<NetworkMode>,
    /// `--allow-domain`.
    pub allow_domains: Vec<String>,
    /// `--pass-env`.
    pub pass_env: Vec<String>,
    /// `--pass-secret-env`.
    pub pass_secret_env: Vec<String>,
    /// `--set-env NAME=VALUE`, split at the first `=` (the protocol sends them apart).
    pub set_env: Vec<(String, String)>,
    /// `--ro`.
    pub read_only: Vec<PathBuf>,
    /// `--rw`.
    pub writable: Vec<PathBuf>,
    /// `--hide`.
    pub hidden: Vec<PathBuf>,
}

/// A flag whose value cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// A variable name that is not one (FENCE-ENV-11).
    #[error("--{flag}: {source}")]
    Name {
        /// The flag: `pass-env`, `pass-secret-env` or `set-env`.
        flag: &'static str,
        /// Why the name is not one.
        source: EnvNameError,
    },
    /// A value of `--set-env` the environment cannot carry.
    #[error("--set-env: {0}")]
    Value(#[from] EnvValueError),
    /// An allowed domain that is not a domain pattern.
    #[error("--allow-domain: {0}")]
    Domain(#[from] crate::net::NameError),
}

impl Layer {
    /// The layer of `flags`, each value sourced as its flag; the first value that cannot
    /// be honoured is the error.
    pub fn from_flags(flags: &Flags) -> Result<Layer, FlagError> {
        let src = |name: &'static str| Source::Flag(name);
        let names = |v: &[String], flag: &'static str| -> Result<Vec<_>, FlagError> {
            v.iter()
                .map(|n| {
                    EnvName::new(n.as_str())
                        .map(|n| Sourced::new(n, src(flag)))
                        .map_err(|source| FlagError::Name { flag, source })
                })
                .collect()
        };
        let paths = |v: &[PathBuf], flag: &'static str| {
            v.iter()
                .map(|p| Sourced::new(p.clone(), src(flag)))
                .collect()
        };
        let mut set_env = Vec::new();
        for (k, v) in &flags.set_env {
            let name = EnvName::new(k.as_str()).map_err(|source| FlagError::Name {
                flag: "set-env",
                source,
            })?;
            set_env.push(Sourced::new(name.with_value(v.clone())?, src("set-env")));
        }
        let mut allow_domains = Vec::new();
        for d in &flags.allow_domains {
            crate::net::DomainPattern::parse(d)?;
            allow_domains.push(Sourced::new(d.clone(), src("allow-domain")));
        }
        Ok(Layer {
            network: flags.network.map(|n| Sourced::new(n, src("network"))),
            allow_domains,
            pass_env: names(&flags.pass_env, "pass-env")?,
            pass_secrets: names(&flags.pass_secret_env, "pass-secret-env")?,
            set_env,
            read_only: paths(&flags.read_only, "ro"),
            writable: paths(&flags.writable, "rw"),
            hidden: paths(&flags.hidden, "hide"),
            files: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_naming_a_variable_checks_the_name() {
        for (flags, flag) in [
            (
                Flags {
                    pass_env: vec!["A=B".into()],
                    ..Flags::default()
                },
                "pass-env",
            ),
            (
                Flags {
                    pass_secret_env: vec![String::new()],
                    ..Flags::default()
                },
                "pass-secret-env",
            ),
            (
                Flags {
                    set_env: vec![("HOME=/x/evil".into(), "x".into())],
                    ..Flags::default()
                },
                "set-env",
            ),
            (
                Flags {
                    set_env: vec![("A\0B".into(), "x".into())],
                    ..Flags::default()
                },
                "set-env",
            ),
        ] {
            let e = Layer::from_flags(&flags).unwrap_err();
            assert!(
                matches!(e, FlagError::Name { flag: f, .. } if f == flag),
                "{e}"
            );
            assert!(e.to_string().starts_with(&format!("--{flag}: ")), "{e}");
        }
    }

    #[test]
    fn good_flags_become_a_sourced_layer() {
        let l = Layer::from_flags(&Flags {
            pass_env: vec!["EDITOR".into()],
            set_env: vec![("RUST_LOG".into(), "a=b".into())],
            allow_domains: vec!["crates.io".into()],
            ..Flags::default()
        })
        .unwrap();
        assert_eq!(l.pass_env[0].value, "EDITOR");
        assert_eq!(l.pass_env[0].source, Source::Flag("pass-env"));
        assert_eq!(l.set_env[0].value.1, "a=b");
        assert_eq!(l.allow_domains[0].source, Source::Flag("allow-domain"));
    }

    #[test]
    fn a_nul_in_a_value_and_a_bad_domain_are_refused() {
        let e = Layer::from_flags(&Flags {
            set_env: vec![("X".into(), "a\0b".into())],
            ..Flags::default()
        })
        .unwrap_err();
        assert!(matches!(e, FlagError::Value(_)), "{e}");
        let e = Layer::from_flags(&Flags {
            allow_domains: vec!["*".into()],
            ..Flags::default()
        })
        .unwrap_err();
        assert!(matches!(e, FlagError::Domain(_)), "{e}");
    }
}
