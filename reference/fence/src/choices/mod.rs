//! The person's choices for working in the fence (`spec/execution-plane.md` section 15,
//! FENCE-CONF-1 to -3): the jail's network mode and allowed domains, variables passed or
//! set, extra read-only, writable and hidden paths. They come from two TOML files, the
//! user's
//! (`$XDG_CONFIG_HOME/gatehouse/config.toml`, else `~/.config/gatehouse/config.toml`) and
//! the project's (`<project>/.gatehouse/config.toml`, a protected path: jailed code can
//! never change it), and from the command line of `gatehouse exec`, which wins. Strict (an
//! unknown key is an error naming file, line and key), and every choice keeps where it
//! came from, for `gatehouse info`.
//!
//! Why this is not `gatehouse::config`: that module reads the two YAML files of the
//! permissions and hooks (the agent file and the person's settings file), whose shape the
//! seed fixes and which the adapter loads per session to decide what a tool call may do;
//! these TOML files are the person's own defaults for `gatehouse exec` at a terminal and
//! decide only what the jail of one command looks like. Neither reads the other's files.
//!
//! - [`table`]: the one table of the choices, which every surface below loops over;
//! - [`file`](mod@file): one file, parsed strictly, values with their lines;
//! - [`layers`]: the layers (files, command line) merged, with provenance;
//! - [`flags`]: the flags (the command line's or the protocol's) checked into a layer;
//! - [`name`]: a variable name, checked once for every layer (FENCE-ENV-11);
//! - [`load`]: finding the files and merging them with the command line.
//!
//! May touch: reads the two files; nothing else.

pub mod file;
pub mod flags;
pub mod layers;
pub mod name;
pub mod table;
pub mod value;

use std::path::{Path, PathBuf};

pub use file::FileError;
pub use flags::{FlagError, Flags, Raw};
pub use layers::{
    Choices, Chosen, FileKind, Layer, ModeError, NetworkMode, Source, Sourced, UnknownNetworkMode,
};
pub use name::{EnvName, EnvNameError, EnvValueError};

/// The choices of a session that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file that cannot be read or holds a mistake (it names file, line and key).
    #[error(transparent)]
    File(#[from] FileError),
    /// A network mode the other choices contradict.
    #[error(transparent)]
    Mode(#[from] ModeError),
}

/// The project file, relative to the project root.
pub const PROJECT_FILE: &str = ".gatehouse/config.toml";

/// The user's file: `$XDG_CONFIG_HOME/gatehouse/config.toml`, else
/// `$HOME/.config/gatehouse/config.toml`.
pub fn user_file(xdg_config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    match (xdg_config_home.filter(|p| p.is_absolute()), home) {
        (Some(x), _) => Some(x.join("gatehouse/config.toml")),
        (None, Some(h)) => Some(h.join(".config/gatehouse/config.toml")),
        (None, None) => None,
    }
}

/// Everything [`load`] needs from outside, so tests control it.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    /// The user's file (None: there is none).
    pub user_file: Option<PathBuf>,
    /// The project root (its `.gatehouse/config.toml` is the project file).
    pub project: &'a Path,
    /// The person's home, for `~/`.
    pub home: Option<&'a Path>,
    /// `--trust-project-config`.
    pub trust_project: bool,
    /// `--no-config`: read no file at all.
    pub no_files: bool,
}

