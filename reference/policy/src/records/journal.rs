//! An append-only journal of JSON records, one per line (the audit log). Each record goes
//! out in **one** `write(2)` on a descriptor opened with `O_APPEND`, so records written at
//! once by several calls (or processes) never interleave; each append is synced before it
//! is acknowledged.
//!
//! Opening checks every line. A last line without its newline is the trace of an append a
//! crash interrupted (never acknowledged): it is moved aside into `NAME.torn-OFFSET`, the
//! journal is cut back to its last whole record and the caller is told with one line. Any
//! other damage (a whole line that is not JSON) is [`RecordError::Corrupt`]: the file is
//! left exactly as it is.
//!
//! May touch: the journal file and its `.torn-*` siblings.

use super::crash::{armed, die, CrashPoint};
use super::RecordError;
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    file: PathBuf,
    out: Mutex<File>,
}

/// What opening found.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// Every whole record, in order.
    pub records: Vec<Value>,
    /// The line telling that an interrupted append was set aside, if one was.
    pub torn: Option<String>,
}

impl Journal {
    /// Opens (creating) `file` and reads back every record.
    pub fn open(file: &Path) -> Result<(Journal, Opened), RecordError> {
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(RecordError::io(file, e)),
        };
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut records = Vec::new();
        for (i, line) in bytes[..whole].split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let v: Value = serde_json::from_slice(line).map_err(|e| RecordError::Corrupt {
                file: file.to_path_buf(),
                line: Some(i + 1),
                what: e.to_string(),
            })?;
            records.push(v);
        }
        let mut torn = None;
        if whole < bytes.len() {
            let aside = PathBuf::from(format!("{}.torn-{whole}", file.display()));
            std::fs::write(&aside, &bytes[whole..]).map_err(|e| RecordError::io(&aside, e))?;
            let f = OpenOptions::new()
                .write(true)
                .open(file)
                .map_err(|e| RecordError::io(file, e))?;
            f.set_len(whole as u64)
                .map_err(|e| RecordError::io(file, e))?;
            f.sync_all().map_err(|e| RecordError::io(file, e))?;
            torn = Some(format!(
                "{}: an append interrupted by a crash ({} bytes at offset {whole}, never acknowledged) was moved to {}",
                file.display(),
                bytes.len() - whole,
                aside.display()
            ));
        }
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(|e| RecordError::io(file, e))?;
        Ok((
            Journal {
                file: file.to_path_buf(),
                out: Mutex::new(out),
            },
            Opened { records, torn },
        ))
    }

    /// Opens (creating) `file` and reads back the whole records of its last `window`
    /// bytes only, so that opening costs the same however long the journal has grown (a
    /// guard hook process opens its session once per call). The torn tail is set aside as
    /// [`Journal::open`] does; a whole line in the window that is not JSON is
    /// [`RecordError::Corrupt`]. Also returns the journal's length in bytes before the
    /// open, which grows with every append.
    pub fn open_tail(file: &Path, window: u64) -> Result<(Journal, Opened, u64), RecordError> {
        use std::io::{Read, Seek, SeekFrom};
        let io = |e| RecordError::io(file, e);
        let mut f = match File::open(file) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let mut bytes = Vec::new();
        let (mut start, mut len) = (0u64, 0u64);
        if let Some(f) = f.as_mut() {
            len = f.metadata().map_err(io)?.len();
            start = len.saturating_sub(window);
            f.seek(SeekFrom::Start(start)).map_err(io)?;
            f.take(len - start).read_to_end(&mut bytes).map_err(io)?;
        }
        let last_newline = bytes.iter().rposition(|&b| b == b'\n');
        if start > 0 && last_newline.is_none() {
            // One record longer than the window: read the journal whole.
            drop(f);
            let (j, o) = Journal::open(file)?;
            return Ok((j, o, len));
        }
        // A window that starts mid-record begins after that record's newline; the
        // records end at the last newline (what follows is a torn append).
        let whole = last_newline.map_or(0, |i| i + 1);
        let first = if start == 0 {
            0
        } else {
            bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(whole, |i| i + 1)
        };
        let mut records = Vec::new();
        for line in bytes[first..whole].split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let v: Value = serde_json::from_slice(line).map_err(|e| RecordError::Corrupt {
                file: file.to_path_buf(),
                line: None,
                what: e.to_string(),
            })?;
            records.push(v);
        }
        let mut torn = None;
        let cut = start + whole as u64;
        if cut < len {
            let aside = PathBuf::from(format!("{}.torn-{cut}", file.display()));
            std::fs::write(&aside, &bytes[whole..]).map_err(|e| RecordError::io(&aside, e))?;
            let w = OpenOptions::new().write(true).open(file).map_err(io)?;
            w.set_len(cut).map_err(io)?;
            w.sync_all().map_err(io)?;
            torn = Some(format!(
                "{}: an append interrupted by a crash ({} bytes at offset {cut}, never acknowledged) was moved to {}",
                file.display(),
                len - cut,
                aside.display()
            ));
        }
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(io)?;
        Ok((
            Journal {
                file: file.to_path_buf(),
                out: Mutex::new(out),
            },
            Opened { records, torn },
            len,
        ))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Appends `record` in one write and syncs it.
    pub fn append(&self, record: &Value) -> Result<(), RecordError> {
        let mut line = serde_json::to_vec(record).map_err(|e| RecordError::Corrupt {
            file: self.file.clone(),
            line: None,
            what: e.to_string(),
        })?;
        line.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if armed(CrashPoint::MidAppend) {
            let _ = out.write(&line[..line.len() / 2]);
            let _ = out.sync_data();
            die();
        }
        // One write(2): `write_all` only loops on a short write, which a regular file on
        // a local filesystem gives only when it is full (then the error is reported).
        let n = out
            .write(&line)
            .map_err(|e| RecordError::io(&self.file, e))?;
        if n != line.len() {
            return Err(RecordError::io(
                &self.file,
                std::io::Error::new(std::io::ErrorKind::WriteZero, "short write"),
            ));
        }
        out.sync_data().map_err(|e| RecordError::io(&self.file, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tail_holds_the_last_whole_records_and_a_torn_one_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        let (j, _) = Journal::open(&f).unwrap();
        for n in 0..100 {
            j.append(&json!({"n": n})).unwrap();
        }
        drop(j);
        let (_, o, len) = Journal::open_tail(&f, 40).unwrap();
        assert_eq!(len, std::fs::metadata(&f).unwrap().len());
        assert_eq!(o.records.last(), Some(&json!({"n": 99})));
        assert!(
            o.records.len() < 5 && !o.records.is_empty(),
            "{:?}",
            o.records
        );
        assert!(o.torn.is_none());
        let (all, _, _) = Journal::open_tail(&f, u64::MAX)
            .map(|(j, o, l)| (o, j, l))
            .unwrap();
        assert_eq!(all.records.len(), 100);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&f)
            .unwrap()
            .write_all(b"{\"n\": 1")
            .unwrap();
        let (_, o, _) = Journal::open_tail(&f, 40).unwrap();
        assert!(o.torn.is_some());
        assert_eq!(std::fs::metadata(&f).unwrap().len(), len);
        assert_eq!(o.records.last(), Some(&json!({"n": 99})));
    }

    #[test]
    fn appends_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        let (j, o) = Journal::open(&f).unwrap();
        assert!(o.records.is_empty());
        j.append(&json!({"n": 1})).unwrap();
        j.append(&json!({"n": 2})).unwrap();
        drop(j);
        let (_, o) = Journal::open(&f).unwrap();
        assert_eq!(o.records, [json!({"n": 1}), json!({"n": 2})]);
        assert_eq!(o.torn, None);
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        let (j, _) = Journal::open(&f).unwrap();
        let j = std::sync::Arc::new(j);
        let big = "x".repeat(10_000);
        let threads: Vec<_> = (0..3)
            .map(|t| {
                let j = j.clone();
                let big = big.clone();
                std::thread::spawn(move || {
                    for i in 0..20 {
                        j.append(&json!({"t": t, "i": i, "pad": big})).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let (_, o) = Journal::open(&f).unwrap();
        assert_eq!(o.records.len(), 60);
    }

    #[test]
    fn a_torn_tail_is_set_aside_and_told() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        std::fs::write(&f, b"{\"n\":1}\n{\"n\":").unwrap();
        let (j, o) = Journal::open(&f).unwrap();
        assert_eq!(o.records, [json!({"n": 1})]);
        let told = o.torn.unwrap();
        assert!(told.contains("offset 8"), "{told}");
        j.append(&json!({"n": 2})).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"{\"n\":1}\n{\"n\":2}\n");
        assert_eq!(
            std::fs::read(dir.path().join("audit.jsonl.torn-8")).unwrap(),
            b"{\"n\":"
        );
    }

    #[test]
    fn a_corrupt_line_is_an_error_and_the_file_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        std::fs::write(&f, b"{\"n\":1}\nnot json\n{\"n\":3}\n").unwrap();
        let e = Journal::open(&f).unwrap_err().to_string();
        assert!(e.contains("corrupt record at line 2"), "{e}");
        assert_eq!(
            std::fs::read(&f).unwrap(),
            b"{\"n\":1}\nnot json\n{\"n\":3}\n"
        );
    }
}
