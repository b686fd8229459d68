//! The adapter's file tools and trust-map steps (capabilities `paths` and `trust`),
//! driven through `gatehouse adapter` over standard input and output as the runner
//! drives it: trusted and quarantined reads, the prompt answered yes and no, the write
//! table's rows, refusals, a FIFO that must not hang, the session start's questions, and
//! a resume round trip.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// One running adapter.
struct Adapter {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: i64,
}

impl Adapter {
    fn start() -> Adapter {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
            .arg("adapter")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the adapter starts");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut a = Adapter {
            child,
            stdin,
            lines,
            next: 0,
        };
        let hello = a.send(json!({"op": "hello", "protocol": "1.1"}));
        let caps = hello["capabilities"].as_array().unwrap();
        assert!(caps.contains(&json!("paths")) && caps.contains(&json!("trust")));
        a
    }

    /// Sends one request (an `id` is added) and returns the answer, within 10 s.
    fn send(&mut self, mut request: Value) -> Value {
        let id = self.next;
        self.next += 1;
        request["id"] = json!(id);
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no answer within 10 s to {request}"));
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], json!(id), "{line}");
        answer
    }

    /// Sends a step of session `s1` that must succeed.
    fn step(&mut self, mut request: Value) -> Value {
        request["session"] = json!("s1");
        let answer = self.send(request.clone());
        assert_eq!(answer["ok"], true, "{request} -> {answer}");
        answer
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, r#"{{"id": 999999, "op": "bye"}}"#);
        let _ = self.child.wait();
    }
}

/// `R/workspace`, `R/outside`, `R/extra`, `R/home`, canonical.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["workspace", "outside", "extra", "home"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        Tree { _dir: dir, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn ws(&self) -> PathBuf {
        self.path("workspace")
    }

    fn file(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn s(&self, rel: &str) -> String {
        self.path(rel).to_string_lossy().into_owned()
    }
}

fn open(tree: &Tree, extra: Value) -> (Adapter, Value) {
    let mut a = Adapter::start();
    let mut setup = json!({
        "workspace": tree.ws(), "home": tree.path("home"), "host": "posix",
        "asker": "terminal", "allow_list": [], "grants": [], "card_window_ms": null,
        "roots": [], "resolver": null, "startup": "yes", "skip_permissions": false,
        "settings_dirs": []
    });
    for (k, v) in extra.as_object().unwrap() {
        setup[k] = v.clone();
    }
    let opened = a.send(json!({"op": "open", "session": "s1", "setup": setup}));
    assert_eq!(opened["ok"], true, "{opened}");
    (a, opened)
}

fn read(a: &mut Adapter, path: &str, if_asked: &str) -> Value {
    a.step(json!({"op": "read", "path": path, "if_asked": if_asked}))
}

fn write(a: &mut Adapter, path: &str, content: &str, data: &str, if_asked: &str) -> Value {
    a.step(
        json!({"op": "write", "path": path, "content": content, "data": data,
                  "if_asked": if_asked}),
    )
}

fn query(a: &mut Adapter, path: &str) -> Value {
    a.step(json!({"op": "query", "path": path}))
}

#[test]
fn a_trusted_read_gives_the_file_and_asks_nothing() {
    let t = Tree::new();
    t.file("workspace/src/main.js", "main\n");
    let (mut a, opened) = open(&t, json!({}));
    assert_eq!(opened["started"], true);
    assert_eq!(opened["settings"], json!([]));
    let r = read(&mut a, "src/main.js", "no");
    assert_eq!(
        (&r["result"], &r["content"], &r["prompted"], &r["size"]),
        (&json!("read"), &json!("main\n"), &json!(false), &json!(5))
    );
    assert_eq!(r["preview"], Value::Null);
    // The absolute spelling under the working directory is the same relative key.
    let q = query(&mut a, &t.s("workspace/src/main.js"));
    assert_eq!(
        (&q["trust"], &q["namespace"], &q["key"], &q["rule"]),
        (
            &json!("trusted"),
            &json!("relative"),
            &json!("src/main.js"),
            &json!("")
        )
    );
}

