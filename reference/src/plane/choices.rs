//! The person's per-session choices applied to one command: variables passed by name or
//! set to a value on top of the scrubbed environment, and extra paths checked against
//! the fence's protections. Pure decisions on data the caller gathered; the only file
//! system access is resolving each path once.

use std::path::{Path, PathBuf};

use super::env::never_passes;
use crate::choices::Choices;
use crate::fence::guarded::Guarded;

/// An environment: names and values.
pub type Env = Vec<(String, String)>;

/// Names the fence itself sets, which no choice may override.
const FENCE_OWNED: [&str; 2] = ["HOME", "TMPDIR"];

/// The environment of the command: `base` (already scrubbed) with the chosen variables
/// passed from `parent` or set. Returns the environment and the secret-looking names
/// passed on purpose, for the posture. A `--pass-env` naming a secret-looking variable,
/// or a choice naming `HOME` or `TMPDIR`, is refused with one line.
pub fn apply_env(
    base: Vec<(String, String)>,
    parent: &[(String, String)],
    s: &Choices,
) -> Result<(Env, Vec<String>), String> {
    let mut env = base;
    let mut secrets = Vec::new();
    let set = |env: &mut Vec<(String, String)>, k: &str, v: &str| {
        env.retain(|(n, _)| n != k);
        env.push((k.to_string(), v.to_string()));
    };
    let owned = |k: &str, src: &dyn std::fmt::Display| {
        if FENCE_OWNED.contains(&k) {
            Err(format!(
                "{k} ({src}): the fence sets {k} to the session's scratch directory; it cannot be passed or set"
            ))
        } else {
            Ok(())
        }
    };
    for v in &s.pass_env {
        owned(&v.value, &v.source)?;
        if never_passes(&v.value) {
            return Err(format!(
                "--pass-env {} ({}): the name looks like a secret; pass it on purpose with --pass-secret-env {}",
                v.value, v.source, v.value
            ));
        }
        if let Some((_, val)) = parent.iter().find(|(k, _)| *k == v.value) {
            set(&mut env, &v.value, val);
        }
    }
    for v in &s.pass_secrets {
        owned(&v.value, &v.source)?;
        if let Some((_, val)) = parent.iter().find(|(k, _)| *k == v.value) {
            set(&mut env, &v.value, val);
            if never_passes(&v.value) {
                secrets.push(v.value.clone());
            }
        }
    }
    for v in &s.set_env {
        owned(&v.value.0, &v.source)?;
        set(&mut env, &v.value.0, &v.value.1);
        if never_passes(&v.value.0) {
            secrets.push(v.value.0.clone());
        }
    }
    env.sort();
    secrets.sort();
    secrets.dedup();
    Ok((env, secrets))
}

/// The extra paths, each resolved once (symlinks followed to the real path), refused
/// with one line when missing or when it would weaken a protection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraPaths {
    /// Visible read-only.
    pub read_only: Vec<PathBuf>,
    /// Extra writable roots (protected paths apply inside them as in a workspace).
    pub writable: Vec<PathBuf>,
    /// Hidden inside the jail.
    pub hidden: Vec<PathBuf>,
}

/// Resolve the extra paths of `s`. `guarded` is what jailed code must never be able to
/// change wherever it lies (FENCE-PATHS-3: the home, the user's configuration, the
/// session logs, ...): a writable root holding one, or lying within one, is refused.
pub fn resolve_paths(s: &Choices, guarded: &Guarded) -> Result<ExtraPaths, String> {
    let resolve = |flag: &str, p: &Path, src: &dyn std::fmt::Display| {
        std::fs::canonicalize(p).map_err(|e| format!("--{flag} {} ({src}): {e}", p.display()))
    };
    let mut out = ExtraPaths::default();
    for v in &s.read_only {
        out.read_only.push(resolve("ro", &v.value, &v.source)?);
    }
    for v in &s.writable {
        let p = resolve("rw", &v.value, &v.source)?;
        guarded
            .check(&p, &format!("--rw {} ({})", v.value.display(), v.source))
            .map_err(|e| e.to_string())?;
        out.writable.push(p);
    }
    for v in &s.hidden {
        out.hidden.push(resolve("hide", &v.value, &v.source)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::{Source, Sourced};

    fn flag<T>(v: T, name: &'static str) -> Sourced<T> {
        Sourced::new(v, Source::Flag(name))
    }

    fn parent() -> Vec<(String, String)> {
        [
            ("CARGO_HOME", "/c"),
            ("NPM_TOKEN", "npm_secret"),
            ("EDITOR", "vi"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    #[test]
    fn pass_env_passes_one_variable_and_set_env_sets_one() {
        let s = Choices {
            pass_env: vec![flag("CARGO_HOME".into(), "pass-env")],
            set_env: vec![flag(("RUST_LOG".into(), "debug".into()), "set-env")],
            ..Choices::default()
        };
        let (env, secrets) =
            apply_env(vec![("PATH".into(), "/bin".into())], &parent(), &s).unwrap();
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["CARGO_HOME", "PATH", "RUST_LOG"]);
        assert!(secrets.is_empty());
    }

    #[test]
    fn a_secret_looking_name_needs_the_explicit_flag_and_is_listed() {
        let s = Choices {
            pass_env: vec![flag("NPM_TOKEN".into(), "pass-env")],
            ..Choices::default()
        };
        let e = apply_env(vec![], &parent(), &s).unwrap_err();
        assert!(e.contains("--pass-secret-env NPM_TOKEN"), "{e}");
        let s = Choices {
            pass_secrets: vec![flag("NPM_TOKEN".into(), "pass-secret-env")],
            ..Choices::default()
        };
        let (env, secrets) = apply_env(vec![], &parent(), &s).unwrap();
        assert!(env.contains(&("NPM_TOKEN".into(), "npm_secret".into())));
        assert_eq!(secrets, ["NPM_TOKEN"]);
    }

    #[test]
    fn home_and_tmpdir_stay_the_fences() {
        let s = Choices {
            set_env: vec![flag(("HOME".into(), "/root".into()), "set-env")],
            ..Choices::default()
        };
        assert!(apply_env(vec![], &parent(), &s)
            .unwrap_err()
            .contains("HOME"));
    }

    #[test]
    fn a_missing_path_is_refused_in_one_line() {
        let s = Choices {
            read_only: vec![flag(PathBuf::from("/does/not/exist"), "ro")],
            ..Choices::default()
        };
        let e = resolve_paths(&s, &Guarded::default()).unwrap_err();
        assert!(e.starts_with("--ro /does/not/exist (--ro): "), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn a_writable_root_holding_the_config_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let cfg = d.path().join(".config/gatehouse");
        std::fs::create_dir_all(&cfg).unwrap();
        let s = Choices {
            writable: vec![flag(d.path().to_path_buf(), "rw")],
            ..Choices::default()
        };
        let mut g = Guarded::default();
        g.tree(&cfg, "the user's configuration");
        let e = resolve_paths(&s, &g).unwrap_err();
        assert!(e.contains("never change"), "{e}");
    }
}
