//! Two `gatehouse exec` overlapping in one workspace that has no `.git`: the mount points
//! the fence creates for the missing protected paths are shared, and the first jail to end
//! must not remove them while the second still runs (the kernel would detach the second
//! jail's read-only mounts with them). Ordered by files, not by time: the long command
//! signals that it runs, the short one runs to its end, then the long one is let go.
//! And the grace by which the placeholders outlive the last jail (FENCE-PROTECT-20): each
//! wait is bounded by a deadline and ordered by what is observed, never by a time.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");
use gatehouse::fence::mount_points::ENV_LINGER;

fn exec(ws: &Path, script: &str) -> Command {
    let mut c = Command::new(BIN);
    c.arg("exec")
        .arg("--workspace")
        .arg(ws)
        .args(["--", "sh", "-c", script])
        .env("XDG_CONFIG_HOME", "/nonexistent/gatehouse-no-config")
        .env_remove(gatehouse::fence::plan::FAULT_ENV)
        // The last jail out removes the placeholders at once; the grace has tests below.
        .env(ENV_LINGER, "0")
        .stdin(Stdio::null());
    c
}

/// Wait (bounded by the child's own end) until `path` exists.
fn wait_for(path: &Path, child: &mut std::process::Child) {
    while !path.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the long command ended early: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_jail_that_ends_first_leaves_the_other_jails_mount_points_in_place() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    // The first jail creates the mount points (.git, HEAD, .gatehouse are missing) ...
    let mut first = exec(
        w,
        "echo up > up-1; while [ ! -e go-1 ]; do sleep 0.02; done",
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for(&w.join("up-1"), &mut first);
    // ... the second finds them there and mounts over them too ...
    let mut second = exec(
        w,
        "echo up > up-2; while [ ! -e go-2 ]; do sleep 0.02; done; \
         mkdir -p .git/hooks && echo pwned > .git/hooks/pre-commit; \
         echo allowed > allowed.txt",
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for(&w.join("up-2"), &mut second);
    // ... and the first ends while the second still runs.
    std::fs::write(w.join("go-1"), "").unwrap();
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        w.join(".git").exists(),
        "the first jail removed a mount point the second still uses"
    );
    std::fs::write(w.join("go-2"), "").unwrap();
    let out = second.wait_with_output().unwrap();
    assert!(
        !w.join(".git/hooks").exists(),
        "the second jail wrote .git/hooks on the host: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The allowed twin: the second jail still writes its workspace.
    assert_eq!(
        std::fs::read_to_string(w.join("allowed.txt")).unwrap(),
        "allowed\n"
    );
    // The last one out removed the mount points.
    for p in [".git", "HEAD", ".gatehouse"] {
        assert!(!w.join(p).exists(), "the mount point {p} was left behind");
    }
}

/// The kind of each placeholder (FENCE-PROTECT-12): `.git`, `HEAD` and `.gatehouse` are
/// empty directories, outside any repository and inside one alike, read-only inside and
/// gone afterwards.
#[test]
fn placeholders_are_empty_directories() {
    let probe = "for p in .git HEAD .gatehouse; do \
                 if [ -d $p ]; then echo $p=dir; elif [ -f $p ]; then echo $p=file; fi; \
                 ( echo x > $p/x ) 2>/dev/null && echo $p=written; done; true";
    let outside = tempfile::tempdir().unwrap();
    let out = exec(outside.path(), probe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text, ".git=dir\nHEAD=dir\n.gatehouse=dir\n");
    let above = tempfile::tempdir().unwrap();
    std::fs::create_dir(above.path().join(".git")).unwrap();
    let root = above.path().join("sub");
    std::fs::create_dir(&root).unwrap();
    let out = exec(&root, probe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text, ".git=dir\nHEAD=dir\n.gatehouse=dir\n");
    for w in [outside.path(), root.as_path()] {
        for p in [".git", "HEAD", ".gatehouse"] {
            assert!(!w.join(p).exists(), "{p} left behind in {}", w.display());
        }
    }
}

/// The host's `git` in the workspace while a jail runs there (FENCE-PROTECT-12, issue 29
/// item 7), on each backend this host has: outside any repository it says what it says
/// without a session ("not a git repository"), never "invalid gitfile format"; in a
/// repository whose root lacks `HEAD` and `.gatehouse`, `git status` lists no placeholder
/// and `git add -A` stages none. Ordered by files: the jail signals that it runs, the
/// host runs git, then the jail is let go.
#[test]
fn host_git_works_while_a_jail_runs() {
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
            .env("HOME", dir)
            .env_remove("GIT_DIR")
            .output()
            .unwrap()
    };
    let mut backends = vec!["native"];
    if Path::new("/usr/bin/bwrap").exists() {
        backends.push("bwrap");
    }
    for backend in backends {
        for repo in [false, true] {
            let ws = tempfile::tempdir().unwrap();
            let w = ws.path();
            std::fs::write(w.join("mine.txt"), "mine\n").unwrap();
            if repo {
                let init = git(w, &["init", "-q", "."]);
                assert!(init.status.success(), "{init:?}");
            }
            let mut jail = exec(w, "echo up > up; while [ ! -e go ]; do sleep 0.02; done")
                .env("GATEHOUSE_FENCE", backend)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            wait_for(&w.join("up"), &mut jail);
            let status = git(w, &["status", "--porcelain", "--untracked-files=all"]);
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&status.stdout),
                String::from_utf8_lossy(&status.stderr)
            );
            assert!(!said.contains("gitfile"), "{backend}, repo {repo}: {said}");
            if repo {
                assert!(status.status.success(), "{backend}: {said}");
                for placeholder in ["HEAD", ".gatehouse"] {
                    assert!(
                        !said.contains(placeholder),
                        "{backend}: the host's git sees {placeholder}: {said}"
                    );
                }
                assert!(said.contains("?? mine.txt"), "{backend}: {said}");
                let add = git(w, &["add", "-A", "--dry-run"]);
                let added = String::from_utf8_lossy(&add.stdout);
                assert!(add.status.success(), "{backend}: {add:?}");
                assert!(
                    !added.contains("HEAD") && !added.contains(".gatehouse"),
                    "{backend}: {added}"
                );
            } else {
                assert!(
                    said.contains("not a git repository"),
                    "{backend}: the host's git: {said}"
                );
            }
            std::fs::write(w.join("go"), "").unwrap();
            let out = jail.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{backend}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The lingerers of `root`'s lock running now (`gatehouse __linger LOCK ROOT MS`): the
/// lock is named by the root's device and inode, so a lingerer started for an earlier
/// directory that had the same ones takes this root's placeholders too.
fn lingerers(root: &Path) -> Vec<u32> {
    let lock = gatehouse::fence::mount_points::lock_path(root).unwrap();
    let want = lock.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            args.get(1) == Some(&&b"__linger"[..]) && args.get(2) == Some(&want)
        })
        .collect()
}

