//! The runner against real hook scripts.

use super::*;
use serde_json::json;
use std::collections::BTreeMap;

fn cmd(command: &str) -> HookDef {
    HookDef::Command {
        command: command.into(),
        env: BTreeMap::new(),
        timeout: Some(10),
    }
}

fn pre(preempt: bool, hooks: Vec<HookDef>) -> HooksConfig {
    HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: Some("shell".into()),
            preempt_yolo: preempt,
            hooks,
        }],
        ..Default::default()
    }
}

fn facts(dir: &std::path::Path, line: &str) -> CallFacts {
    CallFacts {
        agent_name: "root".into(),
        cwd: dir.display().to_string(),
        safety_policy: "strict".into(),
        session_id: "s-1".into(),
        tool_name: "shell".into(),
        tool_input: json!({ "cmd": line }),
        tool_use_id: "call-1".into(),
        effective_cwd: dir.display().to_string(),
    }
}

fn so_far() -> DecisionSoFar {
    DecisionSoFar {
        decision: None,
        stage: "preempt_hook".into(),
        reason: None,
    }
}

#[test]
fn parallel_hooks_merge_deny_over_ask_over_allow() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = pre(
        true,
        vec![
            cmd(r#"echo '{"permission_decision":"allow"}'"#),
            cmd(r#"echo '{"permission_decision":"ask"}'"#),
            cmd(r#"echo 'a deny' >&2; exit 2"#),
        ],
    );
    let r = runner.guard(&hooks, Lane::Preempt, &facts(dir.path(), "ls"), &so_far());
    assert_eq!(r.verdict, Verdict::Deny);
    let d = r.deciding.unwrap();
    assert_eq!(d.code, "hook_exit_2");
    assert_eq!(d.message.as_deref(), Some("a deny"));
    assert_eq!(r.runs.len(), 3);
    assert_eq!(r.runs[0].code, "hook_allow");
}

#[test]
fn hooks_of_a_lane_run_at_the_same_time() {
    // Each waits for the other's mark: run one after the other, they would both time out.
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hook = |me: &str, other: &str| {
        cmd(&format!(
            "touch {me}; while [ ! -e {other} ]; do sleep 0.01; done; echo '{{\"permission_decision\":\"allow\"}}'"
        ))
    };
    let hooks = pre(true, vec![hook("a", "b"), hook("b", "a")]);
    let r = runner.guard(&hooks, Lane::Preempt, &facts(dir.path(), "ls"), &so_far());
    assert_eq!(r.verdict, Verdict::Allow, "{:?}", r.runs);
}

#[test]
fn the_lane_flag_selects_the_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = pre(false, vec![cmd(r#"echo '{"permission_decision":"deny"}'"#)]);
    let r = runner.guard(&hooks, Lane::Preempt, &facts(dir.path(), "ls"), &so_far());
    assert_eq!((r.verdict, r.runs.len()), (Verdict::NoDecision, 0));
    let r = runner.guard(&hooks, Lane::Default, &facts(dir.path(), "ls"), &so_far());
    assert_eq!(r.verdict, Verdict::Deny);
}

#[test]
fn the_hook_reads_the_call_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = pre(
        true,
        vec![HookDef::Command {
            command: r#"cat >> "$LOG"; echo '{"permission_decision":"allow"}'"#.into(),
            env: BTreeMap::from([("LOG".into(), "stdin.jsonl".into())]),
            timeout: None,
        }],
    );
    runner.guard(
        &hooks,
        Lane::Preempt,
        &facts(dir.path(), "rm -rf work/m101-nothing"),
        &so_far(),
    );
    let line = std::fs::read_to_string(dir.path().join("stdin.jsonl")).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["tool_input"], json!({"cmd": "rm -rf work/m101-nothing"}));
    assert_eq!(v["hook_event_name"], "pre_tool_use");
    assert_eq!(v["argv"], json!([["rm", "-rf", "work/m101-nothing"]]));
    assert_eq!(v["decision_so_far"]["stage"], "preempt_hook");
}

#[test]
fn a_missing_program_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = pre(true, vec![cmd("./no-such-hook.sh")]);
    let r = runner.guard(&hooks, Lane::Preempt, &facts(dir.path(), "ls"), &so_far());
    assert_eq!(r.verdict, Verdict::Deny);
    // `sh -c` reports a missing program as exit 127: the hook never started.
    assert_eq!(r.deciding.unwrap().code, "hook_spawn_failed");
}

#[test]
fn transforms_run_in_sequence_after_redaction() {
    std::env::set_var("GH_HOOKS_TEST_TOKEN", "tok-3141592653");
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = HooksConfig {
        tool_input_transform: vec![Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![
                // Sees the redacted input, appends " b".
                cmd(
                    r#"python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["tool_input"]["cmd"]; print(json.dumps({"updated_input":{"cmd":c+" b"}}))'"#,
                ),
                cmd(
                    r#"python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["tool_input"]["cmd"]; print(json.dumps({"updated_input":{"cmd":c+" c"}}))'"#,
                ),
            ],
        }],
        ..Default::default()
    };
    let call = facts(dir.path(), "echo tok-3141592653");
    let r = runner.transform(
        &hooks,
        Event::ToolInputTransform,
        true,
        &call,
        call.tool_input.clone(),
    );
    assert_eq!(r.failed, None, "{:?}", r.runs);
    assert_eq!(r.value, json!({"cmd": "echo [REDACTED] b c"}));
    assert_eq!(r.runs[0].hook, "builtin:redact_secrets");
}

#[test]
fn a_failing_transform_stops_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = HooksConfig {
        tool_input_transform: vec![Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![
                cmd("echo garbage"),
                cmd(r#"echo '{"updated_input":{"cmd":"x"}}'"#),
            ],
        }],
        ..Default::default()
    };
    let call = facts(dir.path(), "ls");
    let r = runner.transform(
        &hooks,
        Event::ToolInputTransform,
        false,
        &call,
        call.tool_input.clone(),
    );
    assert_eq!(r.failed.unwrap().code, "hook_malformed_output");
    assert_eq!(r.value, json!({"cmd": "ls"}));
    assert_eq!(r.runs.len(), 1);
}

#[test]
fn post_hooks_read_the_response_and_failures_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let runner = HookRunner::new(dir.path());
    let hooks = HooksConfig {
        post_tool_use: vec![Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![cmd("cat > post.json; echo '{}'"), cmd("exit 3")],
        }],
        tool_response_transform: vec![Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![cmd(
                r#"python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"updated_response": d["tool_response"] + " (seen)"}))'"#,
            )],
        }],
        ..Default::default()
    };
    let call = facts(dir.path(), "ls");
    let runs = runner.post(&hooks, &call, &json!("a\nb\n"));
    assert_eq!(runs[0].code, "hook_no_decision");
    assert_eq!(runs[1].code, "hook_exit_status");
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("post.json")).unwrap())
            .unwrap();
    assert_eq!(seen["tool_response"], "a\nb\n");
    assert_eq!(seen["hook_event_name"], "post_tool_use");
    let r = runner.transform(
        &hooks,
        Event::ToolResponseTransform,
        true,
        &call,
        json!("out sk-abcdefghijklmnopqrstuvwx"),
    );
    assert_eq!(r.failed, None, "{:?}", r.runs);
    assert_eq!(r.value, json!("out [REDACTED] (seen)"));
}
