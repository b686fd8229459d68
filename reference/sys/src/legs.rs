//! The raw calls the probe's legs make, so each leg exercises exactly one system call:
//! `truncate(2)` by path (which Landlock before ABI 3 cannot restrict) and `chmod(2)`.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `truncate(path, len)`.
pub fn truncate(path: &Path, len: i64) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let rc = unsafe { libc::truncate(c.as_ptr(), len as libc::off_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `chmod(path, mode)`.
pub fn chmod(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}
