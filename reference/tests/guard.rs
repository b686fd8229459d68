//! `gatehouse guard AGENT` end to end, as each agent calls it: the hook JSON captured from
//! Claude Code, Codex CLI and Gemini CLI (FACTS.md section 13) and GitHub Copilot CLI
//! 1.0.102 (spec/guard.md section 6) on standard input, the
//! answer and the exit status checked (GUARD-* in spec/guard.md). A dangerous line, a read
//! outside the workspace, an allowed read, a line a deny pattern matches, garbage and an
//! unknown event, for each agent; then the fenced command really run, the state across
//! processes, the failures, and install/uninstall.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const AGENTS: [&str; 4] = ["claude-code", "codex", "gemini", "copilot"];

/// Whether `out` is the standard output of `agent`'s block answer for the line `err`:
/// nothing, or for GitHub Copilot CLI the same line as its JSON deny (GUARD-COPILOT-2).
fn block_out(agent: &str, out: &str, err: &str) -> bool {
    if agent != "copilot" {
        return out.is_empty();
    }
    let Ok(v) = serde_json::from_str::<Value>(out) else {
        return false;
    };
    v == json!({"permissionDecision": "deny", "permissionDecisionReason": err.trim_end()})
}

/// Asserts the block answer of `agent`: exit 2, one line on standard error, and the
/// standard output [`block_out`] allows.
fn assert_blocked(agent: &str, (code, out, err): (i32, &str, &str), what: &str) {
    assert_eq!(code, 2, "{agent} {what}: {out} {err}");
    assert!(block_out(agent, out, err), "{agent} {what}: {out:?} {err}");
    assert_eq!(err.lines().count(), 1, "{agent} {what}: {err}");
}

/// Runs `c` with `input` on its standard input: (exit, stdout, stderr).
fn feed(mut c: Command, input: &[u8]) -> (i32, String, String) {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    config: PathBuf,
}

