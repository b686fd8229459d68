//! Planted secrets (FENCE-RUN-5): fake credentials the runner puts in the
//! implementation's environment when it starts it, and a fake key it puts in the fake
//! home of every session that needs `fence`.
//!
//! Each run draws them afresh (PROTO-OBSERVE-4): the values have the shapes real
//! credentials have (`sk-proj-…`, `ghp_…`, forty characters for an AWS secret), never a
//! marker a filter could key on, and besides the names the scenarios cite the run plants
//! names drawn from a wider pool and one made up for the run, so that an implementation
//! that scrubs a list of the names this runner is known to plant still leaks the others.
//! [`Bait::found_in`] finds a value as written and in the simple encodings a command can
//! put it through on its way out: reversed, hex, base64 at each alignment, and split
//! across lines or by blanks.

use base64::Engine as _;

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

/// The names every run plants: the scenarios cite them. Each with the shape of its value.
const CITED: [(&str, Shape); 8] = [
    ("GATEHOUSE_BAIT_TOKEN", Shape::Hex(40)),
    ("OPENAI_API_KEY", Shape::Prefixed("sk-proj-", 48)),
    ("ANTHROPIC_API_KEY", Shape::Prefixed("sk-ant-api03-", 64)),
    ("AWS_SECRET_ACCESS_KEY", Shape::Base62(40)),
    ("GITHUB_TOKEN", Shape::Prefixed("ghp_", 36)),
    ("DB_PASSWORD", Shape::Base62(20)),
    // Secrets under the `LC_` prefix that ssh forwards (FENCE-ENV-8).
    ("LC_GATEHOUSE_API_KEY", Shape::Base62(32)),
    ("LC_GATEHOUSE_TOKEN", Shape::Hex(32)),
];

/// The pool the run draws [`DRAWN`] more names from: names real credentials go by, each
/// matching the never-passes list of the execution-plane chapter.
const POOL: [(&str, Shape); 12] = [
    ("STRIPE_SECRET_KEY", Shape::Prefixed("sk_live_", 24)),
    ("SLACK_BOT_TOKEN", Shape::Prefixed("xoxb-", 40)),
    ("NPM_TOKEN", Shape::Prefixed("npm_", 36)),
    ("HF_TOKEN", Shape::Prefixed("hf_", 34)),
    ("GH_TOKEN", Shape::Prefixed("gho_", 36)),
    ("GITLAB_TOKEN", Shape::Prefixed("glpat-", 20)),
    ("GEMINI_API_KEY", Shape::Prefixed("AIza", 35)),
    ("DOCKER_PASSWORD", Shape::Base62(24)),
    ("SENTRY_AUTH_TOKEN", Shape::Hex(64)),
    ("DATABASE_PASSWORD", Shape::Base62(24)),
    ("TWILIO_AUTH_TOKEN", Shape::Hex(32)),
    ("PRIVATE_SIGNING_KEY", Shape::Base62(44)),
];

/// How many names of [`POOL`] a run plants.
pub const DRAWN: usize = 3;

/// The shape of a planted value.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// A prefix then base62 characters.
    Prefixed(&'static str, usize),
    /// Base62 characters.
    Base62(usize),
    /// Lowercase hex digits.
    Hex(usize),
}

/// `n` random bytes from the operating system.
fn random(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    if getrandom::fill(&mut buf).is_err() {
        // No entropy source: the clock and the pid still make values no output holds.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ u128::from(std::process::id());
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed.rotate_left((i % 128) as u32) as u8) ^ (i as u8).wrapping_mul(151);
        }
    }
    buf
}

fn base62(n: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    random(n)
        .into_iter()
        .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()] as char)
        .collect()
}

fn hex(n: usize) -> String {
    random(n.div_ceil(2))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .chars()
        .take(n)
        .collect()
}

impl Shape {
    fn value(self) -> String {
        match self {
            Shape::Prefixed(p, n) => format!("{p}{}", base62(n)),
            Shape::Base62(n) => base62(n),
            Shape::Hex(n) => hex(n),
        }
    }
}

/// A fresh 16-hex-digit token, unpredictable and unmistakable.
pub fn token() -> String {
    hex(16)
}

/// The secrets of one run.
#[derive(Debug, Clone)]
pub struct Bait {
    /// Environment variables set on the implementation: name, value.
    pub env: Vec<(String, String)>,
    /// The contents of the planted home key.
    pub home_secret: String,
    /// The key planted in the implementation's session keyring (Linux, with python3).
    pub keyring: Option<crate::observe::keyring::Keyring>,
}

