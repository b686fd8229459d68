//! Mount-namespace operations: propagation, tmpfs, binds, read-only remounts that keep the
//! flags the kernel has locked, `pivot_root`, lazy unmount. Every call needs `CAP_SYS_ADMIN`
//! in the user namespace owning the mount namespace (Linux 3.8), so all of them run before
//! capabilities are dropped and before Landlock (which forbids mounting).

use std::io;
use std::path::Path;

use rustix::fs::StatVfsMountFlags;
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

/// Make every mount below `/` private, recursively, so nothing we mount propagates back to
/// the host and no host mount event reaches us.
pub fn make_private_recursive(path: &Path) -> io::Result<()> {
    rustix::mount::mount_change(
        path,
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(io::Error::from)
}

/// Mount a fresh tmpfs at `target` with `mode` (octal string such as `"0755"`).
pub fn tmpfs(target: &Path, mode: &str, flags: MountFlags) -> io::Result<()> {
    let data = std::ffi::CString::new(format!("mode={mode}")).map_err(io::Error::other)?;
    rustix::mount::mount("tmpfs", target, "tmpfs", flags, data.as_c_str()).map_err(io::Error::from)
}

/// Mount a fresh `proc` at `target` (the mounter's PID namespace).
pub fn proc(target: &Path) -> io::Result<()> {
    rustix::mount::mount(
        "proc",
        target,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .map_err(io::Error::from)
}

/// A private `devpts` instance at `target` (`newinstance`: none of the host's terminals),
/// with `ptmx` usable by everyone inside.
pub fn devpts(target: &Path) -> io::Result<()> {
    rustix::mount::mount(
        "devpts",
        target,
        "devpts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    )
    .map_err(io::Error::from)
}

/// Bind `path` onto itself and remount that bind read-only, `nosuid`, `noexec`, keeping
/// the flags the kernel locked. Data of a device node on it still flows (write access to
/// a device is not write access to its file system), but `chmod`, `chown`, `utimes` and
/// `setxattr` fail with `EROFS`, by path and by descriptor.
pub fn cover_read_only(path: &Path) -> io::Result<()> {
    bind(path, path)?;
    remount_bind(
        path,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NOEXEC,
    )
}

/// Every mount point at or beneath `target`, as `/proc/self/mountinfo` lists them (octal
/// escapes decoded), deepest last.
pub fn mounts_beneath(mountinfo: &Path, target: &Path) -> io::Result<Vec<std::path::PathBuf>> {
    let text = std::fs::read_to_string(mountinfo)?;
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(field) = line.split(' ').nth(4) else {
            continue;
        };
        let mut decoded = Vec::new();
        let b = field.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 3 < b.len() {
                if let Ok(v) = u8::from_str_radix(&field[i + 1..i + 4], 8) {
                    decoded.push(v);
                    i += 4;
                    continue;
                }
            }
            decoded.push(b[i]);
            i += 1;
        }
        use std::os::unix::ffi::OsStringExt;
        let p = std::path::PathBuf::from(std::ffi::OsString::from_vec(decoded));
        if p.starts_with(target) && !out.contains(&p) {
            out.push(p);
        }
    }
    out.sort_by_key(|p| p.components().count());
    Ok(out)
}

/// Recursive bind of `source` onto `target`, then every mount of the new tree remounted
/// read-only (`nosuid`, `nodev`, keeping locked flags): a host with submounts below a
/// system directory can be fenced, and none of them is writable (FENCE-JAIL-2). A
/// non-recursive bind of a tree whose submounts the kernel locked fails with `EINVAL`.
///
/// Where the kernel has `mount_setattr(2)` (Linux 5.12), the whole new tree is made
/// read-only in one call with `AT_RECURSIVE`, which the kernel applies to every mount of
/// the tree or to none; before 5.12 (`ENOSYS`) each mount listed in `mountinfo` is
/// remounted on its own. Any other error of `mount_setattr` is an error: nothing falls
/// back to a weaker path.
pub fn rbind_read_only(source: &Path, target: &Path, mountinfo: &Path) -> io::Result<()> {
    rbind(source, target)?;
    read_only_recursive(target, mountinfo)
}

/// Every mount at or beneath `target` made read-only, `nosuid` and `nodev` (keeping
/// locked flags): one `mount_setattr(AT_RECURSIVE)` (Linux 5.12), all or nothing; before
/// 5.12 (`ENOSYS`) each mount listed in `mountinfo` is remounted on its own. Any other
/// error of `mount_setattr` is an error: nothing falls back to a weaker path.
pub fn read_only_recursive(target: &Path, mountinfo: &Path) -> io::Result<()> {
    add_flags_recursive(
        target,
        mountinfo,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
    )
}

/// The device tree at `target` (a tmpfs with host nodes bound on it) and every mount on it
/// made read-only, `nosuid` and `noexec`, keeping locked flags (`nodev` stays clear, so the
/// nodes still open): one `mount_setattr(AT_RECURSIVE)` (Linux 5.12), all or nothing;
/// before 5.12 (`ENOSYS`) each mount listed in `mountinfo` is remounted on its own.
pub fn seal_devices(target: &Path, mountinfo: &Path) -> io::Result<()> {
    add_flags_recursive(
        target,
        mountinfo,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NOEXEC,
    )
}

/// `attrs` added to every mount at or beneath `target` by one `mount_setattr`; before
/// 5.12 (`ENOSYS`, and only then) the same `flags` by a remount of each mount `mountinfo`
/// lists there.
fn add_flags_recursive(
    target: &Path,
    mountinfo: &Path,
    attrs: u64,
    flags: MountFlags,
) -> io::Result<()> {
    match set_attr_recursive(target, attrs) {
        Ok(()) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
        Err(e) => return Err(e),
    }
    for m in mounts_beneath(mountinfo, target)? {
        remount_bind(&m, flags)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", m.display())))?;
    }
    Ok(())
}

/// `MOUNT_ATTR_RDONLY` of `<linux/mount.h>`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// `MOUNT_ATTR_NOSUID`.
const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// `MOUNT_ATTR_NODEV`.
const MOUNT_ATTR_NODEV: u64 = 0x4;
/// `MOUNT_ATTR_NOEXEC`.
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
/// `AT_RECURSIVE` of `<linux/fcntl.h>`: apply to the whole mount tree.
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// `__NR_mount_setattr`: the same number on every architecture (the unified table).
const SYS_MOUNT_SETATTR: libc::c_long = 442;

/// `struct mount_attr` of `<linux/mount.h>` (`MOUNT_ATTR_SIZE_VER0`, 32 bytes).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `mount_setattr(AT_FDCWD, target, AT_RECURSIVE, {attr_set: set})` (Linux 5.12): add the
/// flags `set` to every mount at or beneath `target`, clearing none (so flags the kernel
/// locked stay as they are). `ENOSYS` before 5.12.
pub fn set_attr_recursive(target: &Path, set: u64) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
    mount_setattr(libc::AT_FDCWD, &c, AT_RECURSIVE, set)
}

