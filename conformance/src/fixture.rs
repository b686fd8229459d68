//! The on-disk fixture of one session: a fresh temporary directory `R` (canonicalized, so
//! no path holds a symlink) with `R/workspace`, `R/outside` and `R/home`, the scenario's
//! trees built inside them, and the placeholder substitution `@WORKSPACE@`, `@OUTSIDE@`,
//! `@HOME@`. It touches nothing outside `R`.

use std::io;
use std::path::{Path, PathBuf};

use crate::scenario::{Fixture, Tree};

/// A built fixture; the directory is removed when it is dropped.
#[derive(Debug)]
pub struct Built {
    _dir: tempfile::TempDir,
    /// The substitution for this session.
    pub paths: Placeholders,
}

/// The three absolute paths of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholders {
    /// `R/workspace`.
    pub workspace: PathBuf,
    /// `R/outside`.
    pub outside: PathBuf,
    /// `R/home`.
    pub home: PathBuf,
}

impl Placeholders {
    /// `s` with every placeholder replaced by its absolute path.
    pub fn apply(&self, s: &str) -> String {
        s.replace("@WORKSPACE@", &self.workspace.to_string_lossy())
            .replace("@OUTSIDE@", &self.outside.to_string_lossy())
            .replace("@HOME@", &self.home.to_string_lossy())
    }
}

/// Builds `fixture` in a fresh temporary directory.
pub fn build(fixture: &Fixture) -> io::Result<Built> {
    let dir = tempfile::Builder::new().prefix("gh-").tempdir()?;
    let root = dir.path().canonicalize()?;
    let paths = Placeholders {
        workspace: root.join("workspace"),
        outside: root.join("outside"),
        home: root.join("home"),
    };
    for (base, tree) in [
        (&paths.workspace, fixture.workspace()),
        (&paths.outside, fixture.outside.clone()),
        (&paths.home, fixture.home.clone()),
    ] {
        std::fs::create_dir_all(base)?;
        build_tree(base, &tree, &paths)?;
    }
    Ok(Built { _dir: dir, paths })
}

fn build_tree(base: &Path, tree: &Tree, paths: &Placeholders) -> io::Result<()> {
    for d in &tree.dirs {
        std::fs::create_dir_all(base.join(d))?;
    }
    for (file, contents) in &tree.files {
        let path = base.join(file);
        create_parent(&path)?;
        std::fs::write(&path, contents)?;
    }
    for (link, target) in &tree.symlinks {
        let path = base.join(link);
        create_parent(&path)?;
        symlink(&paths.apply(target), &path)?;
    }
    Ok(())
}

fn create_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn symlink(target: &str, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &str, link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "cannot create symlink {}: not supported on this host",
            link.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_substituted() {
        let p = Placeholders {
            workspace: "/r/workspace".into(),
            outside: "/r/outside".into(),
            home: "/r/home".into(),
        };
        assert_eq!(
            p.apply("cat @OUTSIDE@/x @HOME@/.ssh/k > @WORKSPACE@/y @WORKSPACE@"),
            "cat /r/outside/x /r/home/.ssh/k > /r/workspace/y /r/workspace"
        );
        assert_eq!(p.apply("$HOME {home} @home@"), "$HOME {home} @home@");
    }

    #[test]
    fn builds_trees_and_links() {
        let mut f = Fixture::default();
        f.dirs.push("sub/deeper".into());
        f.files.insert("a/b/notes.txt".into(), "hello\n".into());
        f.symlinks
            .insert("out".into(), "@OUTSIDE@/secret.txt".into());
        f.outside
            .files
            .insert("secret.txt".into(), "not yours\n".into());
        f.home
            .files
            .insert(".ssh/id_ed25519".into(), "FAKE KEY\n".into());
        let built = build(&f).expect("fixture");
        let p = &built.paths;
        assert!(p.workspace.join("sub/deeper").is_dir());
        assert_eq!(
            std::fs::read_to_string(p.workspace.join("a/b/notes.txt")).unwrap(),
            "hello\n"
        );
        assert_eq!(
            std::fs::read_link(p.workspace.join("out")).unwrap(),
            p.outside.join("secret.txt")
        );
        assert_eq!(
            std::fs::read_to_string(p.workspace.join("out")).unwrap(),
            "not yours\n"
        );
        assert!(p.home.join(".ssh/id_ed25519").is_file());
        assert_eq!(p.workspace.canonicalize().unwrap(), p.workspace);
        let root = p.workspace.parent().unwrap().to_path_buf();
        drop(built);
        assert!(!root.exists());
    }
}
