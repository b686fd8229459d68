//! Planted secrets (FENCE-RUN-5): fake credentials the runner puts in the
//! implementation's environment when it starts it, and a fake key it puts in the fake
//! home of every session that needs `fence`. Each value holds a token fresh for the run,
//! so no output can show one by accident; `check.no_bait` fails a step whose answer
//! shows any of them.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// The planted home secret's path under the fake home.
pub const HOME_SECRET: &str = ".ssh/id_gatehouse_bait";

/// Ordinary variables the runner sets on the implementation besides the bait: three the
/// passes table lets through (FENCE-ENV-8: an `LC_*` that is no secret, `USER`,
/// `LOGNAME`), and `CONFORM_PLAIN`, no secret by its name and in no passes table, which
/// reaches the jail only when a session passes it by name (FENCE-ENV-9).
pub const ORDINARY_ENV: [(&str, &str); 4] = [
    ("LC_PAPER", "C"),
    ("USER", "gatehouse-person"),
    ("LOGNAME", "gatehouse-person"),
    ("CONFORM_PLAIN", "plain-value-passed-by-name"),
];

/// A fresh 16-hex-digit token (not cryptographic: unpredictable enough to be unmistakable).
pub fn token() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// The secrets of one run.
#[derive(Debug, Clone)]
pub struct Bait {
    /// Environment variables set on the implementation: name, value.
    pub env: Vec<(String, String)>,
    /// The contents of the planted home key.
    pub home_secret: String,
    /// The key planted in the implementation's session keyring (Linux, with python3).
    pub keyring: Option<crate::keyring::Keyring>,
}

impl Bait {
    /// Fresh secrets: names from the never-passes list of the execution-plane chapter.
    pub fn generate() -> Bait {
        let t = token();
        let env = [
            ("GATEHOUSE_BAIT_TOKEN", "gatehouse-bait"),
            ("OPENAI_API_KEY", "fake-openai"),
            ("ANTHROPIC_API_KEY", "fake-anthropic"),
            ("AWS_SECRET_ACCESS_KEY", "fake-aws"),
            ("GITHUB_TOKEN", "fake-github"),
            ("DB_PASSWORD", "fake-db"),
            // Secrets under the `LC_` prefix that ssh forwards (FENCE-ENV-8).
            ("LC_GATEHOUSE_API_KEY", "fake-lc-key"),
            ("LC_GATEHOUSE_TOKEN", "fake-lc-token"),
        ]
        .into_iter()
        .map(|(k, prefix)| (k.to_string(), format!("{prefix}-{t}")))
        .collect();
        Bait {
            env,
            home_secret: format!("FAKE-HOME-KEY-{t}"),
            keyring: None,
        }
    }

    /// Every secret value.
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(std::iter::once((HOME_SECRET, self.home_secret.as_str())))
            .chain(
                self.keyring
                    .iter()
                    .map(|k| ("the session keyring's key", k.payload.as_str())),
            )
    }

    /// The names of the secrets `text` shows, or an empty list.
    pub fn found_in(&self, text: &str) -> Vec<String> {
        self.values()
            .filter(|(_, v)| text.contains(v))
            .map(|(k, _)| k.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_bait_is_found() {
        assert_ne!(token(), token());
        let b = Bait::generate();
        assert!(b.found_in("nothing here").is_empty());
        let (_, openai) = b.env.iter().find(|(k, _)| k == "OPENAI_API_KEY").unwrap();
        let text = format!("PATH=/bin\nOPENAI_API_KEY={openai}\n{}", b.home_secret);
        assert_eq!(b.found_in(&text), vec!["OPENAI_API_KEY", HOME_SECRET]);
        // A JSON-escaped answer still shows it: the values are plain ASCII.
        let json = serde_json::to_string(&serde_json::json!({"stdout": text})).unwrap();
        assert_eq!(b.found_in(&json).len(), 2);
    }
}
