//! The command line: invalid files, exit codes, the other report formats, `trace` and
//! `lint` on small self-contained trees.

mod common;

use common::{fake_command, run_cli, Suite, GRANTS_ONLY, READ_LIST};

#[test]
fn a_bad_file_is_one_line_and_the_run_goes_on() {
    let suite = Suite::new();
    suite
        .scenario("gate/b-grants", GRANTS_ONLY)
        .scenario("gate/x", "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\nfoo = 1\n[[step]]\ngrants = true\n");
    let run = suite.run("allow_all", &[]);
    assert_eq!(run.code, 1);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("x.toml"))
        .expect("a line for the bad file");
    assert!(
        line.starts_with("scenarios/gate/x.toml:4:1: unknown field `foo`, expected one of"),
        "{line}"
    );
    let json = run.json();
    assert_eq!(json["summary"]["passed"], 1);
    assert_eq!(json["invalid"].as_array().unwrap().len(), 1);
}

#[test]
fn usage_errors_exit_two() {
    let suite = Suite::new();
    let run = run_cli(
        suite.dir.path(),
        &["run", "--scenarios", "nowhere", "--impl", "true"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--scenarios nowhere: no such directory"),
        "{}",
        run.stderr
    );
    assert_eq!(run_cli(suite.dir.path(), &["run", "--bogus"]).code, 2);
    let run = run_cli(suite.dir.path(), &["run", "--impl", "true"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("handshake failed"), "{}", run.stderr);
}

/// The commonest first mistake, an adapter that dies on start (an import error): the
/// runner shows what it wrote on stderr; one that answers `hello` with garbage has its
/// line shown.
#[test]
fn a_dead_adapter_is_explained_by_its_last_stderr_lines_and_its_garbage_line() {
    let suite = Suite::new();
    suite.scenario("gate/b-grants", GRANTS_ONLY);
    let dies = suite.path("dies.py");
    std::fs::write(&dies, "import sys\nimport no_such_module_here\n").unwrap();
    let run = suite.run_with_impl(&format!("python3 {}", dies.display()));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("handshake failed: crashed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("stderr| ModuleNotFoundError: No module named 'no_such_module_here'"),
        "{}",
        run.stderr
    );
    let garbage = suite.path("garbage.py");
    std::fs::write(
        &garbage,
        "import sys\nsys.stdin.readline()\nprint('Traceback? no, just words', flush=True)\nsys.stdin.readline()\n",
    )
    .unwrap();
    let run = suite.run_with_impl(&format!("python3 {}", garbage.display()));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("handshake failed: garbage"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("Traceback? no, just words"),
        "{}",
        run.stderr
    );
}

#[test]
fn another_protocol_major_is_refused() {
    let suite = Suite::new();
    suite.scenario("gate/b-grants", GRANTS_ONLY);
    let script = suite.path("v2.py");
    std::fs::write(
        &script,
        "import json,sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({'id': r['id'], 'ok': True, 'protocol': '2.0', 'name': 'x', 'version': '1', 'capabilities': ['gate'], 'environment': {}}), flush=True)\n",
    )
    .unwrap();
    let imp = format!("python3 {}", script.display());
    let run = run_cli(suite.dir.path(), &["run", "--impl", &imp]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("speaks protocol 2.0, this runner speaks 1."),
        "{}",
        run.stderr
    );
}

#[test]
fn junit_markdown_and_json_out() {
    let suite = Suite::new();
    suite
        .scenario("gate/a-read-list", READ_LIST)
        .scenario("gate/b-grants", GRANTS_ONLY);
    let json_out = suite.path("report.json");
    let junit_out = suite.path("junit.xml");
    let imp = fake_command("allow_all");
    let run = run_cli(
        suite.dir.path(),
        &[
            "run",
            "--quiet",
            "--impl",
            &imp,
            "--format",
            "junit",
            "--out",
            junit_out.to_str().unwrap(),
            "--json-out",
            json_out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1);
    let xml = std::fs::read_to_string(&junit_out).unwrap();
    assert!(
        xml.contains("<testsuite name=\"gate\" tests=\"2\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase name=\"a-read-list\" classname=\"gate\""),
        "{xml}"
    );
    assert!(xml.contains("<failure message=\"case 2"), "{xml}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(json["summary"]["failed"], 1);
    // One run, three reports: Markdown on stdout, JUnit and JSON beside it.
    let junit_beside = suite.path("junit-beside.xml");
    let md = run_cli(
        suite.dir.path(),
        &[
            "run",
            "--quiet",
            "--impl",
            &imp,
            "--format",
            "markdown",
            "--junit-out",
            junit_beside.to_str().unwrap(),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(&junit_beside)
            .unwrap()
            .lines()
            .count(),
        xml.lines().count(),
        "--junit-out writes the JUnit report"
    );
    // The verdict first, then the implementation and environment; a passing scenario is
    // counted, not listed.
    assert!(
        md.stdout.starts_with("**safety:** FAILED  1 failed"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout.contains("\n**allow-all 0.0.1** x "),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout.contains("\n1 other scenario(s) passed.\n"),
        "{}",
        md.stdout
    );
    let human = run_cli(suite.dir.path(), &["run", "--impl", &imp]);
    assert!(
        human.stdout.starts_with("safety:       FAILED"),
        "{}",
        human.stdout
    );
    // The failure names the input, what happened, the scenario with the file at the line
    // of its case, and how to rerun just it.
    assert!(
        human.stdout.contains(
            "  decide \"ls @OUTSIDE@/secret.txt\": decision: expected ask, got allow  [in gate/a-read-list (scenarios/gate/a-read-list.toml:15)]"
        ),
        "{}",
        human.stdout
    );
    // The rerun line is the command as invoked (the runner's own path, the same --impl),
    // selecting that scenario alone: pasted into a shell, it runs it and nothing else.
    let rerun = human
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("rerun one scenario: "))
        .unwrap_or_else(|| panic!("no rerun line:\n{}", human.stdout));
    let exe = env!("CARGO_BIN_EXE_gatehouse-conform");
    assert_eq!(
        rerun,
        format!("{exe} run --impl '{imp}' --filter gate/a-read-list"),
        "{}",
        human.stdout
    );
    let last = human.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("2 scenario(s) of suite unknown (")
            && last.contains(") against allow-all 0.0.1 in ")
            && last.ends_with(" s: 1 passed, 1 failed, 0 skipped, 0 errored"),
        "{}",
        human.stdout
    );
    // stderr is a pipe here: no terminal progress, one plain line per scenario.
    assert!(!human.stderr.contains("[2/2]"), "{}", human.stderr);
    assert!(
        human
            .stderr
            .contains("\nFAIL  safety    gate/a-read-list  ("),
        "{}",
        human.stderr
    );
    assert!(
        human.stderr.contains("\nPASS            gate/b-grants  ("),
        "{}",
        human.stderr
    );
    let pasted = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{rerun} --quiet --format json"))
        .current_dir(suite.dir.path())
        .output()
        .expect("sh runs");
    let report: serde_json::Value = serde_json::from_slice(&pasted.stdout).unwrap_or_else(|e| {
        panic!(
            "the pasted rerun printed no JSON ({e}): {}",
            String::from_utf8_lossy(&pasted.stderr)
        )
    });
    assert_eq!(common::ids_of(&report), ["gate/a-read-list"]);
}

#[test]
fn filters_repeat_excludes_take_away_and_a_pattern_that_selects_nothing_exits_2() {
    let suite = Suite::new();
    suite
        .scenario("gate/b-grants", GRANTS_ONLY)
        .scenario("gate/c-grants", GRANTS_ONLY)
        .scenario("trust/d-grants", GRANTS_ONLY);
    let ids = |run: common::Run| run.ids();
    assert_eq!(
        ids(suite.run("allow_all", &["--filter", "gate/b", "--filter", "trust/"])),
        ["gate/b-grants", "trust/d-grants"]
    );
    assert_eq!(
        ids(suite.run("allow_all", &["--exclude", "gate/c-grants"])),
        ["gate/b-grants", "trust/d-grants"]
    );
    for (args, says) in [
        (
            &["--filter", "gate/", "--filter", "gate/nonexistent"][..],
            "--filter gate/nonexistent: matches no scenario",
        ),
        (
            &["--exclude", "trust/dd"][..],
            "--exclude trust/dd: matches no scenario",
        ),
        (
            &["--tier", "enforcement"][..],
            "--tier enforcement: none of the selected scenarios is of this tier",
        ),
    ] {
        let run = suite.run("allow_all", args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}: nothing ran, no report");
    }
}

#[test]
fn a_green_run_prints_one_summary_line_and_verbose_adds_the_details() {
    let suite = Suite::new();
    suite.scenario("gate/b-grants", GRANTS_ONLY);
    let imp = fake_command("allow_all");
    let green = run_cli(suite.dir.path(), &["run", "--impl", &imp]);
    assert_eq!(green.code, 0, "{}", green.stderr);
    assert_eq!(green.stdout.lines().count(), 1, "{}", green.stdout);
    assert!(
        green
            .stdout
            .ends_with(" s: 1 passed, 0 failed, 0 skipped, 0 errored\n"),
        "{}",
        green.stdout
    );
    let verbose = run_cli(suite.dir.path(), &["run", "--verbose", "--impl", &imp]);
    assert!(
        verbose
            .stdout
            .starts_with("implementation: allow-all 0.0.1"),
        "{}",
        verbose.stdout
    );
    assert!(
        verbose.stdout.contains("\nrequirements:\n  GATE-T-2 "),
        "{}",
        verbose.stdout
    );
}

#[test]
fn lint_reports_every_problem() {
    let suite = Suite::new();
    suite.scenario("gate/ok", GRANTS_ONLY).scenario(
        "gate/bad",
        "title = \"t\"\nrequirements = [\"GATE-NOPE-1\"]\ntier = \"decision\"\n[[case]]\ndecide = \"x\"\nexpect = { decision = \"deny\" }\n",
    );
    let run = run_cli(suite.dir.path(), &["lint"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(
            "scenarios/gate/bad.toml:2:17: requirement `GATE-NOPE-1` is not defined in spec/"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("allowed twin"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("1 scenario file(s) valid, 2 problem(s)"),
        "{}",
        run.stdout
    );
    std::fs::remove_file(suite.path("scenarios/gate/bad.toml")).unwrap();
    assert_eq!(run_cli(suite.dir.path(), &["lint"]).code, 0);
}

#[test]
fn trace_lists_violations_and_passes_when_clean() {
    let suite = Suite::new();
    suite.scenario("gate/b-grants", GRANTS_ONLY);
    let run = run_cli(suite.dir.path(), &["trace"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("`GATE-T-1` states a MUST or SHOULD but has no scenario"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("`GATE-T-3` states a MUST or SHOULD"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("`GATE-T-2` states"), "{}", run.stdout);
    suite.scenario("gate/a-read-list", READ_LIST);
    std::fs::write(
        suite.path("spec/untestable.toml"),
        "[[untestable]]\nid = \"GATE-T-3\"\nreason = \"needs a clock\"\n",
    )
    .unwrap();
    let run = run_cli(suite.dir.path(), &["trace", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["chapters"][0]["covered"], 2);
    assert_eq!(json["chapters"][0]["untestable"], 1);
    assert_eq!(
        json["requirements"]["GATE-T-1"]["scenarios"],
        serde_json::json!(["gate/a-read-list"])
    );
}

#[test]
fn tier_selects_the_scenarios_of_one_tier_and_composes_with_filter() {
    let suite = Suite::new();
    let enforcement = GRANTS_ONLY.replace("tier = \"decision\"", "tier = \"enforcement\"");
    suite
        .scenario("gate/b-grants", GRANTS_ONLY)
        .scenario("gate/c-grants", &enforcement)
        .scenario("trust/d-grants", &enforcement);
    let ids = |run: common::Run| run.ids();
    assert_eq!(
        ids(suite.run("allow_all", &["--tier", "decision"])),
        ["gate/b-grants"]
    );
    assert_eq!(
        ids(suite.run("allow_all", &["--tier", "enforcement"])),
        ["gate/c-grants", "trust/d-grants"]
    );
    assert_eq!(
        ids(suite.run("allow_all", &["--tier", "enforcement", "--filter", "gate/"])),
        ["gate/c-grants"]
    );
    assert_eq!(suite.run("allow_all", &["--tier", "policy"]).code, 2);
}

#[test]
fn vm_refuses_inner_options_it_sets_itself_naming_each() {
    let suite = Suite::new();
    for (args, says) in [
        (
            &["--tier", "enforcement"][..],
            "--tier: the vm command picks each guest's tiers",
        ),
        (
            &["--tier=decision"][..],
            "--tier: the vm command picks each guest's tiers",
        ),
        (
            &["--json-out", "x.json"][..],
            "--json-out: the guest sets this itself",
        ),
    ] {
        let mut argv = vec!["vm", "--kernel", "6.1", "--"];
        argv.extend_from_slice(args);
        let run = run_cli(suite.dir.path(), &argv);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

/// PROTO-OBSERVE-5: an adapter that leaves a daemon behind (double fork, `setsid`, its
/// streams closed) to rewrite the JSON report after the run cannot: the runner kills
/// every descendant before it writes, writes atomically, and prints the hash a CI log
/// pins.
#[test]
fn a_daemon_the_implementation_leaves_cannot_change_the_report() {
    let suite = Suite::new();
    suite.scenario("gate/b-grants", GRANTS_ONLY);
    let liar = suite.path("daemon.py");
    std::fs::write(
        &liar,
        format!(
            r#"import json, os, sys, time
pid, out = os.getppid(), None
while pid > 1 and out is None:
    argv = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")
    if b"--json-out" in argv:
        out = argv[argv.index(b"--json-out") + 1].decode()
    pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(fd, i)
        time.sleep(2)
        with open(os.path.join(os.path.dirname(out), "daemon-was-here"), "w") as f:
            f.write("x")
        with open(out, "w") as f:
            json.dump({{"forged": True}}, f)
        os._exit(0)
    os._exit(0)
os.wait()
os.execvp("python3", ["python3", {allow_all:?}])
"#,
            allow_all = fake_command("allow_all").trim_start_matches("python3 ")
        ),
    )
    .unwrap();
    let report = suite.path("report.json");
    let run = run_cli(
        suite.dir.path(),
        &[
            "run",
            "--quiet",
            "--json-out",
            report.to_str().unwrap(),
            "--impl",
            &format!("python3 {}", liar.display()),
        ],
    );
    assert!(run.stderr.contains("killed"), "{}", run.stderr);
    // Longer than the daemon would have waited.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        !suite.path("daemon-was-here").exists(),
        "the daemon outlived the run"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("\"scenarios\""), "{text}");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("report.json sha256:"))
        .unwrap_or_else(|| panic!("no hash line: {}", run.stderr));
    let want = line.rsplit("sha256:").next().unwrap();
    use sha2::Digest;
    let got: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(want, got);
}

/// `spec/public-record.toml` and `spec/asi.toml` checked by `lint`: a class no scenario
/// cites and a source no class lists each fail with one line, and pass once the scenario
/// cites the class's source; an ASI prefix no ID starts with fails.
#[test]
fn lint_checks_the_public_record_and_the_asi_map() {
    let suite = Suite::new();
    let cited = GRANTS_ONLY.replace(
        "tier = \"decision\"",
        "tier = \"decision\"\nsources = [\"openai/codex#2\"]",
    );
    suite.scenario("gate/cited", &cited);
    let record = "[[class]]\nid = \"approval-other-surface\"\nnumber = 4\ntitle = \"t\"\n\
                  sources = [\"openai/codex#1\"]\nrequirements = [\"GATE-T-2\"]\n";
    std::fs::write(suite.path("spec/public-record.toml"), record).unwrap();
    let run = run_cli(suite.dir.path(), &["lint"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    for line in [
        "public-record.toml:1: class `approval-other-surface` has no scenario citing one of its sources (openai/codex#1)",
        "scenarios/gate/cited.toml: cites source `openai/codex#2`, which no class of ",
        "1 scenario file(s) valid, 2 problem(s)",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
    std::fs::write(
        suite.path("scenarios/gate/cited.toml"),
        cited.replace("#2", "#1"),
    )
    .unwrap();
    let run = run_cli(suite.dir.path(), &["lint"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    std::fs::write(
        suite.path("spec/asi.toml"),
        "source = \"OWASP (2025-12-09)\"\nurl = \"https://genai.owasp.org/\"\n\
         [[risk]]\nid = \"ASI02\"\nname = \"Tool Misuse and Exploitation\"\nrequirements = [\"GATE-T-\", \"PERM-\"]\n",
    )
    .unwrap();
    let run = run_cli(suite.dir.path(), &["lint"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "asi.toml:3: risk `ASI02` names `PERM-`, a prefix no requirement ID starts with"
        ),
        "{}",
        run.stdout
    );
}
