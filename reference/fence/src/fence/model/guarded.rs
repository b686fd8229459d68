//! The paths jailed code must never change wherever they lie (FENCE-PATHS-3), and the
//! check of every writable root against them: the person's home directory itself, the
//! user's configuration of the fence, its state and session logs, the credential stores
//! of FENCE-JAIL-6 and the person's global git configuration, each where every variable
//! that moves it (`HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `XDG_DATA_HOME`,
//! `XDG_CACHE_HOME`) puts it, plus what a front end names (a session-log directory, the
//! agent's files, a state directory).
//!
//! Both sides are compared as real paths: a root is canonical (it exists), a guarded path
//! is resolved through its longest existing prefix with the rest appended, so that a
//! `HOME` spelled through a symlink or with `..`, and a configuration directory that does
//! not exist yet, land where the kernel would put them.
//!
//! Reads the file system (to resolve) and nothing else.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Below a home: the credential stores and configuration that steer programs the person
/// runs outside the fence (FENCE-JAIL-6, FENCE-PATHS-3).
pub const HOME_STORES: [&str; 17] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".gitconfig",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/gcloud",
    ".config/git",
    ".local/share/keyrings",
];

/// How a guarded path refuses a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The home directory: a root at it or above it is refused (a root below it is the
    /// ordinary project).
    Home,
    /// A tree: a root that holds it or lies within it is refused.
    Tree,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: PathBuf,
    what: String,
    kind: Kind,
}

/// Every path jailed code must never change, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guarded {
    entries: Vec<Entry>,
}

impl Guarded {
    /// The guarded paths of this process's environment (`HOME` and the `XDG_*` variables
    /// as they are now), plus `homes` (a home a front end names).
    pub fn from_env(homes: &[PathBuf]) -> Guarded {
        Guarded::of(homes, |k| std::env::var_os(k))
    }

    /// The guarded paths of the environment `env` answers, plus `homes`.
    pub fn of(homes: &[PathBuf], env: impl Fn(&str) -> Option<OsString>) -> Guarded {
        let mut g = Guarded::default();
        let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let mut all_homes: Vec<PathBuf> = homes.to_vec();
        all_homes.extend(var("HOME"));
        for h in &all_homes {
            g.push(h, "the home directory", Kind::Home);
            g.tree(&h.join(".config/gatehouse"), "the user's configuration");
            g.tree(
                &h.join(".local/state/gatehouse"),
                "the state and session logs",
            );
            g.tree(&h.join(".local/share/gatehouse"), "the fence's data");
            g.tree(&h.join(".cache/gatehouse"), "the fence's cache");
            for s in HOME_STORES {
                g.tree(
                    &h.join(s),
                    "a credential store or configuration of the home",
                );
            }
        }
        for (name, what) in [
            ("XDG_CONFIG_HOME", "the user's configuration"),
            ("XDG_STATE_HOME", "the state and session logs"),
            ("XDG_DATA_HOME", "the fence's data"),
            ("XDG_CACHE_HOME", "the fence's cache"),
        ] {
            if let Some(x) = var(name) {
                g.tree(&x.join("gatehouse"), what);
                if name == "XDG_CONFIG_HOME" {
                    g.tree(&x.join("git"), "the person's git configuration");
                }
            }
        }
        g
    }

    /// Guard the tree at `path` too (a file or a directory, existing or not).
    pub fn tree(&mut self, path: &Path, what: &str) {
        self.push(path, what, Kind::Tree);
    }

    fn push(&mut self, path: &Path, what: &str, kind: Kind) {
        let e = Entry {
            path: real_path(path),
            what: what.to_string(),
            kind,
        };
        if !self.entries.contains(&e) {
            self.entries.push(e);
        }
    }

