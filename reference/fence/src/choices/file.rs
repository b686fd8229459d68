//! One TOML choices file (`config.toml`, the user's or the project's), parsed strictly
//! by the table of choices ([`super::table`]): every key is known, every value has the
//! shape its row's kind gives it, and the first mistake is one error naming the file, the line and the
//! key. Each value keeps the line it was written on, for the provenance `gatehouse info`
//! shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::OnceLock;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use super::table::{Kind, KnownKey, Spec, TABLE};

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file exists but cannot be read.
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A syntax error, an unknown key or a value of the wrong type.
    #[error("{}:{line}: {message}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The line (1-based; 0 when the parser gave no position).
        line: usize,
        /// The parser's message, naming the key.
        message: String,
    },
}

/// The values of one choice in a file, each with its place, in the shape of its row's
/// [`Kind`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileValue {
    /// A [`Kind::One`] value.
    One(Spanned<String>),
    /// A [`Kind::List`].
    List(Vec<Spanned<String>>),
    /// A [`Kind::Map`] (a TOML table of strings).
    Map(BTreeMap<String, Spanned<String>>),
}

impl FileValue {
    /// Whether it holds no value (an empty list or table).
    pub fn is_empty(&self) -> bool {
        match self {
            FileValue::One(_) => false,
            FileValue::List(l) => l.is_empty(),
            FileValue::Map(m) => m.is_empty(),
        }
    }

    /// The line of its first value (of the key, for an empty list or table: line 0).
    pub fn line(&self, p: &Parsed) -> usize {
        match self {
            FileValue::One(v) => p.line(v),
            FileValue::List(l) => l.first().map_or(0, |v| p.line(v)),
            FileValue::Map(m) => m.values().next().map_or(0, |v| p.line(v)),
        }
    }
}

/// The whole file: `trusted-projects` and the choices of [`TABLE`] under their `file`
/// keys (`env.pass` is key `pass` of table `[env]`).
#[derive(Debug, Default)]
pub struct FileConfig {
    /// Project directories whose `.gatehouse/config.toml` is honoured (the user's file
    /// only).
    pub trusted_projects: Vec<Spanned<String>>,
    /// The choices written, by their row's name.
    pub values: BTreeMap<&'static str, FileValue>,
}

/// The key of the file's top level naming the trusted projects.
const TRUSTED: &str = "trusted-projects";

/// The keys of the top level (`None`) or of one table, in [`TABLE`]'s order: what an
/// unknown key's error lists as expected.
fn keys_of(table: Option<&str>) -> &'static [&'static str] {
    static KEYS: OnceLock<BTreeMap<Option<&'static str>, Vec<&'static str>>> = OnceLock::new();
    let all = KEYS.get_or_init(|| {
        let mut all: BTreeMap<Option<&'static str>, Vec<&'static str>> = BTreeMap::new();
        all.entry(None).or_default().push(TRUSTED);
        for key in TABLE.iter().filter_map(|s| s.file) {
            match key.split_once('.') {
                Some((t, k)) => {
                    let top = all.entry(None).or_default();
                    if !top.contains(&t) {
                        top.push(t);
                    }
                    all.entry(Some(t)).or_default().push(k);
                }
                None => all.entry(None).or_default().push(key),
            }
        }
        all
    });
    all.iter()
        .find(|(k, _)| **k == table)
        .map_or(&[], |(_, v)| v.as_slice())
}

/// The row whose file key is `key` of `table` (`None`: the top level).
fn row_of(table: Option<&str>, key: &str) -> Option<&'static Spec> {
    TABLE.iter().find(|s| match (s.file, table) {
        (Some(f), None) => f == key,
        (Some(f), Some(t)) => f.split_once('.') == Some((t, key)),
        (None, _) => false,
    })
}

/// Reads one value in the shape of `spec`'s kind.
struct ValueOf(&'static Spec);

impl<'de> DeserializeSeed<'de> for ValueOf {
    type Value = FileValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FileValue, D::Error> {
        match self.0.kind() {
            Kind::One => Spanned::deserialize(d).map(FileValue::One),
            Kind::List => Vec::deserialize(d).map(FileValue::List),
            Kind::Map => BTreeMap::deserialize(d).map(FileValue::Map),
            Kind::Switch => Err(D::Error::custom(format!(
                "{} is not a setting of the files",
                self.0.name
            ))),
        }
    }
}

/// Reads one table (`None`: the top level) into `values` (and `trusted`).
struct TableOf<'a> {
    table: Option<&'static str>,
    values: &'a mut BTreeMap<&'static str, FileValue>,
    trusted: &'a mut Vec<Spanned<String>>,
}

