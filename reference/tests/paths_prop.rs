//! Differential property test: random trees of files, directories and symlinks
//! (relative, absolute, dangling, looping); on every lookup the `openat2` backend and the
//! walk agree (same object by device and inode, or the same error), and no successful
//! resolution yields an object outside the root (checked against every object a
//! non-following traversal of the root finds); a successful path's key, spelled back,
//! opens the same object (PATH-KEY-6), and a spelling that climbs out is an escape
//! (PATH-SPELL-4).
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use gatehouse::paths::{Backend, Roots};
use proptest::prelude::*;
use rustix::fs::fstat;

#[derive(Debug, Clone)]
enum Node {
    Dir(Vec<&'static str>),
    File(Vec<&'static str>),
    /// A symlink at a path, to a relative target (may dangle, loop or climb out).
    RelLink(Vec<&'static str>, Vec<&'static str>),
    /// A symlink to an absolute target (inside or outside the root: both are refused).
    AbsLink(Vec<&'static str>, bool),
}

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "c"])
}

fn target_comp() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "c", "..", ".", "x"])
}

fn node() -> impl Strategy<Value = Node> {
    let path = || prop::collection::vec(name(), 1..4);
    prop_oneof![
        3 => path().prop_map(Node::Dir),
        2 => path().prop_map(Node::File),
        3 => (path(), prop::collection::vec(target_comp(), 1..5)).prop_map(|(p, t)| Node::RelLink(p, t)),
        1 => (path(), any::<bool>()).prop_map(|(p, inside)| Node::AbsLink(p, inside)),
    ]
}

fn lookup() -> impl Strategy<Value = (String, bool, bool)> {
    (
        prop::collection::vec(target_comp(), 0..6),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(c, trailing, follow)| {
            let mut s = c.join("/");
            if s.is_empty() {
                s.push('.');
            }
            if trailing {
                s.push('/');
            }
            (s, follow, trailing)
        })
}

fn build(base: &Path, nodes: &[Node]) {
    let root = base.join("root");
    fs::create_dir_all(&root).unwrap();
    for side in ["a", "b", "c", "x"] {
        fs::create_dir_all(base.join(side).join("a")).unwrap();
        fs::write(base.join(side).join("b"), "out").unwrap();
    }
    for n in nodes {
        // Parents are made as directories where possible; collisions are simply skipped.
        let p = match n {
            Node::Dir(p) | Node::File(p) | Node::RelLink(p, _) | Node::AbsLink(p, _) => p,
        };
        let full = p.iter().fold(root.clone(), |acc, c| acc.join(c));
        let _ = fs::create_dir_all(full.parent().unwrap());
        let _ = match n {
            Node::Dir(_) => fs::create_dir(&full),
            Node::File(_) => fs::write(&full, "in"),
            Node::RelLink(_, t) => symlink(t.join("/"), &full),
            Node::AbsLink(_, true) => symlink(root.join("a"), &full),
            Node::AbsLink(_, false) => symlink(base.join("a"), &full),
        };
    }
}

fn outcome(roots: &Roots, path: &str, follow: bool) -> Result<(u64, u64), &'static str> {
    roots
        .resolve(path, follow)
        .map(|fd| {
            let st = fstat(&fd).unwrap();
            (st.st_dev, st.st_ino)
        })
        .map_err(|e| e.code())
}

/// `lookup`'s outcome, asked again (up to 50 times) while it is `busy`.
fn settled<T: PartialEq + Copy>(
    lookup: impl Fn() -> Result<T, &'static str>,
) -> Result<T, &'static str> {
    let mut last = lookup();
    for _ in 0..50 {
        if last != Err("busy") {
            break;
        }
        std::thread::yield_now();
        last = lookup();
    }
    last
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn backends_agree_and_never_escape(
        nodes in prop::collection::vec(node(), 1..14),
        lookups in prop::collection::vec(lookup(), 1..24),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        build(&base, &nodes);
        let root = base.join("root");
        let allowed = common::objects_under(&root);
        let o = Roots::open_with(&root, Backend::Openat2).unwrap();
        let w = Roots::open_with(&root, Backend::Walk).unwrap();
        prop_assert_eq!(o.backend(), Backend::Openat2);
        prop_assert_eq!(w.backend(), Backend::Walk);
        for (path, follow, _) in &lookups {
            let trailing = &(path.ends_with('/') || path.ends_with("/."));
            let a = settled(|| outcome(&o, path, *follow));
            let b = settled(|| outcome(&w, path, *follow));
            // `busy` is openat2's EAGAIN outlasting its retries because something renamed
            // or mounted anywhere on the machine meanwhile (a loaded CI host): a refusal,
            // never an escape, and no statement about the tree; it is not compared.
            if a != Err("busy") && b != Err("busy") {
                prop_assert_eq!(a, b, "backends disagree on {:?} (follow {})", path, follow);
            }
            if let Ok(obj) = a {
                prop_assert!(allowed.contains(&obj), "{:?} resolved outside the root", path);
                // PATH-KEY-6: the key, spelled back, names the object the path opened.
                for r in [&o, &w] {
                    let key = r.key(path.as_str()).unwrap().to_string();
                    let again = outcome(r, if key.is_empty() { "." } else { &key }, *follow || *trailing);
                    prop_assert_eq!(again, Ok(obj), "key {:?} of {:?} names another object", key, path);
                }
            }
            // PATH-SPELL-4: a spelling that climbs out is an escape whatever the tree holds.
            let mut depth = 0i32;
            let climbs = path.split('/').filter(|c| !c.is_empty() && *c != ".").any(|c| {
                depth += if c == ".." { -1 } else { 1 };
                depth < 0
            });
            if climbs {
                prop_assert_eq!(a, Err("escape"), "{:?} climbs out by spelling", path);
            }
        }
        prop_assert_eq!(o.runs(Backend::Walk), 0);
        prop_assert_eq!(w.runs(Backend::Openat2), 0);
    }
}