    /// Check the writable root `root` (resolved here too); the refusal is one line that
    /// begins with `label`, names the guarded path and says what to do instead.
    pub fn check(&self, root: &Path, label: &str) -> Result<(), GuardRefused> {
        let r = real_path(root);
        for e in &self.entries {
            match e.kind {
                Kind::Home if e.path.starts_with(&r) => {
                    return Err(GuardRefused::Home {
                        label: label.to_string(),
                        root: r.clone(),
                        how: if e.path == r { "is" } else { "holds" },
                        home: e.path.clone(),
                    });
                }
                Kind::Tree if e.path.starts_with(&r) || r.starts_with(&e.path) => {
                    return Err(GuardRefused::Guarded {
                        label: label.to_string(),
                        path: e.path.clone(),
                        what: e.what.clone(),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// A writable root refused (FENCE-PATHS-3): one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardRefused {
    /// The root is the home directory or holds it.
    #[error("{label}: {} {how} the home directory {}, where jailed code could change ~/.bashrc, ~/.ssh and the fence's own configuration; run it in a project directory below the home (cd ~/project), or name one with --workspace", root.display(), home.display())]
    Home {
        /// The flag or field that named the root.
        label: String,
        /// The root, resolved.
        root: PathBuf,
        /// `is` or `holds`.
        how: &'static str,
        /// The home, resolved.
        home: PathBuf,
    },
    /// The root holds a guarded path or lies within one.
    #[error("{label}: would make {} writable ({what}), which jailed code must never change; name a directory that neither holds it nor lies within it", path.display())]
    Guarded {
        /// The flag or field that named the root.
        label: String,
        /// The guarded path, resolved.
        path: PathBuf,
        /// What it is.
        what: String,
    },
}

/// `p` as the kernel would resolve it: absolute (relative to the current directory),
/// each existing component's symlinks followed in order, and the part that does not exist
/// yet appended with `.` dropped and `..` taken lexically (nothing below a missing
/// directory can be a symlink yet).
pub fn real_path(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let mut out = PathBuf::from("/");
    let mut exists = true;
    for c in abs.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                // `out` was real before this name: it stays real unless the name is a
                // symlink, which alone is resolved (one look per component, not a
                // resolution of the whole path again at each).
                if exists {
                    match std::fs::symlink_metadata(&out) {
                        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&out) {
                            Ok(real) => out = real,
                            Err(_) => exists = false,
                        },
                        Ok(_) => {}
                        Err(_) => exists = false,
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'static str, PathBuf)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone().into_os_string())
        }
    }

    #[test]
    fn a_home_through_a_symlink_or_dots_guards_the_real_one() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let home = base.join("home/u");
        std::fs::create_dir_all(&home).unwrap();
        std::os::unix::fs::symlink(base.join("home"), base.join("link")).unwrap();
        for spelled in [
            base.join("link/u"),
            base.join("home/x/../u"),
            base.join("link/./u"),
        ] {
            let g = Guarded::of(&[], env_of(&[("HOME", spelled.clone())]));
            let e = g.check(&home, "--rw").unwrap_err().to_string();
            assert!(e.contains("home directory"), "{spelled:?}: {e}");
            let e = g
                .check(&home.join(".config"), "--rw")
                .unwrap_err()
                .to_string();
            assert!(e.contains(".config/gatehouse"), "{e}");
            assert!(g.check(&home.join("project"), "--rw").is_ok());
        }
    }

    #[test]
    fn xdg_variables_move_what_is_guarded() {
        let t = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(t.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        for var in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
        ] {
            let g = Guarded::of(
                &[],
                env_of(&[(var, ws.join("cfg")), ("HOME", base.join("h"))]),
            );
            assert!(g.check(&ws, "workspace").is_err(), "{var}");
            assert!(g.check(&base.join("other"), "workspace").is_ok(), "{var}");
        }
    }

    #[test]
    fn a_parent_of_the_home_and_a_credential_store_are_refused() {
        let g = Guarded::of(&[PathBuf::from("/nonexistent-g/home/u")], |_| None);
        assert!(g.check(Path::new("/nonexistent-g/home"), "w").is_err());
        assert!(g
            .check(Path::new("/nonexistent-g/home/u/.ssh"), "w")
            .is_err());
        assert!(g
            .check(Path::new("/nonexistent-g/home/u/.ssh/keys"), "w")
            .is_err());
        assert!(g.check(Path::new("/nonexistent-g/home/u/src"), "w").is_ok());
        assert!(g.check(Path::new("/nonexistent-g/other"), "w").is_ok());
    }
}
