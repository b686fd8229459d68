//! The bubblewrap backend: the system's `bwrap` builds the namespaces and the mount tree
//! with arguments equivalent to the native plan; the gatehouse helper, bound read-only into
//! the jail, then verifies the capabilities are gone and applies Landlock and seccomp.
//!
//! The environment is not passed on the command line: `bwrap` is spawned with an empty
//! environment holding only the helper's plan (the scrubbed variables travel inside it),
//! which is `--clearenv` plus `--setenv` without exposing values to `ps`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::fence::plan::{Layout, Step};
use crate::fence::policy::Policy;

/// Where the helper is bound inside bubblewrap's root.
pub const HELPER_INSIDE: &str = "/run/gatehouse/helper";

fn push(args: &mut Vec<OsString>, items: &[&std::ffi::OsStr]) {
    args.extend(items.iter().map(|s| s.to_os_string()));
}

/// Hide `path` ([`Step::Mask`]): an empty read-only tmpfs over a directory; the null
/// device over a file (bubblewrap's --ro-bind is nodev: it cannot be opened there).
fn mask(args: &mut Vec<OsString>, path: &Path, dir: bool) {
    let p = path.as_os_str();
    if dir {
        push(
            args,
            &[
                "--perms".as_ref(),
                "0755".as_ref(),
                "--tmpfs".as_ref(),
                p,
                "--remount-ro".as_ref(),
                p,
            ],
        );
    } else {
        push(args, &["--ro-bind".as_ref(), "/dev/null".as_ref(), p]);
    }
}

/// Whether `path` lies strictly inside a writable root of `policy` (its hiding is left to
/// the helper, [`crate::fence::plan::left_to_the_helper`]).
fn inside_a_root(policy: &Policy, path: &Path) -> bool {
    policy
        .writable_roots()
        .iter()
        .any(|r| path.starts_with(r) && path != r)
}

