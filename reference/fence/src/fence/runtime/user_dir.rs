//! The fence's private directory of a user, where it keeps what no jail may see or change:
//! the mount-point locks of the roots that user owns ([`crate::fence::mount_points`]), the
//! probe's shared outside directory ([`crate::fence::probe`]) and the listings of `/etc`
//! ([`crate::fence::listing`]). Depends on nothing else of the fence. May touch: that directory.

#[cfg(target_os = "linux")]
use std::io;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};

/// This user's own directory of the fence: [`owners_dir`] with this process's uid as owner.
#[cfg(target_os = "linux")]
pub fn own_dir() -> io::Result<PathBuf> {
    let me = rustix::process::geteuid().as_raw();
    owners_dir(me, me, "the fence's directory of this user")
}

/// The fence's private directory of uid `owner` (made by `me`, the owner or root):
/// `/run/user/<owner>/gatehouse` where the login manager made a runtime directory,
/// `/tmp/gatehouse-<owner>` otherwise; mode 0700, and refused when it is a link, someone
/// else's, or open to others.
#[cfg(target_os = "linux")]
pub fn owners_dir(owner: u32, me: u32, what: &str) -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let private = |p: &Path| {
        std::fs::symlink_metadata(p)
            .map(|m| m.is_dir() && m.uid() == owner && m.mode() & 0o077 == 0)
            .unwrap_or(false)
    };
    let runtime = PathBuf::from(format!("/run/user/{owner}"));
    let dir = if private(&runtime) {
        runtime.join("gatehouse")
    } else {
        PathBuf::from(format!("/tmp/gatehouse-{owner}"))
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) if me != owner => {
            // Made by root for the owner: the owner's own launchers must open it too.
            if let Err(e) = rustix::fs::chown(&dir, Some(rustix::fs::Uid::from_raw(owner)), None) {
                let _ = std::fs::remove_dir(&dir);
                return Err(io::Error::other(format!("{}: {e}", dir.display())));
            }
        }
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(io::Error::other(format!(
                "{}: {e} ({what}, which uid {owner} owns)",
                dir.display(),
            )))
        }
    }
    if !private(&dir) {
        return Err(io::Error::other(format!(
            "{}: not a private directory of uid {owner} (a link, another owner, or open to others): the fence will not keep {what} there",
            dir.display(),
        )));
    }
    Ok(dir)
}
