//! Every escape class of FACTS.md section 5 through both resolver backends, each with its
//! allowed twin. `both!` runs a case once per backend and asserts which backend ran.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gatehouse::paths::{Backend, PathError, Roots};

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    proj: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let proj = base.join("proj");
    let out = base.join("outside");
    fs::create_dir_all(out.join("dir")).unwrap();
    fs::write(out.join("secret.txt"), "secret").unwrap();
    fs::write(out.join("dir/inner.txt"), "inner").unwrap();
    fs::create_dir_all(base.join("proj_evil")).unwrap();
    fs::write(base.join("proj_evil/x.txt"), "evil").unwrap();
    fs::create_dir_all(proj.join("sub/deep/deeper")).unwrap();
    fs::write(proj.join("a.txt"), "a").unwrap();
    fs::write(proj.join("b.txt"), "root-b").unwrap();
    fs::write(proj.join("sub/b.txt"), "sub-b").unwrap();
    fs::write(proj.join("sub/deep/c.txt"), "c").unwrap();
    let l = |target: &str, name: &str| symlink(target, proj.join(name)).unwrap();
    symlink(&out, proj.join("out_abs")).unwrap();
    l("../outside", "out_rel");
    l("../outside/dir", "out_dir");
    l("sub", "in_rel");
    l("chain2", "chain1");
    l("../outside/secret.txt", "chain2");
    l("chain_in2", "chain_in1");
    l("sub/../a.txt", "chain_in2");
    l("loop2", "loop1");
    l("loop1", "loop2");
    l("../outside/new.txt", "dangling_out");
    l("sub/new_in.txt", "dangling_in");
    l("/proc/self/root", "proc_root");
    l("/proc/self/fd/0", "proc_fd");
    l("../../../../../../../../../../proc/self/root", "rel_proc");
    l("sub/deep", "deeplink");
    for i in 0..41 {
        l(&format!("long{}", i + 1), &format!("long{i}"));
    }
    fs::write(proj.join("long41"), "end").unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        proj.join("fifo"),
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    Fixture {
        _tmp: tmp,
        base,
        proj,
    }
}

/// The backend we expect to run. Set `GATEHOUSE_OPENAT2=absent` on kernels before 5.6.
fn expected(asked: Backend) -> Backend {
    match (asked, std::env::var("GATEHOUSE_OPENAT2").as_deref()) {
        (Backend::Openat2, Ok("absent")) => Backend::Walk,
        (b, _) => b,
    }
}

fn run(asked: Backend, case: impl FnOnce(&mut Roots, &Fixture)) {
    let fx = fixture();
    let mut roots = Roots::open_with(&fx.proj, asked).unwrap();
    let want = expected(asked);
    assert_eq!(roots.backend(), want, "backend that runs");
    case(&mut roots, &fx);
    let other = if want == Backend::Walk {
        Backend::Openat2
    } else {
        Backend::Walk
    };
    assert!(roots.runs(want) > 0, "{want:?} never ran");
    assert_eq!(roots.runs(other), 0, "{other:?} ran instead of {want:?}");
}

macro_rules! both {
    ($name:ident, |$roots:ident, $fx:ident| $body:block) => {
        mod $name {
            use super::*;
            #[allow(unused_variables, unused_mut)]
            fn case($roots: &mut Roots, $fx: &Fixture) $body
            #[test]
            fn openat2() {
                run(Backend::Openat2, case)
            }
            #[test]
            fn walk() {
                run(Backend::Walk, case)
            }
        }
    };
}

fn code<T: std::fmt::Debug>(r: Result<T, PathError>) -> &'static str {
    match r {
        Ok(v) => panic!("expected a refusal, got {v:?}"),
        Err(e) => e.code(),
    }
}

fn escape<T: std::fmt::Debug>(r: Result<T, PathError>) {
    assert_eq!(code(r), "escape");
}

fn read(roots: &Roots, p: impl AsRef<Path>) -> String {
    String::from_utf8(roots.read_file(p).unwrap()).unwrap()
}

both!(dotdot_at_every_depth, |roots, fx| {
    let dirs = ["sub", "deep", "deeper"];
    for depth in 0..=dirs.len() {
        let down = dirs[..depth].join("/");
        let up = vec![".."; depth].join("/");
        let join = |a: &str, b: &str| {
            [a, b]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("/")
        };
        // Refused: one `..` more than the depth.
        escape(roots.read_file(join(&join(&down, &up), "../outside/secret.txt")));
        // Allowed twin: exactly the depth.
        assert_eq!(read(roots, join(&join(&down, &up), "a.txt")), "a");
    }
});