#[test]
fn a_quarantined_read_prompts_once_per_turn_and_a_yes_vouches() {
    let t = Tree::new();
    t.file("workspace/vendor/lib.js", "const SPEED = 100;\n");
    t.file("workspace/empty.txt", "");
    t.file("workspace/shot.PNG", "\u{89}PNG");
    let (mut a, _) = open(&t, json!({"startup": "no"}));

    let r = read(&mut a, "vendor/lib.js", "no");
    assert_eq!(
        (&r["result"], &r["content"], &r["prompted"], &r["preview"]),
        (
            &json!("quarantined"),
            &Value::Null,
            &json!(true),
            &json!("text")
        )
    );
    assert_eq!(r["size"], 19);
    // The same key in the same turn: not asked again, a yes given now has no effect.
    let r = read(&mut a, "./vendor//lib.js", "yes");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("quarantined"), &json!(false))
    );
    assert_eq!(query(&mut a, "vendor/lib.js")["trust"], "unknown");

    a.step(json!({"op": "turn"}));
    let r = read(&mut a, "vendor/lib.js", "yes");
    assert_eq!(
        (&r["result"], &r["content"], &r["prompted"]),
        (&json!("read"), &json!("const SPEED = 100;\n"), &json!(true))
    );
    let q = query(&mut a, "vendor/lib.js");
    assert_eq!(
        (&q["trust"], &q["rule"]),
        (&json!("trusted"), &json!("vendor/lib.js"))
    );
    let rules = a.step(json!({"op": "status"}))["rules"].clone();
    assert_eq!(
        rules,
        json!([{"namespace": "relative", "key": "vendor/lib.js", "trust": "trusted",
                "origin": "read_prompt"}])
    );

    // An empty file is asked about, with its note; a picture never is.
    let r = read(&mut a, "empty.txt", "no");
    assert_eq!(
        (&r["prompted"], &r["preview"]),
        (&json!(true), &json!("empty"))
    );
    let r = read(&mut a, "shot.PNG", "yes");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("quarantined"), &json!(false))
    );
    // A directory or nothing: a refusal, no prompt.
    let r = read(&mut a, "vendor", "yes");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("is_directory"), &json!(false))
    );
    let r = read(&mut a, "missing.txt", "yes");
    assert_eq!(
        (&r["result"], &r["size"]),
        (&json!("not_found"), &Value::Null)
    );
}

#[test]
fn with_no_asker_nothing_is_trusted_and_nothing_is_asked() {
    let t = Tree::new();
    t.file("workspace/a.txt", "a\n");
    let (mut a, opened) = open(&t, json!({"asker": "none", "startup": "yes"}));
    assert_eq!(opened["started"], true);
    let r = read(&mut a, "a.txt", "yes");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("quarantined"), &json!(false))
    );
    let w = write(&mut a, "b.txt", "b", "trusted", "yes");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("no_asker"), &json!(false), &Value::Null)
    );
    assert!(!t.path("workspace/b.txt").exists());
}

#[test]
fn skip_permissions_trusts_the_directory_and_answers_write_prompts_yes() {
    let t = Tree::new();
    t.file("workspace/a.txt", "a\n");
    let (mut a, opened) = open(&t, json!({"skip_permissions": true, "startup": "leave"}));
    assert_eq!(opened["started"], true, "the question is not put");
    let w = write(&mut a, "a.txt", "fetched", "untrusted", "no");
    assert_eq!(
        (&w["result"], &w["effect"]),
        (&json!("written"), &json!("marked_untrusted"))
    );
    // The marked file is now vouched for by the mode at its read, as a yes would.
    let r = read(&mut a, "a.txt", "no");
    assert_eq!(
        (&r["result"], &r["content"]),
        (&json!("read"), &json!("fetched"))
    );
    let rules = a.step(json!({"op": "status"}))["rules"].clone();
    assert!(rules.as_array().unwrap().contains(
        &json!({"namespace": "relative", "key": "", "trust": "trusted", "origin": "skip_permissions"})
    ));
}

