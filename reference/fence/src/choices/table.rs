//! The one table of `gatehouse exec`'s choices ([`TABLE`]): each row a choice with its
//! name (the flag of `gatehouse exec`), its [`Slot`] (what its values are, and so its
//! [`Kind`] on every surface), its help text and example, whether it names the person's
//! secrets, and its spelling in each place that carries it: the key of `config.toml`,
//! of `guard.toml`'s `[exec]` table, of the protocol's setup field `choices`.
//!
//! Every surface is a loop over this table: the command line's flags (the binary builds
//! its arguments from it), the files' keys ([`super::file`]), the guard's `[exec]` table
//! and its rewrite into flags (`gatehouse::guard::config`, `gatehouse::guard::rewrite`), the
//! protocol's keys (the adapter), the check of the values into a layer, the merge of the
//! layers and the provenance ([`super::layers`], [`super::flags`]). The table's layered
//! rows also declare the fields of [`Chosen`], so a new choice is one row here (plus the
//! specification: the schema's `$defs.choices`, which a test holds to this table, its
//! names, kinds, `x-guard` and `x-secret`, and whatever the choice is for). The other
//! side reads the schema: the runner's `choices` setup field and the Python agent
//! adapters' `[exec]` table name no choice.
//!
//! May touch: nothing (data).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::name::EnvName;
use super::value::{NetworkMode, Sourced};

/// The shape a choice's value has on every surface (the protocol schema's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One value, the last one given wins (a string; `null` on the wire is absent).
    One,
    /// A list, gathered across layers (an array of strings; the flag repeats).
    List,
    /// Names to values, the last value per name wins (an object; the flag is
    /// `NAME=VALUE`).
    Map,
    /// A switch, off unless given (a boolean; the flag takes no value).
    Switch,
}

/// What a choice's values are, and so how each is checked and held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The network mode ([`NetworkMode`]).
    Mode,
    /// Free text, held as given.
    Text,
    /// Domain patterns of the allow-list ([`crate::net::DomainPattern`]).
    Domains,
    /// Variable names ([`EnvName`], FENCE-ENV-11).
    Names,
    /// Variables set to values (name checked, value without NUL).
    Pairs,
    /// Paths (a project file's relative ones from its root).
    Paths,
    /// A switch of the session, not a layered setting.
    Switch,
}

impl Slot {
    /// The shape of the slot's values.
    pub const fn kind(self) -> Kind {
        match self {
            Slot::Mode | Slot::Text => Kind::One,
            Slot::Domains | Slot::Names | Slot::Paths => Kind::List,
            Slot::Pairs => Kind::Map,
            Slot::Switch => Kind::Switch,
        }
    }

