//! File-system walks that never follow a symbolic link, for the protected paths inside a
//! workspace: jailed code controls the workspace, so a planted symlink must never redirect
//! a `mkdir` or a mount to the host. Uses `openat(O_PATH | O_NOFOLLOW)` (Linux 2.6.39).

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, CWD};

/// One component reached by [`walk_nofollow`]: its path and an `O_PATH` descriptor.
pub struct Reached {
    /// The path of the component.
    pub path: PathBuf,
    /// An `O_PATH` descriptor of it.
    pub fd: OwnedFd,
    /// Whether it is a directory (the walk stops at the first non-directory).
    pub is_dir: bool,
}

fn open_path(dir: Option<&OwnedFd>, name: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match dir {
        Some(d) => rustix::fs::openat(d, name, flags, Mode::empty()),
        None => rustix::fs::openat(CWD, name, flags, Mode::empty()),
    }
}

/// Walk `rel` below the directory `root` (itself trusted: the launcher resolved it),
/// creating missing directories when `create` is set. A symlink anywhere is an error; the
/// walk stops at the first component that is a regular file (a `.git` gitlink file).
pub fn walk_nofollow(root: &Path, rel: &Path, create: bool) -> io::Result<Vec<Reached>> {
    let root_fd = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io::Error::other(format!("{}: {e}", root.display())))?;
    let mut reached: Vec<Reached> = Vec::new();
    let mut path = root.to_path_buf();
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(io::Error::other(format!(
                "{}: only plain components are allowed",
                rel.display()
            )));
        };
        let parent = reached.last().map(|r| &r.fd).unwrap_or(&root_fd);
        path.push(name);
        let fd = match open_path(Some(parent), Path::new(name)) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) if create => {
                // O_PATH descriptors cannot be used for mkdirat: reopen the parent as a
                // directory through its descriptor, still without following anything.
                let dir = rustix::fs::openat(
                    parent,
                    ".",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => {
                        return Err(io::Error::other(format!("mkdir {}: {e}", path.display())))
                    }
                }
                open_path(Some(parent), Path::new(name))
                    .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?
            }
            Err(e) => return Err(io::Error::other(format!("{}: {e}", path.display()))),
        };
        let st = rustix::fs::fstat(&fd)?;
        let ft = FileType::from_raw_mode(st.st_mode);
        match ft {
            FileType::Directory => reached.push(Reached {
                path: path.clone(),
                fd,
                is_dir: true,
            }),
            FileType::RegularFile => {
                reached.push(Reached {
                    path: path.clone(),
                    fd,
                    is_dir: false,
                });
                break;
            }
            FileType::Symlink => {
                return Err(io::Error::other(format!(
                    "{} is a symbolic link: a protected path is never followed through one",
                    path.display()
                )))
            }
            _ => {
                return Err(io::Error::other(format!(
                    "{} is neither a directory nor a regular file",
                    path.display()
                )))
            }
        }
    }
    Ok(reached)
}

/// The `/proc/self/fd/N` path of a descriptor, under the `proc` mounted at `proc_root`.
pub fn fd_path(proc_root: &Path, fd: &OwnedFd) -> PathBuf {
    use std::os::fd::AsRawFd;
    proc_root.join(format!("self/fd/{}", fd.as_raw_fd()))
}

/// An `O_PATH` handle to the directory holding `rel` below `root`, reached without
/// following any symlink (its missing parents made as directories when `create` is set),
/// and `rel`'s final name. An `O_PATH` directory handle is a valid `dirfd` for the `*at`
/// calls the callers make (`unlinkat`, `statat`, `openat` with `O_CREAT`).
fn parent_nofollow<'a>(
    root: &Path,
    rel: &'a Path,
    create: bool,
) -> io::Result<(OwnedFd, &'a OsStr)> {
    let name = rel
        .file_name()
        .ok_or_else(|| io::Error::other("no final component"))?;
    let parent_rel = rel.parent().unwrap_or(Path::new(""));
    if parent_rel.as_os_str().is_empty() {
        let fd = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        return Ok((fd, name));
    }
    match walk_nofollow(root, parent_rel, create)?.into_iter().last() {
        Some(r) if r.is_dir => Ok((r.fd, name)),
        _ => Err(io::Error::other("parent is not a directory")),
    }
}

/// Make a missing protected path exist so that it can be a mount point: its parents as
/// directories, the path itself as an empty directory, or as an empty file when `file` is
/// set (an included configuration file, which git must still be able to read). Nothing is
/// followed through a symlink.
pub fn prepare_nofollow(root: &Path, rel: &Path, file: bool) -> io::Result<Vec<Reached>> {
    if !file {
        return walk_nofollow(root, rel, true);
    }
    let (parent, name) = parent_nofollow(root, rel, true)?;
    match rustix::fs::openat(
        &parent,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    ) {
        Ok(_) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(io::Error::other(format!("{}: {e}", rel.display()))),
    }
    walk_nofollow(root, rel, false)
}

/// Remove a placeholder made by [`prepare_nofollow`] where it is still one: an empty
/// directory (`unlinkat(AT_REMOVEDIR)` refuses a non-empty one and a symlink) or an empty
/// regular file. Its parent is reached once, without following any symlink.
pub fn remove_placeholder_nofollow(root: &Path, rel: &Path) -> io::Result<()> {
    let (parent, name) = parent_nofollow(root, rel, false)?;
    match rustix::fs::unlinkat(&parent, name, rustix::fs::AtFlags::REMOVEDIR) {
        Err(rustix::io::Errno::NOTDIR) => {}
        done => return done.map_err(io::Error::from),
    }
    let st = rustix::fs::statat(&parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_size != 0 {
        return Err(io::Error::other("not an empty regular file"));
    }
    rustix::fs::unlinkat(&parent, name, rustix::fs::AtFlags::empty()).map_err(io::Error::from)
}
