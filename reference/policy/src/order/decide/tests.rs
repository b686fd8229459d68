//! The order against the seed's guarded agent and at every stage boundary, with real hook
//! scripts.

use super::*;
use crate::gate::{Asker, GateConfig, Grant};
use crate::hooks::{HookDef, Matcher};
use crate::permissions::{List, Mode, ModeSource, PatternLists, Source};
use rstest::rstest;
use serde_json::json;
use std::collections::BTreeMap;

struct World {
    dir: tempfile::TempDir,
    gate: Gate,
    grants: GrantTable,
    runner: HookRunner,
}

fn world(asker: Asker) -> World {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "a\nb\n").unwrap();
    let mut config = GateConfig::new(dir.path());
    config.asker = asker;
    let gate = Gate::new(config).unwrap();
    let runner = HookRunner::new(dir.path());
    World {
        dir,
        gate,
        grants: GrantTable::new(),
        runner,
    }
}

fn seed_rules() -> RuleSet {
    let mut rules = RuleSet::new();
    rules
        .add(
            Source::AgentFile("guarded.yaml".into()),
            &PatternLists {
                allow: vec!["shell:cmd=echo*".into()],
                deny: vec!["shell:cmd=rm*".into()],
                ask: vec![],
            },
        )
        .unwrap();
    rules
}

fn policy(rules: RuleSet, hooks: HooksConfig, mode: Mode, source: ModeSource) -> Policy {
    Policy {
        rules,
        hooks,
        redact: true,
        mode: ModeChoice { mode, source },
        agent_name: "root".into(),
    }
}

fn preempt_allow_hook(log: &std::path::Path) -> HooksConfig {
    HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: Some("shell".into()),
            preempt_yolo: true,
            hooks: vec![HookDef::Command {
                command: r#"cat >> "$M101_HOOK_LOG"; echo '{"permission_decision":"allow"}'"#
                    .into(),
                env: BTreeMap::from([("M101_HOOK_LOG".into(), log.display().to_string())]),
                timeout: None,
            }],
        }],
        ..Default::default()
    }
}

fn run(w: &World, p: &Policy, tool: &str, input: Value) -> Ruling {
    decide(
        Controls {
            gate: &w.gate,
            grants: &w.grants,
            hooks: &w.runner,
            trust: None,
        },
        p,
        &Call {
            tool: tool.into(),
            input,
            tool_use_id: "call-1".into(),
            session_id: "sess".into(),
        },
    )
}

fn sh(w: &World, p: &Policy, line: &str) -> Ruling {
    run(w, p, "shell", json!({ "cmd": line }))
}

#[rstest]
#[case(Mode::Strict)]
#[case(Mode::Restricted)]
fn the_seeds_three_calls(#[case] mode: Mode) {
    let w = world(Asker::None);
    let log = w.dir.path().join("hook-stdin.jsonl");
    let p = policy(
        seed_rules(),
        preempt_allow_hook(&log),
        mode,
        ModeSource::Flag,
    );
    let echo = sh(&w, &p, "echo hi");
    assert_eq!(
        (echo.decision, echo.route),
        (Verdict::Allow, Route::AllowPattern)
    );
    assert_eq!(echo.advice.as_ref().unwrap().code, "hook_allow");
    let pwd = sh(&w, &p, "pwd");
    match mode {
        Mode::Strict => assert_eq!(
            (pwd.decision, pwd.stage, pwd.route),
            (Verdict::Deny, Stage::Mode, Route::NoAsker)
        ),
        _ => assert_eq!((pwd.decision, pwd.route), (Verdict::Allow, Route::AutoSafe)),
    }
    let rm = sh(&w, &p, "rm -rf work/m101-nothing");
    assert_eq!(
        (rm.decision, rm.stage, rm.reason.as_str()),
        (Verdict::Deny, Stage::DenyPattern, "deny_pattern")
    );
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let third = &lines[2];
    for (k, v) in [
        ("agent_name", json!("root")),
        ("hook_event_name", json!("pre_tool_use")),
        ("safety_policy", json!(mode.name())),
        ("tool_input", json!({"cmd": "rm -rf work/m101-nothing"})),
        ("tool_name", json!("shell")),
        ("tool_use_id", json!("call-1")),
        ("session_id", json!("sess")),
    ] {
        assert_eq!(third[k], v, "{k}");
    }
}

