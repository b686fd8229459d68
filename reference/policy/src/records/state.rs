//! The state directory: where grants, session records and audit journals live, outside
//! every workspace root (a jailed command must not be able to rewrite its own grants).
//!
//! Layout: `grants.json` (the grant table), `sessions/ID/session.json` (the session
//! record `--resume` restores), `sessions/ID/audit.jsonl` (the audit journal).
//!
//! May touch: creates the directory (mode 0700) and its `sessions` folder.

use super::RecordError;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// An opened state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// Opens (creating) `dir`, refusing one inside any of `roots` (compared by whole
    /// components after resolving both).
    pub fn open(dir: &Path, roots: &[&Path]) -> Result<StateDir, RecordError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join("sessions"))
            .map_err(|e| RecordError::io(dir, e))?;
        let real = std::fs::canonicalize(dir).map_err(|e| RecordError::io(dir, e))?;
        for root in roots {
            let Ok(r) = std::fs::canonicalize(root) else {
                continue;
            };
            if real.starts_with(&r) {
                return Err(RecordError::InsideWorkspace { dir: real, root: r });
            }
        }
        Ok(StateDir { dir: real })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The grant table's file.
    pub fn grants(&self) -> PathBuf {
        self.dir.join("grants.json")
    }

    /// A session's folder (created).
    pub fn session(&self, id: &str) -> Result<PathBuf, RecordError> {
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(RecordError::Corrupt {
                file: self.dir.join("sessions"),
                line: None,
                what: format!("{id:?} is not a session id"),
            });
        }
        let d = self.dir.join("sessions").join(id);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&d)
            .map_err(|e| RecordError::io(&d, e))?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_state_directory_inside_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let e = StateDir::open(&ws.join(".gatehouse"), &[&ws]).unwrap_err();
        assert!(matches!(e, RecordError::InsideWorkspace { .. }));
        let s = StateDir::open(&dir.path().join("state"), &[&ws]).unwrap();
        assert!(s.session("abc-1").unwrap().is_dir());
        assert!(s.session("../x").is_err());
        // A look-alike prefix is not inside.
        assert!(StateDir::open(&dir.path().join("ws_state"), &[&ws]).is_ok());
    }
}
