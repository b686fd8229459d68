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
use std::path::{Path, PathBuf};
use std::time::Duration;
#[cfg(target_os = "linux")]
use std::{
    fs::File,
    io::{Read, Seek, Write},
};

use crate::fence::Policy;

/// The mount points of one policy, claimed: dropping it lets go of them (and removes them
/// when no other jail of the same roots still holds them).
#[derive(Debug)]
pub struct MountPoints {
    #[cfg(target_os = "linux")]
    locks: Vec<RootLock>,
    created: Vec<(PathBuf, PathBuf)>,
    // Only Linux has lingerers: elsewhere the last jail out removes at once.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    linger: Option<Linger>,
}

#[cfg(target_os = "linux")]
#[derive(Debug)]
struct RootLock {
    root: PathBuf,
    path: PathBuf,
    file: File,
}

impl MountPoints {
    /// Take a shared lock on every workspace root of `policy` (waiting while another
    /// launcher removes that root's mount points), then note which protected paths are
    /// missing: the jail about to start creates those.
    pub fn claim(policy: &Policy) -> io::Result<MountPoints> {
        MountPoints::claim_lingering(policy, None)
    }

    /// [`MountPoints::claim`], the placeholders left to a lingerer when the last jail of a
    /// root ends (FENCE-PROTECT-20) where `linger` says so.
    pub fn claim_lingering(policy: &Policy, linger: Option<Linger>) -> io::Result<MountPoints> {
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
            let (path, file) = lock_file(&dir, &root)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockShared)
                .map_err(|e| io::Error::other(format!("lock for {}: {e}", root.display())))?;
            locks.push(RootLock { root, path, file });
        }
        #[cfg(not(target_os = "linux"))]
        let _ = roots;
        Ok(MountPoints {
            #[cfg(target_os = "linux")]
            locks,
            created: missing_protected(policy),
            linger,
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
            lock.let_go(&mine, self.linger.as_ref());
        }
        #[cfg(not(target_os = "linux"))]
        tidy_protected(&self.created);
    }
}

#[cfg(target_os = "linux")]
impl RootLock {
    /// Record `mine`, unlock, and if no other launcher holds the root now, remove every
    /// mount point recorded for it: at once, or with `linger` after its grace by a
    /// lingerer of the root ([`linger_main`]) unless another jail of the root started
    /// meanwhile. With `linger` every let-go records at least one byte, the epoch a
    /// lingerer compares before it removes.
    fn let_go(&mut self, mine: &[&(PathBuf, PathBuf)], linger: Option<&Linger>) {
        use rustix::fs::{flock, FlockOperation};
        if !mine.is_empty() || linger.is_some() {
            // Each placeholder as its root and its path below it (NUL after each): the
            // lock is named by the root's device and inode, which a directory made after
            // this one was removed may reuse, so the record says which directory it is.
            // An empty pair is the epoch's bump of a let-go that made nothing.
            let mut line = Vec::new();
            for (root, rel) in mine {
                line.extend_from_slice(root.as_os_str().as_encoded_bytes());
                line.push(0);
                line.extend_from_slice(rel.as_os_str().as_encoded_bytes());
                line.push(0);
            }
            if line.is_empty() {
                line.extend_from_slice(&[0, 0]);
            }
            // The file is opened for appending: concurrent records do not overwrite.
            let _ = self.file.write_all(&line);
        }
        let _ = flock(&self.file, FlockOperation::Unlock);
        if flock(&self.file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return; // another jail still uses them; the last one out removes them
        }
        crate::sys::mark::mark("mount-points-locked");
        match linger {
            None => {
                crate::sys::mark::mark("placeholders-remove");
                remove_recorded(&self.path, &mut self.file);
                crate::sys::mark::mark("placeholders-removed");
            }
            Some(linger) => {
                // Only whether anything is recorded: the record grows by a line a
                // command while the commands come within the grace, and reading it
                // here would make each command's cost grow with them.
                let recorded_any = self.file.metadata().map(|m| m.len() > 0).unwrap_or(true);
                if !recorded_any {
                    // nothing of this root's to remove
                } else if !linger.hand_over(&self.path, &self.root) {
                    remove_recorded(&self.path, &mut self.file);
                } else {
                    // The names a host tool writes as files go now: an empty directory
                    // there would make that write fail for the whole grace.
                    let now: Vec<(PathBuf, PathBuf)> = mine
                        .iter()
                        .filter(|(_, rel)| !crate::fence::protect::placeholder_lingers(rel))
                        .map(|(r, rel)| (r.clone(), rel.clone()))
                        .collect();
                    tidy_protected(&now);
                }
            }
        }
        let _ = flock(&self.file, FlockOperation::Unlock);
    }
}

