//! Strictness of the loader: each rule of `scenarios/README.md` rejects with one line.

use std::collections::BTreeSet;

use super::{load_file, Body};

const HEAD: &str = "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"decision\"\n";

fn ids() -> BTreeSet<String> {
    ["GATE-T-1", "GATE-T-2"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn errors(src: &str) -> Vec<String> {
    match load_file(src, "gate/x.toml", "gate/x", Some(&ids())) {
        Ok(_) => vec![],
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

fn one_error(src: &str) -> String {
    let e = errors(src);
    assert_eq!(e.len(), 1, "{e:#?}");
    e[0].clone()
}

#[test]
fn a_valid_table_loads_with_case_setup_and_requirements() {
    let src = format!(
        "{HEAD}[setup]\nasker = \"none\"\ncard_window_ms = 200\n\
         [[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n\
         [[case]]\nname = \"etc\"\ndecide = \"ls /etc\"\nsetup = {{ asker = \"terminal\" }}\nrequirements = [\"GATE-T-2\"]\n\
         expect = {{ decision = \"ask\" }}\n"
    );
    let s = load_file(&src, "gate/x.toml", "gate/x", Some(&ids())).expect("valid");
    let Body::Table(cases) = &s.body else {
        panic!("table")
    };
    assert_eq!(cases.len(), 2);
    let setup = cases[1].setup.resolve();
    assert_eq!(
        setup.gate.asker,
        crate::controls::gate::model::Asker::Terminal
    );
    assert_eq!(setup.gate.card_window_ms, Some(200));
    assert_eq!(
        cases[0].setup.resolve().gate.asker,
        crate::controls::gate::model::Asker::None
    );
    assert_eq!(s.all_requirements(), vec!["GATE-T-1", "GATE-T-2"]);
}

#[test]
fn unknown_top_level_key_names_the_line() {
    let e = one_error(&format!(
        "{HEAD}colour = \"red\"\n[[step]]\ngrants = true\n"
    ));
    assert!(
        e.starts_with("gate/x.toml:4:1: unknown field `colour`, expected one of"),
        "{e}"
    );
}

#[test]
fn unknown_key_in_a_case_names_the_line() {
    let e = one_error(&format!(
        "{HEAD}[[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\nfoo = 1\n"
    ));
    assert!(e.starts_with("gate/x.toml:7:1: unknown field `foo`"), "{e}");
}

#[test]
fn unknown_key_in_an_expectation_names_the_line() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\ndecide = \"ls\"\nexpect = {{ decison = \"allow\" }}\n"
    ));
    assert!(e.starts_with("gate/x.toml:6:"), "{e}");
    assert!(e.contains("unknown field `decison`"), "{e}");
}

#[test]
fn wrong_types_are_rejected() {
    let e = one_error(&format!("{HEAD}[[step]]\nanswer = \"maybe\"\n"));
    assert!(e.starts_with("gate/x.toml:5:"), "{e}");
    assert!(e.contains("unknown variant `maybe`"), "{e}");
    let e = one_error(&format!("{HEAD}[[step]]\ndecide = 3\n"));
    assert!(
        e.starts_with("gate/x.toml:5:10: invalid type: integer `3`, expected a string"),
        "{e}"
    );
}

#[test]
fn steps_need_exactly_one_action() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\nexpect = {{ decision = \"allow\" }}\n"
    ));
    assert!(e.starts_with("gate/x.toml:4:1: step 1: no action"), "{e}");
    let e = one_error(&format!("{HEAD}[[step]]\ndecide = \"ls\"\ncode = \"1\"\n"));
    assert!(e.contains("step 1: more than one action"), "{e}");
}

#[test]
fn table_xor_sequence() {
    let e = one_error(&format!(
        "{HEAD}[[case]]\ngrants = true\n[[step]]\ngrants = true\n"
    ));
    assert!(e.contains("never both"), "{e}");
    let e = one_error(HEAD);
    assert!(e.contains("nothing to run"), "{e}");
}

