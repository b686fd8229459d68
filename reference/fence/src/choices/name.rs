//! A variable name a jail can carry ([`EnvName`]), the one check every choice naming a
//! variable goes through, whether it came from a flag of `gatehouse exec`, a line of a
//! configuration file or the protocol's setup (FENCE-ENV-11).
//!
//! May touch: nothing (pure checks on strings).

use std::fmt;

/// Why a string is not a variable name a jail can carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvNameError {
    /// The empty name.
    #[error("the empty string is not a variable name")]
    Empty,
    /// A name holding `=`: in the environment block it would set another variable
    /// (`HOME=/x` set to `y` is `HOME` set to `/x=y`).
    #[error("{name:?} is not a variable name: it holds `=`")]
    Equals {
        /// The name as given.
        name: String,
    },
    /// A name holding a NUL, which ends an environment entry early.
    #[error("{name:?} is not a variable name: it holds a NUL")]
    Nul {
        /// The name as given.
        name: String,
    },
}

/// A value set for a variable that the environment block cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the value of {name} holds a NUL, which would end it early")]
pub struct EnvValueError {
    /// The variable.
    pub name: EnvName,
}

/// A variable name: non-empty, no `=`, no NUL. The only way to make one is
/// [`EnvName::new`], so every layer of choices holds checked names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EnvName(String);

impl EnvName {
    /// `name`, checked.
    pub fn new(name: impl Into<String>) -> Result<EnvName, EnvNameError> {
        let name = name.into();
        if name.is_empty() {
            Err(EnvNameError::Empty)
        } else if name.contains('=') {
            Err(EnvNameError::Equals { name })
        } else if name.contains('\0') {
            Err(EnvNameError::Nul { name })
        } else {
            Ok(EnvName(name))
        }
    }

    /// The name and `value` as a variable to set, refused when the value holds a NUL.
    pub fn with_value(self, value: String) -> Result<(EnvName, String), EnvValueError> {
        if value.contains('\0') {
            return Err(EnvValueError { name: self });
        }
        Ok((self, value))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EnvName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for EnvName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for EnvName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_non_empty_without_equals_or_nul() {
        assert_eq!(EnvName::new("RUST_LOG").unwrap(), "RUST_LOG");
        assert_eq!(EnvName::new(""), Err(EnvNameError::Empty));
        assert!(matches!(
            EnvName::new("HOME=/x/evil"),
            Err(EnvNameError::Equals { name }) if name == "HOME=/x/evil"
        ));
        assert!(matches!(
            EnvName::new("A\0B"),
            Err(EnvNameError::Nul { .. })
        ));
    }

    #[test]
    fn a_value_may_hold_equals_but_not_nul() {
        let n = EnvName::new("X").unwrap();
        assert!(n.clone().with_value("a=b".into()).is_ok());
        assert!(n.clone().with_value(String::new()).is_ok());
        assert_eq!(
            n.clone().with_value("a\0b".into()),
            Err(EnvValueError { name: n })
        );
    }
}
