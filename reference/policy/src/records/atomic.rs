//! Replacing a document whole: write `NAME.tmp` beside it with `O_EXCL`, fsync it, rename
//! it over `NAME`, fsync the directory. A `kill -9` at any moment leaves either the old
//! document or the new one, never a mixture; the new one is acknowledged only after the
//! directory is synced.
//!
//! May touch: the document and its temporary file.

use super::crash::{armed, die, CrashPoint};
use super::RecordError;
use std::io::Write;
use std::path::Path;

/// Replaces `file` with `bytes`.
pub fn write_atomic(file: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp"));
    // A temporary file left by a crash is only ever an unacknowledged write: replace it.
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(RecordError::io(&tmp, e)),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| RecordError::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| RecordError::io(&tmp, e))?;
    f.sync_all().map_err(|e| RecordError::io(&tmp, e))?;
    drop(f);
    if armed(CrashPoint::BeforeRename) {
        die();
    }
    std::fs::rename(&tmp, file).map_err(|e| RecordError::io(file, e))?;
    let d = std::fs::File::open(dir).map_err(|e| RecordError::io(dir, e))?;
    d.sync_all().map_err(|e| RecordError::io(dir, e))?;
    Ok(())
}

/// Replaces `file` with `value` as pretty JSON.
pub fn write_json<T: serde::Serialize>(file: &Path, value: &T) -> Result<(), RecordError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| RecordError::Corrupt {
        file: file.to_path_buf(),
        line: None,
        what: e.to_string(),
    })?;
    bytes.push(b'\n');
    write_atomic(file, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("grants.json");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_stale_temporary_from_a_crash_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.json");
        std::fs::write(dir.path().join(".s.json.tmp"), b"half").unwrap();
        write_atomic(&f, b"whole").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"whole");
    }
}
