//! The choices given as flags, whether typed on the command line of `gatehouse exec` or
//! sent in the protocol's setup field `choices` (each key one flag): [`Flags`] holds them
//! as given, and [`Layer::from_flags`] is the one constructor that checks them into a
//! layer (variable names by [`EnvName::new`], FENCE-ENV-11; domains by the allow-list's
//! parser). The configuration files check the same names through the same
//! [`EnvName::new`], with their file and line ([`Layer::from_file`]).
//!
//! May touch: nothing (pure checks on data).

use super::layers::{Layer, NetworkMode, Source, Sourced, UnknownNetworkMode};
use super::name::{EnvName, EnvNameError, EnvValueError};
use super::table::SlotMut;

pub use super::table::{Flags, Raw};

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
    /// A value set for a variable the environment cannot carry.
    #[error("--{flag}: {source}")]
    Value {
        /// The flag: `set-env`.
        flag: &'static str,
        /// Why.
        source: EnvValueError,
    },
    /// An allowed domain that is not a domain pattern.
    #[error("--{flag}: {source}")]
    Domain {
        /// The flag: `allow-domain`.
        flag: &'static str,
        /// Why.
        source: crate::net::NameError,
    },
    /// `--fetch` beside a network mode other than `registries`.
    #[error("--fetch is --network registries; it conflicts with --network {mode}")]
    Fetch {
        /// The other mode.
        mode: NetworkMode,
    },
    /// A network mode that is none of the modes.
    #[error("--{flag}: {source}")]
    Mode {
        /// The flag: `network`.
        flag: &'static str,
        /// Why.
        source: UnknownNetworkMode,
    },
}

impl Layer {
    /// The layer of `flags`, each value sourced as its flag, row by row of the table;
    /// the first value that cannot be honoured is the error.
    pub fn from_flags(flags: &Flags) -> Result<Layer, FlagError> {
        let mut l = Layer::default();
        for (spec, slot) in l.slots_mut() {
            let flag = spec.name;
            let src = || Source::Flag(flag);
            let name = |n: &str| EnvName::new(n).map_err(|source| FlagError::Name { flag, source });
            match slot {
                SlotMut::Mode(out) => {
                    if let Some(v) = flags.one(flag) {
                        let mode = v
                            .parse::<NetworkMode>()
                            .map_err(|source| FlagError::Mode { flag, source })?;
                        *out = Some(Sourced::new(mode, src()));
                    }
                }
                SlotMut::Text(out) => {
                    *out = flags.one(flag).map(|v| Sourced::new(v.to_string(), src()));
                }
                SlotMut::Domains(out) => {
                    for d in flags.list(flag) {
                        crate::net::DomainPattern::parse(d)
                            .map_err(|source| FlagError::Domain { flag, source })?;
                        out.push(Sourced::new(d.clone(), src()));
                    }
                }
                SlotMut::Names(out) => {
                    for n in flags.list(flag) {
                        out.push(Sourced::new(name(n)?, src()));
                    }
                }
                SlotMut::Pairs(out) => {
                    for (k, v) in flags.map(flag) {
                        let set = name(k)?
                            .with_value(v.clone())
                            .map_err(|source| FlagError::Value { flag, source })?;
                        out.push(Sourced::new(set, src()));
                    }
                }
                SlotMut::Paths(out) => {
                    for p in flags.paths(flag) {
                        out.push(Sourced::new(p.clone(), src()));
                    }
                }
            }
        }
        if flags.switch("fetch") {
            match &l.network {
                Some(m) if m.value != NetworkMode::Registries => {
                    return Err(FlagError::Fetch { mode: m.value });
                }
                _ => l.network = Some(Sourced::new(NetworkMode::Registries, Source::Flag("fetch"))),
            }
        }
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn flags(name: &str, raw: Raw) -> Flags {
        Flags::default().with(name, raw).unwrap()
    }

    #[test]
    fn every_flag_naming_a_variable_checks_the_name() {
        for (flags, flag) in [
            (flags("pass-env", Raw::List(vec!["A=B".into()])), "pass-env"),
            (
                flags("pass-secret-env", Raw::List(vec![String::new()])),
                "pass-secret-env",
            ),
            (
                flags(
                    "set-env",
                    Raw::Map(vec![("HOME=/x/evil".into(), "x".into())]),
                ),
                "set-env",
            ),
            (
                flags("set-env", Raw::Map(vec![("A\0B".into(), "x".into())])),
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
        let f = flags("pass-env", Raw::List(vec!["EDITOR".into()]))
            .with("set-env", Raw::Map(vec![("RUST_LOG".into(), "a=b".into())]))
            .and_then(|f| f.with("allow-domain", Raw::List(vec!["crates.io".into()])))
            .and_then(|f| f.with("ro", Raw::Paths(vec![PathBuf::from("/r")])))
            .unwrap();
        let l = Layer::from_flags(&f).unwrap();
        assert_eq!(l.pass_env[0].value, "EDITOR");
        assert_eq!(l.pass_env[0].source, Source::Flag("pass-env"));
        assert_eq!(l.set_env[0].value.1, "a=b");
        assert_eq!(l.allow_domains[0].source, Source::Flag("allow-domain"));
        assert_eq!(l.read_only[0].value, PathBuf::from("/r"));
        assert_eq!(l.read_only[0].source, Source::Flag("ro"));
    }

    #[test]
    fn a_nul_in_a_value_and_a_bad_domain_are_refused() {
        let e = Layer::from_flags(&flags(
            "set-env",
            Raw::Map(vec![("X".into(), "a\0b".into())]),
        ))
        .unwrap_err();
        assert!(matches!(e, FlagError::Value { .. }), "{e}");
        let e = Layer::from_flags(&flags("allow-domain", Raw::List(vec!["*".into()]))).unwrap_err();
        assert!(matches!(e, FlagError::Domain { .. }), "{e}");
        assert!(e.to_string().starts_with("--allow-domain: "), "{e}");
        let e = Layer::from_flags(&flags("network", Raw::One("wide".into()))).unwrap_err();
        assert!(
            e.to_string().starts_with("--network: unknown network mode"),
            "{e}"
        );
    }

    /// `--fetch` is `--network registries`, and refused beside another mode.
    #[test]
    fn fetch_is_the_registries_mode() {
        let l = Layer::from_flags(&flags("fetch", Raw::Switch(true))).unwrap();
        let m = l.network.unwrap();
        assert_eq!(m.value, NetworkMode::Registries);
        assert_eq!(m.source, Source::Flag("fetch"));
        let f = flags("fetch", Raw::Switch(true))
            .with("network", Raw::One("host".into()))
            .unwrap();
        let e = Layer::from_flags(&f).unwrap_err();
        assert!(matches!(e, FlagError::Fetch { .. }), "{e}");
        let f = flags("fetch", Raw::Switch(true))
            .with("network", Raw::One("registries".into()))
            .unwrap();
        assert!(Layer::from_flags(&f).is_ok());
    }
}
