//! Finding things on disk: the scenarios and spec directories (current directory first,
//! then the workspace this runner was built from) and the reference `gatehouse` binary.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::protocol::client::ImplCommand;

/// The workspace root this crate was built in.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `given` if set (it must exist), else `name` in the current directory, else in the
/// workspace root.
pub fn dir(given: Option<&Path>, name: &'static str, flag: &'static str) -> Result<PathBuf, Error> {
    if let Some(p) = given {
        return if p.is_dir() {
            Ok(p.to_path_buf())
        } else {
            Err(Error::NoSuchDir {
                flag,
                path: p.to_path_buf(),
            })
        };
    }
    let here = PathBuf::from(name);
    if here.is_dir() {
        return Ok(here);
    }
    let root = workspace_root().join(name);
    if root.is_dir() {
        return Ok(root.canonicalize().unwrap_or(root));
    }
    Err(Error::DirNotFound { name, flag })
}

/// The reference implementation's adapter: `gatehouse adapter`, the binary this runner's
/// workspace builds beside it (in `target/<profile>/`), else the one next to this
/// runner's own executable, else the one on `PATH`.
pub fn reference() -> Result<ImplCommand, Error> {
    let exe = format!("gatehouse{}", std::env::consts::EXE_SUFFIX);
    let own = std::env::current_exe().ok();
    let built = match &own {
        Some(own) => build_reference_beside(own)?,
        None => None,
    };
    let beside = built.or_else(|| own.and_then(|p| p.parent().map(|d| d.join(&exe))));
    let on_path = || {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(&exe))
                .find(|p| p.is_file())
        })
    };
    match beside.filter(|p| p.is_file()).or_else(on_path) {
        Some(path) => Ok(ImplCommand::Argv(vec![
            path.to_string_lossy().into_owned(),
            "adapter".into(),
        ])),
        None => Err(Error::NoReference),
    }
}

/// When this runner was itself built from the source workspace (its executable lives in
/// the workspace's `target/<profile>/`, or it was started by `cargo run`, which also
/// covers a `CARGO_TARGET_DIR` elsewhere), build the reference into the same target
/// directory and profile first, so that `cargo run -p gatehouse-conformance -- run` never
/// tests a stale or missing `gatehouse`. Cargo's own progress goes to stderr, so that a
/// first build is not a silent wait. Installed runners skip this and look it up.
/// Returns the binary built, `None` when nothing was built.
fn build_reference_beside(own_exe: &Path) -> Result<Option<PathBuf>, Error> {
    let root = match workspace_root().canonicalize() {
        Ok(root) => root,
        Err(_) => return Ok(None),
    };
    let Some(profile_dir) = own_exe.parent() else {
        return Ok(None);
    };
    let Some(target_dir) = profile_dir.parent() else {
        return Ok(None);
    };
    let started_by_cargo = std::env::var_os("CARGO").is_some();
    let in_workspace_target = target_dir == root.join("target");
    if !(started_by_cargo || in_workspace_target)
        || !root.join("reference").join("Cargo.toml").is_file()
    {
        return Ok(None);
    }
    let Some(dir_name) = profile_dir.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let profile = match dir_name {
        "debug" => "dev",
        other => other,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build
        .args(["build", "-p", "gatehouse", "--profile", profile])
        .arg("--target-dir")
        .arg(target_dir);
    // Built as the runner itself was, in its target directory and profile, so that the two
    // share every dependency they have in common and a fresh clone compiles each once:
    // the first result of the README's first command comes that much sooner. The static,
    // whole-program-LTO binary to install (`cargo build-static`) runs the same code; CI
    // certifies that one by naming it with --impl (.ci/run).
    let binary = profile_dir.join(format!("gatehouse{}", std::env::consts::EXE_SUFFIX));
    let status = build
        .current_dir(&root)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|source| Error::CargoSpawn {
            workspace: root.clone(),
            source,
        })?;
    if status.success() {
        Ok(Some(binary))
    } else {
        Err(Error::Build(status))
    }
}
