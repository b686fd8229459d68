//! The mount points a fence creates for missing protected paths, shared by every jail of
//! the same workspace root, and removed only when the last of them is gone.
//!
//! A protected path that does not exist yet (`.git` in a fresh workspace) is created empty
//! on the host so that the jail can mount over it read-only. Removing it while another
//! jail still uses it is an escape: since Linux 3.18 the kernel detaches every mount of
//! other namespaces on a removed mount point, so the other jail's read-only mount would
//! vanish and its command could write what was protected (two overlapping `gatehouse
//! exec` in one workspace showed it). So each launcher holds a shared `flock(2)` on a lock
//! file of the root for as long as its jail may use the mount points ([`MountPoints`]),
//! records what it created in that file when it lets go, and whoever then takes the lock
//! exclusively (the last one out) removes everything recorded. A launcher that arrives
//! while the last one removes waits for its shared lock and creates the paths anew.
//!
//! The lock files live in a directory of the user's own below `/tmp` (mode 0700, checked
//! to be owned by the effective user and not a link), which no jail sees: every backend
//! gives the jail a `/tmp` of its own. A lock file a jail could reach could be replaced,
//! which would split the lock. May touch: that directory, and the mount points through
//! [`super::tidy_protected`].

use std::io;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::{
    fs::File,
    io::{Read, Seek, Write},
    path::Path,
};

use super::Policy;

/// The mount points of one policy, claimed: dropping it lets go of them (and removes them
/// when no other jail of the same roots still holds them).
#[derive(Debug)]
pub struct MountPoints {
    #[cfg(target_os = "linux")]
    locks: Vec<RootLock>,
    created: Vec<(PathBuf, PathBuf)>,
}

#[cfg(target_os = "linux")]
#[derive(Debug)]
struct RootLock {
    root: PathBuf,
    file: File,
}

impl MountPoints {
    /// Take a shared lock on every workspace root of `policy` (waiting while another
    /// launcher removes that root's mount points), then note which protected paths are
    /// missing: the jail about to start creates those.
    pub fn claim(policy: &Policy) -> io::Result<MountPoints> {
        let mut roots: Vec<PathBuf> = policy
            .protected_paths()
            .into_iter()
            .map(|p| p.root)
            .collect();
        roots.sort();
        roots.dedup();
        #[cfg(target_os = "linux")]
        let mut locks = Vec::new();
        #[cfg(target_os = "linux")]
        if !roots.is_empty() {
            let dir = lock_dir()?;
            for root in roots {
                let file = lock_file(&dir, &root)?;
                rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
                    .map_err(|e| io::Error::other(format!("lock for {}: {e}", root.display())))?;
                locks.push(RootLock { root, file });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = roots;
        Ok(MountPoints {
            #[cfg(target_os = "linux")]
            locks,
            created: super::missing_protected(policy),
        })
    }

    /// The mount points this claim found missing (deepest first).
    pub fn created(&self) -> &[(PathBuf, PathBuf)] {
        &self.created
    }
}

impl Drop for MountPoints {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        for lock in &mut self.locks {
            let mine: Vec<&(PathBuf, PathBuf)> = self
                .created
                .iter()
                .filter(|(r, _)| *r == lock.root)
                .collect();
            lock.let_go(&mine);
        }
        #[cfg(not(target_os = "linux"))]
        super::tidy_protected(&self.created);
    }
}

#[cfg(target_os = "linux")]
impl RootLock {
    /// Record `mine`, unlock, and if no other launcher holds the root now, remove every
    /// mount point recorded for it.
    fn let_go(&mut self, mine: &[&(PathBuf, PathBuf)]) {
        use rustix::fs::{flock, FlockOperation};
        if !mine.is_empty() {
            let mut line = Vec::new();
            for (_, rel) in mine {
                line.extend_from_slice(rel.as_os_str().as_encoded_bytes());
                line.push(0);
            }
            // The file is opened for appending: concurrent records do not overwrite.
            let _ = self.file.write_all(&line);
        }
        let _ = flock(&self.file, FlockOperation::Unlock);
        if flock(&self.file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return; // another jail still uses them; the last one out removes them
        }
        let mut recorded = Vec::new();
        let _ = self.file.rewind();
        let _ = self.file.read_to_end(&mut recorded);
        let mut rels: Vec<PathBuf> = recorded
            .split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| PathBuf::from(os_string(r)))
            .collect();
        rels.sort_by_key(|rel| std::cmp::Reverse(rel.components().count()));
        rels.dedup();
        let all: Vec<(PathBuf, PathBuf)> = rels
            .into_iter()
            .map(|rel| (self.root.clone(), rel))
            .collect();
        super::tidy_protected(&all);
        let _ = self.file.set_len(0);
        let _ = flock(&self.file, FlockOperation::Unlock);
    }
}

/// Bytes recorded by [`RootLock::let_go`] as a path again (Unix paths are bytes).
#[cfg(target_os = "linux")]
fn os_string(bytes: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).to_os_string()
}

/// The user's private lock directory below `/tmp`, created if missing; refused when it is
/// a link, another user's, or writable by others.
#[cfg(target_os = "linux")]
fn lock_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = rustix::process::geteuid().as_raw();
    let dir = PathBuf::from(format!("/tmp/gatehouse-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io::Error::other(format!("{}: {e}", dir.display()))),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{}: not a private directory of uid {uid} (a link, another owner, or open to others): the fence will not keep its locks there",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The lock file of `root`, named by its device and inode (a rename of the root keeps its
/// lock; another directory at the same path gets another).
#[cfg(target_os = "linux")]
fn lock_file(dir: &Path, root: &Path) -> io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = std::fs::metadata(root)
        .map_err(|e| io::Error::other(format!("{}: {e}", root.display())))?;
    let path = dir.join(format!("{:x}-{:x}.lock", meta.dev(), meta.ino()));
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn policy_for(root: &Path) -> Policy {
        Policy::new(
            vec![root.to_path_buf()],
            PathBuf::from("/nonexistent-scratch"),
        )
    }

    #[test]
    fn the_last_claim_out_removes_the_mount_points_and_not_before() {
        let ws = tempfile::tempdir().unwrap();
        let policy = policy_for(ws.path());
        let first = MountPoints::claim(&policy).unwrap();
        assert!(!first.created().is_empty(), "a fresh workspace misses .git");
        for (root, rel) in first.created() {
            std::fs::create_dir_all(root.join(rel)).unwrap();
        }
        // The second claim finds them existing: it created nothing.
        let second = MountPoints::claim(&policy).unwrap();
        assert!(second.created().is_empty());
        drop(first);
        assert!(
            ws.path().join(".git").exists(),
            "still used by the second claim"
        );
        drop(second);
        assert!(
            !ws.path().join(".git").exists(),
            "the last one out removed it"
        );
    }

    #[test]
    fn a_lone_claim_removes_what_it_created_and_leaves_the_rest() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("HEAD"), "mine").unwrap();
        let policy = policy_for(ws.path());
        let claim = MountPoints::claim(&policy).unwrap();
        for (root, rel) in claim.created() {
            std::fs::create_dir_all(root.join(rel)).unwrap();
        }
        drop(claim);
        assert!(!ws.path().join(".git").exists());
        assert_eq!(
            std::fs::read_to_string(ws.path().join("HEAD")).unwrap(),
            "mine"
        );
    }
}