#[test]
fn the_write_table_row_by_row() {
    let t = Tree::new();
    t.file("workspace/docs/old.html", "old");
    t.file("workspace/vendor/x.js", "x");
    let (mut a, _) = open(&t, json!({"startup": "no"}));
    a.step(json!({"op": "gesture", "name": "untrust", "path": "vendor", "answer": "yes"}));

    // either data, never mentioned: asks; a yes takes the data's trust.
    let w = write(&mut a, "docs/page.html", "<p>hi</p>", "untrusted", "yes");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("written"), &json!(true), &json!("took_data_trust"))
    );
    assert_eq!(query(&mut a, "docs/page.html")["trust"], "untrusted");
    assert_eq!(
        query(&mut a, "docs")["trust"],
        "unknown",
        "never the parent"
    );
    // a no writes nothing and changes nothing; leave stops.
    let w = write(&mut a, "docs/new.html", "x", "trusted", "no");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("declined"), &json!(true), &Value::Null)
    );
    let w = write(&mut a, "docs/new.html", "x", "trusted", "leave");
    assert_eq!(w["result"], "stopped");
    assert!(!t.path("workspace/docs/new.html").exists());
    assert_eq!(query(&mut a, "docs/new.html")["trust"], "unknown");
    // trusted data to an untrusted path: silent, marked trusted.
    let w = write(&mut a, "vendor/x.js", "clean", "trusted", "no");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("written"), &json!(false), &json!("marked_trusted"))
    );
    // untrusted data to an untrusted path: silent, unchanged.
    let w = write(&mut a, "vendor/y.js", "dirty", "untrusted", "no");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("written"), &json!(false), &json!("unchanged"))
    );
    // untrusted data to a trusted path: asks, and a yes marks it untrusted.
    let w = write(&mut a, "vendor/x.js", "dirty again", "untrusted", "yes");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("written"), &json!(true), &json!("marked_untrusted"))
    );
    // trusted data to a trusted path: silent, unchanged.
    write(&mut a, "docs/t.txt", "t", "trusted", "yes");
    let w = write(&mut a, "docs/t.txt", "t2", "trusted", "no");
    assert_eq!(
        (&w["result"], &w["prompted"], &w["effect"]),
        (&json!("written"), &json!(false), &json!("unchanged"))
    );
    assert_eq!(
        std::fs::read_to_string(t.path("workspace/docs/t.txt")).unwrap(),
        "t2"
    );
}

#[test]
fn edits_count_an_untrusted_file_as_untrusted_data() {
    let t = Tree::new();
    t.file("workspace/src/a.js", "x = 100;\n");
    t.file("workspace/vendor/v.js", "y = 1; y = 1;\n");
    let (mut a, _) = open(&t, json!({}));
    a.step(json!({"op": "gesture", "name": "untrust", "path": "vendor", "answer": "yes"}));
    let e = a.step(
        json!({"op": "edit", "path": "src/a.js", "old": "100", "new": "200",
                          "data": "trusted", "if_asked": "no"}),
    );
    assert_eq!(
        (&e["result"], &e["prompted"], &e["effect"]),
        (&json!("written"), &json!(false), &json!("unchanged"))
    );
    assert_eq!(
        std::fs::read_to_string(t.path("workspace/src/a.js")).unwrap(),
        "x = 200;\n"
    );
    let e = a.step(
        json!({"op": "edit", "path": "src/a.js", "old": "999", "new": "1",
                          "data": "trusted", "if_asked": "yes"}),
    );
    assert_eq!(
        (&e["result"], &e["prompted"]),
        (&json!("no_match"), &json!(false))
    );
    let e = a.step(
        json!({"op": "edit", "path": "vendor/v.js", "old": "y = 1", "new": "z",
                          "data": "trusted", "if_asked": "yes"}),
    );
    assert_eq!(e["result"], "ambiguous");
    // The model may not read the file: the edit asks before it looks (TRUST-READ-4), a
    // `no` answers the same whatever the bytes hold.
    let e = a.step(
        json!({"op": "edit", "path": "vendor/v.js", "old": "y = 1; y", "new": "z",
                          "data": "trusted", "if_asked": "no"}),
    );
    assert_eq!(
        (&e["result"], &e["prompted"], &e["effect"]),
        (&json!("declined"), &json!(true), &json!(null))
    );
    // After a yes: the edit's data is untrusted, the untrusted file stays so (unchanged).
    let e = a.step(
        json!({"op": "edit", "path": "vendor/v.js", "old": "y = 1; y", "new": "z",
                          "data": "trusted", "if_asked": "yes"}),
    );
    assert_eq!(
        (&e["result"], &e["prompted"], &e["effect"]),
        (&json!("written"), &json!(true), &json!("unchanged"))
    );
    assert_eq!(query(&mut a, "vendor/v.js")["trust"], "untrusted");
    let e = a.step(
        json!({"op": "edit", "path": "nothing.js", "old": "a", "new": "b",
                          "data": "trusted", "if_asked": "yes"}),
    );
    assert_eq!(e["result"], "not_found");
}