/// The placeholders recorded in a root's lock file, as (root, path below it), deepest
/// first, each once.
#[cfg(target_os = "linux")]
fn recorded(file: &mut File) -> Vec<(PathBuf, PathBuf)> {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.read_to_end(&mut bytes);
    let fields: Vec<&[u8]> = bytes.split(|b| *b == 0).collect();
    let mut all: Vec<(PathBuf, PathBuf)> = fields
        .chunks_exact(2)
        .filter(|pair| !pair[0].is_empty() && !pair[1].is_empty())
        .map(|pair| {
            (
                PathBuf::from(os_string(pair[0])),
                PathBuf::from(os_string(pair[1])),
            )
        })
        .collect();
    all.sort_by(|a, b| {
        b.1.components()
            .count()
            .cmp(&a.1.components().count())
            .then_with(|| a.cmp(b))
    });
    all.dedup();
    all
}

/// Remove every placeholder recorded in the lock file at `lock` where it is still one
/// and its root is still the directory the lock is named after, and empty the record.
/// The caller holds the root's lock exclusively.
#[cfg(target_os = "linux")]
fn remove_recorded(lock: &Path, file: &mut File) {
    let mut roots: Vec<(PathBuf, bool)> = Vec::new();
    let mut ours = |root: &Path| match roots.iter().find(|(r, _)| r == root) {
        Some((_, same)) => *same,
        None => {
            let same = same_directory(lock, root);
            roots.push((root.to_path_buf(), same));
            same
        }
    };
    let all: Vec<(PathBuf, PathBuf)> = recorded(file)
        .into_iter()
        .filter(|(root, _)| ours(root))
        .collect();
    tidy_protected(&all);
    let _ = file.set_len(0);
}

/// How long a root's placeholders outlive its last jail, unless the environment says
/// otherwise ([`ENV_LINGER`]): back-to-back commands of one workspace (an agent's shell
/// calls, a build script's steps) then create them once, not each time (FENCE-PROTECT-20).
pub const LINGER: Duration = Duration::from_secs(10);

/// The grace in milliseconds instead of [`LINGER`]; `0` removes the placeholders as the
/// last jail ends.
pub const ENV_LINGER: &str = "GATEHOUSE_PLACEHOLDERS_LINGER_MS";

/// The hidden subcommand of the helper binary that a lingerer runs as
/// (`gatehouse __linger LOCK ROOT MILLISECONDS`).
pub const LINGER_ARG: &str = "__linger";

/// Placeholders left to a lingerer: the binary it runs as and the grace.
#[derive(Debug, Clone)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Linger {
    helper: PathBuf,
    grace: Duration,
}

impl Linger {
    /// The lingering of `gatehouse exec`: [`LINGER`], or [`ENV_LINGER`]'s milliseconds;
    /// `None` where that is `0`. A value that is no number is refused in one line.
    pub fn from_env(helper: &Path) -> io::Result<Option<Linger>> {
        let grace = match std::env::var(ENV_LINGER) {
            Err(_) => LINGER,
            Ok(v) => Duration::from_millis(v.trim().parse().map_err(|_| {
                io::Error::other(format!("{ENV_LINGER}={v}: not a number of milliseconds"))
            })?),
        };
        Ok((!grace.is_zero()).then(|| Linger {
            helper: helper.to_path_buf(),
            grace,
        }))
    }

    /// Leave the root's recorded placeholders to its lingerer: a running one takes them
    /// (it holds the root's linger lock and looks at the record when its grace ends),
    /// otherwise a new one is started, detached, in a process group of its own. Nothing
    /// here fails the command: a lingerer that cannot start leaves the placeholders to the
    /// caller, which then removes them at once. The caller holds the root's lock
    /// exclusively, so no lingerer can look at the record meanwhile.
    #[cfg(target_os = "linux")]
    fn hand_over(&self, lock: &Path, root: &Path) -> bool {
        use std::os::unix::process::CommandExt;
        let Ok(pending) = linger_file(lock) else {
            return false;
        };
        if rustix::fs::flock(
            &pending,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        )
        .is_err()
        {
            return true; // a lingerer of this root is waiting: it takes these too
        }
        drop(pending);
        crate::sys::mark::mark("lingerer-spawn");
        std::process::Command::new(&self.helper)
            .arg(LINGER_ARG)
            .arg(lock)
            .arg(root)
            .arg(self.grace.as_millis().to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .is_ok()
    }
}

/// The second lock of a root, held by its one waiting lingerer: beside the root's lock
/// file and, like it, its owner's (a `sudo gatehouse exec` and the owner's own share it).
#[cfg(target_os = "linux")]
fn linger_file(lock: &Path) -> io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut name = lock.as_os_str().to_owned();
    name.push(".linger");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(PathBuf::from(name))?;
    let owner = std::fs::symlink_metadata(lock)?.uid();
    if file.metadata()?.uid() != owner {
        rustix::fs::fchown(&file, Some(rustix::fs::Uid::from_raw(owner)), None)?;
    }
    Ok(file)
}