/// Read the files, merge them with `flags`, and check the result.
pub fn load(inputs: &Inputs<'_>, flags: &Layer) -> Result<Choices, LoadError> {
    let mut s = Choices::default();
    let mut trusted = inputs.trust_project;
    if !inputs.no_files {
        if let Some(uf) = &inputs.user_file {
            if let Some(p) = user_file_parsed(uf, &mut s)? {
                let layer = Layer::from_file(&p, FileKind::User, inputs.home, inputs.project)?;
                let project = std::fs::canonicalize(inputs.project).ok();
                for t in &p.config.trusted_projects {
                    let tp = PathBuf::from(t.get_ref());
                    if !tp.is_absolute() {
                        return Err(p
                            .invalid(
                                t,
                                format!("trusted-projects: `{}` is not absolute", t.get_ref()),
                            )
                            .into());
                    }
                    if project.is_some() && std::fs::canonicalize(&tp).ok() == project {
                        trusted = true;
                    }
                }
                s.apply(&layer);
                s.files.push((uf.clone(), None));
            }
        }
        let pf = inputs.project.join(PROJECT_FILE);
        // An empty file `.gatehouse` is the placeholder a running jail of this root mounts
        // over (FENCE-PROTECT-12): no configuration, not an error. Any other `.gatehouse`
        // that is not a directory still fails to load, with its reason.
        let placeholder = std::fs::symlink_metadata(inputs.project.join(".gatehouse"))
            .map(|m| m.is_file() && m.len() == 0)
            .unwrap_or(false);
        if placeholder {
            // Nothing to read and nothing to say.
        } else if trusted {
            if let Some(p) = file::load(&pf)? {
                let layer = Layer::from_file(&p, FileKind::Project, inputs.home, inputs.project)?;
                s.apply(&layer);
                s.files.push((pf, None));
            }
        } else if pf.exists() {
            s.files.push((
                pf,
                Some("the project is not trusted (add it to trusted-projects in the user's file, or --trust-project-config)".into()),
            ));
        }
    }
    s.apply(flags);
    Ok(s.finish()?)
}