#[test]
fn setup_and_requirements_belong_to_cases() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\ngrants = true\nsetup = {{ asker = \"none\" }}\n"
    ));
    assert!(
        e.contains("step 1: `setup` is allowed in a [[case]] only"),
        "{e}"
    );
}

#[test]
fn requirements_must_be_present_and_defined() {
    let e = one_error(
        "title = \"t\"\nrequirements = []\ntier = \"decision\"\n[[step]]\ngrants = true\n",
    );
    assert_eq!(e, "gate/x.toml:2:16: `requirements` is empty");
    let e = one_error("title = \"t\"\ntier = \"decision\"\n[[step]]\ngrants = true\n");
    assert!(e.contains("missing field `requirements`"), "{e}");
    let e = one_error("title = \"t\"\nrequirements = [\"GATE-T-1\", \"GATE-NOPE-1\"]\ntier = \"decision\"\n[[step]]\ngrants = true\n");
    assert_eq!(
        e,
        "gate/x.toml:2:29: requirement `GATE-NOPE-1` is not defined in spec/"
    );
    let e = one_error(&format!(
        "{HEAD}[[case]]\ngrants = true\nrequirements = [\"GATE-NOPE-2\"]\n"
    ));
    assert_eq!(
        e,
        "gate/x.toml:6:17: requirement `GATE-NOPE-2` is not defined in spec/"
    );
    let e = one_error("title = \"t\"\nrequirements = [\"gate-t-1\"]\ntier = \"decision\"\n[[step]]\ngrants = true\n");
    assert!(e.contains("`gate-t-1` is not a requirement ID"), "{e}");
}

#[test]
fn names_are_unique() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\nname = \"a\"\ngrants = true\n[[step]]\nname = \"a\"\naudit = true\n"
    ));
    assert!(
        e.contains("two cases or steps are named `a` (the second is #2)"),
        "{e}"
    );
}

