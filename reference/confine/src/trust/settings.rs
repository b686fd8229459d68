//! Directories named in settings (`permissions.additionalDirectories`): each is put as
//! its own question showing the path the name resolved to (opening a directory follows
//! links, so the box shows where it leads), a name that cannot be opened is reported
//! instead of asked about, and a directory two layers name is asked once. A settings
//! file grants nothing by itself; an accepted question goes through
//! [`TrustMap::settings_dir_yes`].

use std::path::{Path, PathBuf};

use super::TrustMap;
use crate::paths::{is_within, PathError};

/// One question to put at session start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsQuestion {
    /// The canonical directory the name(s) resolved to: what the box shows.
    pub resolved: PathBuf,
    /// Every name (as written) that resolved here, in layer order.
    pub names: Vec<String>,
}

/// The questions and the names that could not be opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsQuestions {
    /// One per distinct directory, first-named first.
    pub ask: Vec<SettingsQuestion>,
    /// `(name as written, code)` for names that cannot be opened as `/add-dir` would
    /// open them (TRUST-SET-2): a path code (`not_found`, `not_directory`, `loop`, ...),
    /// `inside_project` or `holds_project`. These are reported, never asked about.
    pub unopenable: Vec<(String, &'static str)>,
}

/// Resolves one settings name (TRUST-SET-5): `~/` from `home`, relative names from
/// `workdir`, links followed; must be a directory. Errors are path codes.
pub fn resolve_name(
    name: &str,
    home: Option<&Path>,
    workdir: &Path,
) -> Result<PathBuf, &'static str> {
    let spelled = match (name.strip_prefix("~/"), name == "~", home) {
        (Some(rest), _, Some(h)) => h.join(rest),
        (None, true, Some(h)) => h.to_path_buf(),
        (Some(_), _, None) | (None, true, None) => return Err("not_found"),
        _ => workdir.join(name),
    };
    let resolved = std::fs::canonicalize(&spelled)
        .map_err(|e| PathError::from_io(e, "canonicalize", name).code())?;
    if !resolved.is_dir() {
        return Err("not_directory");
    }
    Ok(resolved)
}

impl TrustMap {
    /// Builds the session-start questions for settings-named directories, in layer
    /// order. A resumed session is asked none of these.
    pub fn settings_questions(&self, names: &[String], home: Option<&Path>) -> SettingsQuestions {
        let mut out = SettingsQuestions::default();
        for name in names {
            match resolve_name(name, home, &self.workdir) {
                Ok(resolved) if is_within(&resolved, &self.workdir) => {
                    out.unopenable.push((name.clone(), "inside_project"))
                }
                Ok(resolved) if is_within(&self.workdir, &resolved) => {
                    out.unopenable.push((name.clone(), "holds_project"))
                }
                Ok(resolved) => match out.ask.iter_mut().find(|q| q.resolved == resolved) {
                    Some(q) => q.names.push(name.clone()),
                    None => out.ask.push(SettingsQuestion {
                        resolved,
                        names: vec![name.clone()],
                    }),
                },
                Err(why) => out.unopenable.push((name.clone(), why)),
            }
        }
        out
    }
}