/// `mount_setattr(dirfd, path, flags, {attr_set: set})`: add the flags `set`, clearing
/// none (so flags the kernel locked stay as they are). `ENOSYS` before 5.12.
fn mount_setattr(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    set: u64,
) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `path` is NUL-terminated and `attr` a properly laid out `struct mount_attr`;
    // both outlive the call, and the size passed is exactly that struct's. The kernel only
    // reads them; `dirfd` is the caller's live descriptor or `AT_FDCWD`.
    let rc = unsafe {
        libc::syscall(
            SYS_MOUNT_SETATTR,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `__NR_open_tree` (Linux 5.2), the unified table's number on every architecture.
const SYS_OPEN_TREE: libc::c_long = 428;
/// `__NR_move_mount` (Linux 5.2).
const SYS_MOVE_MOUNT: libc::c_long = 429;
/// `OPEN_TREE_CLONE`: a detached copy of the mount at the path, not the mount itself.
const OPEN_TREE_CLONE: libc::c_uint = 1;
/// `MOVE_MOUNT_F_EMPTY_PATH`: the source is the descriptor itself.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// Bind the entry `name` of the directory `dir` read-only, `nosuid` and `nodev` over
/// itself, never through a symlink: a non-recursive copy of it, detached
/// (`open_tree(OPEN_TREE_CLONE)`, the last component not followed), made read-only while
/// no one can reach it (`mount_setattr`, setting flags and clearing none, so flags the
/// kernel locked stay), then attached where it was (`move_mount`, which follows no symlink
/// at its target). Four system calls, no walk of `/proc/self/fd` and no remount. A symlink
/// or anything but a directory or a regular file is refused. `Ok(false)` where the kernel
/// lacks these calls (`mount_setattr` is Linux 5.12), for the caller's older way.
pub fn bind_read_only_at(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
) -> io::Result<bool> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes()).map_err(io::Error::other)?;
    let empty = c"";
    // SAFETY: `dir` is a live descriptor and `c` a NUL-terminated name, both outliving the
    // call; the kernel reads them and returns a new descriptor or -1.
    let rc = unsafe {
        libc::syscall(
            SYS_OPEN_TREE,
            dir.as_raw_fd(),
            c.as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOSYS) => Ok(false),
            _ => Err(e),
        };
    }
    // SAFETY: a descriptor the kernel has just returned to us, owned by no one else.
    let tree = unsafe { OwnedFd::from_raw_fd(rc as i32) };
    let st = rustix::fs::fstat(&tree)?;
    match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::Directory | rustix::fs::FileType::RegularFile => {}
        rustix::fs::FileType::Symlink => {
            return Err(io::Error::other(
                "a symbolic link: a protected path is never followed through one",
            ))
        }
        other => {
            return Err(io::Error::other(format!(
                "not a directory or a file ({other:?})"
            )))
        }
    }
    if let Err(e) = mount_setattr(
        tree.as_raw_fd(),
        empty,
        libc::AT_EMPTY_PATH as libc::c_uint,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
    ) {
        return match e.raw_os_error() {
            Some(libc::ENOSYS) => Ok(false),
            _ => Err(e),
        };
    }
    // SAFETY: both descriptors are live, both names NUL-terminated and outliving the call.
    let rc = unsafe {
        libc::syscall(
            SYS_MOVE_MOUNT,
            tree.as_raw_fd(),
            empty.as_ptr(),
            dir.as_raw_fd(),
            c.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(true)
}

/// Non-recursive bind of `source` onto `target` (submounts of the source stay out).
pub fn bind(source: &Path, target: &Path) -> io::Result<()> {
    rustix::mount::mount_bind(source, target).map_err(io::Error::from)
}

/// Recursive bind of `source` onto `target`: the submounts beneath it (an earlier
/// protected path's read-only mount) come along.
pub fn rbind(source: &Path, target: &Path) -> io::Result<()> {
    rustix::mount::mount_bind_recursive(source, target).map_err(io::Error::from)
}

/// Remount the bind at `target` with `extra` flags, keeping every flag the existing mount
/// has (`noexec`, atime flags...): the kernel refuses to clear flags it locked when the
/// mount came from a more privileged namespace.
pub fn remount_bind(target: &Path, extra: MountFlags) -> io::Result<()> {
    let current = rustix::fs::statvfs(target)?.f_flag;
    let mut flags = MountFlags::BIND | extra;
    for (vfs, ms) in [
        (StatVfsMountFlags::RDONLY, MountFlags::RDONLY),
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if current.contains(vfs) {
            flags |= ms;
        }
    }
    rustix::mount::mount_remount(target, flags, "").map_err(io::Error::from)
}

/// Remount the (non-bind) file system at `target` read-only, `nosuid`, `nodev`.
pub fn remount_readonly_fs(target: &Path) -> io::Result<()> {
    rustix::mount::mount_remount(
        target,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        "",
    )
    .map_err(io::Error::from)
}

/// `pivot_root(new_root, put_old)` (Linux 2.3.41).
pub fn pivot_root(new_root: &Path, put_old: &Path) -> io::Result<()> {
    rustix::process::pivot_root(new_root, put_old).map_err(io::Error::from)
}

/// Lazily detach the mount at `target` and everything below it.
pub fn detach(target: &Path) -> io::Result<()> {
    rustix::mount::unmount(target, UnmountFlags::DETACH).map_err(io::Error::from)
}

/// Leave the staging root for `new_root` and detach everything else, bubblewrap's way:
/// detach the host root at `old_root`, then `pivot_root(".", ".")` from inside the new root
/// stacks the staging root on top, and a lazy unmount of it leaves only the new tree.
pub fn pivot_into(new_root: &Path, old_root: &Path) -> io::Result<()> {
    make_private_recursive(old_root)?;
    detach(old_root)?;
    let staging = rustix::fs::open(
        "/",
        rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    std::env::set_current_dir(new_root)?;
    pivot_root(Path::new("."), Path::new("."))?;
    rustix::process::fchdir(&staging)?;
    detach(Path::new("."))?;
    std::env::set_current_dir("/")
}