#[test]
fn refusals_carry_the_path_codes_and_ask_nothing() {
    let t = Tree::new();
    t.file("outside/secret.txt", "not yours\n");
    t.file("workspace/sub/a.txt", "inside\n");
    let ws = t.ws();
    symlink("../outside/secret.txt", ws.join("out")).unwrap();
    symlink(t.path("outside/new.txt"), ws.join("dangling")).unwrap();
    symlink("sub/a.txt", ws.join("in")).unwrap();
    let (mut a, _) = open(&t, json!({"startup": "no"}));
    for (path, code) in [
        ("out", "escape"),
        ("../outside/secret.txt", "escape"),
        (&*t.s("outside/secret.txt"), "escape"),
        ("", "empty_path"),
        ("a\0b", "nul_byte"),
        ("sub/a.txt/x", "not_directory"),
    ] {
        let r = read(&mut a, path, "yes");
        assert_eq!(
            (&r["result"], &r["content"]),
            (&json!(code), &Value::Null),
            "{path:?}"
        );
        let w = write(&mut a, path, "x", "untrusted", "yes");
        assert_eq!(
            (&w["result"], &w["prompted"]),
            (&json!(code), &json!(false)),
            "{path:?}"
        );
    }
    let w = write(&mut a, "dangling", "x", "untrusted", "yes");
    assert_eq!(
        (&w["result"], &w["prompted"]),
        (&json!("escape"), &json!(false))
    );
    assert!(!t.path("outside/new.txt").exists());
    let w = write(&mut a, "in", "x", "untrusted", "yes");
    assert_eq!(w["result"], "final_symlink");
    let w = write(&mut a, "sub/", "x", "untrusted", "yes");
    assert_eq!(w["result"], "is_directory");
    let w = write(&mut a, "sub/a.txt/", "x", "untrusted", "yes");
    assert_eq!(w["result"], "is_directory");
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/a.txt")).unwrap(),
        "inside\n"
    );
    assert_eq!(
        a.step(json!({"op": "status"}))["rules"],
        json!([]),
        "nothing recorded"
    );
    let q = query(&mut a, "../x");
    assert_eq!(
        (&q["refused"], &q["trust"]),
        (&json!("escape"), &Value::Null)
    );
}

