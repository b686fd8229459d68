//! The path jail (GATE-JAIL-1 to -6): whether every path argument of a read command
//! resolves inside the working directory.
//!
//! It reads the real filesystem, and only reads it: one `readlink` per component of the
//! arguments it checks, and, when a [`Jail`] is built, one `canonicalize` of the working
//! directory and one `O_PATH` descriptor on it. It never opens, creates or changes a file, and it never
//! expands a glob or a `~`.

use super::flags::ends_options;
use super::words::Word;
use rustix::fd::OwnedFd;
use rustix::fs::{open, readlinkat_raw, Mode, OFlags, CWD};
use rustix::io::Errno;
use std::borrow::Cow;
use std::ffi::OsString;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most symbolic links one resolution follows, as Linux does (`MAXSYMLINKS`).
pub const MAX_SYMLINKS: usize = 40;

/// Why the jail refuses a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JailRefusal {
    /// A word holds an unquoted glob character: the gate cannot check what it names.
    Glob,
    /// A path argument resolves outside the working directory, or cannot be resolved.
    Outside,
}

/// Building a jail failed: the working directory cannot be resolved.
#[derive(Debug, thiserror::Error)]
#[error("cannot resolve the working directory {path}: {source}")]
pub struct JailError {
    /// The working directory as given.
    pub path: PathBuf,
    /// What the filesystem said.
    #[source]
    pub source: io::Error,
}

/// The path jail of one working directory, resolved once.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
    /// The working directory, opened `O_PATH` once: lookups under it start from here.
    root_fd: Arc<OwnedFd>,
}

/// One step of a resolution still to walk: a name, or `..`.
enum Step<'a> {
    Parent,
    Name(Cow<'a, [u8]>),
}

/// Pushes the steps of `path` onto `stack` so that they pop in order (`.` and empty
/// components are dropped, as the kernel does).
fn push_steps<'a>(stack: &mut Vec<Step<'a>>, path: &'a [u8]) {
    for part in path.split(|&b| b == b'/').rev() {
        match part {
            b"" | b"." => {}
            b".." => stack.push(Step::Parent),
            name => stack.push(Step::Name(Cow::Borrowed(name))),
        }
    }
}

/// Drops the last component of an absolute path held as bytes (`/` stays `/`).
fn pop(path: &mut Vec<u8>) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) | None => path.truncate(1),
        Some(i) => path.truncate(i),
    }
}

/// How the workspace handle is opened: `O_PATH` where it exists (Linux), which needs no
/// read permission on the directory; a plain read-only open elsewhere (macOS).
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIR_HANDLE: OFlags = OFlags::PATH;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIR_HANDLE: OFlags = OFlags::RDONLY;

impl Jail {
    /// Resolves `workspace` physically (following every link) and builds its jail.
    pub fn new(workspace: &Path) -> Result<Self, JailError> {
        let fail = |source: io::Error| JailError {
            path: workspace.to_path_buf(),
            source,
        };
        let root = workspace.canonicalize().map_err(fail)?;
        let flags = DIR_HANDLE | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root_fd = open(&root, flags, Mode::empty()).map_err(|e| fail(e.into()))?;
        Ok(Jail {
            root,
            root_fd: Arc::new(root_fd),
        })
    }

