//! What the guard refuses to an agent's file tool before the decision order asks
//! anything, in every safety mode (GUARD-FILE-1 to -3): a write or edit that lands on a
//! path the fence keeps read-only (the fence's one list, [`crate::fence::protect`]), and
//! any file tool that reaches a path `[exec] hide` hides (for a search or a listing, also
//! one that holds a hidden path beneath it). Each is decided where the spelled path lands
//! on disk: the name itself (its directory resolved, the name appended as spelled) and
//! the file it leads to (every link followed, the final one included, as the agents'
//! file tools follow it), `..` taken as the kernel takes it, a missing tail appended.
//!
//! The lead may move [`Reach`] into the library beside `fence::protect`: the workspace's
//! own file tools (`workspace::files`, PATH-WRITE-7) decide the name's landing the same
//! way.
//!
//! Reads the filesystem (metadata, links, the protected list's git files); writes nothing.

use crate::fence::protect::{covers, discover, Protected};
use crate::paths::is_within;
use std::collections::VecDeque;
use std::path::{Component, Path, PathBuf};

/// How many links one path may pass through (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// `p` (absolute) as the kernel resolves it for an `open(O_CREAT)`: each component's
/// link followed in order, the final one and a dangling one included (the kernel creates
/// a dangling link's target), `..` taken from where the walk stands, the part that does
/// not exist appended. Past [`MAX_LINKS`] links the rest is appended as spelled (the
/// kernel would refuse the open).
pub fn real_path(p: &Path) -> PathBuf {
    let mut queue: VecDeque<PathBuf> = p
        .components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = queue.pop_front() {
        match c.components().next() {
            Some(Component::RootDir) => out = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::Normal(name)) => {
                out.push(name);
                let is_link = std::fs::symlink_metadata(&out)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link && links < MAX_LINKS {
                    links += 1;
                    if let Ok(target) = std::fs::read_link(&out) {
                        out.pop();
                        for t in target.components().rev() {
                            queue.push_front(PathBuf::from(t.as_os_str()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// How a file tool reaches its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads one file.
    Read,
    /// Writes or edits one file.
    Write,
    /// Searches or lists the tree beneath the path.
    Tree,
}

impl Access {
    /// The access of a library tool name (`read`, `write`, `edit`, `list`, `search`).
    pub fn of(tool: &str) -> Access {
        match tool {
            "write" | "edit" => Access::Write,
            "list" | "search" => Access::Tree,
            _ => Access::Read,
        }
    }
}

/// The places one session's file tools may not reach: the protected list of its roots
/// (found at the first write), and the hidden paths, each resolved.
#[derive(Debug)]
pub struct Reach {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
    protected: Option<Vec<Protected>>,
    hidden: Vec<PathBuf>,
}

/// Where a spelled path lands: the name itself and the file it leads to.
fn landings(full: &Path) -> Vec<PathBuf> {
    let followed = real_path(full);
    let mut out = vec![followed.clone()];
    if let (Some(parent), Some(name)) = (full.parent(), full.file_name()) {
        let named = real_path(parent).join(name);
        if named != followed {
            out.push(named);
        }
    }
    out
}

impl Reach {
    /// The reach of a session with these workspace roots and `[exec] hide` paths; `home`
    /// is the person's home (where git's global configuration is read from).
    pub fn new(roots: &[PathBuf], hide: &[PathBuf], home: Option<&Path>) -> Reach {
        Reach {
            roots: roots.iter().map(|r| real_path(r)).collect(),
            home: home.map(Path::to_path_buf),
            protected: None,
            hidden: hide.iter().map(|h| real_path(h)).collect(),
        }
    }

    fn protected(&mut self) -> &[Protected] {
        let (roots, home) = (&self.roots, self.home.as_deref());
        self.protected
            .get_or_insert_with(|| discover(roots, roots, home))
    }

    /// The refusal of `path` (relative paths read from `cwd`) reached as `access`, or
    /// `None` when neither the protected list nor a hidden path stands in the way.
    pub fn refuse(&mut self, cwd: &Path, access: Access, path: &str) -> Option<String> {
        let full = cwd.join(path);
        let lands = landings(&full);
        for l in &lands {
            if let Some(h) = self
                .hidden
                .iter()
                .find(|h| is_within(l, h) || (access == Access::Tree && is_within(h, l)))
            {
                return Some(format!(
                    "denied (hidden, stage file_tool): {} reaches {}, which the guard's [exec] hide keeps from every command and from the agent's file tools",
                    full.display(),
                    h.display()
                ));
            }
        }
        if access == Access::Write {
            // A file with another name elsewhere (a hard link: pnpm's store, a copy made
            // with `cp -l`) is written under every name at once, wherever it lies.
            use std::os::unix::fs::MetadataExt;
            if let Ok(m) = std::fs::metadata(&lands[0]) {
                if m.is_file() && m.nlink() > 1 {
                    return Some(format!(
                        "denied (linked, stage file_tool): {} has {} names (hard links), and a write through one changes the file under every name, which may lie outside the workspace or where the fence keeps it read-only; copy it to a new file first",
                        full.display(),
                        m.nlink()
                    ));
                }
            }
            let list = self.protected();
            if let Some(l) = lands.iter().find(|l| covers(list, l)) {
                return Some(format!(
                    "denied (protected, stage file_tool): {} lands on {}, which the fence keeps read-only (git's hooks and configuration, the hook managers' files, the agents' and Gatehouse's own configuration: what runs on the host next); no safety mode lets a file tool write it: edit it yourself outside the agent",
                    full.display(),
                    l.display()
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_and_a_missing_name_land_where_the_kernel_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(".git/hooks/pre-commit", ws.join("lint.sh")).unwrap();
        let mut r = Reach::new(std::slice::from_ref(&ws), &[ws.join("secret")], None);
        for p in [
            "lint.sh",
            ".git/hooks/pre-commit",
            ".git/config",
            "sub/../.git/x",
            ".gatehouse/new",
        ] {
            assert!(r.refuse(&ws, Access::Write, p).is_some(), "{p}");
            assert!(r.refuse(&ws, Access::Read, p).is_none(), "{p}");
        }
        assert!(r.refuse(&ws, Access::Write, "src/main.rs").is_none());
        assert!(r.refuse(&ws, Access::Read, "secret/key").is_some());
        assert!(r.refuse(&ws, Access::Tree, ".").is_some());
        assert!(r.refuse(&ws, Access::Tree, "src").is_none());
    }
}
