//! The suite's identity: the specification version (from `spec/README.md`) and a SHA-256
//! over every file of `scenarios/` and `spec/` that a run reads, so that a report says
//! exactly which suite judged it and two reports can be shown to be comparable. It reads
//! files and touches nothing.
//!
//! The hash is over the files in the order of their relative paths (`/`-separated, with
//! the folder's name first: `scenarios/gate/x.toml`, `spec/README.md`), each as its path,
//! a NUL, its length in decimal, a NUL and its bytes; a renamed, added, removed or edited
//! file changes it, and nothing else does (not the checkout's location, not timestamps).
//! `spec/checklists/` is left out: a release's checklist records this hash
//! (`crate::checklist`), so it cannot be part of it.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The folder of the suite the hash leaves out: the checklists that record it.
pub const EXCLUDED: &str = "spec/checklists/";

/// Which suite a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuiteId {
    /// The specification version `spec/README.md` states (`0.8`), or `unknown`.
    pub spec_version: String,
    /// `sha256:` and 64 hex digits over the scenarios and the spec.
    pub hash: String,
    /// How many files the hash covers.
    pub files: usize,
}

impl SuiteId {
    /// The first 12 hex digits of the hash, for a line a person reads.
    pub fn short(&self) -> &str {
        let hex = self.hash.trim_start_matches("sha256:");
        &hex[..hex.len().min(12)]
    }
}

/// Reading a file of the suite failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {} to identify the suite: {source}", path.display())]
pub struct IdentityError {
    /// The file or directory.
    pub path: std::path::PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// The SHA-256 of `bytes` as 64 lowercase hex digits (a report's, printed with the
/// summary and checked by `docs --report-sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The identity of the suite in `scenarios` and `spec`.
pub fn of(scenarios: &Path, spec: &Path) -> Result<SuiteId, IdentityError> {
    let mut files = Vec::new();
    collect(scenarios, "scenarios", &mut files)?;
    collect(spec, "spec", &mut files)?;
    files.retain(|(name, _)| !name.starts_with(EXCLUDED));
    files.sort();
    let mut hasher = Sha256::new();
    for (name, path) in &files {
        let bytes = std::fs::read(path).map_err(|source| IdentityError {
            path: path.clone(),
            source,
        })?;
        hasher.update(name.as_bytes());
        hasher.update(b"\0");
        hasher.update(bytes.len().to_string().as_bytes());
        hasher.update(b"\0");
        hasher.update(&bytes);
    }
    let mut hash = String::from("sha256:");
    for byte in hasher.finalize() {
        let _ = write!(hash, "{byte:02x}");
    }
    let readme = std::fs::read_to_string(spec.join("README.md")).unwrap_or_default();
    Ok(SuiteId {
        spec_version: spec_version(&readme).unwrap_or_else(|| "unknown".into()),
        hash,
        files: files.len(),
    })
}

/// `0.8` from `Specification version: **0.8** (...)`.
fn spec_version(readme: &str) -> Option<String> {
    let rest = readme.split("Specification version:").nth(1)?;
    let rest = rest.trim_start().strip_prefix("**")?;
    let version = &rest[..rest.find("**")?];
    (!version.is_empty()).then(|| version.to_string())
}

/// Every regular file under `dir`, as (`prefix/relative/path`, its path); symbolic links
/// are not followed (a suite holds none).
fn collect(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, std::path::PathBuf)>,
) -> Result<(), IdentityError> {
    let entries = std::fs::read_dir(dir).map_err(|source| IdentityError {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| IdentityError {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = format!("{prefix}/{}", entry.file_name().to_string_lossy());
        let kind = entry.file_type().map_err(|source| IdentityError {
            path: entry.path(),
            source,
        })?;
        if kind.is_dir() {
            collect(&entry.path(), &name, out)?;
        } else if kind.is_file() {
            out.push((name, entry.path()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    fn id(dir: &tempfile::TempDir) -> SuiteId {
        of(&dir.path().join("scenarios"), &dir.path().join("spec")).unwrap()
    }

    const BASE: &[(&str, &str)] = &[
        (
            "spec/README.md",
            "Specification version: **0.8** (history)\n",
        ),
        ("spec/gate.md", "- **[GATE-1]** MUST.\n"),
        ("scenarios/gate/a.toml", "title = \"a\"\n"),
    ];

    #[test]
    fn the_same_files_anywhere_give_the_same_identity() {
        let (a, b) = (suite(BASE), suite(BASE));
        assert_eq!(id(&a), id(&b));
        assert_eq!(id(&a).spec_version, "0.8");
        assert_eq!(id(&a).files, 3);
        assert_eq!(id(&a).hash.len(), "sha256:".len() + 64);
        assert_eq!(id(&a).short().len(), 12);
    }

    #[test]
    fn an_edit_a_rename_or_a_new_file_changes_the_hash() {
        let base = id(&suite(BASE));
        let mut edited = BASE.to_vec();
        edited[2] = ("scenarios/gate/a.toml", "title = \"b\"\n");
        let mut renamed = BASE.to_vec();
        renamed[2] = ("scenarios/gate/b.toml", "title = \"a\"\n");
        let mut added = BASE.to_vec();
        added.push(("scenarios/gate/c.toml", ""));
        for other in [edited, renamed, added] {
            assert_ne!(id(&suite(&other)).hash, base.hash, "{other:?}");
        }
    }
}
