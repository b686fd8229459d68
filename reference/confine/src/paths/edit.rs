//! Atomic edit (PATH-WRITE-1, PATH-WRITE-3): read the existing regular file through its
//! parent handle under the rules of reading (type from an `O_PATH` handle, then the same
//! object opened `O_RDONLY | O_NONBLOCK`), then replace it as a write does.

use std::io::Read;
use std::path::Path;

use rustix::fs::{openat, Mode, OFlags};
use rustix::io::Errno;

use super::resolve::How;
use super::write::{stat_of, Existing};
use super::{Key, Kind, PathError, Roots};

impl Roots {
    /// Replaces the contents of the existing regular file `path` with `edit(old)`,
    /// atomically; returns its key. A path naming nothing is `not_found`.
    pub fn edit_atomic(
        &self,
        path: impl AsRef<Path>,
        edit: impl FnOnce(&[u8]) -> Vec<u8>,
    ) -> Result<Key, PathError> {
        let t = self.target(path.as_ref().as_os_str())?;
        if t.trailing() {
            // PATH-SPELL-2: `notes.txt/` is not_directory; a directory is is_directory.
            self.open_target(&t, How::PATH, "open")?;
            return Err(PathError::IsDirectory { path: t.shown() });
        }
        let parent = self.parent_of(&t, false)?;
        let existing = self.look_final(&t, &parent).and_then(|e| match e {
            Existing::New => Err(PathError::NotFound { path: t.shown() }),
            e => Ok(e),
        })?;
        let Existing::File(checked) = existing else {
            unreachable!("a new file was refused above")
        };
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match openat(&parent.fd, parent.name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e == Errno::LOOP => return Err(self.refuse_final_link(&t)),
            Err(e) => return Err(PathError::from_fault(e.into(), "open", &t.shown())),
        };
        let opened = stat_of(&fd, &t)?;
        if (opened.dev, opened.ino) != (checked.dev, checked.ino) || opened.kind != Kind::File {
            return Err(PathError::Changed { path: t.shown() });
        }
        let mut before = Vec::new();
        std::fs::File::from(fd)
            .read_to_end(&mut before)
            .map_err(|e| PathError::Io {
                op: "read",
                path: t.shown(),
                source: e,
            })?;
        let after = edit(&before);
        self.replace(&t, &parent, &Existing::File(checked), &after)?;
        Ok(t.key())
    }
}
