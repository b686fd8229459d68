//! The whole decision order (`gatehouse::order::decide`) with 100 patterns and no hook
//! process, over the gate's corpus, against the gate's decision alone; and the round trip
//! of one trivial command hook (spawn `sh -c`, JSON in, JSON out, reap), against spawning
//! `true`.
//!
//! The order runs every stage a call can reach without a hook process: the builtin
//! `redact_secrets` on the input, the 100 patterns (deny, allow and ask, over several tools,
//! none of which match most lines, so every reading is tried), the gate's reading and the
//! mode (`balanced`). The workspace is a real directory, so the jail's lookups are counted.
// A bench panics to stop when it cannot set up, as a test does to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gatehouse::gate::{Gate, GateConfig, GrantTable, Tool};
use gatehouse::hooks::input::{CallFacts, DecisionSoFar};
use gatehouse::hooks::{HookDef, HookRunner, HooksConfig, Lane, Matcher};
use gatehouse::order::{decide, Call, Controls, Policy};
use gatehouse::permissions::{Mode, ModeChoice, ModeSource, PatternLists, RuleSet, Source};
use serde_json::json;

fn corpus() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/gate-lines.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// 100 patterns: 40 deny, 40 allow, 20 ask, over shell and file tools.
fn hundred_patterns() -> PatternLists {
    let programs = [
        "terraform",
        "kubectl",
        "helm",
        "aws",
        "gcloud",
        "az",
        "ansible",
        "vault",
        "pulumi",
        "psql",
    ];
    let mut lists = PatternLists::default();
    for (i, p) in programs.iter().enumerate() {
        lists.deny.push(format!("shell:cmd={p} destroy*"));
        lists.deny.push(format!("shell:cmd={p} delete*"));
        lists.deny.push(format!("edit_file:path=/etc/{p}/*"));
        lists.deny.push(format!(
            "write_file:path=*/.{p}/credentials*:mode=overwrite"
        ));
        lists.allow.push(format!("shell:cmd={p} plan*"));
        lists.allow.push(format!("shell:cmd={p} get*"));
        lists.allow.push(format!("read_file:path=/srv/{p}/*"));
        lists.allow.push(format!("shell:cmd=make test-{i}*"));
        lists.ask.push(format!("shell:cmd={p} apply*"));
        lists.ask.push(format!("mcp_*:server={p}*"));
    }
    assert_eq!(lists.deny.len() + lists.allow.len() + lists.ask.len(), 100);
    lists
}

fn bench_order(c: &mut Criterion) {
    let lines = corpus();
    let root = tempfile::tempdir().expect("temp dir");
    let ws = root.path().join("workspace");
    std::fs::create_dir_all(ws.join("sub")).expect("sub");
    std::fs::write(ws.join("notes.txt"), "hello\n").expect("notes");
    let gate = Gate::new(GateConfig::new(&ws)).expect("gate");
    let grants = GrantTable::new();
    let runner = HookRunner::new(&ws);
    let mut rules = RuleSet::new();
    rules
        .add(Source::AgentFile("bench.yaml".into()), &hundred_patterns())
        .expect("patterns");
    let policy = Policy {
        rules,
        hooks: HooksConfig::default(),
        redact: true,
        mode: ModeChoice {
            mode: Mode::Balanced,
            source: ModeSource::Flag,
        },
        agent_name: "root".into(),
    };
    let controls = Controls {
        gate: &gate,
        grants: &grants,
        hooks: &runner,
        trust: None,
    };
    let calls: Vec<Call> = lines
        .iter()
        .map(|l| Call {
            tool: "shell".into(),
            input: json!({ "cmd": l }),
            tool_use_id: "call-1".into(),
            session_id: "bench".into(),
        })
        .collect();

    let mut group = c.benchmark_group("order");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("gate_decide_baseline", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(gate.decide(Tool::Shell, black_box(line), &grants));
            }
        })
    });
    group.bench_function("decide_100_patterns", |b| {
        b.iter(|| {
            for call in &calls {
                black_box(decide(controls, &policy, black_box(call)));
            }
        })
    });
    group.finish();
}

fn bench_hook(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let runner = HookRunner::new(dir.path());
    let hooks = HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: None,
            preempt_yolo: true,
            hooks: vec![HookDef::Command {
                command: r#"read -r line; echo '{"permission_decision":"allow"}'"#.into(),
                env: Default::default(),
                timeout: None,
            }],
        }],
        ..Default::default()
    };
    let baseline = HooksConfig {
        pre_tool_use: vec![Matcher {
            matcher: None,
            preempt_yolo: true,
            hooks: vec![HookDef::Command {
                command: "true".into(),
                env: Default::default(),
                timeout: None,
            }],
        }],
        ..Default::default()
    };
    let facts = CallFacts {
        agent_name: "root".into(),
        cwd: dir.path().display().to_string(),
        safety_policy: "strict".into(),
        session_id: "bench".into(),
        tool_name: "shell".into(),
        tool_input: json!({"cmd": "rm -rf work/m101-nothing"}),
        tool_use_id: "call-1".into(),
        effective_cwd: dir.path().display().to_string(),
    };
    let so_far = DecisionSoFar {
        decision: None,
        stage: "preempt_hook".into(),
        reason: None,
    };
    let mut group = c.benchmark_group("hook");
    group.sample_size(50);
    group.bench_function("spawn_true_baseline", |b| {
        b.iter(|| black_box(runner.guard(&baseline, Lane::Preempt, &facts, &so_far)))
    });
    group.bench_function("round_trip", |b| {
        b.iter(|| {
            let r = runner.guard(&hooks, Lane::Preempt, &facts, &so_far);
            assert_eq!(r.runs[0].code, "hook_allow");
            black_box(r)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_order, bench_hook);
criterion_main!(benches);
