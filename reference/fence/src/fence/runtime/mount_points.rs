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
//! The lock files live in a directory of the root's owner (whoever runs the launcher, so
//! that `sudo gatehouse exec` and the owner's own share one lock): the owner's runtime
//! directory `/run/user/<uid>/gatehouse`, or `/tmp/gatehouse-<uid>` without one, mode
//! 0700, checked to be the owner's and not a link. No jail sees it (the jail has a `/tmp`
//! of its own and no `/run`), and a policy whose paths would show it is refused: a lock
//! file a jail could replace would split the lock. Lock files are never removed (one
//! empty file per root ever fenced): removing one while another launcher opens it would
//! split the lock too. May touch: that directory, and the mount points through
//! [`tidy_protected`].

use std::io;
use std::path::PathBuf;
#[cfg(target_os = "linux")]
use std::{
    fs::File,
    io::{Read, Seek, Write},
    path::Path,
};

use crate::fence::Policy;

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
        for root in roots {
            let dir = lock_dir(&root)?;
            refuse_if_visible(policy, &dir)?;
            let file = lock_file(&dir, &root)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
                .map_err(|e| io::Error::other(format!("lock for {}: {e}", root.display())))?;
            locks.push(RootLock { root, file });
        }
        #[cfg(not(target_os = "linux"))]
        let _ = roots;
        Ok(MountPoints {
            #[cfg(target_os = "linux")]
            locks,
            created: missing_protected(policy),
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
        tidy_protected(&self.created);
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
        crate::sys::mark::mark("mount-points-locked");
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
        crate::sys::mark::mark("placeholders-remove");
        tidy_protected(&all);
        crate::sys::mark::mark("placeholders-removed");
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

/// The lock directory of `root`: its owner's, whoever runs (root's `sudo gatehouse exec`
/// and the owner's own must share one lock, or the two would split it). The owner's
/// runtime directory (`/run/user/<uid>/gatehouse`, made by the login manager, 0700) where
/// there is one, `/tmp/gatehouse-<uid>` otherwise; refused when it is a link, someone
/// else's, or open to others (another user making `/tmp/gatehouse-<uid>` first denies
/// this fallback, never weakens it).
#[cfg(target_os = "linux")]
fn lock_dir(root: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(root)
        .map_err(|e| io::Error::other(format!("{}: {e}", root.display())))?
        .uid();
    let me = rustix::process::geteuid().as_raw();
    if me != owner && me != 0 {
        return Err(io::Error::other(format!(
            "the workspace {} belongs to uid {owner}: the fence keeps its mount-point locks in that user's directory, which uid {me} cannot use",
            root.display()
        )));
    }
    crate::fence::user_dir::owners_dir(
        owner,
        me,
        &format!("the lock directory of the workspace {}", root.display()),
    )
}

/// A lock directory a jail could see is one whose files it could replace, which would
/// split the lock: refused where a workspace or an extra path of `policy` holds it or
/// lies inside it.
#[cfg(target_os = "linux")]
fn refuse_if_visible(policy: &Policy, dir: &Path) -> io::Result<()> {
    let visible = policy
        .writable_roots()
        .into_iter()
        .chain(policy.read_only.iter().cloned());
    for p in visible {
        if dir.starts_with(&p) || p.starts_with(dir) {
            return Err(io::Error::other(format!(
                "{} would show the fence's lock directory {} inside the jail: choose a narrower path",
                p.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The lock file of `root`, named by its device and inode (a rename of the root keeps its
/// lock; another directory at the same path gets another), owned by the directory's owner.
#[cfg(target_os = "linux")]
fn lock_file(dir: &Path, root: &Path) -> io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = std::fs::metadata(root)
        .map_err(|e| io::Error::other(format!("{}: {e}", root.display())))?;
    let path = dir.join(format!("{:x}-{:x}.lock", meta.dev(), meta.ino()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    if rustix::process::geteuid().as_raw() != meta.uid() {
        rustix::fs::fchown(&file, Some(rustix::fs::Uid::from_raw(meta.uid())), None)
            .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    }
    Ok(file)
}

/// Protected paths (and their parents) that do not exist yet below the workspace roots:
/// the fence creates them empty to use them as mount points; and an empty directory a
/// killed launcher left where a tool reads a file ([`crate::fence::protect::is_leftover_placeholder`]),
/// used and removed the same way. Deepest first, ready for [`tidy_protected`].
pub fn missing_protected(policy: &Policy) -> Vec<(PathBuf, PathBuf)> {
    let mut missing = Vec::new();
    for p in policy.protected_paths() {
        let mut prefix = PathBuf::new();
        for c in p.rel.components() {
            prefix.push(c);
            if std::fs::symlink_metadata(p.root.join(&prefix)).is_err()
                || crate::fence::protect::is_leftover_placeholder(&p.root, &prefix)
            {
                missing.push((p.root.clone(), prefix.clone()));
            }
        }
    }
    missing.sort_by_key(|(_, rel)| std::cmp::Reverse(rel.components().count()));
    missing.dedup();
    missing
}

/// Remove the mount points the fence created for missing protected paths once no jail
/// uses them, where they are still empty directories; never through a symlink.
pub fn tidy_protected(created: &[(PathBuf, PathBuf)]) {
    #[cfg(target_os = "linux")]
    for (root, rel) in created {
        let _ = crate::sys::fs::remove_placeholder_nofollow(root, rel);
    }
    #[cfg(not(target_os = "linux"))]
    for (root, rel) in created {
        let p = root.join(rel);
        if std::fs::symlink_metadata(&p)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        {
            let _ = std::fs::remove_dir(&p);
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
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
        // The second claim finds them existing: it created nothing (it counts the empty
        // directories where a tool reads a file as its own too, which changes nothing:
        // only the last claim out removes them).
        let second = MountPoints::claim(&policy).unwrap();
        assert!(second
            .created()
            .iter()
            .all(|(r, rel)| crate::fence::protect::is_leftover_placeholder(r, rel)));
        assert!(!second
            .created()
            .iter()
            .any(|(_, rel)| rel == Path::new(".git")));
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
    fn a_policy_that_would_show_the_lock_directory_is_refused() {
        let ws = tempfile::tempdir().unwrap();
        let mut policy = policy_for(ws.path());
        let dir = lock_dir(ws.path()).unwrap();
        policy.read_only = vec![dir.parent().unwrap().to_path_buf()];
        let e = MountPoints::claim(&policy).unwrap_err().to_string();
        assert!(e.contains("lock directory"), "{e}");
        // The allowed twin: an unrelated extra path.
        policy.read_only = vec![ws.path().join("sdk")];
        assert!(MountPoints::claim(&policy).is_ok());
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