impl<'de> DeserializeSeed<'de> for TableOf<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TableOf<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.table {
            None => f.write_str("the choices file"),
            Some(t) => write!(f, "table [{t}]"),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        while let Some(key) = m.next_key_seed(KnownKey(keys_of(self.table)))? {
            if self.table.is_none() && key == TRUSTED {
                *self.trusted = m.next_value()?;
            } else if let Some(spec) = row_of(self.table, &key) {
                let v = m.next_value_seed(ValueOf(spec))?;
                self.values.insert(spec.name, v);
            } else if let Some(t) = keys_of(None)
                .iter()
                .find(|t| self.table.is_none() && **t == key && !keys_of(Some(t)).is_empty())
            {
                m.next_value_seed(TableOf {
                    table: Some(t),
                    values: &mut *self.values,
                    trusted: &mut *self.trusted,
                })?;
            } else {
                return Err(A::Error::unknown_field(&key, keys_of(self.table)));
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for FileConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FileConfig, D::Error> {
        let mut c = FileConfig::default();
        TableOf {
            table: None,
            values: &mut c.values,
            trusted: &mut c.trusted_projects,
        }
        .deserialize(d)?;
        Ok(c)
    }
}

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A parsed file with its text, so spans become lines.
#[derive(Debug)]
pub struct Parsed {
    /// Where it was read from.
    pub file: PathBuf,
    /// The text.
    pub text: String,
    /// The content.
    pub config: FileConfig,
}

impl Parsed {
    /// The line of a spanned value.
    pub fn line<T>(&self, v: &Spanned<T>) -> usize {
        line_of(&self.text, v.span().start)
    }

    /// An error about a value of this file.
    pub fn invalid<T>(&self, v: &Spanned<T>, message: String) -> FileError {
        self.invalid_at(self.line(v), message)
    }

    /// An error about line `line` of this file.
    pub fn invalid_at(&self, line: usize, message: String) -> FileError {
        FileError::Invalid {
            file: self.file.clone(),
            line,
            message,
        }
    }
}

/// Parse `text` as the file `file`.
pub fn parse(file: &Path, text: String) -> Result<Parsed, FileError> {
    match toml::from_str::<FileConfig>(&text) {
        Ok(config) => Ok(Parsed {
            file: file.to_path_buf(),
            text,
            config,
        }),
        Err(e) => Err(FileError::Invalid {
            file: file.to_path_buf(),
            line: e.span().map(|s| line_of(&text, s.start)).unwrap_or(0),
            message: e.message().trim().to_string(),
        }),
    }
}

/// Read and parse `file`; `Ok(None)` when it does not exist.
pub fn load(file: &Path) -> Result<Option<Parsed>, FileError> {
    match std::fs::read_to_string(file) {
        Ok(text) => parse(file, text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(FileError::Read {
            file: file.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(Path::new("/u/config.toml"), text.into())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let e = err("[network]\nmode = \"off\"\nallow-domain = [\"x.org\"]\n");
        assert!(
            e.starts_with("/u/config.toml:3: unknown field `allow-domain`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_table_names_its_line() {
        let e = err("[env]\npass = []\n\n[netwrok]\nmode = \"off\"\n");
        assert!(
            e.starts_with("/u/config.toml:4: unknown field `netwrok`"),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_type_names_its_line() {
        let e = err("[env]\npass = \"HOME\"\n");
        assert!(e.starts_with("/u/config.toml:2: invalid type"), "{e}");
    }

    #[test]
    fn values_keep_their_lines() {
        let p = parse(
            Path::new("/u/c.toml"),
            "[network]\n\nallow-domains = [\n  \"a.org\",\n  \"b.org\",\n]\n".into(),
        )
        .unwrap();
        let Some(FileValue::List(domains)) = p.config.values.get("allow-domain") else {
            panic!("no allow-domain: {:?}", p.config.values);
        };
        let lines: Vec<usize> = domains.iter().map(|v| p.line(v)).collect();
        assert_eq!(lines, [4, 5]);
    }

    #[test]
    fn an_empty_file_is_the_default() {
        let p = parse(Path::new("/u/c.toml"), String::new()).unwrap();
        assert!(p.config.values.is_empty() && p.config.trusted_projects.is_empty());
    }
}