#[test]
fn a_fifo_never_hangs_and_search_withholds_untrusted_files() {
    let t = Tree::new();
    t.file("workspace/src/a.js", "// TODO one\nx\n// TODO two\n");
    t.file("workspace/vendor/x.js", "// TODO hidden\n");
    let ws = t.ws();
    let status = Command::new("mkfifo")
        .arg(ws.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let (mut a, _) = open(&t, json!({}));
    a.step(json!({"op": "gesture", "name": "untrust", "path": "vendor", "answer": "yes"}));
    let r = read(&mut a, "pipe", "yes");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("not_regular"), &json!(false))
    );
    let s = a.step(json!({"op": "search", "path": ".", "pattern": "TODO"}));
    assert_eq!(s["result"], "searched");
    assert_eq!(
        s["matches"],
        json!([{"file": "src/a.js", "line": 1, "text": "// TODO one"},
               {"file": "src/a.js", "line": 3, "text": "// TODO two"}])
    );
    assert_eq!(s["withheld"], json!(["vendor/x.js"]));
    let s = a.step(json!({"op": "search", "path": "src/a.js", "pattern": "two"}));
    assert_eq!(
        s["matches"],
        json!([{"file": "a.js", "line": 3, "text": "// TODO two"}])
    );
    let l = a.step(json!({"op": "list", "path": "."}));
    let mut names: Vec<String> = l["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["name"].as_str().unwrap(),
                e["kind"].as_str().unwrap()
            )
        })
        .collect();
    names.sort();
    assert_eq!(names, ["pipe other", "src dir", "vendor dir"]);
}

#[test]
fn session_start_settings_and_roots() {
    let t = Tree::new();
    t.file("extra/e.txt", "e\n");
    t.file("outside/o.txt", "o\n");
    std::fs::create_dir(t.path("workspace/sub")).unwrap();
    let (mut a, opened) = open(
        &t,
        json!({"roots": [t.path("outside")], "resolver": "walk", "settings_dirs": [
            {"layer": "user", "name": t.path("extra"), "answer": "yes"},
            {"layer": "project", "name": "../extra/", "answer": "no"},
            {"layer": "project", "name": "sub", "answer": "yes"},
            {"layer": "local", "name": "~/missing", "answer": "yes"},
        ]}),
    );
    assert_eq!(opened["resolver"], "walk");
    let extra = t.s("extra");
    assert_eq!(
        opened["settings"],
        json!([
            {"name": extra, "result": "asked", "resolved": extra, "code": null},
            {"name": "../extra/", "result": "merged", "resolved": extra, "code": null},
            {"name": "sub", "result": "reported", "resolved": null, "code": "inside_project"},
            {"name": "~/missing", "result": "reported", "resolved": null, "code": "not_found"},
        ])
    );
    // The settings directory is reachable and trusted; the command-line root reach only.
    let r = read(&mut a, &t.s("extra/e.txt"), "no");
    assert_eq!(r["result"], "read");
    let r = read(&mut a, &t.s("outside/o.txt"), "no");
    assert_eq!(
        (&r["result"], &r["prompted"]),
        (&json!("quarantined"), &json!(true))
    );
    let roots = a.step(json!({"op": "status"}))["roots"].clone();
    assert_eq!(
        roots,
        json!([{"path": t.ws(), "how": "working_directory"},
               {"path": t.path("outside"), "how": "cli_add_dir"},
               {"path": extra, "how": "settings_dir"}])
    );
    let g = a.step(json!({"op": "gesture", "name": "add_dir", "path": "sub", "answer": "yes"}));
    assert_eq!(g["result"], "inside_project");
    let g = a.step(json!({"op": "gesture", "name": "add_dir", "path": t.root, "answer": "yes"}));
    assert_eq!(g["result"], "holds_project");
    let g = a.step(json!({"op": "gesture", "name": "at_path", "path": "sub", "answer": "yes"}));
    assert_eq!(g["result"], "not_a_file");
}

#[test]
fn leave_at_startup_starts_nothing() {
    let t = Tree::new();
    let (mut a, opened) = open(&t, json!({"startup": "leave"}));
    assert_eq!(opened["started"], false);
    let r = a.send(json!({"op": "read", "session": "s1", "path": "x", "if_asked": "no"}));
    assert_eq!(r["ok"], false);
    assert_eq!(r["error"]["kind"], "error");
    let r = a.send(json!({"op": "decide", "session": "s1", "tool": "shell", "input": "ls"}));
    assert_eq!(r["ok"], false);
    let r = a.send(json!({"op": "close", "session": "s1"}));
    assert_eq!(r["ok"], true);
}