/// Wait, bounded by a generous deadline, until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// FENCE-PROTECT-20: after the last jail of a root the placeholders stay, left to one
/// lingerer of the root; a jail that starts while it waits keeps them (and its
/// protection: it cannot write `.git`, however long it runs past the grace); once the
/// grace has passed with no jail running they go, but a placeholder a host tool wrote
/// into stays. Its twin: with the grace `0` they go as the jail ends, and no lingerer
/// starts.
#[test]
fn placeholders_outlive_the_last_jail_by_the_grace_and_no_longer() {
    let ws = tempfile::tempdir().unwrap();
    let w = ws.path();
    let grace = |c: &mut Command| {
        c.env(ENV_LINGER, "300");
    };
    let mut short = exec(w, "true");
    grace(&mut short);
    assert!(short.output().unwrap().status.success());
    // The names a host tool writes as files never linger: gone as the jail ends.
    for p in ["HEAD", ".mcp.json", "opencode.json"] {
        assert!(!w.join(p).exists(), "{p} lingers");
    }
    // Removed only by a lingerer, after the grace: either they are still here, or one
    // lingerer took them (it is then gone too, having removed everything).
    assert!(
        w.join(".git").is_dir() || lingerers(w).is_empty(),
        "removed with no lingerer"
    );
    // A jail runs past the grace: nothing goes under it, and it still cannot write .git.
    let mut long = exec(
        w,
        "echo up > up; while [ ! -e go ]; do sleep 0.02; done; \
         mkdir -p .git/hooks && echo pwned > .git/hooks/pre-commit; echo allowed > allowed.txt",
    );
    grace(&mut long);
    let mut long = long
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&w.join("up"), &mut long);
    let short_again = {
        let mut c = exec(w, "true");
        grace(&mut c);
        c.output().unwrap()
    };
    assert!(short_again.status.success());
    // Many graces later the long jail still runs, and its mount points are there.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(w.join(".git").is_dir() && w.join(".claude").is_dir());
    std::fs::write(w.join("go"), "").unwrap();
    let out = long.wait_with_output().unwrap();
    assert!(
        !w.join(".git/hooks").exists(),
        "the jail wrote .git/hooks on the host: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(w.join("allowed.txt")).unwrap(),
        "allowed\n"
    );
    // A host tool writes into a placeholder while it lingers: that one is the tool's now.
    std::fs::write(w.join(".vscode/settings.json"), "{}").unwrap_or_else(|_| {
        // the lingerer was quicker: the tool makes its directory itself
        std::fs::create_dir_all(w.join(".vscode")).unwrap();
        std::fs::write(w.join(".vscode/settings.json"), "{}").unwrap();
    });
    eventually("the placeholders removed after the grace", || {
        !w.join(".git").exists() && !w.join(".claude").exists() && lingerers(w).is_empty()
    });
    assert_eq!(
        std::fs::read_to_string(w.join(".vscode/settings.json")).unwrap(),
        "{}"
    );
    // The twin: no grace, nothing left, no lingerer.
    let out = exec(w, "true").output().unwrap();
    assert!(out.status.success());
    assert!(!w.join(".git").exists() && !w.join(".claude").exists());
    assert!(lingerers(w).is_empty());
}

