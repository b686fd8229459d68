//! What an implementation under test needs inside the guest: `--guest-copy` (files and
//! directories from the host, at the same relative place under `/impl`, the inner run's
//! working directory) and the check, before any boot, that the program `--impl` names is in
//! the guest. The packages themselves (`--guest-package`) are `vm-images/build.py`'s
//! business; this module only reads the image's list of paths it writes.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::error::VmError;

/// The guest's working directory for the inner run, where relative copies land.
pub const IMPL_DIR: &str = "/impl";

/// The guest init's `PATH`, searched for a bare program name.
pub const GUEST_PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// One `--guest-copy PATH[:GUEST_PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// The host's file or directory, absolute.
    pub host: PathBuf,
    /// Where it lands in the guest, absolute.
    pub guest: String,
}

/// Parses `PATH[:GUEST_PATH]`: a relative GUEST_PATH (or, without one, a relative PATH) is
/// placed under [`IMPL_DIR`]; an absolute PATH without GUEST_PATH keeps its place.
pub fn parse_copy(spec: &str, cwd: &Path) -> Result<Copy, VmError> {
    let bad = |why: String| VmError::GuestCopy {
        spec: spec.to_string(),
        why,
    };
    let (host, guest) = match spec.split_once(':') {
        Some((h, g)) => (h, Some(g)),
        None => (spec, None),
    };
    if host.is_empty() || guest.is_some_and(str::is_empty) {
        return Err(bad("give PATH or PATH:GUEST_PATH".into()));
    }
    let host_path = cwd.join(host);
    if std::fs::symlink_metadata(&host_path).is_err() {
        return Err(bad(format!("{} does not exist", host_path.display())));
    }
    let guest = guest_path(guest.unwrap_or(host)).ok_or_else(|| {
        bad("the guest path may not climb with `..` or be the guest's root".into())
    })?;
    Ok(Copy {
        host: host_path,
        guest,
    })
}

/// Where `path` (as the --impl or a copy names it) is in the guest: absolute as it is,
/// relative under [`IMPL_DIR`]; `.` removed; `None` for `..` or the root itself.
pub fn guest_path(path: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if !path.starts_with('/') {
        parts.push(IMPL_DIR.trim_start_matches('/').to_string());
    }
    for c in Path::new(path).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!("/{}", parts.join("/")))
}

/// The value of `--impl` among the inner run's options, if any.
pub fn impl_command(run_args: &[String]) -> Option<&str> {
    let mut it = run_args.iter();
    while let Some(a) = it.next() {
        if a == "--impl" {
            return it.next().map(String::as_str);
        }
        if let Some(v) = a.strip_prefix("--impl=") {
            return Some(v);
        }
    }
    None
}