/// The arguments before `--`, in bubblewrap's order of application.
pub fn args(policy: &Policy, layout: &Layout, helper: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    // Every namespace (user, IPC, PID, network, UTS, cgroup), tied to our lifetime, and no
    // capability but CAP_SYS_ADMIN and CAP_SETPCAP of bubblewrap's own user namespace: the
    // helper needs the first to remount the device nodes and /proc's corners read-only
    // (bubblewrap binds them writable), the second to empty the bounding set, and then
    // drops both with every other, verifying none remains. The helper is the PID
    // namespace's init itself (`--as-pid-1`), not a child of bubblewrap's: bubblewrap's
    // own init reports its first child's end, and its launcher leaves, while the rest of
    // the namespace still runs until the kernel kills it, so the placeholders of missing
    // protected paths could go under a running process (a red-team review made one create
    // `.git` in 9 of 75 runs). As init, the helper ends every other process of the
    // namespace and reaps it before it leaves, and bubblewrap's launcher waits for it.
    for s in [
        "--unshare-all",
        "--as-pid-1",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--cap-add",
        "CAP_SETPCAP",
        "--hostname",
        crate::fence::plan::HOSTNAME,
    ] {
        a.push(s.into());
    }
    // The `host` network mode: every namespace but the network's (FENCE-NET-8: the
    // helper's seccomp filter keeps the host's UNIX sockets out).
    if policy.host_network {
        a.push("--share-net".into());
    }
    // bubblewrap makes the parents of a bind 0700; /etc is an ordinary directory inside.
    push(
        &mut a,
        &[
            "--perms".as_ref(),
            "0755".as_ref(),
            "--dir".as_ref(),
            "/etc".as_ref(),
        ],
    );
    for step in &layout.system {
        match step {
            Step::BindReadOnly { path } => push(
                &mut a,
                &["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()],
            ),
            Step::Mask { path, dir } => mask(&mut a, path, *dir),
            Step::Symlink { target, path } => push(
                &mut a,
                &["--symlink".as_ref(), target.as_os_str(), path.as_os_str()],
            ),
            _ => {}
        }
    }
    for s in ["--proc", "/proc", "--dev", "/dev"] {
        a.push(s.into());
    }
    // The host's temporary directories as empty directories of the root, read-only with it
    // at the end: a write there fails loudly (FENCE-JAIL-21); the scratch's `tmp`, bound
    // below, is the jail's temporary directory.
    for t in crate::fence::plan::TEMP_DIRS {
        push(
            &mut a,
            &[
                "--perms".as_ref(),
                "0755".as_ref(),
                "--dir".as_ref(),
                t.as_ref(),
            ],
        );
    }
    // /proc's writable corners read-only by a bind bubblewrap makes itself, before it
    // gives up its mount rights (its own cover depends on an access(W_OK) test that its
    // user namespace fails); sysctls are answered for the opener's namespaces, not the
    // mount's, so the bind shows the jail its own values (FENCE-JAIL-16).
    for p in crate::fence::plan::PROC_READ_ONLY {
        push(&mut a, &["--ro-bind-try".as_ref(), p.as_ref(), p.as_ref()]);
    }
    // The injected fault of the probe's tests (plan::Fault): read-only paths bound
    // writable, silently; the command's own probe must refuse the jail.
    let ro_bind = if crate::fence::plan::read_only_hole_from_env() {
        "--bind"
    } else {
        "--ro-bind"
    };
    for p in &policy.read_only {
        push(&mut a, &[ro_bind.as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    let mut rw = policy.writable_roots();
    rw.sort();
    for p in &rw {
        push(&mut a, &["--bind".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    // Protected paths are the helper's, inside the finished tree ([`crate::fence::plan::left_to_the_helper`]):
    // bubblewrap makes no mount point inside a writable root.
    // Hidden paths last of the tree, as in the native plan.
    for step in crate::fence::plan::hide_steps(policy, &layout.system) {
        if let Step::Mask { path, dir } = step {
            if !inside_a_root(policy, &path) {
                mask(&mut a, &path, dir);
            }
        }
    }
    push(
        &mut a,
        &[
            "--ro-bind".as_ref(),
            helper.as_os_str(),
            HELPER_INSIDE.as_ref(),
        ],
    );
    // Last: nothing more can be created in the root.
    push(&mut a, &["--remount-ro".as_ref(), "/".as_ref()]);
    let cwd: PathBuf = policy.working_dir();
    push(&mut a, &["--chdir".as_ref(), cwd.as_os_str()]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FENCE-JAIL-21: no writable tmpfs on `/tmp`; the temporary directories are empty
    /// directories of the root bubblewrap remounts read-only last.
    #[test]
    fn temporary_directories_are_directories_of_the_read_only_root() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let mut policy = Policy::new(vec![ws], t.path().join("scratch"));
        policy.home = Some(t.path().join("home"));
        let policy = policy.resolve().unwrap();
        let layout = crate::fence::plan::Layout::of(&policy, None);
        let a: Vec<String> = args(&policy, &layout, Path::new("/usr/bin/gatehouse"))
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        assert!(
            !a.windows(2).any(|w| w[0] == "--tmpfs" && w[1] == "/tmp"),
            "{a:?}"
        );
        for t in crate::fence::plan::TEMP_DIRS {
            assert!(
                a.windows(2).any(|w| w[0] == "--dir" && w[1] == t),
                "{t} in {a:?}"
            );
        }
        let n = a.len();
        assert!(
            a[..n - 2].ends_with(&["--remount-ro".to_string(), "/".to_string()]),
            "{a:?}"
        );
    }

    /// FENCE-PROTECT-18: bubblewrap is handed no destination whose parent a writable root
    /// holds (a directory jailed code may swap for a symlink while bubblewrap runs); those
    /// are the helper's, reached without following anything.
    #[test]
    fn bubblewrap_gets_no_mount_point_below_a_directory_of_a_root() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        for d in ["sub/.git", "sub/hid", ".github", ".husky/_"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::fs::write(ws.join("sub/secret.txt"), "s").unwrap();
        std::fs::write(ws.join(".pre-commit-config.yaml"), "repos: []\n").unwrap();
        let mut policy = Policy::new(vec![ws.clone()], t.path().join("scratch"));
        policy.hidden = vec![ws.join("sub/secret.txt"), ws.join("sub/hid")];
        policy.home = Some(t.path().join("home"));
        let policy = policy.resolve().unwrap();
        let layout = crate::fence::plan::Layout::of(&policy, None);
        let a = args(&policy, &layout, Path::new("/usr/bin/gatehouse"));
        let roots = policy.writable_roots();
        let mut dests: Vec<PathBuf> = Vec::new();
        let mut i = 0;
        while i < a.len() {
            let two = ["--bind", "--ro-bind", "--ro-bind-try", "--symlink"];
            let one = ["--tmpfs", "--dir", "--remount-ro"];
            let s = a[i].to_string_lossy().into_owned();
            if two.contains(&s.as_str()) {
                dests.push(PathBuf::from(&a[i + 2]));
                i += 3;
            } else if one.contains(&s.as_str()) {
                dests.push(PathBuf::from(&a[i + 1]));
                i += 2;
            } else {
                i += 1;
            }
        }
        for d in &dests {
            if let Some(root) = roots.iter().find(|r| d.starts_with(r) && d != *r) {
                assert_eq!(
                    d.parent(),
                    Some(root.as_path()),
                    "{} reaches bubblewrap",
                    d.display()
                );
            }
        }
        // The helper gets them instead.
        let helper = crate::fence::plan::left_to_the_helper(&policy, &layout.system);
        let root = policy.workspaces[0].clone();
        for want in [
            Step::ProtectInJail {
                root: root.clone(),
                rel: PathBuf::from("sub/.git"),
            },
            Step::ProtectInJail {
                root: root.clone(),
                rel: PathBuf::from(".github/hooks"),
            },
            Step::MaskInJail {
                root: root.clone(),
                rel: PathBuf::from("sub/secret.txt"),
                dir: false,
            },
            Step::MaskInJail {
                root: root.clone(),
                rel: PathBuf::from("sub/hid"),
                dir: true,
            },
        ] {
            assert!(helper.contains(&want), "{want:?} in {helper:?}");
        }
        // The roots themselves stay bubblewrap's; the names at them are the helper's too.
        assert!(dests.contains(&root));
        assert!(helper.contains(&Step::ProtectInJail {
            root: root.clone(),
            rel: PathBuf::from(".git")
        }));
    }
}