/// FENCE-PROTECT-20: a root replaced while its lingerer waits (moved away, another
/// directory made at its path) is left alone: nothing of the new directory is removed,
/// whatever it holds under the names of the old placeholders.
#[test]
fn a_lingerer_removes_nothing_of_a_directory_that_replaced_its_root() {
    let parent = tempfile::tempdir().unwrap();
    let w = parent.path().join("ws");
    std::fs::create_dir(&w).unwrap();
    let out = exec(&w, "true").env(ENV_LINGER, "300").output().unwrap();
    assert!(out.status.success());
    if lingerers(&w).is_empty() {
        // Removed already (a very slow test thread): nothing to replace; the grace's own
        // test above covers the rest.
        assert!(!w.join(".git").exists());
        return;
    }
    let moved = parent.path().join("moved");
    std::fs::rename(&w, &moved).unwrap();
    std::fs::create_dir(&w).unwrap();
    for p in [".git", "HEAD", ".claude"] {
        std::fs::create_dir(w.join(p)).unwrap();
    }
    // The lingerer of the moved directory's lock (its device and inode went with it).
    eventually("the lingerer gone", || lingerers(&moved).is_empty());
    for p in [".git", "HEAD", ".claude"] {
        assert!(w.join(p).is_dir(), "{p} of the new directory was removed");
    }
}

/// FENCE-PROTECT-20: a lingerer waits for the root's lock, which is named by the root's
/// device and inode, not its path: a root moved while its lingerer waits (or a directory
/// that reuses a removed one's inode, which CI met) hands its placeholders to that same
/// lingerer, which removes them at the root's new path. Before, the lingerer knew only
/// the path it started for, emptied the record and left the moved root's placeholders.
#[test]
fn a_root_moved_while_its_lingerer_waits_is_still_tidied() {
    let parent = tempfile::tempdir().unwrap();
    let a = parent.path().join("a");
    std::fs::create_dir(&a).unwrap();
    let out = exec(&a, "true").env(ENV_LINGER, "2000").output().unwrap();
    assert!(out.status.success());
    let b = parent.path().join("b");
    std::fs::rename(&a, &b).unwrap();
    let out = exec(&b, "true").env(ENV_LINGER, "300").output().unwrap();
    assert!(out.status.success());
    eventually("the moved root's placeholders removed", || {
        !b.join(".git").exists() && !b.join(".claude").exists() && lingerers(&b).is_empty()
    });
}