#[test]
fn a_preempting_deny_or_ask_is_final() {
    let w = world(Asker::Terminal);
    let hooks = |answer: &str| HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: None,
            preempt_yolo: true,
            hooks: vec![HookDef::Command {
                command: format!("echo '{answer}'"),
                env: BTreeMap::new(),
                timeout: None,
            }],
        }],
        ..Default::default()
    };
    let p = policy(
        seed_rules(),
        hooks(r#"{"permission_decision":"deny"}"#),
        Mode::Autonomous,
        ModeSource::Flag,
    );
    let r = sh(&w, &p, "echo hi");
    assert_eq!((r.decision, r.stage), (Verdict::Deny, Stage::PreemptHook));
    let p = policy(
        seed_rules(),
        hooks(r#"{"permission_decision":"ask"}"#),
        Mode::Autonomous,
        ModeSource::Flag,
    );
    let r = sh(&w, &p, "echo hi");
    assert_eq!(
        (r.decision, r.stage, r.route),
        (Verdict::Ask, Stage::PreemptHook, Route::Card)
    );
    // A deny pattern is still stricter than the hook's ask.
    let r = sh(&w, &p, "rm x");
    assert_eq!((r.decision, r.stage), (Verdict::Deny, Stage::DenyPattern));
}

#[test]
fn a_failing_hook_fails_closed() {
    let w = world(Asker::Terminal);
    let p = policy(
        seed_rules(),
        HooksConfig {
            pre_tool_use: vec![Matcher {
                matcher: None,
                preempt_yolo: true,
                hooks: vec![HookDef::Command {
                    command: "echo not-json".into(),
                    env: BTreeMap::new(),
                    timeout: None,
                }],
            }],
            ..Default::default()
        },
        Mode::Autonomous,
        ModeSource::Flag,
    );
    let r = sh(&w, &p, "echo hi");
    assert_eq!(
        (r.decision, r.reason.as_str()),
        (Verdict::Deny, "hook_malformed_output")
    );
}

#[test]
fn the_dangerous_list_beats_an_allow_pattern_and_autonomous() {
    let w = world(Asker::Terminal);
    let mut rules = RuleSet::new();
    rules
        .add(
            Source::Session,
            &PatternLists {
                allow: vec!["shell:cmd=*".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let p = policy(
        rules,
        HooksConfig::default(),
        Mode::Autonomous,
        ModeSource::Flag,
    );
    let r = sh(&w, &p, "rm -rf sub");
    assert_eq!(
        (r.decision, r.stage, r.reason.as_str()),
        (Verdict::Ask, Stage::AlwaysAsk, "dangerous")
    );
    let r = sh(&w, &p, "rm x");
    assert_eq!((r.decision, r.route), (Verdict::Allow, Route::AllowPattern));
}

#[test]
fn a_deny_beats_a_grant() {
    let mut w = world(Asker::Terminal);
    w.grants.add(Grant::family("git"));
    let mut rules = RuleSet::new();
    rules
        .add(
            Source::Settings("c.yaml".into()),
            &PatternLists {
                deny: vec!["shell:cmd=git push*".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let p = policy(
        rules,
        HooksConfig::default(),
        Mode::Unset,
        ModeSource::Default,
    );
    assert_eq!(sh(&w, &p, "git status").route, Route::GrantFamily);
    assert_eq!(sh(&w, &p, "git -c x=y push").stage, Stage::DenyPattern);
    assert_eq!(sh(&w, &p, "/usr/bin/git push").stage, Stage::DenyPattern);
}

#[rstest]
#[case(ModeSource::AgentFile, Verdict::Ask, Stage::AskPattern)]
#[case(ModeSource::Default, Verdict::Ask, Stage::AskPattern)]
#[case(ModeSource::Flag, Verdict::Allow, Stage::Mode)]
#[case(ModeSource::Settings, Verdict::Allow, Stage::Mode)]
fn an_authors_ask_yields_to_the_persons_mode(
    #[case] source: ModeSource,
    #[case] v: Verdict,
    #[case] stage: Stage,
) {
    let w = world(Asker::Terminal);
    let mut rules = RuleSet::new();
    rules
        .add(
            Source::AgentFile("a.yaml".into()),
            &PatternLists {
                ask: vec!["shell:cmd=npm*".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let p = policy(rules, HooksConfig::default(), Mode::Autonomous, source);
    let r = sh(&w, &p, "npm test");
    assert_eq!((r.decision, r.stage), (v, stage));
}

#[test]
fn a_session_ask_always_prompts_and_restricted_never_does() {
    let w = world(Asker::Terminal);
    let mut rules = RuleSet::new();
    rules.add_session(List::Ask, "shell:cmd=npm*").unwrap();
    let p = policy(
        rules.clone(),
        HooksConfig::default(),
        Mode::Autonomous,
        ModeSource::Flag,
    );
    assert_eq!(sh(&w, &p, "npm test").decision, Verdict::Ask);
    let p = policy(
        rules,
        HooksConfig::default(),
        Mode::Restricted,
        ModeSource::Flag,
    );
    let r = sh(&w, &p, "npm test");
    assert_eq!(
        (r.decision, r.stage, r.route),
        (Verdict::Deny, Stage::AskPattern, Route::Restricted)
    );
}

#[rstest]
#[case(Mode::Unset, "wc -l notes.txt", Verdict::Allow)]
#[case(Mode::Unset, "wc -l /etc/passwd", Verdict::Ask)]
#[case(Mode::Strict, "wc -l notes.txt", Verdict::Ask)]
#[case(Mode::Balanced, "wc -l notes.txt", Verdict::Allow)]
#[case(Mode::Balanced, "npm test", Verdict::Ask)]
#[case(Mode::Restricted, "npm test", Verdict::Deny)]
#[case(Mode::Autonomous, "npm test", Verdict::Allow)]
fn the_unset_seam(#[case] mode: Mode, #[case] line: &str, #[case] v: Verdict) {
    let w = world(Asker::Terminal);
    let p = policy(
        RuleSet::new(),
        HooksConfig::default(),
        mode,
        ModeSource::Flag,
    );
    assert_eq!(sh(&w, &p, line).decision, v, "{mode} {line}");
}

#[test]
fn default_lane_hooks_run_only_on_a_mode_ask() {
    let w = world(Asker::Terminal);
    let count = w.dir.path().join("count");
    let hooks = HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: None,
            preempt_yolo: false,
            hooks: vec![HookDef::Command {
                command: format!(
                    r#"echo x >> {}; echo '{{"permission_decision":"allow"}}'"#,
                    count.display()
                ),
                env: BTreeMap::new(),
                timeout: None,
            }],
        }],
        ..Default::default()
    };
    let mut rules = seed_rules();
    rules.add_session(List::Ask, "shell:cmd=git*").unwrap();
    let p = policy(rules, hooks, Mode::Strict, ModeSource::Flag);
    assert_eq!(sh(&w, &p, "rm x").stage, Stage::DenyPattern);
    assert_eq!(sh(&w, &p, "git push").stage, Stage::AskPattern);
    assert_eq!(sh(&w, &p, "find . -delete").stage, Stage::AlwaysAsk);
    assert!(!count.exists());
    let r = sh(&w, &p, "npm test");
    assert_eq!((r.decision, r.stage), (Verdict::Allow, Stage::DefaultHook));
    assert!(count.exists());
}

#[test]
fn redaction_rewrites_the_input_before_the_rules() {
    std::env::set_var("GH_ORDER_TEST_TOKEN", "tok-271828182845");
    let w = world(Asker::Terminal);
    let mut rules = RuleSet::new();
    rules
        .add(
            Source::Session,
            &PatternLists {
                deny: vec!["shell:cmd=*tok-271828182845*".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let p = policy(
        rules,
        HooksConfig::default(),
        Mode::Unset,
        ModeSource::Default,
    );
    let r = sh(&w, &p, "echo tok-271828182845");
    assert_eq!(r.input, json!({"cmd": "echo [REDACTED]"}));
    assert_ne!(r.stage, Stage::DenyPattern);
}

#[test]
fn file_tools_are_labelled_and_judged_by_mode() {
    let w = world(Asker::None);
    let p = policy(
        RuleSet::new(),
        HooksConfig::default(),
        Mode::Restricted,
        ModeSource::Flag,
    );
    assert_eq!(
        run(&w, &p, "read", json!({"path": "notes.txt"})).decision,
        Verdict::Allow
    );
    let r = run(&w, &p, "write", json!({"path": "notes.txt"}));
    assert_eq!(
        (r.decision, r.label, r.reason.as_str()),
        (Verdict::Deny, Label::Destructive, "destructive")
    );
}

/// The rows of the spec's table (`decision-order.md`, section 2): number and the reported
/// `stage` column, unquoted (empty where the row reports none of its own).
fn spec_rows() -> Vec<(u8, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/decision-order.md");
    let text = std::fs::read_to_string(path).unwrap();
    let section = text
        .split("\n## 2. The stages")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let row = cells.get(1)?.parse().ok()?;
            Some((row, cells.get(4)?.trim_matches('`').to_string()))
        })
        .collect()
}

#[test]
fn the_table_of_stages_is_the_specs_order() {
    let rows = spec_rows();
    assert_eq!(
        rows.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        (1..=12).collect::<Vec<u8>>(),
        "the spec's table changed: {rows:?}"
    );
    // Rows 1 to 9 are the table, in the spec's order, each reporting its column.
    let table: Vec<(u8, String)> = STAGES
        .iter()
        .map(|s| (s.row, s.reports.name().to_string()))
        .collect();
    assert_eq!(table, rows[..STAGES.len()].to_vec());
    // Row 10 asks the person (it reports the stage it asks for); row 11 follows every
    // allow; row 12 is the fence's.
    assert_eq!(usize::from(ASK_PERSON_ROW), STAGES.len() + 1);
    assert_eq!(rows[9].1, "(the asking stage)");
    assert_eq!(rows[10].1, Stage::Redirect.name());
}
