//! Atomic edit: read the existing regular file through its parent handle, write the new
//! contents to a fresh temporary name in the same directory handle, then `renameat` it
//! over the final name. Readers see the old file or the new one, never a mix.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{fchmod, fstat, openat, renameat, unlinkat, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::stat::Metadata;
use super::{Key, Kind, PathError, Roots};

static TEMP: AtomicU64 = AtomicU64::new(0);

impl Roots {
    /// Replaces the contents of the existing regular file `path` with `edit(old)`,
    /// atomically; returns its key.
    pub fn edit_atomic(
        &self,
        path: impl AsRef<Path>,
        edit: impl FnOnce(&[u8]) -> Vec<u8>,
    ) -> Result<Key, PathError> {
        let (t, parent, name) = self.parent_of(path.as_ref().as_os_str())?;
        let io = |op, e: std::io::Error| PathError::Io {
            op,
            path: t.shown(),
            source: e,
        };
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match openat(&parent, name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e == Errno::LOOP => return Err(self.refuse_final_link(&t)),
            Err(e) => return Err(PathError::from_fault(e.into(), "open", &t.shown())),
        };
        let old = Metadata::from_stat(&fstat(&fd).map_err(|e| io("fstat", e.into()))?);
        if old.kind != Kind::File {
            return Err(PathError::NotRegular {
                path: t.shown(),
                kind: old.kind.name(),
            });
        }
        let mut before = Vec::new();
        std::fs::File::from(fd)
            .read_to_end(&mut before)
            .map_err(|e| io("read", e))?;
        let after = edit(&before);

        let temp = format!(
            ".gatehouse-edit-{}-{}.tmp",
            std::process::id(),
            TEMP.fetch_add(1, Ordering::Relaxed)
        );
        let tflags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let tfd = openat(&parent, temp.as_str(), tflags, Mode::from_raw_mode(0o600))
            .map_err(|e| io("create temp", e.into()))?;
        let written = (|| {
            fchmod(&tfd, Mode::from_raw_mode(old.mode)).map_err(|e| io("chmod", e.into()))?;
            let mut f = std::fs::File::from(tfd);
            f.write_all(&after).map_err(|e| io("write", e))?;
            f.sync_all().map_err(|e| io("sync", e))?;
            renameat(&parent, temp.as_str(), &parent, name.as_os_str())
                .map_err(|e| io("rename", e.into()))
        })();
        if written.is_err() {
            let _ = unlinkat(&parent, temp.as_str(), AtFlags::empty());
        }
        written?;
        self.key(path)
    }
}