/// The lingerer (`gatehouse __linger LOCK ROOT MILLISECONDS`, started by the last jail of
/// a root out): holds the root's linger lock, and once its grace has passed since the
/// last let-go (the record's length and time of change, which every let-go moves) with no
/// jail of the root running (the root's lock taken exclusively), removes the recorded
/// placeholders as the last jail out would have and ends. A jail that came and went
/// starts the grace again. Before it ends it looks once more: a launcher that found
/// it waiting after its last look left its placeholders to it. It holds the root open
/// from its start, checked to be the directory the lock is named after (device and
/// inode), and removes every recorded placeholder below that directory, whatever path a
/// later launcher knew it by; nothing where the check fails.
#[cfg(target_os = "linux")]
pub fn linger_main(args: &[std::ffi::OsString]) -> i32 {
    use rustix::fs::{flock, FlockOperation};
    let [lock, root, grace] = args else {
        return 2;
    };
    let Some(grace) = grace
        .to_str()
        .and_then(|g| g.parse().ok())
        .map(Duration::from_millis)
    else {
        return 2;
    };
    let lock = Path::new(lock);
    // The root held open for the lingerer's life, checked to be the directory the lock is
    // named after: every placeholder recorded in this lock is below that directory,
    // whatever path a later launcher knew it by (a root moved while this waits), and its
    // inode cannot be reused by another directory while this holds it open.
    let Ok(dir) = rustix::fs::open(
        Path::new(root),
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return 0;
    };
    let held = PathBuf::from(format!("/proc/self/fd/{}", {
        use std::os::fd::AsRawFd;
        dir.as_raw_fd()
    }));
    if !same_directory(lock, &held) {
        return 0; // another directory at the root's path by now
    }
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(lock)
    else {
        return 1;
    };
    let Ok(pending) = linger_file(lock) else {
        return 1;
    };
    loop {
        if flock(&pending, FlockOperation::NonBlockingLockExclusive).is_err() {
            return 0; // another lingerer of this root waits: it takes them
        }
        loop {
            // Until the grace has passed since the last let-go (the record's change).
            let before = epoch(&file);
            let since = before.1.elapsed().unwrap_or_default();
            std::thread::sleep(grace.saturating_sub(since));
            if epoch(&file) != before {
                continue; // a jail of the root came and went: the grace starts again
            }
            if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
                std::thread::sleep(grace); // a jail runs: its let-go moves the epoch
                continue;
            }
            if epoch(&file) != before {
                let _ = flock(&file, FlockOperation::Unlock);
                continue;
            }
            let all: Vec<(PathBuf, PathBuf)> = recorded(&mut file)
                .into_iter()
                .map(|(_, rel)| (held.clone(), rel))
                .collect();
            tidy_protected(&all);
            let _ = file.set_len(0);
            let _ = flock(&file, FlockOperation::Unlock);
            break;
        }
        let _ = flock(&pending, FlockOperation::Unlock);
        if epoch(&file).0 == 0 {
            return 0;
        }
    }
}

/// The length and the last change of a root's record: every let-go with a lingerer
/// makes it longer.
#[cfg(target_os = "linux")]
fn epoch(file: &File) -> (u64, std::time::SystemTime) {
    file.metadata()
        .map(|m| (m.len(), m.modified().unwrap_or(std::time::UNIX_EPOCH)))
        .unwrap_or((0, std::time::UNIX_EPOCH))
}

/// Whether `root` is still the directory its lock file is named after.
#[cfg(target_os = "linux")]
fn same_directory(lock: &Path, root: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(root) else {
        return false;
    };
    lock.file_name()
        .is_some_and(|n| *n == *format!("{:x}-{:x}.lock", meta.dev(), meta.ino()))
}

/// Bytes recorded by [`RootLock::let_go`] as a path again (Unix paths are bytes).
#[cfg(target_os = "linux")]
fn os_string(bytes: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).to_os_string()
}

/// The lock file of `root` (its owner's lock directory, named by the root's device and
/// inode), where a lingerer of the root is named too (`gatehouse __linger LOCK ...`).
#[cfg(target_os = "linux")]
pub fn lock_path(root: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(root)?;
    Ok(lock_dir(root)?.join(format!("{:x}-{:x}.lock", meta.dev(), meta.ino())))
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
fn lock_file(dir: &Path, root: &Path) -> io::Result<(PathBuf, File)> {
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
    Ok((path, file))
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