/// The program an adapter command starts (past `env`, its options and `NAME=VALUE`
/// assignments) and the words after it, quotes removed.
fn program_and_args(command: &str) -> Option<(String, Vec<String>)> {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
        .collect();
    let mut i = 0;
    if words
        .first()
        .is_some_and(|w| w == "env" || w == "/usr/bin/env")
    {
        i = 1;
        while words
            .get(i)
            .is_some_and(|w| w.starts_with('-') || w.contains('='))
        {
            i += 1;
        }
    } else {
        while words.get(i).is_some_and(|w| is_assignment(w)) {
            i += 1;
        }
    }
    let program = words.get(i)?.clone();
    Some((program, words[i + 1..].to_vec()))
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Checks, against the list of the guest's paths, that the program `command` starts is in
/// the guest, and that every file it names that exists on the host (relative to `cwd`) is
/// there too. The error is one line naming what is missing and the option that adds it.
pub fn check_impl(command: &str, guest: &BTreeSet<String>, cwd: &Path) -> Result<(), VmError> {
    let Some((program, args)) = program_and_args(command) else {
        return Err(VmError::ImplNotInGuest {
            command: command.to_string(),
            why: "it names no program".into(),
        });
    };
    let missing = |why: String| VmError::ImplNotInGuest {
        command: command.to_string(),
        why,
    };
    if program.contains('/') {
        let at = guest_path(&program).unwrap_or_default();
        if !guest.contains(&at) {
            return Err(missing(format!(
                "{program} is not in the guest (looked for {at}); add it with --guest-copy {program}"
            )));
        }
    } else if !GUEST_PATH
        .iter()
        .any(|d| guest.contains(&format!("{d}/{program}")))
    {
        return Err(missing(format!(
            "{program} is not on the guest's PATH ({}); add its Debian package with --guest-package, or the program with --guest-copy PATH:/usr/local/bin/{program}",
            GUEST_PATH.join(":")
        )));
    }
    for a in args {
        if a.starts_with('-') || a.contains('=') || !a.contains('/') {
            continue;
        }
        if !cwd.join(&a).exists() {
            continue;
        }
        let at = guest_path(&a).unwrap_or_default();
        if !guest.contains(&at) {
            return Err(missing(format!(
                "{a} exists here but not in the guest (looked for {at}); add it with --guest-copy {a} (or a directory above it)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| (*p).to_string()).collect()
    }

    #[test]
    fn relative_copies_land_under_impl_and_absolute_ones_keep_their_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("adapters/bwrap")).unwrap();
        let c = parse_copy("adapters", dir.path()).unwrap();
        assert_eq!(c.guest, "/impl/adapters");
        assert_eq!(c.host, dir.path().join("adapters"));
        let c = parse_copy("adapters:/opt/a", dir.path()).unwrap();
        assert_eq!(c.guest, "/opt/a");
        let c = parse_copy("./adapters/bwrap:x/y", dir.path()).unwrap();
        assert_eq!(c.guest, "/impl/x/y");
        let abs = dir.path().join("adapters");
        let c = parse_copy(abs.to_str().unwrap(), Path::new("/")).unwrap();
        assert_eq!(c.guest, abs.to_str().unwrap());
        assert!(matches!(
            parse_copy("nope", dir.path()),
            Err(VmError::GuestCopy { .. })
        ));
        assert!(parse_copy("adapters:../up", dir.path()).is_err());
        assert!(parse_copy("adapters:/", dir.path()).is_err());
    }

    #[test]
    fn the_impl_option_is_found_in_both_spellings() {
        let a = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            impl_command(&a(&["--filter", "fence/", "--impl", "python3 x.py"])),
            Some("python3 x.py")
        );
        assert_eq!(impl_command(&a(&["--impl=prog"])), Some("prog"));
        assert_eq!(impl_command(&a(&["--filter", "fence/"])), None);
    }

    #[test]
    fn a_program_missing_from_the_guest_is_refused_with_the_option_that_adds_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/adapter.py"), "").unwrap();
        let g = guest(&["/usr/bin/python3", "/usr/local/bin/gatehouse"]);
        assert!(check_impl("gatehouse adapter", &g, dir.path()).is_ok());
        assert!(check_impl(
            "env GATEHOUSE_FENCE=bwrap gatehouse adapter",
            &g,
            dir.path()
        )
        .is_ok());
        let e = check_impl("node adapter.js", &g, dir.path()).unwrap_err();
        assert!(e.to_string().contains("--guest-package"), "{e}");
        assert!(!e.to_string().contains('\n'));
        // The script exists on the host and not in the guest: refused, naming the copy.
        let e = check_impl("python3 a/adapter.py --hardened", &g, dir.path()).unwrap_err();
        assert!(e.to_string().contains("--guest-copy a/adapter.py"), "{e}");
        let g = guest(&["/usr/bin/python3", "/impl/a/adapter.py"]);
        assert!(check_impl("python3 a/adapter.py --hardened", &g, dir.path()).is_ok());
        let e = check_impl("./a/adapter.py", &g, dir.path());
        assert!(e.is_ok(), "{e:?}");
        let e = check_impl("/opt/x/run", &g, dir.path()).unwrap_err();
        assert!(e.to_string().contains("--guest-copy /opt/x/run"), "{e}");
    }

    /// `vm-images/build.py copy-plan`: the directory entries (and modes) of the archive
    /// `--guest-copy` appends to the suite's image, for an image holding `image_dirs`.
    fn copy_plan(image_dirs: &[&Path], copies: &[String]) -> Result<serde_json::Value, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vm-images/build.py");
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(script).arg("copy-plan");
        for d in image_dirs {
            cmd.arg("--image-dir").arg(d);
        }
        let out = cmd.args(copies).output().expect("python3 runs");
        if out.status.success() {
            Ok(serde_json::from_slice(&out.stdout).expect("a JSON object"))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    #[test]
    fn a_copy_never_remakes_a_directory_the_image_has_and_keeps_the_hosts_modes() {
        use std::os::unix::fs::PermissionsExt;
        // The trap of issue 44: `--guest-copy /tmp/x/adapter` re-emitted /tmp as 0755 after
        // the image's sticky 1777 /tmp, and every unprivileged fixture errored. Here the
        // temporary directory's parent stands for the guest's /tmp.
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().parent().unwrap();
        let x = dir.path().join("x");
        std::fs::create_dir_all(x.join("lib")).unwrap();
        std::fs::write(x.join("adapter"), "").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o750)).unwrap();
        std::fs::set_permissions(x.join("lib"), std::fs::Permissions::from_mode(0o705)).unwrap();
        let image: Vec<&Path> = tmp.ancestors().filter(|a| *a != Path::new("/")).collect();
        let adapter = x.join("adapter");
        let a = adapter.to_str().unwrap();
        let lib = x.join("lib");
        let l = lib.to_str().unwrap();
        let got = copy_plan(&image, &[format!("{a}:{a}"), format!("{l}:{l}")]).unwrap();
        let modes = got.as_object().unwrap();
        for d in &image {
            assert!(
                !modes.contains_key(d.to_str().unwrap()),
                "{d:?} re-emitted: {got}"
            );
        }
        let mode = |p: &Path| modes.get(p.to_str().unwrap()).and_then(|v| v.as_str());
        assert_eq!(mode(dir.path()), Some("0711"), "{got}");
        assert_eq!(mode(&x), Some("0750"), "{got}");
        assert_eq!(mode(&lib), Some("0705"), "{got}");
        assert_eq!(modes.len(), 3, "{got}");
        // A place the image lacks with no host directory at the same place to take a mode
        // from gets the image's own directories' 0755 (`sandboxer:peers/sandboxer`).
        let e = copy_plan(&[Path::new("/impl")], &[format!("{a}:/impl/peers/adapter")]);
        assert_eq!(e.unwrap(), serde_json::json!({"/impl/peers": "0755"}));
        // Relative copies under /impl take their modes from the working directory's tree.
        let e = copy_plan(&[Path::new("/impl")], &[format!("{a}:/impl/x/adapter")]).unwrap();
        assert_eq!(e, serde_json::json!({"/impl/x": "0750"}));
    }
}