#[test]
fn every_refusal_has_its_allowed_twin() {
    let e = one_error(&format!(
        "{HEAD}[[case]]\ndecide = \"ls /etc\"\nexpect = {{ decision = \"ask\" }}\n"
    ));
    assert!(e.contains("every file carries the allowed twin"), "{e}");
    assert!(errors(&format!(
        "{HEAD}[[case]]\ndecide = \"ls /etc\"\nexpect = {{ decision = \"deny\" }}\n[[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    ))
    .is_empty());
}

#[test]
fn expectations_fit_their_action() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\ngrants = true\nexpect = {{ decision = \"allow\" }}\n"
    ));
    assert!(
        e.contains("step 1: `expect.decision` does not apply to grants"),
        "{e}"
    );
}

#[test]
fn false_is_null_but_true_is_rejected() {
    assert!(errors(&format!(
        "{HEAD}[[step]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\", offers = {{ family = false }} }}\n"
    ))
    .is_empty());
    let e = one_error(&format!(
        "{HEAD}[[step]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\", offers = {{ family = true }} }}\n"
    ));
    assert!(e.contains("`true` is not allowed here"), "{e}");
}

#[test]
fn fixture_paths_stay_inside() {
    let e = one_error(&format!(
        "{HEAD}[fixture]\nfiles = {{ \"../x\" = \"\" }}\n[[step]]\ngrants = true\n"
    ));
    assert!(e.contains("path `../x` must be relative"), "{e}");
}

#[test]
fn unknown_placeholders_are_errors_with_their_position() {
    // A misspelt home would be sent as written: `cat` fails, and a refusal would pass.
    let e = errors(&format!(
        "{HEAD}[[step]]\nrun = \"cat @HOM@/.ssh/key\"\nexpect = {{ exit = \"nonzero\" }}\n\
         [[step]]\nrun = \"true\"\nexpect = {{ exit = 0 }}\ncheck = {{ exists = [\"@WORKSPCE@/x\", \"@NOPE@\"] }}\n"
    ));
    assert_eq!(
        e.iter()
            .filter(|l| l.contains("unknown placeholder"))
            .map(|l| l.split(": unknown").next().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["gate/x.toml:5:12", "gate/x.toml:10:22", "gate/x.toml:10:38"],
        "{e:#?}"
    );
    assert!(e[0].contains("`@HOM@`"), "{e:#?}");
    // The twin: the same file spelled right loads.
    assert_eq!(
        errors(&format!(
            "{HEAD}[[step]]\nrun = \"cat @HOME@/.ssh/key\"\nexpect = {{ exit = \"nonzero\" }}\n\
             [[step]]\nrun = \"true\"\nexpect = {{ exit = 0 }}\ncheck = {{ exists = [\"@WORKSPACE@/x\", \"@NAME:3@\"] }}\n"
        )),
        Vec::<String>::new()
    );
}

#[test]
fn a_check_path_stays_beneath_its_placeholder() {
    for climbs in [
        "@OUTSIDE@/../..",
        "@HOME@/a/../../x",
        "@LOG@/..",
        "a/../../x",
        "@BOGUS",
    ] {
        let e = errors(&format!(
            "{HEAD}[[step]]\nrun = \"true\"\nexpect = {{ exit = 0 }}\ncheck = {{ unchanged = [\"{climbs}\"] }}\n"
        ));
        assert!(
            e.iter()
                .any(|l| l.starts_with("gate/x.toml:4:1: step 1: check path `")
                    && (l.contains("climbs out of") || l.contains("without `..`"))),
            "{climbs}: {e:#?}"
        );
    }
    // The twins: beneath the root, the root itself, a sibling of it named by a suffix
    // (`@LOG@.gone` is `R/log.gone`), a relative path.
    for stays in [
        "@OUTSIDE@",
        "@OUTSIDE@/a/./b",
        "@LOG@.gone",
        "a/b",
        "@NAME:3@",
    ] {
        let e = errors(&format!(
            "{HEAD}[[step]]\nrun = \"true\"\nexpect = {{ exit = 0 }}\ncheck = {{ unchanged = [\"{stays}\"] }}\n"
        ));
        assert_eq!(e, Vec::<String>::new(), "{stays}");
    }
}

#[test]
fn unknown_capabilities_are_rejected() {
    let e = one_error(&format!(
        "{HEAD}capabilities = [\"gates\"]\n[[step]]\ngrants = true\n"
    ));
    assert!(e.contains("unknown capability `gates`"), "{e}");
}

#[test]
fn the_new_steps_load_and_imply_their_capabilities() {
    let src = format!(
        "{HEAD}[setup]\nstartup = \"no\"\nresolver = \"walk\"\nroots = [\"@EXTRA@\"]\n\
         [fixture]\nfifos = [\"pipe\"]\nmodes = {{ \"f\" = \"0600\" }}\nbinary = {{ \"b\" = \"00ff\" }}\n\
         [[step]]\nopened = true\nexpect = {{ started = true }}\n\
         [[step]]\nread = {{ path = \"f\", if_asked = \"yes\" }}\nexpect = {{ result = \"read\", prompted = true }}\n\
         [[step]]\nread = \"pipe\"\nexpect = {{ result = \"not_regular\" }}\n\
         [[step]]\nwrite = {{ path = \"x\", content = \"y\", data = \"untrusted\" }}\nexpect = {{ result = \"written\", effect = \"took_data_trust\" }}\n\
         [[step]]\nquery = \"x\"\nexpect = {{ trust = \"untrusted\", rule = \"x\" }}\n\
         [[step]]\nquery = \"f\"\nexpect = {{ trust = \"trusted\", rule = false }}\n\
         [[step]]\ngesture = {{ name = \"add_dir\", path = \"@EXTRA@\" }}\nexpect = {{ result = \"done\" }}\n\
         [[step]]\nstatus = true\nexpect = {{ rules = [{{ namespace = \"relative\", key = \"\", trust = \"trusted\" }}] }}\n\
         [[step]]\nclear = \"yes\"\n\
         [[step]]\nrun = {{ input = \"true\", cwd = \"sub\" }}\nexpect = {{ exit = 0 }}\ncheck = {{ exists = [\"sub\"] }}\n"
    );
    let s = load_file(&src, "trust/x.toml", "trust/x", Some(&ids())).expect("valid");
    assert_eq!(s.capabilities, vec!["paths", "trust", "fence"]);
    let src = "title = \"t\"\nrequirements = [\"GATE-T-1\"]\ntier = \"enforcement\"\n[[step]]\nposture = true\n";
    let s = load_file(src, "fence/x.toml", "fence/x", Some(&ids())).expect("valid");
    assert_eq!(s.capabilities, vec!["fence"]);
}

#[test]
fn new_keys_are_strict() {
    let e = one_error(&format!(
        "{HEAD}[[step]]\nread = \"f\"\nexpect = {{ exit = 0 }}\n"
    ));
    assert!(
        e.contains("step 1: `expect.exit` does not apply to read \"f\""),
        "{e}"
    );
    let e = one_error(&format!(
        "{HEAD}[[step]]\ngesture = {{ name = \"startup\", path = \"x\" }}\n"
    ));
    assert!(e.contains("unknown gesture `startup`"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[[step]]\nread = \"f\"\ncheck = {{ stdout_has = [\"x\"] }}\n"
    ));
    assert!(e.contains("apply to `run` only"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[[step]]\nrun = \"true\"\ncheck = {{ unchanged = [\"/etc\"] }}\n"
    ));
    assert!(e.contains("must start with a placeholder of a root"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[[step]]\nrun = \"true\"\ncheck = {{ socket_untouched = true }}\n"
    ));
    assert!(e.contains("needs a [fixture.socket]"), "{e}");
    // PROTO-VERDICT-17: a twin's removal is `removed` (exactness), never `absent`.
    let e = one_error(&format!(
        "{HEAD}[fixture]\nfiles = {{ \"old.txt\" = \"x\" }}\n[[step]]\nrun = \"rm old.txt\"\ncheck = {{ absent = [\"old.txt\"] }}\n"
    ));
    assert!(e.contains("write `removed = [\"old.txt\"]`"), "{e}");
    assert!(errors(&format!(
        "{HEAD}[fixture]\nfiles = {{ \"old.txt\" = \"x\" }}\n[[step]]\nrun = \"rm old.txt\"\ncheck = {{ removed = [\"old.txt\"], absent = [\"new.txt\"] }}\n"
    ))
    .is_empty());
    let e = one_error(&format!(
        "{HEAD}[fixture]\nmodes = {{ \"f\" = \"rw\" }}\n[[step]]\nstatus = true\n"
    ));
    assert!(e.contains("must be octal"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[fixture.outside]\nbinary = {{ \"f\" = \"0g\" }}\n[[step]]\nstatus = true\n"
    ));
    assert!(e.contains("hex digits in pairs"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[[step]]\nstatus = true\n[[step]]\nopened = true\n"
    ));
    assert!(e.contains("first [[step]] only"), "{e}");
    let e = one_error(&format!(
        "{HEAD}[[step]]\nrun = \"true\"\ncheck = {{ nope = true }}\n"
    ));
    assert!(e.contains("unknown field `nope`"), "{e}");
}

#[test]
fn the_allowed_twin_rule_covers_every_family() {
    let twin = "every file carries the allowed twin";
    let refusals = [
        ("read = \"../x\"\nexpect = { result = \"escape\" }", "read = \"f\"\nexpect = { result = \"read\" }"),
        ("write = { path = \"x\" }\nexpect = { result = \"declined\" }", "list = \".\"\nexpect = { result = \"listed\" }"),
        ("query = \"x\"\nexpect = { trust = \"unknown\" }", "query = \"y\"\nexpect = { trust = \"trusted\" }"),
        ("gesture = { name = \"add_dir\", path = \"x\" }\nexpect = { result = \"inside_project\" }", "gesture = { name = \"add_dir\", path = \"y\" }\nexpect = { result = \"done\" }"),
        ("run = \"false\"\nexpect = { exit = \"nonzero\" }", "run = \"touch a\"\nexpect = { exit = 0 }\ncheck = { exists = [\"a\"] }"),
        ("run = \"x\"\nexpect = { refused = \"degraded_refused\" }", "run = \"echo hi\"\nexpect = { exit = \"zero\" }\ncheck = { stdout_has = [\"hi\"] }"),
        ("toggle = { to = \"off\" }\nexpect = { refused = \"confirmation_required\" }", "toggle = { to = \"off\", confirmed = true }\nexpect = { refused = false }"),
    ];
    for (refusal, allowed) in refusals {
        let alone = format!("{HEAD}[[step]]\n{refusal}\n");
        let e = one_error(&alone);
        assert!(e.contains(twin), "{refusal}: {e}");
        let both = format!("{HEAD}[[step]]\n{refusal}\n[[step]]\n{allowed}\n");
        assert!(errors(&both).is_empty(), "{refusal}: {:?}", errors(&both));
    }
    // A zero exit without a check proving its effect is no twin.
    let e = one_error(&format!(
        "{HEAD}[[step]]\nrun = \"false\"\nexpect = {{ exit = 1 }}\n[[step]]\nrun = \"true\"\nexpect = {{ exit = 0 }}\n"
    ));
    assert!(e.contains("with a `check` proving its effect"), "{e}");
    // A refusal of one family is not answered by an allowed outcome of another.
    let e = one_error(&format!(
        "{HEAD}[[step]]\nread = \"../x\"\nexpect = {{ result = \"escape\" }}\n[[step]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    ));
    assert!(e.contains("a file tool expects a refusal"), "{e}");
}

/// One scenario-free step of each control, read from TOML as a scenario writes it.
fn action(toml_entry: &str) -> crate::controls::Action {
    #[derive(serde::Deserialize)]
    struct One {
        #[serde(rename = "step")]
        steps: Vec<super::Entry>,
    }
    let one: One = toml::from_str(&format!("[[step]]\n{toml_entry}\n")).unwrap();
    let mut e = one.steps.into_iter().next().unwrap();
    let (bare, problems) = e.actions.remove(0);
    assert!(problems.is_empty(), "{problems:?}");
    bare.with_expect(None).unwrap()
}

#[test]
fn each_control_builds_its_requests_as_documented() {
    let setup = crate::controls::SetupPatch::default().resolve();
    let sub = |s: &str| s.replace("@OUTSIDE@", "/r/outside");
    let req =
        |entry: &str| serde_json::Value::Object(action(entry).request("s1", &setup, &sub).unwrap());
    assert_eq!(
        req("decide = \"ls @OUTSIDE@\""),
        serde_json::json!({"op": "decide", "session": "s1", "tool": "shell", "input": "ls /r/outside"})
    );
    assert_eq!(
        req("write = { path = \"docs/page.html\", content = \"<p>\", data = \"untrusted\", if_asked = \"no\" }"),
        serde_json::json!({"op": "write", "session": "s1", "path": "docs/page.html", "content": "<p>",
               "data": "untrusted", "if_asked": "no"})
    );
    assert_eq!(
        req("clear = \"no\""),
        serde_json::json!({"op": "clear", "session": "s1", "startup": "no"})
    );
    assert_eq!(
        req("run = \"truncate -s0 @OUTSIDE@/v\""),
        serde_json::json!({"op": "run", "session": "s1", "tool": "shell",
               "input": "truncate -s0 /r/outside/v", "cwd": null})
    );
    assert!(action("opened = true")
        .request("s1", &setup, &sub)
        .is_none());
}

#[test]
fn pins_name_what_the_entry_names() {
    // A case may pin its own requirement; a step may not pin one the file does not name,
    // nor something that is no citation at all.
    let ok = format!(
        "{HEAD}[[case]]\nrequirements = [\"GATE-T-2\"]\npins = [\"GATE-T-1\", \"GATE-T-2\"]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    );
    assert_eq!(errors(&ok), Vec::<String>::new());
    let other = format!(
        "{HEAD}[[step]]\npins = [\"GATE-T-2\"]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    );
    let e = errors(&other);
    assert!(
        e.iter().any(|m| m.contains(
            "step 1: pins `GATE-T-2`, but `GATE-T-2` is not among the requirements it names"
        )),
        "{e:#?}"
    );
    let bad = format!(
        "{HEAD}[[step]]\npins = [\"GATE-T-1.B\"]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    );
    assert!(
        one_error(&bad).contains("`GATE-T-1.B` is not a requirement ID or a part of one"),
        "{bad}"
    );
    let undefined = format!(
        "{HEAD}[[step]]\npins = [\"GATE-T-1.z\"]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n"
    );
    assert!(one_error(&undefined).contains("`GATE-T-1.z` is not defined in spec/"));
}

#[test]
fn an_empty_pins_says_the_step_pins_nothing_and_still_counts_as_said() {
    // `pins = []` on a setup step: the file's every step has said what it pins, so each
    // requirement it names must be pinned by some step.
    let head = HEAD.replace(
        "requirements = [\"GATE-T-1\"]",
        "requirements = [\"GATE-T-1\", \"GATE-T-2\"]",
    );
    let step = "decide = \"ls\"\nexpect = { decision = \"allow\" }\n";
    let unpinned =
        format!("{head}[[step]]\npins = []\n{step}[[step]]\npins = [\"GATE-T-1\"]\n{step}");
    assert!(
        one_error(&unpinned).contains("`GATE-T-2` is named, but no step's `pins` names it"),
        "{unpinned}"
    );
    let pinned = format!(
        "{head}[[step]]\npins = []\n{step}[[step]]\npins = [\"GATE-T-1\", \"GATE-T-2\"]\n{step}"
    );
    assert_eq!(errors(&pinned), Vec::<String>::new());
}

/// PROTO-OBSERVE-1: every key a scenario's `check` table may hold has its class.
#[test]
fn every_check_key_is_classified_and_each_reported_safety_key_says_why() {
    let err = toml::from_str::<crate::scenario::Check>("bogus = 1")
        .unwrap_err()
        .to_string();
    let keys: Vec<&str> = err
        .split("expected one of ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|k| k.trim().trim_matches('`'))
        .filter(|k| !k.is_empty())
        .collect();
    assert!(keys.len() > 10, "{err}");
    for key in keys {
        let c = crate::verdict::CHECKS.iter().find(|c| c.key == key);
        let c = c.unwrap_or_else(|| panic!("`{key}` has no class in CHECKS"));
        if c.level == crate::verdict::Level::Safety
            && c.evidence == crate::verdict::Evidence::Reported
        {
            assert!(
                c.reason.is_some(),
                "`{key}`: reported at safety without a reason"
            );
        }
    }
    assert_eq!(
        crate::verdict::evidence("step 2 check unchanged"),
        crate::verdict::Evidence::Observed
    );
    assert_eq!(
        crate::verdict::evidence("case 1 check stdout_lacks"),
        crate::verdict::Evidence::Reported
    );
    assert_eq!(
        crate::verdict::evidence("step 1 decision"),
        crate::verdict::Evidence::Reported
    );
}

#[test]
fn an_entry_may_say_why_in_one_line_and_the_step_keeps_it() {
    let src = format!(
        "{HEAD}[[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n\
         [[case]]\nwhy = \"git status runs what the repository configures\"\n\
         decide = \"git status\"\nexpect = {{ decision = \"ask\" }}\n"
    );
    let s = load_file(&src, "gate/x.toml", "gate/x", Some(&ids())).expect("valid");
    let steps = s.body.steps();
    assert_eq!(steps[0].why, None);
    assert_eq!(
        steps[1].why.as_deref(),
        Some("git status runs what the repository configures")
    );
    for bad in ["\"\"", "\"  \"", "\"\"\"\ntwo\nlines\"\"\""] {
        let e = one_error(&format!(
            "{HEAD}[[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\" }}\n\
             [[case]]\nwhy = {bad}\ndecide = \"git status\"\nexpect = {{ decision = \"ask\" }}\n"
        ));
        assert!(e.contains("`why` is one line of prose"), "{e}");
    }
    // Misplaced in `expect`, it is not taken for prose.
    let e = one_error(&format!(
        "{HEAD}[[case]]\ndecide = \"ls\"\nexpect = {{ decision = \"allow\", why = \"x\" }}\n"
    ));
    assert!(e.contains("why"), "{e}");
}
