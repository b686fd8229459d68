//! Helpers shared by the resolver's integration tests.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Every object under `root` (itself included) by `(device, inode)`, found by a walk
/// that never follows a link: the ground truth a confined resolution must land in.
pub fn objects_under(root: &Path) -> HashSet<(u64, u64)> {
    let mut out = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let md = fs::symlink_metadata(&p).unwrap();
        out.insert((md.dev(), md.ino()));
        if md.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    out
}