both!(dotdot_after_name, |roots, fx| {
    escape(roots.read_file("sub/../../outside/secret.txt"));
    escape(roots.stat("sub/../../x"));
    assert_eq!(code(roots.stat("missing/../../x")), "not-found");
    escape(roots.stat(".."));
    assert_eq!(read(roots, "sub/../a.txt"), "a");
});

both!(absolute_paths, |roots, fx| {
    escape(roots.read_file(fx.base.join("outside/secret.txt")));
    escape(roots.read_file(fx.base.join("proj_evil/x.txt")));
    escape(roots.read_file(fx.proj.join("../proj_evil/x.txt")));
    escape(roots.read_file("/etc/passwd"));
    escape(roots.read_file("//etc/passwd"));
    assert_eq!(read(roots, fx.proj.join("a.txt")), "a");
    assert_eq!(read(roots, fx.proj.join("sub//b.txt")), "sub-b");
});

both!(absolute_symlink_out, |roots, fx| {
    escape(roots.read_file("out_abs/secret.txt"));
    escape(roots.stat("out_abs"));
    escape(roots.list_dir("out_abs"));
    assert_eq!(roots.list_dir("in_rel").unwrap().len(), 2);
});

both!(relative_symlink_out, |roots, fx| {
    escape(roots.read_file("out_rel/secret.txt"));
    escape(roots.list_dir("out_dir"));
    escape(roots.stat("out_dir/inner.txt"));
    assert_eq!(read(roots, "in_rel/b.txt"), "sub-b");
});

both!(symlink_chains, |roots, fx| {
    escape(roots.read_file("chain1"));
    assert_eq!(read(roots, "chain_in1"), "a");
});

both!(symlink_loops, |roots, fx| {
    assert_eq!(code(roots.stat("loop1")), "loop");
    assert_eq!(code(roots.read_file("long0")), "loop");
    assert_eq!(read(roots, "long1"), "end");
});

both!(dangling_symlink_create, |roots, fx| {
    escape(roots.write_file("dangling_out", b"x"));
    assert!(!fx.base.join("outside/new.txt").exists());
    assert_eq!(code(roots.write_file("dangling_in", b"x")), "final-symlink");
    assert!(!fx.proj.join("sub/new_in.txt").exists());
    escape(roots.write_file("out_rel/new.txt", b"x"));
    assert!(!fx.base.join("outside/new.txt").exists());
    roots.write_file("sub/new.txt", b"ok").unwrap();
    assert_eq!(
        fs::read_to_string(fx.proj.join("sub/new.txt")).unwrap(),
        "ok"
    );
});

both!(edit_through_links, |roots, fx| {
    escape(roots.edit_atomic("chain1", |_| b"pwned".to_vec()));
    assert_eq!(
        fs::read_to_string(fx.base.join("outside/secret.txt")).unwrap(),
        "secret"
    );
    roots
        .edit_atomic("sub/b.txt", |old| [old, b"!"].concat())
        .unwrap();
    assert_eq!(
        fs::read_to_string(fx.proj.join("sub/b.txt")).unwrap(),
        "sub-b!"
    );
    assert_eq!(
        roots.list_dir("sub").unwrap().len(),
        2,
        "no temp file left behind"
    );
});

both!(trailing_slash, |roots, fx| {
    assert_eq!(code(roots.stat("a.txt/")), "not-directory");
    escape(roots.stat("out_rel/"));
    assert_eq!(code(roots.write_file("sub/", b"x")), "is-directory");
    assert_eq!(
        roots.stat("sub/").unwrap().kind,
        gatehouse::paths::Kind::Dir
    );
    assert_eq!(
        roots.stat("in_rel/").unwrap().kind,
        gatehouse::paths::Kind::Dir
    );
});

both!(double_slash_and_dot, |roots, fx| {
    assert_eq!(read(roots, "sub//b.txt"), "sub-b");
    assert_eq!(read(roots, "./sub/./b.txt"), "sub-b");
    assert_eq!(roots.stat(".").unwrap().kind, gatehouse::paths::Kind::Dir);
    escape(roots.stat("./../outside"));
    escape(roots.stat(".//..//outside"));
});