impl Fixture {
    fn new(extra: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("notes.txt"), "a\n").unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let settings = root.join("settings.yaml");
        std::fs::write(
            &settings,
            "settings:\n  permissions:\n    deny: [\"shell:cmd=git push*\"]\n",
        )
        .unwrap();
        let config = root.join("guard.toml");
        std::fs::write(
            &config,
            format!(
                "state-dir = {:?}\nsettings-file = {:?}\n{extra}",
                root.join("state"),
                settings
            ),
        )
        .unwrap();
        Fixture {
            _dir: dir,
            root,
            ws,
            config,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gatehouse"));
        c.args(args)
            .current_dir(&self.ws)
            .env("HOME", self.root.join("home"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("GATEHOUSE_GUARD_CONFIG")
            .env_remove("CODEX_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("CLAUDE_CONFIG_DIR");
        c
    }

    /// Runs the hook of `agent` on `input`: (exit, stdout, stderr).
    fn hook_raw(&self, agent: &str, input: &[u8], config: bool) -> (i32, String, String) {
        let mut c = self.cmd(&["guard", agent]);
        if config {
            c.env("GATEHOUSE_GUARD_CONFIG", &self.config);
        }
        feed(c, input)
    }

    fn hook(&self, agent: &str, input: &Value) -> (i32, String, String) {
        self.hook_raw(agent, input.to_string().as_bytes(), true)
    }

    /// The pre-tool JSON each agent sends for a shell line (FACTS.md section 13).
    fn shell(&self, agent: &str, line: &str, id: &str) -> Value {
        self.pre(agent, line, id, &self.ws)
    }

    fn pre(&self, agent: &str, line: &str, id: &str, cwd: &Path) -> Value {
        let cwd = cwd.display().to_string();
        match agent {
            "claude-code" => json!({
                "session_id": "3f0c-claude", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": line, "description": "d"},
                "tool_use_id": id,
            }),
            "codex" => json!({
                "session_id": "019a-codex", "turn_id": "t1", "cwd": cwd,
                "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                "tool_name": "Bash", "tool_input": {"command": line}, "tool_use_id": id,
            }),
            // Captured from Copilot CLI 1.0.102: no event name, no call id.
            "copilot" => json!({
                "sessionId": "d91fc8f0-copilot", "timestamp": 1796636142187_u64, "cwd": cwd,
                "toolName": "bash", "toolArgs": {"command": line, "description": "d"},
            }),
            _ => json!({
                "session_id": "g-1", "transcript_path": "/tmp/t.json", "cwd": cwd,
                "hook_event_name": "BeforeTool", "timestamp": "2026-12-05T10:00:00Z",
                "tool_name": "run_shell_command",
                "tool_input": {"command": line, "description": "d"},
            }),
        }
    }
}

/// The rewritten command of an allow or ask answer.
fn rewritten(agent: &str, stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap();
    let c = if agent == "gemini" {
        &v["hookSpecificOutput"]["tool_input"]["command"]
    } else if agent == "copilot" {
        &v["modifiedArgs"]["command"]
    } else {
        &v["hookSpecificOutput"]["updatedInput"]["command"]
    };
    c.as_str().unwrap().to_string()
}

fn decision(agent: &str, stdout: &str) -> String {
    let v: Value = serde_json::from_str(stdout).unwrap();
    let d = if agent == "gemini" {
        &v["decision"]
    } else if agent == "copilot" {
        &v["permissionDecision"]
    } else {
        &v["hookSpecificOutput"]["permissionDecision"]
    };
    d.as_str().unwrap().to_string()
}

// GUARD-DECIDE-1, GUARD-REWRITE-1: a plain read inside the workspace is allowed, and runs
// in the fence.
#[test]
fn an_allowed_read_is_rewritten_into_the_fence() {
    let f = Fixture::new("");
    for agent in AGENTS {
        let (code, out, err) = f.hook(agent, &f.shell(agent, "cat notes.txt", "c1"));
        assert_eq!(code, 0, "{agent}: {err}");
        assert_eq!(decision(agent, &out), "allow", "{agent}");
        let line = rewritten(agent, &out);
        assert!(
            line.starts_with(env!("CARGO_BIN_EXE_gatehouse")) || line.starts_with('\''),
            "{line}"
        );
        assert!(line.contains(" exec --no-tty --workspace "), "{line}");
        assert!(line.ends_with(" -c 'cat notes.txt'"), "{line}");
        assert!(line.contains(&f.ws.display().to_string()), "{line}");
    }
}

// GUARD-ASK-1, GUARD-ASK-2: a dangerous line asks in Claude Code (rewritten, so the
// approved line runs in the fence) and is denied, with the reason, where the agent cannot
// ask.
#[test]
fn a_dangerous_line_asks_only_where_the_agent_asks() {
    let f = Fixture::new("");
    let (code, out, err) = f.hook("claude-code", &f.shell("claude-code", "rm -rf ~", "c1"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "ask");
    assert!(rewritten("claude-code", &out).ends_with(" -c 'rm -rf ~'"));
    for agent in ["codex", "gemini", "copilot"] {
        let (code, out, err) = f.hook(agent, &f.shell(agent, "rm -rf ~", "c1"));
        assert_eq!(code, 2, "{agent}: {out}");
        assert!(block_out(agent, &out, &err), "{agent}: {out}");
        assert!(
            err.starts_with("gatehouse guard: denied (dangerous"),
            "{agent}: {err}"
        );
        assert!(err.contains("cannot ask"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

// GUARD-ASK-2: a line outside the auto-safe reads asks in Claude Code, is denied elsewhere.
#[test]
fn a_read_outside_the_workspace_is_not_allowed() {
    let f = Fixture::new("");
    let (code, out, _) = f.hook(
        "claude-code",
        &f.shell("claude-code", "cat /etc/passwd", "c1"),
    );
    assert_eq!(code, 0);
    assert_eq!(decision("claude-code", &out), "ask");
    for agent in ["codex", "gemini", "copilot"] {
        let (code, out, err) = f.hook(agent, &f.shell(agent, "cat /etc/passwd", "c1"));
        assert_blocked(agent, (code, &out, &err), "cat /etc/passwd");
        assert!(err.contains("denied ("), "{err}");
    }
}

// GUARD-DECIDE-4: the file tools' paths go through the roots: outside (or through a link
// out) is denied, inside is decided by the order.
#[test]
fn file_tools_are_confined_to_the_roots() {
    let f = Fixture::new("");
    std::os::unix::fs::symlink("/etc", f.ws.join("out")).unwrap();
    let cwd = f.ws.display().to_string();
    let read = |path: &str| {
        json!({"session_id": "s", "transcript_path": "/t", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": {"file_path": path}, "tool_use_id": "r"})
    };
    for bad in ["/etc/passwd", "out/passwd", "../../etc/passwd"] {
        let (code, out, err) = f.hook("claude-code", &read(bad));
        assert_eq!((code, out.as_str()), (2, ""), "{bad}: {err}");
        assert!(err.contains("denied (escape"), "{bad}: {err}");
    }
    let inside = f.ws.join("notes.txt").display().to_string();
    let (code, out, err) = f.hook("claude-code", &read(&inside));
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "allow");
    let gem = json!({"session_id": "g", "transcript_path": "/t", "cwd": cwd,
        "hook_event_name": "BeforeTool", "timestamp": "x", "tool_name": "read_file",
        "tool_input": {"absolute_path": "/etc/passwd"}});
    let (code, _, err) = f.hook("gemini", &gem);
    assert_eq!(code, 2, "{err}");
}

// GUARD-DECIDE-1: the person's deny pattern denies in every dialect.
#[test]
fn a_deny_pattern_denies() {
    let f = Fixture::new("");
    for agent in AGENTS {
        let (code, out, err) = f.hook(agent, &f.shell(agent, "git push origin main", "c1"));
        assert_blocked(agent, (code, &out, &err), "git push");
        assert!(err.contains("deny_pattern"), "{agent}: {err}");
        assert!(err.contains("git push*"), "{agent}: {err}");
    }
    // Its twin: another git line is not denied by it.
    let (code, _, err) = f.hook("claude-code", &f.shell("claude-code", "git status", "c2"));
    assert_eq!(code, 0, "{err}");
}

// GUARD-FAIL-1: garbage, non-UTF-8, a lone surrogate, an unknown event, a missing field,
// a command of the wrong shape: the block answer.
#[test]
fn what_cannot_be_read_is_blocked() {
    let f = Fixture::new("");
    for agent in AGENTS {
        // Copilot's input names no event: its post-tool event (a `toolResult`) and a
        // named event other than preToolUse are the unknown events.
        let (event, session, input) = if agent == "copilot" {
            ("hookEventName", "sessionId", "toolArgs")
        } else {
            ("hook_event_name", "session_id", "tool_input")
        };
        let mut unknown = f.shell(agent, "ls", "c");
        unknown[event] = json!("SessionStart");
        let mut no_session = f.shell(agent, "ls", "c");
        no_session.as_object_mut().unwrap().remove(session);
        let mut argv = f.shell(agent, "ls", "c");
        argv[input]["command"] = json!(["rm", "-rf", "/"]);
        let mut post = f.shell(agent, "ls", "c");
        post["toolResult"] = json!({"resultType": "success", "textResultForLlm": "x"});
        let mut args_text = f.shell(agent, "ls", "c");
        args_text[input] = json!("{\"command\":\"ls\"}");
        let inputs: Vec<Vec<u8>> = vec![
            b"not json{".to_vec(),
            b"".to_vec(),
            b"{\"session_id\": \"\xff\xfe\"}".to_vec(),
            br#"{"session_id":"\ud800","cwd":"/","hook_event_name":"PreToolUse"}"#.to_vec(),
            b"[1,2]".to_vec(),
            unknown.to_string().into_bytes(),
            no_session.to_string().into_bytes(),
            argv.to_string().into_bytes(),
            args_text.to_string().into_bytes(),
        ];
        let inputs = if agent == "copilot" {
            [inputs, vec![post.to_string().into_bytes()]].concat()
        } else {
            inputs
        };
        for input in inputs {
            let (code, out, err) = f.hook_raw(agent, &input, true);
            let what = String::from_utf8_lossy(&input).to_string();
            assert_blocked(agent, (code, &out, &err), &what);
            assert!(err.starts_with("gatehouse guard: "), "{err}");
        }
    }
}

// GUARD-FAIL-1: a missing or invalid configuration blocks every call.
#[test]
fn a_missing_or_invalid_configuration_blocks() {
    let f = Fixture::new("");
    for agent in AGENTS {
        let input = f.shell(agent, "cat notes.txt", "c");
        let (code, _, err) = f.hook_raw(agent, input.to_string().as_bytes(), false);
        assert_eq!(code, 2, "{agent}: {err}");
        assert!(err.contains("no guard configuration"), "{err}");
    }
    for bad in [
        "bogus = 1\n",
        "safety = \"lax\"\n",
        "[exec]\nnetwork = \"wide\"\n",
    ] {
        let f = Fixture::new(bad);
        let (code, _, err) = f.hook("codex", &f.shell("codex", "cat notes.txt", "c"));
        assert_eq!(code, 2, "{bad}: {err}");
    }
}

// GUARD-FAIL-2: a panic is the block answer, never exit 101.
#[test]
fn a_panic_blocks() {
    let f = Fixture::new("");
    for agent in AGENTS {
        let input = f.shell(agent, "cat notes.txt", "c");
        let mut c = f.cmd(&["guard", agent]);
        c.env("GATEHOUSE_GUARD_CONFIG", &f.config)
            .env("GATEHOUSE_GUARD_TEST_PANIC", "1");
        let (code, _, err) = feed(c, input.to_string().as_bytes());
        assert_eq!(code, 2);
        assert_eq!(
            err,
            "gatehouse guard: internal error (a panic); the call is blocked\n"
        );
    }
}

// GUARD-DECIDE-2: a tool the guard does not guard passes unchanged.
#[test]
fn an_unguarded_tool_passes() {
    let f = Fixture::new("");
    let input = json!({"session_id": "s", "transcript_path": "/t", "cwd": f.ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "WebSearch", "tool_input": {"query": "q"}, "tool_use_id": "w"});
    assert_eq!(
        f.hook("claude-code", &input),
        (0, String::new(), String::new())
    );
}

// GUARD-REWRITE-1: the fenced command, run by the agent's shell, runs the original line
// byte for byte (quotes, `$`, backticks, newlines) inside the fence.
#[test]
fn the_fenced_command_runs_the_original_line() {
    // Quotes inside quotes, `$`, backticks and a newline (the gate reads a single-quoted
    // `$HOME` beside backticks as dangerous, hence this spelling).
    let line = "printf '%s\\n' 'it'\\''s' '$HOME' '`id`' \"a\\\"b\" 'c\nd'";
    let allow = format!("allow = [{}]\n", toml::Value::String(line.into()));
    let f = Fixture::new(&allow);
    let direct = Command::new("/bin/bash")
        .args(["-c", line])
        .current_dir(&f.ws)
        .output()
        .unwrap();
    assert!(direct.status.success());
    let (code, out, err) = f.hook("claude-code", &f.shell("claude-code", line, "c1"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "allow");
    let fenced = rewritten("claude-code", &out);
    let ran = Command::new("/bin/bash")
        .args(["-c", &fenced])
        .current_dir(&f.ws)
        .env("GATEHOUSE_GUARD_CONFIG", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&direct.stdout),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

// GUARD-STATE-1, GUARD-STATE-2: one session per agent session id, across processes: an
// ask answered by the agent's prompt (the post-tool event) is recorded as approved; the
// roots stay those of the first call.
#[test]
fn state_lasts_across_calls() {
    let f = Fixture::new("");
    let (code, _, _) = f.hook("claude-code", &f.shell("claude-code", "npm test", "t1"));
    assert_eq!(code, 0);
    let post = json!({"session_id": "3f0c-claude", "transcript_path": "/t", "cwd": f.ws,
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "npm test"}, "tool_response": {"stdout": ""},
        "tool_use_id": "t1"});
    assert_eq!(f.hook("claude-code", &post).0, 0);
    let dir = f.root.join("state/sessions/claude-code-3f0c-claude");
    let dir = if dir.exists() {
        dir
    } else {
        f.root.join("state/claude-code-3f0c-claude")
    };
    let journal = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let records: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(records
        .iter()
        .any(|r| r["kind"] == "decision" && r["tool_use_id"] == "t1" && r["decision"] == "ask"));
    assert!(records
        .iter()
        .any(|r| r["kind"] == "answer" && r["tool_use_id"] == "t1" && r["outcome"] == "approved"));
    assert!(records
        .iter()
        .any(|r| r["kind"] == "act" && r["tool_use_id"] == "t1" && r["ran"] == true));
    // The session's roots are those of its first call: a later cwd outside them blocks.
    let elsewhere = f.root.join("home");
    let (code, _, err) = f.hook(
        "claude-code",
        &f.pre("claude-code", "cat notes.txt", "t2", &elsewhere),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("outside the session's workspace roots"),
        "{err}"
    );
    // Its twin: a subdirectory of the root is fine.
    let (code, _, err) = f.hook(
        "claude-code",
        &f.pre("claude-code", "ls", "t3", &f.ws.join("sub")),
    );
    assert_eq!(code, 0, "{err}");
}

// GUARD-COPILOT-3, GUARD-COPILOT-4: GitHub Copilot CLI's hook goes into the person's
// `~/.copilot/settings.json` (or `$COPILOT_HOME`'s), in Copilot's own entry shape with no
// matcher, beside the person's hooks; never into a project; the doctor says when a
// settings file Copilot reads switches every hook off; uninstall gives the bytes back.
#[test]
fn copilot_installs_into_the_users_settings_only() {
    let f = Fixture::new("");
    let settings = f.root.join("home/.copilot/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = "{\n  \"model\": \"x\",\n  \"hooks\": {\n    \"preToolUse\": [\n      {\n        \"type\": \"command\",\n        \"bash\": \"my-hook\"\n      }\n    ]\n  }\n}\n";
    std::fs::write(&settings, original).unwrap();
    let run = |args: &[&str]| {
        let out = f.cmd(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, said) = run(&["guard", "install", "copilot"]);
    assert_eq!(code, 0, "{said}");
    assert!(!said.lines().any(|l| l.starts_with("- ")), "{said}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let pre = after["hooks"]["preToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{after}");
    assert!(pre[0]["bash"].as_str().unwrap().ends_with(" guard copilot"));
    assert_eq!(pre[0]["timeoutSec"], 60);
    assert_eq!(pre[0]["type"], "command");
    assert!(
        pre[0].get("matcher").is_none(),
        "every tool reaches the guard"
    );
    assert_eq!(pre[1]["bash"], "my-hook");
    assert!(after["hooks"].get("postToolUse").is_none());
    // Twice changes nothing more.
    let (code, _) = run(&["guard", "install", "copilot"]);
    assert_eq!(code, 0);
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(again, after);
    // The doctor: installed and run; then switched off by the user's settings, or by a
    // project settings file Copilot reads once it trusts the folder.
    let (code, said) = run(&["guard", "doctor", "copilot"]);
    assert!(said.contains("hook: installed in"), "{said}");
    assert!(said.contains("runs it: yes"), "{said}");
    let _ = code; // the fence line decides the rest of the exit status on this machine
    std::fs::create_dir_all(f.ws.join(".github/copilot")).unwrap();
    for (value, off) in [("false", false), ("true", true)] {
        std::fs::write(
            f.ws.join(".github/copilot/settings.json"),
            format!("{{\"disableAllHooks\": {value}}}"),
        )
        .unwrap();
        let (code, said) = run(&["guard", "doctor", "copilot"]);
        assert_eq!(said.contains("sets disableAllHooks"), off, "{said}");
        if off {
            assert_ne!(code, 0, "{said}");
        }
    }
    std::fs::remove_dir_all(f.ws.join(".github")).unwrap();
    // Never a project: Copilot loads a project's hooks only in a folder it trusts, whose
    // own settings can switch them off.
    let (code, said) = run(&["guard", "install", "copilot", "--project"]);
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("only in a folder it trusts"), "{said}");
    assert!(!f.ws.join(".github").exists());
    // Uninstall gives the person's bytes back.
    let (code, said) = run(&["guard", "uninstall", "copilot"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    // $COPILOT_HOME moves the file.
    let home = f.root.join("copilot-home");
    let out = f
        .cmd(&["guard", "install", "copilot"])
        .env("COPILOT_HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success());
    let moved: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap())
            .unwrap();
    assert!(moved["hooks"]["preToolUse"][0]["bash"]
        .as_str()
        .unwrap()
        .ends_with(" guard copilot"));
}

// GUARD-INSTALL-1, GUARD-INSTALL-2, GUARD-INSTALL-5: install merges (keeping what was
// there, in the file's own layout, with a backup of the first version), uninstall takes
// out only the guard's entries and gives back the person's bytes.
#[test]
fn install_merges_and_uninstall_restores() {
    let f = Fixture::new("");
    let settings = f.root.join("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Four spaces, keys out of order, no final newline: the person's own layout.
    let original = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"my-hook\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"env\": {}\n}";
    let before: Value = serde_json::from_str(original).unwrap();
    std::fs::write(&settings, original).unwrap();
    let out = f
        .cmd(&["guard", "install", "claude-code"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("+ ") && shown.contains("guard claude-code"),
        "{shown}"
    );
    // Only the guard's lines are added; not one line of the person's is taken out.
    assert!(!shown.lines().any(|l| l.starts_with("- ")), "{shown}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after["model"], "opus");
    let pre = after["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert!(pre[0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with(" guard claude-code"));
    assert!(after["hooks"]["PostToolUse"].is_array());
    let backup = settings.with_extension("json.gatehouse-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    // The configuration was written, and it reads.
    assert!(f.root.join("home/.config/gatehouse/guard.toml").exists());
    let doctor = f.cmd(&["guard", "doctor", "claude-code"]).output().unwrap();
    let said = String::from_utf8(doctor.stdout).unwrap();
    assert!(said.contains("hook: installed in"), "{said}");
    assert!(said.contains("fence on this machine"), "{said}");
    let uninstall = |f: &Fixture| {
        let out = f
            .cmd(&["guard", "uninstall", "claude-code"])
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(&settings).unwrap()
    };
    let restored = uninstall(&f);
    assert_eq!(serde_json::from_str::<Value>(&restored).unwrap(), before);
    assert_eq!(restored, original, "the person's bytes come back");
    // The person changes the file; a second install keeps the first backup, and its
    // uninstall gives the changed file back in its own layout.
    let edited = original.replace("\"opus\"", "\"sonnet\"");
    std::fs::write(&settings, &edited).unwrap();
    assert!(f
        .cmd(&["guard", "install", "claude-code"])
        .output()
        .unwrap()
        .status
        .success());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    assert_eq!(uninstall(&f), edited);
    let doctor = f.cmd(&["guard", "doctor", "claude-code"]).output().unwrap();
    assert_eq!(doctor.status.code(), Some(1));
}

// GUARD-INSTALL-4, GUARD-FAIL-3, GUARD-DECIDE-5: install goes into the person's own
// settings, outside every workspace, by default; a project's settings file only where the
// fence keeps it read-only; every file tool is in the matcher, and Claude Code is told to
// block a call whose hook fails.
#[test]
fn install_goes_where_nothing_the_guard_lets_run_reaches() {
    let f = Fixture::new("");
    for (agent, file) in [
        ("claude-code", ".claude/settings.json"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let out = f.cmd(&["guard", "install", agent]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(f.root.join("home").join(file).exists(), "{agent}");
        assert!(!f.ws.join(file).exists(), "{agent}");
        let project = f.ws.join(file);
        let protected = gatehouse::guard::install::protected_in_project(&f.ws, &project);
        let out = f
            .cmd(&["guard", "install", agent, "--project"])
            .output()
            .unwrap();
        if protected {
            assert!(out.status.success(), "{agent}");
            assert!(project.exists(), "{agent}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{agent}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                said.contains("does not keep it read-only"),
                "{agent}: {said}"
            );
            assert!(!project.exists(), "{agent}");
        }
    }
    // Where the fence keeps the file read-only (.gatehouse is on its list), a project
    // install is taken: the check is the fence's list, not a refusal of every project.
    assert!(gatehouse::guard::install::protected_in_project(
        &f.ws,
        &f.ws.join(".gatehouse/x.json")
    ));
    let claude: Value = serde_json::from_str(
        &std::fs::read_to_string(f.root.join("home/.claude/settings.json")).unwrap(),
    )
    .unwrap();
    for event in ["PreToolUse", "PostToolUse"] {
        let entry = &claude["hooks"][event][0];
        assert_eq!(entry["onFailure"], "block", "{entry}");
        let matcher = entry["matcher"].as_str().unwrap();
        for tool in [
            "Bash",
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Grep",
            "Glob",
            "LS",
        ] {
            assert!(matcher.split('|').any(|m| m == tool), "{tool}: {matcher}");
        }
    }
    let gemini: Value = serde_json::from_str(
        &std::fs::read_to_string(f.root.join("home/.gemini/settings.json")).unwrap(),
    )
    .unwrap();
    let matcher = gemini["hooks"]["BeforeTool"][0]["matcher"]
        .as_str()
        .unwrap();
    for tool in [
        "run_shell_command",
        "read_file",
        "write_file",
        "replace",
        "read_many_files",
        "list_directory",
        "glob",
        "search_file_content",
        "grep_search",
    ] {
        assert!(matcher.split('|').any(|m| m == tool), "{tool}: {matcher}");
    }
    let home = f.root.join("codex-home");
    let out = f
        .cmd(&["guard", "install", "codex"])
        .env("CODEX_HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success());
    let codex: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("hooks.json")).unwrap()).unwrap();
    let matchers: Vec<&str> = codex["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["matcher"].as_str().unwrap())
        .collect();
    assert_eq!(matchers, ["Bash", "apply_patch"]);
}

// GUARD-INSTALL-3: the doctor on a pipe closed before it writes (`doctor | head -0`) ends
// without a panic.
#[test]
fn the_doctor_survives_a_closed_pipe() {
    let f = Fixture::new("");
    let (read, write) = rustix::pipe::pipe().unwrap();
    drop(read);
    let out = f
        .cmd(&["guard", "doctor", "claude-code"])
        .stdout(Stdio::from(write))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

// GUARD-INSTALL-3: Codex's hooks go to CODEX_HOME with the feature switched on, and the
// doctor names the hook trust Codex needs.
#[test]
fn codex_install_switches_hooks_on() {
    let f = Fixture::new("");
    let home = f.root.join("codex-home");
    let out = f
        .cmd(&["guard", "install", "codex"])
        .env("CODEX_HOME", &home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("hooks.json")).unwrap()).unwrap();
    assert_eq!(hooks["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(config.contains("[features]\nhooks = true"), "{config}");
    let doctor = f
        .cmd(&["guard", "doctor", "codex"])
        .env("CODEX_HOME", &home)
        .output()
        .unwrap();
    let said = String::from_utf8(doctor.stdout).unwrap();
    assert!(said.contains("--dangerously-bypass-hook-trust"), "{said}");
    let refused = f
        .cmd(&["guard", "install", "codex", "--project"])
        .env("CODEX_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}

// GUARD-STATE-1: calls the agent makes in parallel in one session are each decided and
// recorded whole (the session is taken one hook process at a time).
#[test]
fn parallel_calls_of_one_session_are_all_recorded() {
    let f = std::sync::Arc::new(Fixture::new(""));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let f = f.clone();
            std::thread::spawn(move || {
                f.hook(
                    "codex",
                    &f.shell("codex", "cat notes.txt", &format!("p{i}")),
                )
            })
        })
        .collect();
    for h in handles {
        let (code, _, err) = h.join().unwrap();
        assert_eq!(code, 0, "{err}");
    }
    let dir = std::fs::read_dir(f.root.join("state"))
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.ends_with("codex-019a-codex"))
        .or_else(|| Some(f.root.join("state/codex-019a-codex")))
        .unwrap();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("torn")), "{names:?}");
    let journal = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let decisions = journal
        .lines()
        .filter(|l| l.contains("\"kind\":\"decision\""))
        .count();
    assert_eq!(decisions, 8, "{journal}");
}

// GUARD-INSTALL-1: `--user` for Claude Code is the settings Claude Code reads: under
// CLAUDE_CONFIG_DIR when it is set.
#[test]
fn claude_user_install_follows_claude_config_dir() {
    let f = Fixture::new("");
    let cfg = f.root.join("claude-cfg");
    let out = f
        .cmd(&["guard", "install", "claude-code", "--user"])
        .env("CLAUDE_CONFIG_DIR", &cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cfg.join("settings.json").exists());
    assert!(!f.root.join("home/.claude/settings.json").exists());
}

// ORDER-REC-1, ORDER-REC-6 through the guard: what decides the next call (its
// configuration, its state directory) stays out of every workspace root and out of every
// path the jail is given, however it is spelled; each is refused with the block answer
// naming it, and nothing is rewritten into the fence.
#[test]
fn the_guard_keeps_its_configuration_and_state_out_of_reach() {
    let f = Fixture::new("");
    std::os::unix::fs::symlink(f.root.join("state"), f.root.join("statelink")).unwrap();
    for (extra, says) in [
        ("[exec]\nrw = [\"STATE\"]\n", "[exec] rw"),
        ("[exec]\nro = [\"STATE/sessions\"]\n", "[exec] ro"),
        (
            "[exec]\nrw = [\"ROOT/statelink\"]\n",
            "the guard's state directory",
        ),
        ("[exec]\nrw = [\"ROOT\"]\n", "[exec] rw"),
    ] {
        let extra = extra
            .replace("STATE", &f.root.join("state").display().to_string())
            .replace("ROOT", &f.root.display().to_string());
        let g = Fixture::new(&extra);
        // The fixture's state directory lies under its own root: point at it.
        let text = std::fs::read_to_string(&g.config)
            .unwrap()
            .replace(&f.root.display().to_string(), &g.root.display().to_string());
        std::fs::write(&g.config, text).unwrap();
        if extra.contains("statelink") {
            std::os::unix::fs::symlink(g.root.join("state"), g.root.join("statelink")).unwrap();
        }
        for agent in AGENTS {
            let (code, out, err) = g.hook(agent, &g.shell(agent, "cat notes.txt", "c"));
            assert_blocked(agent, (code, &out, &err), &extra);
            assert!(err.contains(says), "{agent} {extra}: {err}");
        }
    }
    // The configuration inside the workspace: the agent's own Write tool could change it.
    let inside = f.ws.join(".guard.toml");
    std::fs::copy(&f.config, &inside).unwrap();
    let input = f.shell("claude-code", "cat notes.txt", "c");
    let mut c = f.cmd(&["guard", "claude-code"]);
    c.env("GATEHOUSE_GUARD_CONFIG", &inside);
    let (code, _, err) = feed(c, input.to_string().as_bytes());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("lies inside the workspace root"), "{err}");
    // A name `gatehouse exec` would refuse never reaches a command line.
    for bad in [
        "pass-env = [\"A=B\"]",
        "pass-secret-env = [\"\"]",
        "pass-env = [\"A\\u0000\"]",
    ] {
        let g = Fixture::new(&format!("[exec]\n{bad}\n"));
        let (code, _, err) = g.hook("codex", &g.shell("codex", "cat notes.txt", "c"));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("is no variable name"), "{bad}: {err}");
    }
}

/// The pre-tool JSON of `agent`'s file tool `tool` with `input`, from `cwd`.
fn file_call(agent: &str, tool: &str, input: Value, cwd: &Path) -> Value {
    let cwd = cwd.display().to_string();
    match agent {
        "claude-code" => json!({
            "session_id": "3f0c-claude", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "f1",
        }),
        "codex" => json!({
            "session_id": "019a-codex", "turn_id": "t1", "cwd": cwd,
            "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
            "tool_name": tool, "tool_input": input, "tool_use_id": "f1",
        }),
        "copilot" => json!({
            "sessionId": "d91fc8f0-copilot", "timestamp": 1796636142187_u64, "cwd": cwd,
            "toolName": tool, "toolArgs": input,
        }),
        _ => json!({
            "session_id": "g-1", "transcript_path": "/tmp/t.json", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-05T10:00:00Z",
            "tool_name": tool, "tool_input": input,
        }),
    }
}

/// Every tool of every agent that writes `path`, as that agent spells its input.
fn writes_of(path: &str) -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "claude-code",
            "Write",
            json!({"file_path": path, "content": "x"}),
        ),
        (
            "claude-code",
            "Edit",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        ),
        (
            "claude-code",
            "MultiEdit",
            json!({"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
        (
            "claude-code",
            "NotebookEdit",
            json!({"notebook_path": path, "new_source": "x"}),
        ),
        (
            "gemini",
            "write_file",
            json!({"file_path": path, "content": "x"}),
        ),
        (
            "gemini",
            "replace",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        ),
        (
            "codex",
            "apply_patch",
            json!({"input": format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n")}),
        ),
        ("copilot", "create", json!({"path": path, "file_text": "x"})),
        (
            "copilot",
            "edit",
            json!({"path": path, "old_str": "a", "new_str": "b"}),
        ),
        (
            "codex",
            "Bash",
            json!({"command": format!("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/lib.rs\n*** Move to: {path}\n@@\n-a\n+b\n*** End Patch\nEOF\n")}),
        ),
    ]
}

// GUARD-FILE-1: every agent's write tools, on what the fence keeps read-only, however it
// is spelled (a link, a linked directory, `..`, absolute, a name not there yet), get the
// block answer with its reason in the most permissive mode, never an ask; the same tools
// on an ordinary file are allowed.
#[test]
fn file_tools_never_write_what_the_fence_protects() {
    let f = Fixture::new("safety = \"autonomous\"\n");
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    std::fs::write(f.ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(f.ws.join(".husky")).unwrap();
    std::fs::create_dir_all(f.ws.join("src")).unwrap();
    std::fs::write(f.ws.join("src/lib.rs"), "a\n").unwrap();
    std::os::unix::fs::symlink(".git/hooks/pre-commit", f.ws.join("lint.sh")).unwrap();
    std::os::unix::fs::symlink(".git/hooks", f.ws.join("hooks")).unwrap();
    std::os::unix::fs::symlink(".git", f.ws.join("g")).unwrap();
    let abs = |p: &str| f.ws.join(p).display().to_string();
    let bad = [
        ".git/hooks/pre-commit".to_string(),
        ".git/config".into(),
        abs(".git/config"),
        "lint.sh".into(),
        "hooks/pre-push".into(),
        "g/config".into(),
        "src/../.git/hooks/post-checkout".into(),
        "./.git/HEAD".into(),
        "sub/../.git/info/attributes".into(),
        ".gatehouse/agent.yaml".into(),
        ".husky/pre-commit".into(),
        "HEAD".into(),
    ];
    for path in &bad {
        for (agent, tool, input) in writes_of(path) {
            let (code, out, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_blocked(agent, (code, &out, &err), &format!("{tool} {path}"));
            assert!(
                err.contains("denied (protected"),
                "{agent} {tool} {path}: {err}"
            );
        }
    }
    // A file with a second name outside the workspace (a hard link) is written under both.
    std::fs::write(f.root.join("outside.txt"), "a\n").unwrap();
    std::fs::hard_link(f.root.join("outside.txt"), f.ws.join("src/linked.txt")).unwrap();
    for (agent, tool, input) in writes_of("src/linked.txt")
        .into_iter()
        .filter(|w| w.1 != "Bash")
    {
        let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 2, "{agent} {tool}: {err}");
        assert!(err.contains("denied (linked"), "{agent} {tool}: {err}");
    }
    // A patch line of a shape the guard does not read is not passed over.
    let odd = json!({"input": "*** Begin Patch\n*** Add File: src/ok.rs\n+x\n*** Add  File: .git/config\n+x\n*** End Patch\n"});
    let (code, _, err) = f.hook("codex", &file_call("codex", "apply_patch", odd, &f.ws));
    assert_eq!(code, 2, "{err}");
    // The twins: an ordinary file, existing or not, and a name that only looks like one.
    // (A shell line carrying a patch is then the gate's to decide, as any line.)
    for path in [
        "src/lib.rs",
        "src/new.rs",
        "git/config",
        ".github/hooks.yml",
    ] {
        for (agent, tool, input) in writes_of(path).into_iter().filter(|w| w.1 != "Bash") {
            let (code, out, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_eq!(code, 0, "{agent} {tool} {path}: {err}");
            assert_eq!(decision(agent, &out), "allow", "{agent} {tool} {path}");
        }
    }
}

// GUARD-FILE-1, GUARD-INSTALL-4: the agents' own configuration (hooks, permissions, MCP
// servers, trust) is on the fence's protected list, existing or not, so no file tool
// writes it. The list is the fence's (`fence::protect`); the guard uses it, never a copy.
#[test]
fn file_tools_never_write_the_agents_configuration() {
    let f = Fixture::new("safety = \"autonomous\"\n");
    for path in [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mcp.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".vscode/tasks.json",
        ".github/hooks/guard.json",
        ".github/copilot/settings.json",
        ".github/copilot/settings.local.json",
    ] {
        for (agent, tool, input) in writes_of(path) {
            let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_eq!(code, 2, "{agent} {tool} {path}: {err}");
            assert!(
                err.contains("denied (protected"),
                "{agent} {tool} {path}: {err}"
            );
        }
    }
}

/// Every tool of every agent that searches, lists or reads `dir` (a Glob from a pattern).
fn searches_of(dir: &str) -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "claude-code",
            "Grep",
            json!({"pattern": "PRIVATE", "path": dir}),
        ),
        ("claude-code", "Glob", json!({"pattern": "*", "path": dir})),
        (
            "claude-code",
            "Glob",
            json!({"pattern": format!("{dir}/**/id_*")}),
        ),
        ("claude-code", "LS", json!({"path": dir})),
        (
            "gemini",
            "search_file_content",
            json!({"pattern": "PRIVATE", "path": dir}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "PRIVATE", "dir_path": dir}),
        ),
        ("gemini", "glob", json!({"pattern": "*", "path": dir})),
        ("gemini", "list_directory", json!({"path": dir})),
        ("gemini", "list_directory", json!({"dir_path": dir})),
        (
            "gemini",
            "read_many_files",
            json!({"paths": [format!("{dir}/*")]}),
        ),
        (
            "copilot",
            "grep",
            json!({"pattern": "PRIVATE", "paths": dir}),
        ),
        (
            "copilot",
            "grep",
            json!({"pattern": "PRIVATE", "paths": ["src", dir]}),
        ),
        ("copilot", "glob", json!({"pattern": "*", "paths": [dir]})),
        (
            "copilot",
            "glob",
            json!({"pattern": format!("{dir}/**/id_*")}),
        ),
        ("copilot", "view", json!({"path": dir})),
    ]
}

// GUARD-FILE-4: the searches and listings of every agent are decided on the directory
// they really reach, as a Read is: a Grep of ~/.ssh is refused like a Read of it, and a
// search of the workspace is allowed.
#[test]
fn searches_and_listings_are_confined_to_the_roots() {
    let f = Fixture::new("");
    let ssh = f.root.join("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_bait"), "PRIVATE\n").unwrap();
    std::os::unix::fs::symlink(&ssh, f.ws.join("keys")).unwrap();
    let outside = [
        ssh.display().to_string(),
        "keys".into(),
        "../home/.ssh".into(),
        "sub/../../home/.ssh".into(),
        "/etc".into(),
    ];
    for dir in &outside {
        for (agent, tool, input) in searches_of(dir) {
            let (code, out, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_blocked(agent, (code, &out, &err), &format!("{tool} {dir}"));
            assert!(err.contains("denied ("), "{agent} {tool} {dir}: {err}");
        }
    }
    // A pattern that climbs after a wildcard names no one directory: blocked.
    for (agent, tool, input) in [
        (
            "claude-code",
            "Glob",
            json!({"pattern": "sub/*/../../../home/.ssh/*"}),
        ),
        ("gemini", "glob", json!({"pattern": "*/../../home/.ssh/*"})),
        ("claude-code", "Glob", json!({"pattern": "{..,sub}/*"})),
        (
            "gemini",
            "read_many_files",
            json!({"paths": ["{x,../home}/.ssh/*"]}),
        ),
    ] {
        let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 2, "{agent} {tool}: {err}");
    }
    // The home directory spelled as the agents' file tools read it.
    for (agent, tool, input) in [
        (
            "claude-code",
            "Read",
            json!({"file_path": "~/.ssh/id_bait"}),
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "P", "path": "~/.ssh"}),
        ),
        (
            "gemini",
            "read_file",
            json!({"absolute_path": "~/.ssh/id_bait"}),
        ),
        (
            "claude-code",
            "Read",
            json!({"file_path": "~root/.ssh/id_rsa"}),
        ),
    ] {
        let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 2, "{agent} {tool}: {err}");
    }
    // A patch of Codex's reaching out of the roots.
    let patch =
        json!({"input": "*** Begin Patch\n*** Add File: ../home/.bashrc\n+x\n*** End Patch\n"});
    let (code, _, err) = f.hook("codex", &file_call("codex", "apply_patch", patch, &f.ws));
    assert_eq!(code, 2, "{err}");
    // The twins: the workspace itself, a subdirectory, the defaults.
    for dir in [".", "sub", &f.ws.display().to_string()] {
        for (agent, tool, input) in searches_of(dir) {
            let (code, out, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_eq!(code, 0, "{agent} {tool} {dir}: {err}");
            assert_eq!(decision(agent, &out), "allow", "{agent} {tool} {dir}");
        }
    }
    for (agent, tool) in [("claude-code", "Grep"), ("gemini", "grep_search")] {
        let input = json!({"pattern": "x"});
        let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 0, "{agent} {tool}: {err}");
    }
}

// GUARD-FILE-3: what `[exec] hide` hides is refused to every file tool too (a read, a
// search or listing that reaches or holds it, a write), through a link or `..`; and an
// allowed file tool's reason never says it runs in the fence.
#[test]
fn hidden_paths_are_refused_to_file_tools() {
    let f = Fixture::new("");
    let secret = f.ws.join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("key"), "PRIVATE\n").unwrap();
    std::fs::create_dir_all(f.ws.join("src")).unwrap();
    std::fs::write(f.ws.join("src/a.rs"), "a\n").unwrap();
    std::os::unix::fs::symlink("secret/key", f.ws.join("k")).unwrap();
    let text = std::fs::read_to_string(&f.config).unwrap();
    std::fs::write(
        &f.config,
        format!(
            "{text}[exec]\nhide = [{:?}]\n",
            secret.display().to_string()
        ),
    )
    .unwrap();
    let reads = |path: &str| {
        vec![
            ("claude-code", "Read", json!({"file_path": path})),
            ("gemini", "read_file", json!({"absolute_path": path})),
            ("gemini", "read_many_files", json!({"paths": [path]})),
            (
                "claude-code",
                "Write",
                json!({"file_path": path, "content": "x"}),
            ),
        ]
    };
    for path in ["secret/key", "k", "src/../secret/key", "secret/new"] {
        for (agent, tool, input) in reads(path) {
            let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_eq!(code, 2, "{agent} {tool} {path}: {err}");
            assert!(
                err.contains("denied (hidden"),
                "{agent} {tool} {path}: {err}"
            );
        }
    }
    for dir in [".", "secret"] {
        for (agent, tool, input) in searches_of(dir) {
            let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
            assert_eq!(code, 2, "{agent} {tool} {dir}: {err}");
            assert!(
                err.contains("denied (hidden"),
                "{agent} {tool} {dir}: {err}"
            );
        }
    }
    // The twins: a file and a tree beside the hidden one.
    for (agent, tool, input) in reads("src/a.rs").into_iter().take(3) {
        let (code, out, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 0, "{agent} {tool}: {err}");
        assert_eq!(decision(agent, &out), "allow", "{agent} {tool}");
        assert!(!out.contains("inside the fence"), "{agent} {tool}: {out}");
    }
    for (agent, tool, input) in searches_of("src") {
        let (code, _, err) = f.hook(agent, &file_call(agent, tool, input, &f.ws));
        assert_eq!(code, 0, "{agent} {tool}: {err}");
    }
}

// GUARD-STATE-4: every file the guard reads or runs (the agent file, whose hooks it runs
// on the host, the settings file, the `gatehouse` and shell it writes into the line) lies
// outside every root, resolved (a link, `..`), existing or not; refused naming it.
#[test]
fn the_guards_named_files_lie_outside_every_root() {
    let f = Fixture::new("");
    std::fs::write(f.ws.join("agent.yaml"), "agents:\n  root: {}\n").unwrap();
    std::os::unix::fs::symlink(f.ws.join("agent.yaml"), f.root.join("agent-link.yaml")).unwrap();
    std::os::unix::fs::symlink(f.ws.join("later.yaml"), f.root.join("dangling.yaml")).unwrap();
    let ws = f.ws.display().to_string();
    let root = f.root.display().to_string();
    let settings_line = |p: &str| format!("settings-file = {p:?}\n");
    for (key, value) in [
        ("agent-file", format!("{ws}/agent.yaml")),
        ("agent-file", format!("{root}/agent-link.yaml")),
        ("settings-file", format!("{root}/dangling.yaml")),
        ("agent-file", format!("{ws}/.hidden/not-yet.yaml")),
        ("agent-file", format!("{root}/home/../ws/agent.yaml")),
        ("settings-file", format!("{ws}/settings.yaml")),
        ("gatehouse", format!("{ws}/bin/gatehouse")),
        ("shell", format!("{ws}/sh")),
    ] {
        let text = std::fs::read_to_string(&f.config).unwrap();
        let text = if key == "settings-file" {
            text.replace(
                &settings_line(&f.root.join("settings.yaml").display().to_string()),
                "",
            )
        } else {
            text
        };
        let g = f.root.join(format!("guard-{}.toml", value.len()));
        std::fs::write(&g, format!("{key} = {value:?}\n{text}")).unwrap();
        for agent in AGENTS {
            let mut c = f.cmd(&["guard", agent]);
            c.env("GATEHOUSE_GUARD_CONFIG", &g);
            let (code, out, err) = feed(
                c,
                f.shell(agent, "cat notes.txt", "c").to_string().as_bytes(),
            );
            assert_blocked(agent, (code, &out, &err), &format!("{key} {value}"));
            assert!(
                err.contains(&format!("the guard's {key}")),
                "{agent} {key}: {err}"
            );
            assert!(err.contains("lies inside the workspace root"), "{err}");
        }
    }
    // The twin: the same files outside the roots.
    std::fs::copy(f.ws.join("agent.yaml"), f.root.join("agent.yaml")).unwrap();
    let text = std::fs::read_to_string(&f.config).unwrap();
    std::fs::write(
        &f.config,
        format!(
            "agent-file = {:?}\n{text}",
            f.root.join("agent.yaml").display().to_string()
        ),
    )
    .unwrap();
    let (code, _, err) = f.hook("codex", &f.shell("codex", "cat notes.txt", "c"));
    assert_eq!(code, 0, "{err}");
}

// GUARD-STATE-4: an `[exec] rw` path over the files the guard reads (the agent file, the
// settings file) is refused, or a call it lets run could rewrite the next call's policy
// (found by decision/policy-files-not-writable through Claude Code with the guard); the
// twin: the same folder read-only.
#[test]
fn a_writable_exec_path_over_the_policy_files_is_refused() {
    for (flag, refused) in [("rw", true), ("ro", false)] {
        let f = Fixture::new("");
        let pol = f.root.join("policy");
        std::fs::create_dir(&pol).unwrap();
        std::fs::write(pol.join("agent.yaml"), "agents:\n  root: {}\n").unwrap();
        std::fs::copy(f.root.join("settings.yaml"), pol.join("settings.yaml")).unwrap();
        let text = std::fs::read_to_string(&f.config).unwrap().replace(
            &f.root.join("settings.yaml").display().to_string(),
            &pol.join("settings.yaml").display().to_string(),
        );
        let text = format!(
            "agent-file = {:?}\n{text}\n[exec]\n{flag} = [{:?}]\n",
            pol.join("agent.yaml").display().to_string(),
            pol.display().to_string()
        );
        std::fs::write(&f.config, text).unwrap();
        for agent in AGENTS {
            let (code, out, err) = f.hook(agent, &f.shell(agent, "cat notes.txt", "c"));
            if refused {
                assert_blocked(agent, (code, &out, &err), "[exec] rw");
                assert!(err.contains("[exec] rw"), "{agent}: {err}");
                assert!(
                    err.contains("holds the guard's agent-file"),
                    "{agent}: {err}"
                );
            } else {
                assert_eq!(code, 0, "{agent} {flag}: {out} {err}");
            }
        }
    }
}

// HOOK-DECL-4 through the guard: a person's hook sees what a file tool will write, not
// only where (hooks/every-mutating-tool's edit ran past a hook that denies its new text,
// through Claude Code with the guard); the twin: the same edit without the word passes.
#[test]
fn a_hook_sees_the_text_a_file_tool_writes() {
    let f = Fixture::new("");
    let agent_file = f.root.join("agent.yaml");
    std::fs::write(
        &agent_file,
        r#"agents:
  root:
    hooks:
      pre_tool_use:
        - preempt_yolo: true
          hooks:
            - type: command
              command: "line=$(cat); case \"$line\" in *FORBIDDEN*) echo '{\"permission_decision\":\"deny\"}';; *) echo '{}';; esac"
"#,
    )
    .unwrap();
    let text = std::fs::read_to_string(&f.config).unwrap();
    std::fs::write(
        &f.config,
        format!(
            "safety = \"yolo\"\nagent-file = {:?}\n{text}",
            agent_file.display().to_string()
        ),
    )
    .unwrap();
    let notes = f.ws.join("notes.txt").display().to_string();
    for (word, denied) in [("FORBIDDEN", true), ("fine", false)] {
        let edit = json!({ "file_path": notes, "old_string": "a", "new_string": word });
        let write = json!({ "file_path": notes, "content": word });
        for (tool, input) in [("Edit", edit), ("Write", write)] {
            let (code, out, err) =
                f.hook("claude-code", &file_call("claude-code", tool, input, &f.ws));
            let said_deny = code == 2 || out.contains("\"deny\"");
            assert_eq!(said_deny, denied, "{tool} {word}: {code} {out} {err}");
        }
    }
}

// GUARD-FAIL-3: the guard answers before the agent gives up on it, whatever keeps the
// decision busy: past its deadline it gives the block answer (a decision that never ends,
// a configuration on a pipe no one writes); the same call answers normally before it.
#[test]
fn a_decision_past_the_deadline_is_blocked() {
    let f = Fixture::new("");
    let fifo = f.root.join("guard-fifo.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for agent in AGENTS {
        let input = f.shell(agent, "cat notes.txt", "c");
        for (hang, config) in [(true, &f.config), (false, &fifo)] {
            let mut c = f.cmd(&["guard", agent]);
            c.env("GATEHOUSE_GUARD_CONFIG", config)
                .env("GATEHOUSE_GUARD_TEST_DEADLINE_MS", "300");
            if hang {
                c.env("GATEHOUSE_GUARD_TEST_HANG", "1");
            }
            let (code, out, err) = feed(c, input.to_string().as_bytes());
            assert_blocked(agent, (code, &out, &err), &format!("hang {hang}"));
            assert!(err.contains("denied (deadline"), "{agent}: {err}");
        }
        // The twin: a deadline the decision meets.
        let mut c = f.cmd(&["guard", agent]);
        c.env("GATEHOUSE_GUARD_CONFIG", &f.config)
            .env("GATEHOUSE_GUARD_TEST_DEADLINE_MS", "60000");
        let (code, _, err) = feed(c, input.to_string().as_bytes());
        assert_eq!(code, 0, "{agent}: {err}");
    }
}

// GUARD-FAIL-3: a call reads back a bounded tail of its session's journal, never the whole
// of it, so that its cost does not grow with the session (benches/guard_calls.py measures
// it): a damaged line 1 MB back is never read, the call is decided, and the post-tool
// event still finds its decision.
#[test]
fn a_call_reads_a_bounded_tail_of_the_journal() {
    let f = Fixture::new("");
    let (code, _, err) = f.hook("claude-code", &f.shell("claude-code", "npm test", "t0"));
    assert_eq!(code, 0, "{err}");
    let dir = f.root.join("state/sessions/claude-code-3f0c-claude");
    let journal = dir.join("audit.jsonl");
    let kept = std::fs::read(&journal).unwrap();
    let mut text = b"not a record\n".to_vec();
    let filler =
        json!({"kind": "notice", "session": "claude-code-3f0c-claude", "message": "x".repeat(200)});
    for _ in 0..5000 {
        text.extend_from_slice(filler.to_string().as_bytes());
        text.push(b'\n');
    }
    text.extend_from_slice(&kept);
    std::fs::write(&journal, &text).unwrap();
    let (code, out, err) = f.hook("claude-code", &f.shell("claude-code", "npm test", "t1"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "ask");
    let post = json!({"session_id": "3f0c-claude", "transcript_path": "/t", "cwd": f.ws,
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "npm test"}, "tool_response": {"stdout": ""},
        "tool_use_id": "t1"});
    assert_eq!(f.hook("claude-code", &post).0, 0);
    let tail = std::fs::read_to_string(&journal).unwrap();
    assert!(
        tail.lines()
            .rev()
            .take(3)
            .any(|l| l.contains("\"approved\"")),
        "{}",
        &tail[tail.len() - 600..]
    );
}

// GUARD-ASK-2: under bypassPermissions Claude Code runs a Write it was asked about (it
// honours the ask for Bash only), so a file tool the order would ask about is denied
// there; the same Write in the default permission mode is asked, and a Bash line still
// asks under bypassPermissions.
#[test]
fn claude_under_bypass_permissions_asks_only_for_bash() {
    let f = Fixture::new("");
    let write = file_call(
        "claude-code",
        "Write",
        json!({"file_path": "new.txt", "content": "x"}),
        &f.ws,
    );
    let (code, out, err) = f.hook("claude-code", &write);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("denied ("), "{err}");
    let mut default = write.clone();
    default["permission_mode"] = json!("default");
    let (code, out, err) = f.hook("claude-code", &default);
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "ask");
    let mut bash = f.shell("claude-code", "rm -rf ~", "b1");
    bash["permission_mode"] = json!("bypassPermissions");
    let (code, out, err) = f.hook("claude-code", &bash);
    assert_eq!(code, 0, "{err}");
    assert_eq!(decision("claude-code", &out), "ask");
}