    /// The working directory, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `arg` the way the kernel would (GATE-JAIL-2, -3, -5): relative to the
    /// working directory, component by component, following symbolic links (a link's
    /// target replaces it, so `..` after a link climbs from the target), with at most
    /// [`MAX_SYMLINKS`] links; a component that does not exist is appended as written and
    /// the walk goes on. `None` when the path cannot be resolved (a loop, too many links,
    /// an unreadable link or directory).
    ///
    /// Each component costs one `readlink`: it tells a link (and its target) from a
    /// non-link (`EINVAL`) from a missing name (`ENOENT`, `ENOTDIR`) in one system call.
    pub fn resolve(&self, arg: &str) -> Option<PathBuf> {
        let arg = arg.as_bytes();
        let mut current: Vec<u8> = if arg.first() == Some(&b'/') {
            b"/".to_vec()
        } else {
            self.root.as_os_str().as_bytes().to_vec()
        };
        let mut stack: Vec<Step<'_>> = Vec::new();
        push_steps(&mut stack, arg);
        let mut links = 0usize;
        let root = self.root.as_os_str().as_bytes();
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        while let Some(step) = stack.pop() {
            let name = match step {
                Step::Parent => {
                    pop(&mut current);
                    continue;
                }
                Step::Name(name) => name,
            };
            if current.last() != Some(&b'/') {
                current.push(b'/');
            }
            current.extend_from_slice(&name);
            let probe = match current.strip_prefix(root) {
                // Under the working directory: resolve relative to its descriptor, which
                // spares the kernel the walk down to it.
                Some([b'/', rest @ ..]) => readlinkat_raw(&*self.root_fd, rest, &mut buf),
                _ => readlinkat_raw(CWD, current.as_slice(), &mut buf),
            };
            match probe {
                Ok((target, rest)) => {
                    if rest.is_empty() {
                        return None; // a target as long as the buffer may be cut short
                    }
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return None;
                    }
                    pop(&mut current);
                    if target.first() == Some(&b'/') {
                        current.truncate(0);
                        current.push(b'/');
                    }
                    for part in target.split(|&b| b == b'/').rev() {
                        match part {
                            b"" | b"." => {}
                            b".." => stack.push(Step::Parent),
                            n => stack.push(Step::Name(Cow::Owned(n.to_vec()))),
                        }
                    }
                }
                // Exists and is not a link.
                Err(Errno::INVAL) => {}
                // Names nothing yet: judged by the existing part, the rest as written.
                Err(Errno::NOENT | Errno::NOTDIR) => {}
                // Anything else (permission denied, a name too long, ...) hides whether
                // it is a link.
                Err(_) => return None,
            }
        }
        Some(PathBuf::from(OsString::from_vec(current)))
    }

    /// Whether the resolved `path` is the working directory or under it by whole
    /// components (GATE-JAIL-6).
    fn is_under_root(&self, path: &[u8]) -> bool {
        let root = self.root.as_os_str().as_bytes();
        if root == b"/" {
            return true;
        }
        path.starts_with(root) && (path.len() == root.len() || path[root.len()] == b'/')
    }

    /// Whether `arg`, taken literally, resolves inside the working directory: equal to it
    /// or under it by whole components (GATE-JAIL-6). An unresolvable path is outside
    /// (GATE-JAIL-5). (A leading unquoted `~` is the caller's business: see
    /// [`Jail::check`].)
    pub fn contains(&self, arg: &str) -> bool {
        match self.resolve(arg) {
            Some(resolved) => self.is_under_root(resolved.as_os_str().as_bytes()),
            None => false,
        }
    }

    /// Checks the words of a read command's line (`words[0]` is the command): first that
    /// no word holds an unquoted glob (GATE-META-3), then that every path argument
    /// resolves inside (GATE-JAIL-1). An operand beginning with an unquoted `~` is a home
    /// directory: outside (GATE-META-4).
    pub fn check(&self, words: &[Word<'_>]) -> Result<(), JailRefusal> {
        if words.iter().any(|w| w.glob) {
            return Err(JailRefusal::Glob);
        }
        let mut operands_only = false;
        let mut previous: Option<&str> = None;
        for word in words.iter().skip(1) {
            let text = word.as_str();
            if !operands_only && text == "--" && ends_options(previous) {
                operands_only = true;
                continue;
            }
            previous = Some(text);
            if operands_only || !text.starts_with('-') {
                if word.tilde || !self.contains(text) {
                    return Err(JailRefusal::Outside);
                }
                continue;
            }
            if text == "-" {
                continue; // standard input
            }
            // A `~` after `=` may be expanded by the shell too; whether it was quoted is
            // not tracked there, so any leading `~` in an option's value counts.
            if !option_paths(text).all(|p| !p.starts_with('~') && self.contains(p)) {
                return Err(JailRefusal::Outside);
            }
        }
        Ok(())
    }
}