fn has_root(status: &Value, path: &Path, how: &str) -> bool {
    status["roots"]
        .as_array()
        .unwrap()
        .contains(&json!({"path": path, "how": how}))
}

#[test]
fn resume_restores_the_record_and_reports_what_is_gone() {
    let t = Tree::new();
    t.file("workspace/a.txt", "a\n");
    t.file("outside/dropped.txt", "d\n");
    std::fs::create_dir(t.path("extra/gone")).unwrap();
    let (mut a, _) = open(&t, json!({"startup": "no"}));
    for (name, path) in [
        ("add_dir", t.s("extra")),
        ("cli_add_dir", t.s("extra/gone")),
        ("drop", t.s("outside/dropped.txt")),
    ] {
        let g = a.step(json!({"op": "gesture", "name": name, "path": path, "answer": "yes"}));
        assert_eq!(g["result"], "done", "{name}");
    }
    let w = write(&mut a, "a.txt", "poison", "untrusted", "yes");
    assert_eq!(w["effect"], "took_data_trust");
    std::fs::remove_dir(t.path("extra/gone")).unwrap();
    let before = a.step(json!({"op": "status"}))["rules"].clone();

    let r = a.step(json!({"op": "resume"}));
    assert_eq!(
        r["unreopened"],
        json!([{"path": t.path("extra/gone"), "code": "not_found"}])
    );
    assert!(has_root(&r, &t.path("extra"), "add_dir"));
    assert!(has_root(&r, &t.path("outside/dropped.txt"), "drop"));
    let after = a.step(json!({"op": "status"}));
    assert_eq!(after["rules"], before, "every rule, the write's included");
    assert_eq!(query(&mut a, "a.txt")["trust"], "untrusted");
    let r = read(&mut a, &t.s("outside/dropped.txt"), "no");
    assert_eq!(r["content"], "d\n");

    // /clear: a new session, only the working directory, asked again.
    let c = a.step(json!({"op": "clear", "startup": "yes"}));
    assert_eq!(c["started"], true);
    let s = a.step(json!({"op": "status"}));
    assert_eq!(
        s["rules"],
        json!([{"namespace": "relative", "key": "", "trust": "trusted", "origin": "startup"}])
    );
    assert_eq!(
        s["roots"],
        json!([{"path": t.ws(), "how": "working_directory"}])
    );
    let r = read(&mut a, &t.s("outside/dropped.txt"), "no");
    assert_eq!(r["result"], "escape");
}

#[test]
fn cd_moves_the_working_directory_and_respells_the_rules() {
    let t = Tree::new();
    t.file("workspace/sub/x.txt", "x\n");
    t.file("workspace/top.txt", "t\n");
    let (mut a, _) = open(&t, json!({"startup": "no"}));
    a.step(json!({"op": "gesture", "name": "untrust", "path": "sub/x.txt", "answer": "yes"}));
    a.step(json!({"op": "gesture", "name": "at_path", "path": "top.txt", "answer": "yes"}));
    let g = a.step(json!({"op": "gesture", "name": "cd", "path": "top.txt", "answer": "yes"}));
    assert_eq!(g["result"], "not_directory");
    let g = a.step(json!({"op": "gesture", "name": "cd", "path": "sub", "answer": "yes"}));
    assert_eq!(g["result"], "done");
    let q = query(&mut a, "x.txt");
    assert_eq!(
        (&q["trust"], &q["rule"]),
        (&json!("untrusted"), &json!("x.txt"))
    );
    let q = query(&mut a, "other.txt");
    assert_eq!((&q["trust"], &q["rule"]), (&json!("trusted"), &json!("")));
    // The directory left is closed; its rule is spelled absolutely.
    let r = read(&mut a, &t.s("workspace/top.txt"), "no");
    assert_eq!(r["result"], "escape");
    let rules = a.step(json!({"op": "status"}))["rules"].clone();
    assert!(rules.as_array().unwrap().contains(&json!({
        "namespace": "absolute", "key": t.s("workspace/top.txt"), "trust": "trusted",
        "origin": "at_path"})));
}