both!(nul_and_over_long, |roots, fx| {
    use std::os::unix::ffi::OsStrExt;
    let nul = std::ffi::OsStr::from_bytes(b"a.txt\0/../../etc/passwd");
    assert_eq!(code(roots.read_file(nul)), "nul-byte");
    assert_eq!(code(roots.stat("")), "empty-path");
    assert_eq!(code(roots.stat("x".repeat(256))), "name-too-long");
    assert_eq!(code(roots.stat("ab/".repeat(1366))), "path-too-long");
    assert_eq!(code(roots.stat("x".repeat(255))), "not-found");
    // Validation runs before routing: nothing was resolved.
    assert_eq!(roots.runs(roots.backend()), 1);
});

both!(proc_magic_links, |roots, fx| {
    escape(roots.read_file("/proc/self/root/etc/passwd"));
    escape(roots.read_file("proc_root/etc/passwd"));
    escape(roots.stat("proc_fd"));
    escape(roots.stat("rel_proc"));
    escape(roots.read_file("rel_proc/etc/passwd"));
    let fd = fs::File::open(fx.base.join("outside/secret.txt")).unwrap();
    use std::os::fd::AsRawFd;
    escape(roots.read_file(format!("/proc/self/fd/{}", fd.as_raw_fd())));
});

both!(lexical_dotdot_through_symlink, |roots, fx| {
    // deeplink -> sub/deep: the kernel's `..` is sub, not the project root.
    assert_eq!(read(roots, "deeplink/../b.txt"), "sub-b");
    assert_eq!(
        roots.key("deeplink/../b.txt").unwrap().to_string(),
        "sub/b.txt"
    );
    // out_dir -> ../outside/dir: lexically `secret.txt` in the project, really outside.
    escape(roots.read_file("out_dir/../secret.txt"));
    escape(roots.key("out_dir/../secret.txt"));
});

both!(fifo_is_refused_without_hanging, |roots, fx| {
    let proj = fx.proj.clone();
    let backend = roots.backend();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let roots = Roots::open_with(&proj, backend).unwrap();
        let _ = tx.send(roots.read_file("fifo").map_err(|e| e.code()));
    });
    let got = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("reading a FIFO hung");
    assert_eq!(got, Err("not-regular"));
    assert_eq!(code(roots.write_file("fifo", b"x")), "not-regular");
    assert_eq!(code(roots.open_read("fifo")), "not-regular");
    assert_eq!(roots.read_file("a.txt").unwrap(), b"a");
});

both!(look_alike_roots, |roots, fx| {
    let id = roots.add_dir(fx.base.join("outside/dir")).unwrap();
    assert_eq!(read(roots, fx.base.join("outside/dir/inner.txt")), "inner");
    assert_eq!(
        roots
            .key(fx.base.join("outside/dir/inner.txt"))
            .unwrap()
            .root,
        id
    );
    escape(roots.read_file(fx.base.join("outside/dir/../secret.txt")));
    escape(roots.read_file(fx.base.join("outside/dir_evil/x")));
    // A relative path always means the project.
    assert_eq!(code(roots.read_file("inner.txt")), "not-found");
});

both!(dropped_file_reach, |roots, fx| {
    roots.add_file(fx.base.join("outside/secret.txt")).unwrap();
    assert_eq!(read(roots, fx.base.join("outside/secret.txt")), "secret");
    escape(roots.read_file(fx.base.join("outside/dir/inner.txt")));
    escape(roots.list_dir(fx.base.join("outside")));
});

#[test]
fn keys_are_whole_components_relative_to_their_root() {
    let fx = fixture();
    let roots = Roots::open(&fx.proj).unwrap();
    let k = |p: &str| roots.key(p).unwrap().to_string();
    assert_eq!(k("sub/./b.txt"), "sub/b.txt");
    assert_eq!(k("sub//b.txt/"), "sub/b.txt");
    assert_eq!(k("."), "");
    assert_eq!(k("sub/.."), "");
    assert_eq!(
        roots.key(fx.proj.join("sub/b.txt")).unwrap(),
        roots.key("sub/b.txt").unwrap()
    );
    assert_eq!(k("in_rel/b.txt"), "in_rel/b.txt", "a link is its own name");
    assert!(roots
        .key(fx.base.join("proj_evil/x.txt"))
        .unwrap_err()
        .is_escape());
}