impl Bait {
    /// Fresh secrets: the cited names, [`DRAWN`] names of the pool and one name made up
    /// for the run, each with a value of a real credential's shape.
    pub fn generate() -> Bait {
        let mut env: Vec<(String, String)> = CITED
            .iter()
            .map(|(k, shape)| (k.to_string(), shape.value()))
            .collect();
        let mut pool: Vec<&(&str, Shape)> = POOL.iter().collect();
        for pick in random(DRAWN) {
            if pool.is_empty() {
                break;
            }
            let (k, shape) = pool.remove(usize::from(pick) % pool.len());
            env.push((k.to_string(), shape.value()));
        }
        // A name no list of known names holds: it is a secret by the never-passes rule.
        let made_up = format!("{}_API_KEY", base62(6).to_ascii_uppercase());
        env.push((made_up, Shape::Base62(32).value()));
        Bait {
            env,
            home_secret: format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
                base62(64)
            ),
            keyring: None,
        }
    }

    /// The value planted under `name`, when the run planted it.
    #[cfg(test)]
    pub fn value_of(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every secret: its name and the part of its value that is searched for (the home
    /// key's random line, not its armour, which any key shares).
    pub fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        let home = self
            .home_secret
            .lines()
            .nth(1)
            .unwrap_or(self.home_secret.as_str());
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(std::iter::once((HOME_SECRET, home)))
            .chain(
                self.keyring
                    .iter()
                    .map(|k| ("the session keyring's key", k.payload.as_str())),
            )
    }

    /// The names of the secrets `text` shows, as written or encoded, or an empty list.
    pub fn found_in(&self, text: &str) -> Vec<String> {
        self.found_in_bytes(text.as_bytes(), &[])
    }

    /// The names of the secrets `bytes` shows, as written or in a simple encoding, leaving
    /// out the names in `except` (secrets a session passes on purpose).
    pub fn found_in_bytes(&self, bytes: &[u8], except: &[String]) -> Vec<String> {
        self.needles(except).found_in(bytes)
    }

    /// The secrets as searched for, leaving out the names in `except`: built once for all
    /// the texts a step's check reads.
    pub fn needles(&self, except: &[String]) -> Needles<'_> {
        Needles {
            list: self
                .values()
                .filter(|(k, _)| !except.iter().any(|e| e == k))
                .map(|(k, v)| (k, encodings(v)))
                .collect(),
        }
    }
}

/// Each secret's name with what its value looks like after the simple encodings.
#[derive(Debug)]
pub struct Needles<'a> {
    list: Vec<(&'a str, Vec<(String, bool)>)>,
}

impl Needles<'_> {
    /// The names of the secrets `bytes` shows, as written or encoded.
    pub fn found_in(&self, bytes: &[u8]) -> Vec<String> {
        // Split across lines, by blanks or by NULs (`/proc/self/environ`): searched again
        // with every such byte taken out.
        let squeezed: Vec<u8> = bytes
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace() && *b != 0)
            .collect();
        let lower: Vec<u8> = squeezed.to_ascii_lowercase();
        self.list
            .iter()
            .filter(|(_, forms)| {
                forms.iter().any(|(needle, folded)| {
                    let hay: &[u8] = if *folded { &lower } else { &squeezed };
                    contains(bytes, needle.as_bytes()) || contains(hay, needle.as_bytes())
                })
            })
            .map(|(k, _)| k.to_string())
            .collect()
    }
}

/// What a value looks like after the simple encodings, each with whether it is searched
/// for in the lowercased text (hex, whose case varies).
fn encodings(value: &str) -> Vec<(String, bool)> {
    let mut out = vec![
        (value.to_string(), false),
        (value.chars().rev().collect(), false),
        (
            value
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            true,
        ),
    ];
    let b64 = base64::engine::general_purpose::STANDARD;
    for shift in 0..3usize {
        // The value at each alignment in a longer stream: the groups that hold only the
        // value's own bytes.
        let mut framed = vec![b'x'; shift];
        framed.extend_from_slice(value.as_bytes());
        let enc = b64.encode(&framed);
        let start = if shift == 0 { 0 } else { 4 };
        let end = enc.len().saturating_sub(4);
        if end > start + 8 {
            out.push((enc[start..end].to_string(), false));
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_bait_is_found() {
        assert_ne!(token(), token());
        let b = Bait::generate();
        assert!(b.found_in("nothing here").is_empty());
        let openai = b.value_of("OPENAI_API_KEY").unwrap();
        assert!(openai.starts_with("sk-proj-") && openai.len() == 56);
        let home = b.home_secret.lines().nth(1).unwrap();
        let text = format!("PATH=/bin\nOPENAI_API_KEY={openai}\n{home}");
        assert_eq!(b.found_in(&text), vec!["OPENAI_API_KEY", HOME_SECRET]);
        // A JSON-escaped answer still shows it: the values are plain ASCII.
        let json = serde_json::to_string(&serde_json::json!({"stdout": text})).unwrap();
        assert_eq!(b.found_in(&json).len(), 2);
    }

    #[test]
    fn a_run_plants_names_beyond_the_cited_ones() {
        let b = Bait::generate();
        assert_eq!(b.env.len(), CITED.len() + DRAWN + 1);
        let made_up = &b.env.last().unwrap().0;
        assert!(made_up.ends_with("_API_KEY"), "{made_up}");
        assert!(!CITED.iter().any(|(k, _)| k == made_up));
    }

    #[test]
    fn encoded_values_are_found_and_passed_ones_left_out() {
        let b = Bait::generate();
        let v = b.value_of("GITHUB_TOKEN").unwrap().to_string();
        let b64 = base64::engine::general_purpose::STANDARD;
        let reversed: String = v.chars().rev().collect();
        let hexed: String = v.bytes().map(|x| format!("{x:02X}")).collect();
        let split = v
            .as_bytes()
            .chunks(7)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        let mut shown = vec![reversed, hexed, split];
        for prefix in ["", "G", "GI", "GIT"] {
            shown.push(b64.encode(format!("{prefix}GITHUB_TOKEN={v}\nMORE=1")));
        }
        for text in shown {
            assert_eq!(b.found_in(&text), vec!["GITHUB_TOKEN"], "{text}");
            assert!(b
                .found_in_bytes(text.as_bytes(), &["GITHUB_TOKEN".to_string()])
                .is_empty());
        }
        let nul = format!("A=1\0GITHUB_TOKEN={v}\0");
        assert_eq!(b.found_in(&nul), vec!["GITHUB_TOKEN"]);
    }
}
