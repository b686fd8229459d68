//! Session logs: one JSON-lines file per session in a directory outside every writable root
//! of the fence (the jail does not even contain it), so tool-run code cannot write it while
//! the fence is up. With the fence down the records are ordinary files within reach of
//! tools, and the posture says so.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The default log directory: `$XDG_STATE_HOME/gatehouse/sessions`, else
/// `$HOME/.local/state/gatehouse/sessions`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x).join("gatehouse/sessions"));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".local/state/gatehouse/sessions"))
}

/// An append-only session log.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl SessionLog {
    /// Open (create) `<dir>/<session>.jsonl`, mode 0600.
    pub fn open(dir: &Path, session: &str) -> std::io::Result<SessionLog> {
        std::fs::create_dir_all(dir)?;
        let safe: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{safe}.jsonl"));
        let mut opts = OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let file = opts.open(&path)?;
        Ok(SessionLog {
            path,
            file: Mutex::new(file),
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record `{"ts": <unix ms>, "kind": kind, ...data}`.
    pub fn record(&self, kind: &str, data: serde_json::Value) {
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let mut rec = serde_json::json!({ "ts": ts, "kind": kind });
        if let (Some(obj), serde_json::Value::Object(extra)) = (rec.as_object_mut(), data) {
            obj.extend(extra);
        }
        let mut line = rec.to_string();
        line.push('\n');
        if let Ok(mut f) = self.file.lock() {
            // A log write failure must not take the plane down; the record is best effort.
            let _ = f.write_all(line.as_bytes());
        }
    }
}