/// The user's file, parsed; `None` when there is none, or when it cannot be read by this
/// user at all (`$HOME` belongs to someone else: a command run as another uid with the
/// caller's `HOME`), which is passed over and said in the provenance, as git passes over
/// its own files under an inaccessible `$HOME` (`ACCESS_EACCES_OK` in git's `config.c`).
/// Passing over can only narrow: the user's file is where projects are trusted.
fn user_file_parsed(uf: &Path, s: &mut Choices) -> Result<Option<file::Parsed>, FileError> {
    match file::load(uf) {
        Ok(p) => Ok(p),
        Err(FileError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            s.files.push((
                uf.to_path_buf(),
                Some(format!("cannot be read by this user ({source})")),
            ));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new(user: Option<&str>, project: Option<&str>) -> Tree {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("p/.gatehouse")).unwrap();
            if let Some(u) = user {
                std::fs::write(dir.path().join("user.toml"), u).unwrap();
            }
            if let Some(p) = project {
                std::fs::write(dir.path().join("p").join(PROJECT_FILE), p).unwrap();
            }
            Tree { dir }
        }
        fn load(&self, trust: bool, flags: &Layer) -> Result<Choices, LoadError> {
            let project = self.dir.path().join("p");
            let home = self.dir.path().join("home");
            load(
                &Inputs {
                    user_file: Some(self.dir.path().join("user.toml")),
                    project: &project,
                    home: Some(&home),
                    trust_project: trust,
                    no_files: false,
                },
                flags,
            )
        }
    }

    #[test]
    fn flags_win_and_every_setting_says_where_it_came_from() {
        let t = Tree::new(
            Some("[network]\nmode = \"host\"\n[env]\npass = [\"EDITOR\"]\n"),
            None,
        );
        let flags = Layer {
            network: Some(Sourced::new(NetworkMode::Off, Source::Flag("network"))),
            ..Layer::default()
        };
        let s = t.load(false, &flags).unwrap();
        assert_eq!(s.network.value, NetworkMode::Off);
        assert_eq!(s.network.source, Source::Flag("network"));
        assert_eq!(s.pass_env[0].value, "EDITOR");
        assert!(s.pass_env[0].source.to_string().ends_with("user.toml:4"));
    }

    #[test]
    fn an_untrusted_project_file_is_ignored_and_says_so() {
        let t = Tree::new(None, Some("[network]\nallow-domains = [\"evil.net\"]\n"));
        let s = t.load(false, &Layer::default()).unwrap();
        assert_eq!(s.network.value, NetworkMode::Off);
        assert!(s
            .provenance()
            .iter()
            .any(|l| l.starts_with("ignored ") && l.contains("not trusted")));
    }

    #[test]
    fn a_trusted_project_file_adds_domains_and_relative_paths() {
        let t = Tree::new(
            None,
            Some("[network]\nallow-domains = [\"registry.npmjs.org\"]\n[paths]\nread-only = [\"vendor\"]\n"),
        );
        let s = t.load(true, &Layer::default()).unwrap();
        assert_eq!(s.network.value, NetworkMode::AllowList);
        assert_eq!(s.read_only[0].value, t.dir.path().join("p/vendor"));
        assert!(s.read_only[0]
            .source
            .to_string()
            .ends_with(".gatehouse/config.toml:4"));
    }

    #[test]
    fn trusted_projects_in_the_user_file_trust_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        std::fs::create_dir_all(p.join(".gatehouse")).unwrap();
        std::fs::write(p.join(PROJECT_FILE), "[env]\npass = [\"EDITOR\"]\n").unwrap();
        let uf = dir.path().join("u.toml");
        std::fs::write(
            &uf,
            format!("trusted-projects = [{:?}]\n", p.display().to_string()),
        )
        .unwrap();
        let s = load(
            &Inputs {
                user_file: Some(uf),
                project: &p,
                home: None,
                trust_project: false,
                no_files: false,
            },
            &Layer::default(),
        )
        .unwrap();
        assert_eq!(s.pass_env[0].value, "EDITOR");
    }

    #[test]
    fn a_project_cannot_ask_for_secrets() {
        let t = Tree::new(
            None,
            Some("[env]\npass-secrets = [\"AWS_SECRET_ACCESS_KEY\"]\n"),
        );
        let e = t.load(true, &Layer::default()).unwrap_err().to_string();
        assert!(
            e.contains(".gatehouse/config.toml:2:") && e.contains("cannot ask"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_key_in_the_project_file_names_file_line_and_key() {
        let t = Tree::new(None, Some("[paths]\nreadonly = [\"x\"]\n"));
        let e = t.load(true, &Layer::default()).unwrap_err().to_string();
        assert!(
            e.contains(".gatehouse/config.toml:2: unknown field `readonly`"),
            "{e}"
        );
    }

    #[test]
    fn a_relative_path_in_the_user_file_is_refused() {
        let t = Tree::new(Some("[paths]\nhidden = [\"secrets\"]\n"), None);
        let e = t.load(false, &Layer::default()).unwrap_err().to_string();
        assert!(e.contains("user.toml:2:") && e.contains("absolute"), "{e}");
    }

    #[test]
    fn allow_list_mode_without_domains_and_host_with_domains_are_refused() {
        let t = Tree::new(Some("[network]\nmode = \"allow-list\"\n"), None);
        assert!(t
            .load(false, &Layer::default())
            .unwrap_err()
            .to_string()
            .contains("no allowed domain"));
        let t = Tree::new(
            Some("[network]\nmode = \"host\"\nallow-domains = [\"a.org\"]\n"),
            None,
        );
        assert!(t
            .load(false, &Layer::default())
            .unwrap_err()
            .to_string()
            .contains("conflicts"));
    }

    #[test]
    fn a_bad_domain_in_a_file_names_its_line() {
        let t = Tree::new(
            Some("[network]\nallow-domains = [\n \"ok.org\",\n \"*\",\n]\n"),
            None,
        );
        let e = t.load(false, &Layer::default()).unwrap_err().to_string();
        assert!(e.contains("user.toml:4:"), "{e}");
    }

    #[test]
    fn the_xdg_file_wins_over_home() {
        assert_eq!(
            user_file(Some(Path::new("/x")), Some(Path::new("/h"))),
            Some(PathBuf::from("/x/gatehouse/config.toml"))
        );
        assert_eq!(
            user_file(Some(Path::new("rel")), Some(Path::new("/h"))),
            Some(PathBuf::from("/h/.config/gatehouse/config.toml"))
        );
    }
}
