//! What `gatehouse exec` says once per workspace rather than at every command
//! (FENCE-PROTECT-19): the nested-repositories line of the posture. The lines already said
//! are kept in the fence's directory of the user (`told`, one line each); the posture
//! itself (`gatehouse info`, the adapter's answers) keeps saying them. May touch: that file.

use std::path::{Path, PathBuf};

/// The start of the line said once ([`crate::fence::protect::hook_notes`]), which holds no
/// `; ` of its own (the separator of the posture's notes).
const ONCE: &str = "nested repositories: ";

/// `reason` (the posture's notes, joined by `; `) less the lines said once that an earlier
/// command already said; those said now are noted. Where the file cannot be kept, every
/// line is said, as before.
pub fn once(reason: &str) -> Option<String> {
    once_in(told_file().as_deref(), reason)
}

/// [`once`] with the lines already said kept in `file`.
fn once_in(file: Option<&Path>, reason: &str) -> Option<String> {
    let Some(file) = file else {
        return Some(reason.to_string());
    };
    let known = std::fs::read_to_string(file).unwrap_or_default();
    let mut fresh = Vec::new();
    let kept: Vec<&str> = reason
        .split("; ")
        .filter(|note| {
            if !note.starts_with(ONCE) {
                return true;
            }
            let line = note.replace('\n', "\\n");
            if known.lines().any(|l| l == line) {
                return false;
            }
            fresh.push(line);
            true
        })
        .collect();
    if !fresh.is_empty() {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
        {
            let _ = f.write_all(format!("{}\n", fresh.join("\n")).as_bytes());
        }
    }
    (!kept.is_empty()).then(|| kept.join("; "))
}

#[cfg(target_os = "linux")]
fn told_file() -> Option<PathBuf> {
    crate::fence::user_dir::own_dir()
        .ok()
        .map(|d| d.join("told"))
}

#[cfg(not(target_os = "linux"))]
fn told_file() -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FENCE-PROTECT-19: the nested-repositories line is said at the first command of a
    /// root, not at the next; another root's line, and every other note, each time.
    #[test]
    fn the_nested_line_is_said_once_per_root() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("told");
        let line = |w: &str| {
            crate::fence::protect::hook_notes(&[PathBuf::from(w)], None)
                .pop()
                .unwrap()
        };
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a/src/1/2/3/4")).unwrap();
        std::fs::create_dir_all(root.path().join("b/src/1/2/3/4")).unwrap();
        let a = &line(&root.path().join("a").to_string_lossy());
        let b = &line(&root.path().join("b").to_string_lossy());
        assert!(a.starts_with(ONCE) && !a.contains("; "), "{a}");
        let reason = format!("emulated: x; {a}");
        assert_eq!(once_in(Some(&file), &reason), Some(reason.clone()));
        assert_eq!(once_in(Some(&file), &reason), Some("emulated: x".into()));
        assert_eq!(once_in(Some(&file), a), None);
        assert_eq!(once_in(Some(&file), b), Some(b.to_string()));
        assert_eq!(once_in(Some(&file), &format!("{b}; x")), Some("x".into()));
        // Where nothing can be kept, every line each time.
        assert_eq!(once_in(None, a), Some(a.to_string()));
    }
}