/// The texts inside an option word that the jail checks as paths (GATE-JAIL-1, -7): the
/// value after its first `=`; and for a single-dash word, every text that could be the
/// value attached to one of its letters: from each position after the first letter up to
/// and including the first character that is not an ASCII letter or digit (`-flnk` gives
/// `lnk`, `nk`, `k`; `-T..` gives `..`; `-rf/etc/passwd` gives `f/etc/passwd` and
/// `/etc/passwd`).
///
/// **Choice:** the gate does not know which letters take a value, nor where a cluster of
/// letters ends and an attached value begins, so it checks every reading a parser could
/// make: an option letter is a letter or a digit, so the value starts at the latest at the
/// first character that is neither. A value needs no `/` to leave the working directory:
/// `lnk` may be a link out of it and `..` is its parent.
fn option_paths(word: &str) -> impl Iterator<Item = &str> {
    let after_eq = word.split_once('=').map(|(_, value)| value);
    let bytes = word.as_bytes();
    let single = bytes.len() > 2 && bytes[0] == b'-' && bytes[1] != b'-';
    let last = if single {
        bytes[1..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len() - 1, |i| i + 1)
    } else {
        0
    };
    let attached = (2..=last).filter_map(move |p| word.get(p..).filter(|v| !v.is_empty()));
    after_eq.into_iter().chain(attached)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::read_words;
    use rstest::{fixture, rstest};
    use std::fs;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

    /// `R/ws` holding `notes.txt`, `sub/`, links in and out; `R/outside/secret.txt`;
    /// `R/ws_evil/x` beside it.
    struct Fixture {
        _dir: TempDir,
        root: PathBuf,
        jail: Jail,
    }

    #[fixture]
    fn fx() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        fs::create_dir_all(ws.join("sub/deeper")).unwrap();
        fs::write(ws.join("notes.txt"), "hello\n").unwrap();
        fs::write(ws.join("sub/inner.txt"), "x\n").unwrap();
        fs::create_dir_all(root.join("outside")).unwrap();
        fs::write(root.join("outside/secret.txt"), "no\n").unwrap();
        fs::create_dir_all(root.join("ws_evil")).unwrap();
        fs::write(root.join("ws_evil/x"), "evil\n").unwrap();
        symlink(root.join("outside/secret.txt"), ws.join("out")).unwrap();
        symlink(root.join("outside"), ws.join("outdir")).unwrap();
        symlink("notes.txt", ws.join("in")).unwrap();
        symlink("sub/deeper", ws.join("deep")).unwrap();
        symlink("loop_b", ws.join("loop_a")).unwrap();
        symlink("loop_a", ws.join("loop_b")).unwrap();
        symlink(&ws, root.join("outside/back")).unwrap();
        let jail = Jail::new(&ws).unwrap();
        Fixture {
            _dir: dir,
            root,
            jail,
        }
    }

    #[rstest]
    #[case("notes.txt", true)]
    #[case("./notes.txt", true)]
    #[case(".", true)]
    #[case("", true)]
    #[case("sub", true)]
    #[case("sub/", true)]
    #[case("sub/inner.txt", true)]
    #[case("sub/../notes.txt", true)]
    #[case("sub/deeper/../../notes.txt", true)]
    #[case("newdir", true)]
    #[case("newdir/a/b", true)]
    #[case("in", true)]
    #[case("deep/..", true)] // climbs from sub/deeper to sub
    #[case("deep/../..", true)] // sub -> ws
    #[case("deep/../../..", false)] // ws -> its parent
    #[case("..", false)]
    #[case("../ws_evil/x", false)]
    #[case("../ws/notes.txt", true)]
    #[case("/etc", false)]
    #[case("/etc/passwd", false)]
    #[case("/", false)]
    #[case("out", false)]
    #[case("outdir", false)]
    #[case("outdir/secret.txt", false)]
    #[case("outdir/..", false)] // `..` after the link climbs from the target
    #[case("outdir/back/notes.txt", true)] // out and back in through a link
    #[case("loop_a", false)]
    #[case("loop_a/x", false)]
    #[case("newdir/../../x", false)]
    #[case("notes.txt/x", true)]
    #[case("~", true)] // literally a folder named `~`; the unquoted case is check's
    fn relative_paths(fx: Fixture, #[case] arg: &str, #[case] inside: bool) {
        assert_eq!(fx.jail.contains(arg), inside, "{arg}");
    }

    #[rstest]
    fn absolute_paths(fx: Fixture) {
        let ws = fx.root.join("ws");
        assert!(fx.jail.contains(ws.to_str().unwrap()));
        assert!(fx.jail.contains(ws.join("notes.txt").to_str().unwrap()));
        assert!(!fx.jail.contains(fx.root.join("ws_evil").to_str().unwrap()));
        assert!(!fx
            .jail
            .contains(fx.root.join("ws_evil/x").to_str().unwrap()));
        assert!(fx
            .jail
            .contains(fx.root.join("outside/back").to_str().unwrap()));
        assert!(!fx.jail.contains(fx.root.join("outside").to_str().unwrap()));
    }

    #[rstest]
    fn a_workspace_reached_through_a_link_is_resolved(fx: Fixture) {
        let jail = Jail::new(&fx.root.join("outside/back")).unwrap();
        assert_eq!(jail.root(), fx.root.join("ws"));
        assert!(jail.contains("notes.txt"));
        assert!(!jail.contains("../ws_evil"));
    }

    #[test]
    fn a_missing_workspace_is_an_error() {
        let err = Jail::new(Path::new("/nonexistent/gatehouse/ws")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/gatehouse/ws"));
    }

    fn check(fx: &Fixture, line: &str) -> Result<(), JailRefusal> {
        fx.jail.check(&read_words(line).unwrap())
    }

    #[rstest]
    #[case("ls", Ok(()))]
    #[case("cat notes.txt", Ok(()))]
    #[case("ls -la sub", Ok(()))]
    #[case("cat -", Ok(()))]
    #[case("grep 'a*b' notes.txt", Ok(()))]
    #[case("cat '~'", Ok(()))]
    #[case("ls --color=auto", Ok(()))]
    #[case("cut -d, -f1 notes.txt", Ok(()))]
    #[case("ls /etc", Err(JailRefusal::Outside))]
    #[case("echo /etc", Err(JailRefusal::Outside))]
    #[case("cat ~/x", Err(JailRefusal::Outside))]
    #[case("grep -f/etc/passwd x", Err(JailRefusal::Outside))]
    #[case("grep -rf/etc/passwd x", Err(JailRefusal::Outside))]
    #[case("grep --file=/etc/passwd x", Err(JailRefusal::Outside))]
    #[case("grep --file=~/x x", Err(JailRefusal::Outside))]
    #[case("sort -- /etc/passwd", Err(JailRefusal::Outside))]
    #[case("cat -- -", Ok(()))]
    #[case("cat -- --file=/etc/passwd", Ok(()))] // a file literally named so, inside
    #[case("grep -e -- --file=/etc/passwd x", Err(JailRefusal::Outside))]
    #[case("grep -e -- -f/etc/passwd x", Err(JailRefusal::Outside))]
    #[case("cat *", Err(JailRefusal::Glob))]
    #[case("ls -l /etc/*", Err(JailRefusal::Glob))]
    #[case("cat out", Err(JailRefusal::Outside))]
    #[case("grep -fout x", Err(JailRefusal::Outside))]
    #[case("grep -rfout x", Err(JailRefusal::Outside))]
    #[case("sort -T.. notes.txt", Err(JailRefusal::Outside))]
    #[case("sort -S1k -T.. notes.txt", Err(JailRefusal::Outside))]
    #[case("date -fout", Err(JailRefusal::Outside))]
    #[case("grep -foutdir/secret.txt x", Err(JailRefusal::Outside))]
    #[case("grep -fnotes.txt x", Ok(()))]
    #[case("sort -Tsub notes.txt", Ok(()))]
    #[case("ls -la", Ok(()))]
    #[case("head -n5 notes.txt", Ok(()))]
    fn checks_words(fx: Fixture, #[case] line: &str, #[case] expected: Result<(), JailRefusal>) {
        assert_eq!(check(&fx, line), expected, "{line}");
    }
}