    /// Checks one value of a [`Kind::One`] slot: `Err` with the reason when no layer
    /// could hold it.
    pub fn check_one(self, value: &str) -> Result<(), String> {
        match self {
            Slot::Mode => value
                .parse::<NetworkMode>()
                .map(drop)
                .map_err(|e| e.to_string()),
            _ => Ok(()),
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// The name: the flag of `gatehouse exec` (`pass-secret-env`), and the source a
    /// value given as a flag or in the protocol shows in the provenance.
    pub name: &'static str,
    /// What its values are.
    pub slot: Slot,
    /// The value's name in the flag's help (`NAME`); empty for a switch.
    pub value_name: &'static str,
    /// Whether `gatehouse exec` takes it as a flag.
    pub flag: bool,
    /// Its key in `config.toml` (`env.pass-secrets`: table `env`, key `pass-secrets`).
    pub file: Option<&'static str>,
    /// Its key in `guard.toml`'s `[exec]` table.
    pub guard: Option<&'static str>,
    /// Its key in the protocol's setup field `choices`.
    pub wire: Option<&'static str>,
    /// Whether it names the person's secrets: honoured only from the user's file, the
    /// command line and the protocol, never from a project's file.
    pub secret: bool,
    /// The help text (one paragraph).
    pub doc: &'static str,
    /// An example of its use on the command line.
    pub example: &'static str,
}

impl Spec {
    /// The shape of its values.
    pub const fn kind(&self) -> Kind {
        self.slot.kind()
    }

    /// The flag's help: the text and the example.
    pub fn help(&self) -> String {
        format!("{} Example: {}", self.doc, self.example)
    }
}

/// A layered field of a [`Chosen`], to read.
#[derive(Debug)]
pub enum SlotRef<'a, N> {
    /// [`Slot::Mode`] (`N`: optional in a layer, always set once merged).
    Mode(&'a N),
    /// [`Slot::Text`].
    Text(&'a Option<Sourced<String>>),
    /// [`Slot::Domains`].
    Domains(&'a Vec<Sourced<String>>),
    /// [`Slot::Names`].
    Names(&'a Vec<Sourced<EnvName>>),
    /// [`Slot::Pairs`].
    Pairs(&'a Vec<Sourced<(EnvName, String)>>),
    /// [`Slot::Paths`].
    Paths(&'a Vec<Sourced<PathBuf>>),
}

/// A layered field of a [`Chosen`], to fill.
#[derive(Debug)]
pub enum SlotMut<'a, N> {
    /// [`Slot::Mode`].
    Mode(&'a mut N),
    /// [`Slot::Text`].
    Text(&'a mut Option<Sourced<String>>),
    /// [`Slot::Domains`].
    Domains(&'a mut Vec<Sourced<String>>),
    /// [`Slot::Names`].
    Names(&'a mut Vec<Sourced<EnvName>>),
    /// [`Slot::Pairs`].
    Pairs(&'a mut Vec<Sourced<(EnvName, String)>>),
    /// [`Slot::Paths`].
    Paths(&'a mut Vec<Sourced<PathBuf>>),
}

/// Declares the table: the layered rows become [`TABLE`]'s first rows (in order) and the
/// fields of [`Chosen`]; the switches follow them in [`TABLE`].
macro_rules! exec_choices {
    (
        layered {
            $( $field:ident : $ty:ty = $slot:ident {
                name: $name:literal, value: $value:literal,
                file: $file:expr, guard: $guard:expr, wire: $wire:expr, secret: $secret:literal,
                doc: $doc:literal, example: $example:literal $(,)?
            } ),* $(,)?
        }
        switches {
            $( {
                name: $sname:literal, flag: $sflag:literal, guard: $sguard:expr, wire: $swire:expr,
                doc: $sdoc:literal, example: $sexample:literal $(,)?
            } ),* $(,)?
        }
    ) => {
        /// The table of choices: the layered ones first, in [`Chosen`]'s order, then the
        /// session's switches.
        pub const TABLE: &[Spec] = &[
            $( Spec {
                name: $name, slot: Slot::$slot, value_name: $value, flag: true,
                file: $file, guard: $guard, wire: $wire, secret: $secret,
                doc: $doc, example: $example,
            }, )*
            $( Spec {
                name: $sname, slot: Slot::Switch, value_name: "", flag: $sflag,
                file: None, guard: $sguard, wire: $swire, secret: false,
                doc: $sdoc, example: $sexample,
            }, )*
        ];

        /// Choices with their sources: one layer (a file or the command line, `N` an
        /// optional network mode, unset when the layer does not say) or their merge
        /// ([`super::layers::Choices`], the mode always set). One field per layered row
        /// of [`TABLE`], in its order.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Chosen<N> {
            $(
                #[doc = $doc]
                pub $field: $ty,
            )*
            /// Merged: the files read, and files found but not honoured with the reason
            /// (a layer leaves it empty).
            pub files: Vec<(PathBuf, Option<String>)>,
        }

        impl<N> Chosen<N> {
            /// Each layered field with its row, in [`TABLE`]'s order.
            pub fn slots(&self) -> Vec<(&'static Spec, SlotRef<'_, N>)> {
                let mut rows = TABLE.iter();
                let mut out = Vec::new();
                $( if let Some(spec) = rows.next() {
                    out.push((spec, SlotRef::$slot(&self.$field)));
                } )*
                out
            }

            /// Each layered field with its row, to fill, in [`TABLE`]'s order.
            pub fn slots_mut(&mut self) -> Vec<(&'static Spec, SlotMut<'_, N>)> {
                let mut rows = TABLE.iter();
                let mut out = Vec::new();
                $( if let Some(spec) = rows.next() {
                    out.push((spec, SlotMut::$slot(&mut self.$field)));
                } )*
                out
            }
        }
    };
}

exec_choices! {
    layered {
        network: N = Mode {
            name: "network", value: "MODE",
            file: Some("network.mode"), guard: Some("network"), wire: Some("network"), secret: false,
            doc: "The jail's network: `off` (its own network namespace with nothing but loopback, the default) or `allow-list` (out only through the reference's proxy, to the domains of --allow-domain; HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at it) or `host` (the host's network, no namespace of its own; the host's UNIX sockets stay unreachable, and the posture claims no `network`) or `registries` (`allow-list` with the package registries' domains allowed and the caches of the toolchains found writable, as --fetch).",
            example: "--network host",
        },
        allow_domains: Vec<Sourced<String>> = Domains {
            name: "allow-domain", value: "DOMAIN",
            file: Some("network.allow-domains"), guard: Some("allow-domains"), wire: Some("allow_domains"), secret: false,
            doc: "Allow one domain through the proxy (repeatable; `*.example.org` allows every name below example.org, not example.org itself); implies --network allow-list.",
            example: "--allow-domain registry.npmjs.org",
        },
        pass_env: Vec<Sourced<EnvName>> = Names {
            name: "pass-env", value: "NAME",
            file: Some("env.pass"), guard: Some("pass-env"), wire: Some("pass_env"), secret: false,
            doc: "Pass one variable of this environment by name (repeatable); a secret-looking name is refused here.",
            example: "--pass-env CARGO_HOME",
        },
        pass_secrets: Vec<Sourced<EnvName>> = Names {
            name: "pass-secret-env", value: "NAME",
            file: Some("env.pass-secrets"), guard: Some("pass-secret-env"), wire: Some("pass_secret_env"), secret: true,
            doc: "Pass a secret-looking variable on purpose (repeatable); the posture lists it.",
            example: "--pass-secret-env NPM_TOKEN",
        },
        set_env: Vec<Sourced<(EnvName, String)>> = Pairs {
            name: "set-env", value: "NAME=VALUE",
            file: Some("env.set"), guard: Some("set-env"), wire: Some("set_env"), secret: false,
            doc: "Set a variable inside the jail (repeatable).",
            example: "--set-env RUST_LOG=debug",
        },
        read_only: Vec<Sourced<PathBuf>> = Paths {
            name: "ro", value: "PATH",
            file: Some("paths.read-only"), guard: Some("ro"), wire: Some("ro"), secret: false,
            doc: "Make a path visible read-only (repeatable; it must exist).",
            example: "--ro /opt/sdk",
        },
        writable: Vec<Sourced<PathBuf>> = Paths {
            name: "rw", value: "PATH",
            file: Some("paths.writable"), guard: Some("rw"), wire: Some("rw"), secret: false,
            doc: "Add a writable root (repeatable; it must exist; protected paths apply inside it).",
            example: "--rw ~/.cache/build",
        },
        hidden: Vec<Sourced<PathBuf>> = Paths {
            name: "hide", value: "PATH",
            file: Some("paths.hidden"), guard: Some("hide"), wire: Some("hide"), secret: false,
            doc: "Hide a path even where a visible tree holds it (repeatable; it must exist).",
            example: "--hide ~/src/app/.env",
        },
    }
    switches {
        {
            name: "allow-degraded", flag: true, guard: Some("allow-degraded"), wire: None,
            doc: "Run even where a required protection is missing; the posture says what is not covered.",
            example: "--allow-degraded",
        },
        {
            name: "trust-project-config", flag: true, guard: None, wire: Some("trust_project"),
            doc: "Honour <workspace>/.gatehouse/config.toml although the user's file does not list the project in `trusted-projects`.",
            example: "--trust-project-config",
        },
        {
            name: "fetch", flag: true, guard: None, wire: None,
            doc: "Let package managers fetch: the same as --network registries (out through the proxy to the package registries `gatehouse info` lists, plus any --allow-domain; the caches of the toolchains found writable).",
            example: "--fetch",
        },
        {
            name: "no-config", flag: true, guard: None, wire: None,
            doc: "Read no configuration file.",
            example: "--no-config",
        },
        {
            name: "config-files", flag: false, guard: None, wire: Some("config_files"),
            doc: "Read the user's file (under the setup's `home`) and the project's (the protocol's opt-in; the command line reads them unless --no-config).",
            example: "\"config_files\": true",
        },
    }
}

/// The row named `name`.
pub fn spec(name: &str) -> Option<&'static Spec> {
    TABLE.iter().find(|s| s.name == name)
}

/// The values of one choice as given, unchecked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    /// A [`Kind::One`] value.
    One(String),
    /// A [`Kind::List`] of names or domains.
    List(Vec<String>),
    /// A [`Kind::List`] of paths.
    Paths(Vec<PathBuf>),
    /// A [`Kind::Map`]: names and values, apart.
    Map(Vec<(String, String)>),
    /// A [`Kind::Switch`].
    Switch(bool),
}

/// The choices given as flags (on the command line, in the protocol's `choices`, in the
/// guard's `[exec]` table), as given: names, values and paths unchecked. Keyed by the
/// table's rows, so every surface fills the same thing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    given: BTreeMap<&'static str, Raw>,
}

impl Flags {
    /// Sets the values of `spec` (replacing any given before).
    pub fn set(&mut self, spec: &'static Spec, raw: Raw) {
        self.given.insert(spec.name, raw);
    }

    /// `self` with the values of the row named `name`; `None` when no row has that name.
    pub fn with(mut self, name: &str, raw: Raw) -> Option<Flags> {
        self.set(spec(name)?, raw);
        Some(self)
    }

    /// The values given, in [`TABLE`]'s order.
    pub fn given(&self) -> impl Iterator<Item = (&'static Spec, &Raw)> {
        TABLE
            .iter()
            .filter_map(|s| self.given.get(s.name).map(|r| (s, r)))
    }

    /// The one value of `name`, if given.
    pub fn one(&self, name: &str) -> Option<&str> {
        match self.given.get(name) {
            Some(Raw::One(v)) => Some(v),
            _ => None,
        }
    }

    /// The list of `name` (empty when not given).
    pub fn list(&self, name: &str) -> &[String] {
        match self.given.get(name) {
            Some(Raw::List(v)) => v,
            _ => &[],
        }
    }

    /// The paths of `name` (empty when not given).
    pub fn paths(&self, name: &str) -> &[PathBuf] {
        match self.given.get(name) {
            Some(Raw::Paths(v)) => v,
            _ => &[],
        }
    }

    /// The names and values of `name` (empty when not given).
    pub fn map(&self, name: &str) -> &[(String, String)] {
        match self.given.get(name) {
            Some(Raw::Map(v)) => v,
            _ => &[],
        }
    }

    /// Whether the switch `name` is on.
    pub fn switch(&self, name: &str) -> bool {
        matches!(self.given.get(name), Some(Raw::Switch(true)))
    }

    /// The first [`Kind::One`] value no layer could hold: its row and the reason.
    pub fn bad_one(&self) -> Option<(&'static Spec, String)> {
        self.given().find_map(|(s, r)| match r {
            Raw::One(v) => s.slot.check_one(v).err().map(|e| (s, e)),
            _ => None,
        })
    }
}

/// A key of a table that has only the keys `.0`: reads it, and refuses any other as
/// serde's derive does, while the key is read, so that a reader that knows where its keys
/// are (TOML's) places the error on the key's line.
#[derive(Debug, Clone, Copy)]
pub struct KnownKey(pub &'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for KnownKey {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        let key = <String as serde::Deserialize>::deserialize(d)?;
        if self.0.contains(&key.as_str()) {
            Ok(key)
        } else {
            Err(<D::Error as serde::de::Error>::unknown_field(&key, self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The kind a schema property gives; a single value must admit `null` (the wire's
    /// absent value: the runner and the adapters send an unset one as `null`).
    fn kind_in_schema(p: &Value) -> Option<Kind> {
        let types: Vec<&str> = match p.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let admits_null = types.contains(&"null")
            || p.get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(&Value::Null));
        match types.iter().find(|t| **t != "null").copied() {
            Some("array") => Some(Kind::List),
            Some("object") => Some(Kind::Map),
            Some("boolean") => Some(Kind::Switch),
            Some("string") if admits_null => Some(Kind::One),
            None if p.get("enum").is_some() && admits_null => Some(Kind::One),
            _ => None,
        }
    }

    /// One property of the schema's `choices` as the table would give it: its kind,
    /// whether the guard carries it (`x-guard`) and whether it is secret (`x-secret`).
    type SchemaRow = (String, Option<Kind>, bool, bool);

    #[test]
    fn the_table_is_the_schemas_choices_names_kinds_and_marks() {
        // The schema is what the runner and the Python adapters read the choices from
        // (their names and kinds, which the guard carries, which are secret): the table
        // and the schema say the same.
        let text = include_str!("../../../../spec/protocol.schema.json");
        let schema: Value = serde_json::from_str(text).unwrap();
        let props = schema["$defs"]["choices"]["properties"]
            .as_object()
            .unwrap();
        let mark = |v: &Value, k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let mut in_schema: Vec<SchemaRow> = props
            .iter()
            .map(|(k, v)| {
                let row = (k.clone(), kind_in_schema(v));
                (row.0, row.1, mark(v, "x-guard"), mark(v, "x-secret"))
            })
            .collect();
        let mut in_table: Vec<SchemaRow> = TABLE
            .iter()
            .filter_map(|s| {
                let w = s.wire?.to_string();
                Some((w, Some(s.kind()), s.guard.is_some(), s.secret))
            })
            .collect();
        in_schema.sort_by(|a, b| a.0.cmp(&b.0));
        in_table.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(in_table, in_schema);
        // The guard's key is the protocol's with `-` for `_`, as the adapters write it.
        for s in TABLE
            .iter()
            .filter(|s| s.guard.is_some() && s.wire.is_some())
        {
            assert_eq!(s.guard.map(|g| g.replace('-', "_")).as_deref(), s.wire);
        }
    }

    #[test]
    fn names_and_keys_are_unique_and_spelled_alike() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.name, b.name);
                for (x, y) in [(a.file, b.file), (a.guard, b.guard), (a.wire, b.wire)] {
                    assert!(x.is_none() || x != y, "{} {}", a.name, b.name);
                }
            }
            let kebab = |k: &str| {
                !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'.')
            };
            assert!(kebab(a.name), "{}", a.name);
            assert!(a.file.map_or(true, kebab) && a.guard.map_or(true, kebab));
            assert!(a.wire.map_or(true, |w| w
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_')));
            assert!(a.example.contains(a.name) || !a.flag, "{}", a.name);
            // Only a layered slot can be in a file.
            assert!(a.file.is_none() || a.slot != Slot::Switch);
        }
    }

    #[test]
    fn the_rows_the_code_names_are_there_with_their_slots() {
        // The guard reads ro, rw and hide by name; the command line and the adapter read
        // the switches by name: a renamed row must not turn them silently empty.
        for (name, slot) in [
            ("ro", Slot::Paths),
            ("rw", Slot::Paths),
            ("hide", Slot::Paths),
            ("allow-degraded", Slot::Switch),
            ("trust-project-config", Slot::Switch),
            ("no-config", Slot::Switch),
            ("config-files", Slot::Switch),
            ("fetch", Slot::Switch),
        ] {
            assert_eq!(spec(name).map(|s| s.slot), Some(slot), "{name}");
        }
    }
}
