//! The trust map against seed `004`: every write-table row, nesting three deep,
//! look-alike prefixes, the two namespaces, every gesture's reach, `/cd` re-spelling,
//! the prompt rules, resume and clear.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use gatehouse::paths::Kind;
use gatehouse::trust::{
    Destination, NotOffered, Offer, Origin, ReachKind, ReachOrigin, Startup, Trust, TrustError,
    TrustKey, TrustMap, WriteEffect,
};

const WD: &str = "/w/proj";

fn trusted_root() -> TrustMap {
    let mut m = TrustMap::new(WD);
    m.startup(Startup::Yes).unwrap();
    m
}

fn rel(s: &str) -> TrustKey {
    TrustKey::rel(s)
}

// --- the write table, one test per row -------------------------------------------------

fn row(
    setup: impl FnOnce(&mut TrustMap),
    data: Trust,
) -> (Destination, bool, WriteEffect, Option<Trust>, Option<Trust>) {
    let mut m = TrustMap::new(WD);
    setup(&mut m);
    let key = rel("src/out.txt");
    let sibling = rel("src/other.txt");
    let sibling_before = m.decision(&sibling);
    let plan = m.plan_write(&key, data);
    m.reconcile(&plan);
    assert_eq!(
        m.decision(&sibling),
        sibling_before,
        "a sibling never changes"
    );
    (
        plan.destination,
        plan.prompt,
        plan.effect,
        m.decision(&key),
        m.rule_at(&rel("src")),
    )
}

#[test]
fn write_trusted_data_to_trusted_path_is_silent_and_unchanged() {
    let r = row(|m| m.startup(Startup::Yes).unwrap(), Trust::Trusted);
    assert_eq!(
        r,
        (
            Destination::Trusted,
            false,
            WriteEffect::Unchanged,
            Some(Trust::Trusted),
            None
        )
    );
}

#[test]
fn write_untrusted_data_to_trusted_path_asks_and_marks_that_path_untrusted() {
    let r = row(|m| m.startup(Startup::Yes).unwrap(), Trust::Untrusted);
    assert_eq!(
        r,
        (
            Destination::Trusted,
            true,
            WriteEffect::Mark(Trust::Untrusted),
            Some(Trust::Untrusted),
            None
        ),
        "the exact path, never the parent"
    );
}

#[test]
fn write_trusted_data_to_untrusted_path_is_silent_and_marks_it_trusted() {
    let r = row(|m| m.at_file_untrusted_for_test(), Trust::Trusted);
    assert_eq!(r.0, Destination::Untrusted);
    assert_eq!(
        (r.1, r.2, r.3),
        (
            false,
            WriteEffect::Mark(Trust::Trusted),
            Some(Trust::Trusted)
        )
    );
}

#[test]
fn write_untrusted_data_to_untrusted_path_is_silent_and_unchanged() {
    let r = row(|m| m.at_file_untrusted_for_test(), Trust::Untrusted);
    assert_eq!(
        (r.0, r.1, r.2, r.3),
        (
            Destination::Untrusted,
            false,
            WriteEffect::Unchanged,
            Some(Trust::Untrusted)
        )
    );
}

#[test]
fn write_to_never_mentioned_path_asks_either_way_and_takes_the_data_trust() {
    for data in [Trust::Trusted, Trust::Untrusted] {
        let r = row(|_| {}, data);
        assert_eq!(
            (r.0, r.1, r.2, r.3),
            (
                Destination::NeverMentioned,
                true,
                WriteEffect::Mark(data),
                Some(data)
            )
        );
        assert_eq!(r.4, None, "the parent gains no rule");
    }
}

/// Helper: an untrusted rule over `src` written by the only route that writes one (an
/// untrusted write into a trusted tree, accepted).
trait Untrust {
    fn at_file_untrusted_for_test(&mut self);
}
impl Untrust for TrustMap {
    fn at_file_untrusted_for_test(&mut self) {
        self.startup(Startup::Yes).unwrap();
        let plan = self.plan_write(&rel("src"), Trust::Untrusted);
        self.reconcile(&plan);
        assert_eq!(self.decision(&rel("src/x")), Some(Trust::Untrusted));
    }
}

#[test]
fn declined_write_changes_nothing() {
    let m0 = trusted_root();
    let plan = m0.plan_write(&rel("a"), Trust::Untrusted);
    assert!(plan.prompt);
    // Declining: the caller neither writes nor reconciles.
    assert_eq!(m0.decision(&rel("a")), Some(Trust::Trusted));
}

// --- matching ---------------------------------------------------------------------------

#[test]
fn empty_map_trusts_nothing_and_no_answers_nothing() {
    let mut m = TrustMap::new(WD);
    m.startup(Startup::No).unwrap();
    assert!(m.status().is_empty());
    assert!(!m.is_trusted(&rel("")));
    assert!(
        m.plan_write(&rel("a"), Trust::Trusted).prompt,
        "every write is shown first"
    );
    assert!(matches!(
        TrustMap::new(WD).startup(Startup::Leave),
        Err(TrustError::NoSession)
    ));
}

#[test]
fn nesting_three_deep_vendor_lib() {
    let mut m = trusted_root();
    let plan = m.plan_write(&rel("vendor"), Trust::Untrusted);
    m.reconcile(&plan);
    m.at_file(&rel("vendor/lib.js"));
    assert_eq!(m.decision(&rel("src/main.js")), Some(Trust::Trusted));
    assert_eq!(m.decision(&rel("vendor")), Some(Trust::Untrusted));
    assert_eq!(
        m.decision(&rel("vendor/other.js")),
        Some(Trust::Untrusted),
        "no leak to siblings"
    );
    assert_eq!(m.decision(&rel("vendor/lib.js")), Some(Trust::Trusted));
    assert_eq!(
        m.decision(&rel("vendor/lib.js.map")),
        Some(Trust::Untrusted),
        "whole segments"
    );
    assert_eq!(m.decision(&rel("vendor/lib.js/x")), Some(Trust::Trusted));
}

#[test]
fn later_decision_replaces_earlier_and_spellings_are_one_rule() {
    let mut m = trusted_root();
    m.at_file(&rel("a/b"));
    let p = m.plan_write(&rel("./a//b/"), Trust::Untrusted);
    m.reconcile(&p);
    assert_eq!(m.decision(&rel("a/b")), Some(Trust::Untrusted));
    assert_eq!(m.status().len(), 2);
}

#[test]
fn look_alike_prefixes_do_not_match() {
    let mut m = TrustMap::new("/w/other");
    m.add_dir(Path::new("/w/proj")).unwrap();
    assert!(m.is_trusted(&TrustKey::abs("/w/proj/x")));
    assert!(!m.is_trusted(&TrustKey::abs("/w/proj_evil/x")));
    assert!(!m.is_trusted(&TrustKey::abs("/w/proj_evil")));
    assert!(!m.is_trusted(&TrustKey::abs("/w")));
}

#[test]
fn relative_and_absolute_rules_never_collide() {
    let mut m = trusted_root();
    // The startup yes is the empty relative prefix: it says nothing about absolute keys
    // of other directories. An absolute key inside the project is the relative key it
    // amounts to (TRUST-NS-3, PATH-ROUTE-4): one file, one rule, one answer.
    assert!(m.is_trusted(&TrustKey::abs("/w/proj/a")));
    assert!(!m.is_trusted(&TrustKey::abs("/w/proj_evil/a")));
    assert!(!m.is_trusted(&TrustKey::abs("/home/u/notes/a")));
    let mut n = TrustMap::new(WD);
    n.add_dir(Path::new("/home/u/notes")).unwrap();
    assert_eq!(n.decision(&rel("home/u/notes/a")), None);
    assert_eq!(n.decision(&rel("")), None);
    m.add_dir(Path::new("/home/u/notes")).unwrap();
    assert!(m.is_trusted(&TrustKey::abs("/home/u/notes/a")));
    // A path spelled absolutely inside the project is the relative key.
    assert_eq!(m.spell(Path::new("/w/proj/a")), rel("a"));
}

// --- gestures ---------------------------------------------------------------------------

#[test]
fn skip_permissions_writes_what_yes_writes() {
    let mut a = TrustMap::new(WD);
    a.skip_permissions();
    let rules = |m: &TrustMap| {
        m.record()
            .rules
            .into_iter()
            .map(|r| (r.namespace, r.path, r.trust))
            .collect::<Vec<_>>()
    };
    assert_eq!(rules(&a), rules(&trusted_root()));
    assert_eq!(a.origin_at(&rel("")), Some(Origin::SkipPermissions));
}

#[test]
fn at_file_trusts_that_one_file() {
    let mut m = TrustMap::new(WD);
    m.at_file(&rel("src/game.js"));
    assert!(m.is_trusted(&rel("src/game.js")));
    assert!(!m.is_trusted(&rel("src/other.js")));
    assert!(!m.is_trusted(&rel("src")));
}

#[test]
fn dropped_file_trusts_that_file_and_gives_reach_to_it() {
    let mut m = TrustMap::new(WD);
    let reach = m
        .dropped_file(Path::new("/home/u/Downloads/spec.pdf"))
        .unwrap()
        .unwrap();
    assert_eq!(
        (reach.kind, reach.origin),
        (ReachKind::File, ReachOrigin::Dropped)
    );
    assert!(m.is_trusted(&TrustKey::abs("/home/u/Downloads/spec.pdf")));
    assert!(!m.is_trusted(&TrustKey::abs("/home/u/Downloads/other.pdf")));
    // Inside the project: a relative rule, no reach needed.
    assert_eq!(m.dropped_file(Path::new("/w/proj/in.txt")).unwrap(), None);
    assert!(m.is_trusted(&rel("in.txt")));
}

#[test]
fn add_dir_is_reach_and_trust_and_refuses_the_project() {
    let mut m = TrustMap::new(WD);
    let r = m.add_dir(Path::new("/home/u/notes")).unwrap();
    assert_eq!((r.kind, r.origin), (ReachKind::Dir, ReachOrigin::AddDir));
    assert!(m.is_trusted(&TrustKey::abs("/home/u/notes/x/y")));
    assert_eq!(
        m.add_dir(Path::new("/w/proj/sub")).unwrap_err().code(),
        "inside_project"
    );
    assert_eq!(
        m.add_dir(Path::new("/w/proj")).unwrap_err().code(),
        "inside_project"
    );
    assert!(m.add_dir(Path::new("/w/proj_evil")).is_ok());
}

#[test]
fn cli_add_dir_is_reach_only() {
    let mut m = TrustMap::new(WD);
    let r = m.cli_add_dir(Path::new("/data")).unwrap();
    assert_eq!(r.origin, ReachOrigin::CliAddDir);
    assert_eq!(m.reach().len(), 1);
    assert_eq!(m.decision(&TrustKey::abs("/data/x")), None);
    assert!(m.status().is_empty());
}

#[test]
fn cd_respells_without_changing_any_decision() {
    let mut m = trusted_root();
    let p = m.plan_write(&rel("vendor"), Trust::Untrusted);
    m.reconcile(&p);
    m.at_file(&rel("vendor/lib.js"));
    m.add_dir(Path::new("/w/other")).unwrap();
    let p = m.plan_write(&TrustKey::abs("/w/other/bad"), Trust::Untrusted);
    m.reconcile(&p);
    let probes: Vec<PathBuf> = [
        "/w/proj/a",
        "/w/proj/vendor/x",
        "/w/proj/vendor/lib.js",
        "/w/other/ok",
        "/w/other/bad/z",
        "/w/nowhere",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let before: Vec<_> = probes.iter().map(|p| m.decision(&m.spell(p))).collect();
    // Move into the added directory, which was already trusted.
    let closed = m.cd(Path::new("/w/other")).unwrap();
    assert_eq!(
        closed.len(),
        1,
        "the /add-dir directory that is now the working directory closes"
    );
    let after: Vec<_> = probes.iter().map(|p| m.decision(&m.spell(p))).collect();
    assert_eq!(before, after);
    // Re-spelled: the old project is absolute now, the new working directory relative.
    assert_eq!(
        m.rule_at(&TrustKey::abs("/w/proj/vendor")),
        Some(Trust::Untrusted)
    );
    assert_eq!(m.rule_at(&rel("bad")), Some(Trust::Untrusted));
    assert_eq!(m.rule_at(&rel("")), Some(Trust::Trusted));
    assert!(!m.status().iter().any(|l| l.key == rel("vendor")));
}

#[test]
fn cd_closes_overlapping_added_dirs_only() {
    let mut m = TrustMap::new("/w/a");
    m.add_dir(Path::new("/w/b")).unwrap();
    m.add_dir(Path::new("/x")).unwrap();
    m.add_dir(Path::new("/w/c/deep")).unwrap();
    m.cli_add_dir(Path::new("/w/c")).unwrap();
    let closed: Vec<PathBuf> = m
        .cd(Path::new("/w/c"))
        .unwrap()
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(
        closed,
        vec![PathBuf::from("/w/c/deep"), PathBuf::from("/w/c")]
    );
    let open: Vec<&Path> = m.reach().iter().map(|r| r.path.as_path()).collect();
    assert_eq!(open, vec![Path::new("/w/b"), Path::new("/x")]);
    // /cd vouches for the new working directory; the rule for /w/c/deep is now relative.
    assert!(m.is_trusted(&rel("")));
    assert_eq!(m.rule_at(&rel("deep")), Some(Trust::Trusted));
}

#[test]
fn settings_names_are_resolved_deduped_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(base.join("proj")).unwrap();
    std::fs::create_dir_all(base.join("shared/real")).unwrap();
    std::os::unix::fs::symlink(base.join("shared/real"), base.join("link")).unwrap();
    let m = TrustMap::new(base.join("proj"));
    let names = vec![
        "../link".to_string(),
        base.join("shared/real").to_string_lossy().into_owned(),
        "../missing".to_string(),
        "~/x".to_string(),
    ];
    let q = m.settings_questions(&names, None);
    assert_eq!(
        q.ask.len(),
        1,
        "two layers naming one directory: one question"
    );
    assert_eq!(
        q.ask[0].resolved,
        base.join("shared/real"),
        "the box shows the resolved path"
    );
    assert_eq!(q.ask[0].names.len(), 2);
    assert_eq!(q.unopenable.len(), 2);
    let mut m = m;
    m.settings_dir_yes(&q.ask[0].resolved).unwrap();
    assert!(m.is_trusted(&TrustKey::abs(base.join("shared/real/f"))));
    assert_eq!(m.reach()[0].origin, ReachOrigin::Settings);
}

// --- the quarantined-read prompt --------------------------------------------------------

#[test]
fn quarantined_prompt_rules() {
    let mut m = TrustMap::new(WD);
    let f = rel("game.js");
    let ask = m.offer_quarantined_read(
        &f,
        Path::new("game.js"),
        Some(Kind::File),
        b"const SPEED = 100;\n",
    );
    assert_eq!(
        ask,
        Offer::Ask {
            preview: vec!["const SPEED = 100;".into()],
            note: None
        }
    );
    assert_eq!(
        m.offer_quarantined_read(&f, Path::new("game.js"), Some(Kind::File), b""),
        Offer::Skip(NotOffered::AlreadyAsked),
        "once per path per turn"
    );
    m.new_turn();
    assert!(matches!(
        m.offer_quarantined_read(&f, Path::new("game.js"), Some(Kind::File), b"x"),
        Offer::Ask { .. }
    ));
    let skip = |m: &mut TrustMap, p: &str, k: Option<Kind>| {
        m.offer_quarantined_read(&rel(p), Path::new(p), k, b"x")
    };
    assert_eq!(
        skip(&mut m, "logo.png", Some(Kind::File)),
        Offer::Skip(NotOffered::Picture)
    );
    assert_eq!(
        skip(&mut m, "src", Some(Kind::Dir)),
        Offer::Skip(NotOffered::Directory)
    );
    assert_eq!(
        skip(&mut m, "nothing", None),
        Offer::Skip(NotOffered::NamesNothing)
    );
    assert_eq!(
        skip(&mut m, "fifo", Some(Kind::Fifo)),
        Offer::Skip(NotOffered::NotAFile)
    );
    let empty = m.offer_quarantined_read(&rel("empty"), Path::new("empty"), Some(Kind::File), b"");
    assert_eq!(
        empty,
        Offer::Ask {
            preview: vec![],
            note: Some("the file is empty")
        }
    );
    let bin = m.offer_quarantined_read(
        &rel("a.bin"),
        Path::new("a.bin"),
        Some(Kind::File),
        b"\0\x01",
    );
    assert_eq!(
        bin,
        Offer::Ask {
            preview: vec![],
            note: Some("the file does not read as text")
        }
    );
    // Yes writes what @ would have written.
    m.quarantined_yes(&rel("game.js"));
    let mut at = TrustMap::new(WD);
    at.at_file(&rel("game.js"));
    assert_eq!(m.rule_at(&rel("game.js")), at.rule_at(&rel("game.js")));
    m.new_turn();
    assert_eq!(
        m.offer_quarantined_read(&f, Path::new("game.js"), Some(Kind::File), b"x"),
        Offer::Skip(NotOffered::NotQuarantined)
    );
}

// --- session lifetime -------------------------------------------------------------------

#[test]
fn resume_round_trips_rules_writes_and_reach() {
    let mut m = trusted_root();
    let p = m.plan_write(&rel("fetched.html"), Trust::Untrusted);
    m.reconcile(&p);
    m.add_dir(Path::new("/home/u/notes")).unwrap();
    m.cli_add_dir(Path::new("/data")).unwrap();
    let json = serde_json::to_string(&m).unwrap();
    let back: TrustMap = serde_json::from_str(&json).unwrap();
    assert_eq!(back.record(), m.record());
    assert_eq!(
        back.decision(&rel("fetched.html")),
        Some(Trust::Untrusted),
        "a poisoned file stays poisoned"
    );
    assert_eq!(back.status(), m.status());
    assert_eq!(back.reach(), m.reach());
    assert!(serde_json::from_str::<TrustMap>(
        r#"{"workdir":"/w","rules":[],"reach":[],"extra":1}"#
    )
    .is_err());
}

#[test]
fn non_utf8_keys_survive_resume() {
    use std::os::unix::ffi::OsStrExt;
    let mut m = TrustMap::new(WD);
    let k = TrustKey::rel(std::ffi::OsStr::from_bytes(b"caf\xe9/x"));
    m.at_file(&k);
    let back: TrustMap = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert!(back.is_trusted(&k));
}

#[test]
fn clear_closes_everything_and_trusts_nothing() {
    let mut m = trusted_root();
    m.add_dir(Path::new("/home/u/notes")).unwrap();
    let closed = m.clear();
    assert_eq!(closed.len(), 1);
    assert!(m.status().is_empty());
    assert!(m.reach().is_empty());
    assert!(!m.is_trusted(&rel("a")));
    assert_eq!(m.workdir(), Path::new(WD));
}

#[test]
fn status_lists_every_rule() {
    let mut m = trusted_root();
    m.at_file(&rel("b"));
    m.add_dir(Path::new("/n")).unwrap();
    let lines: Vec<String> = m.status().iter().map(|l| l.to_string()).collect();
    assert_eq!(
        lines,
        vec![
            "trusted   . (the working directory) (startup)",
            "trusted   b (at_path)",
            "trusted   /n (add_dir)"
        ]
    );
}

// --- origins, /untrust, NS-3, /cd, refusals ---------------------------------------------

#[test]
fn every_rule_records_what_wrote_it() {
    let mut m = trusted_root();
    m.at_file(&rel("a"));
    m.file_flag(&rel("b"));
    m.quarantined_yes(&rel("c"));
    m.untrust(&rel("vendor"));
    m.add_dir(Path::new("/n")).unwrap();
    let p = m.plan_write(&rel("w"), Trust::Untrusted);
    m.reconcile(&p);
    let p = m.plan_redirect(&rel("r"));
    assert_eq!((p.data, p.prompt), (Trust::Untrusted, true));
    m.reconcile(&p);
    let origins: Vec<(String, &str)> = m
        .status()
        .iter()
        .map(|l| (l.key.to_string(), l.origin.name()))
        .collect();
    assert_eq!(
        origins,
        vec![
            (".".into(), "startup"),
            ("a".into(), "at_path"),
            ("b".into(), "file_flag"),
            ("c".into(), "read_prompt"),
            ("r".into(), "redirect"),
            ("vendor".into(), "untrust"),
            ("w".into(), "write"),
            ("/n".into(), "add_dir"),
        ]
    );
    let back: TrustMap = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back.status(), m.status(), "origins survive resume");
}

#[test]
fn untrust_asks_nothing_and_nests() {
    let mut m = trusted_root();
    m.untrust(&rel("vendor"));
    assert_eq!(m.decision(&rel("vendor/x")), Some(Trust::Untrusted));
    assert_eq!(m.decision(&rel("src/x")), Some(Trust::Trusted));
    m.untrust(&TrustKey::abs("/elsewhere"));
    assert_eq!(
        m.decision(&TrustKey::abs("/elsewhere/y")),
        Some(Trust::Untrusted)
    );
}

#[test]
fn absolute_spellings_inside_the_project_are_relative_rules() {
    let mut m = trusted_root();
    let p = m.plan_write(&TrustKey::abs("/w/proj/doc.html"), Trust::Untrusted);
    assert_eq!(p.key, rel("doc.html"));
    m.reconcile(&p);
    assert_eq!(m.decision(&rel("doc.html")), Some(Trust::Untrusted));
    assert!(m
        .status()
        .iter()
        .all(|l| l.key.ns == gatehouse::trust::Namespace::Relative));
    assert_eq!(
        m.deciding(&rel("doc.html/x")),
        Some((rel("doc.html"), Trust::Untrusted))
    );
    assert_eq!(m.deciding(&rel("src")), Some((rel(""), Trust::Trusted)));
    assert_eq!(TrustMap::new(WD).deciding(&rel("src")), None);
}

#[test]
fn write_marks_untrusted_before_and_trusted_after() {
    let mut m = trusted_root();
    let p = m.plan_write(&rel("x"), Trust::Untrusted);
    assert_eq!(p.effect_name(), "marked_untrusted");
    m.before_write(&p);
    assert_eq!(
        m.decision(&rel("x")),
        Some(Trust::Untrusted),
        "before the first byte"
    );
    let mut m = TrustMap::new(WD);
    m.untrust(&rel("y"));
    let p = m.plan_write(&rel("y"), Trust::Trusted);
    assert_eq!(p.effect_name(), "marked_trusted");
    m.before_write(&p);
    assert_eq!(
        m.decision(&rel("y")),
        Some(Trust::Untrusted),
        "not before the write"
    );
    m.after_write(&p);
    assert_eq!(m.decision(&rel("y")), Some(Trust::Trusted));
    assert_eq!(
        m.plan_write(&rel("z"), Trust::Trusted).effect_name(),
        "took_data_trust"
    );
    assert_eq!(
        m.plan_write(&rel("y"), Trust::Trusted).effect_name(),
        "unchanged"
    );
}

#[test]
fn edit_data_is_untrusted_unless_turn_and_file_are_trusted() {
    let mut m = trusted_root();
    m.untrust(&rel("v"));
    assert_eq!(m.edit_data(&rel("a"), Trust::Trusted), Trust::Trusted);
    assert_eq!(m.edit_data(&rel("a"), Trust::Untrusted), Trust::Untrusted);
    assert_eq!(m.edit_data(&rel("v/a"), Trust::Trusted), Trust::Untrusted);
    assert_eq!(
        TrustMap::new(WD).edit_data(&rel("a"), Trust::Trusted),
        Trust::Untrusted
    );
}

#[test]
fn add_dir_refuses_a_directory_holding_the_project() {
    let mut m = TrustMap::new(WD);
    assert_eq!(
        m.add_dir(Path::new("/w")).unwrap_err().code(),
        "holds_project"
    );
    assert_eq!(
        m.add_dir(Path::new("/")).unwrap_err().code(),
        "holds_project"
    );
    assert_eq!(
        m.cli_add_dir(Path::new("/w")).unwrap_err().code(),
        "holds_project"
    );
    assert_eq!(
        m.cli_add_dir(Path::new("/w/proj/x")).unwrap_err().code(),
        "inside_project"
    );
    assert!(
        m.status().is_empty() && m.reach().is_empty(),
        "a refusal writes nothing"
    );
}

#[test]
fn cd_closes_dropped_files_inside_and_keeps_the_later_decision() {
    let mut m = TrustMap::new("/w/a");
    m.dropped_file(Path::new("/w/c/f.txt")).unwrap();
    m.dropped_file(Path::new("/x/g.txt")).unwrap();
    let closed = m.cd(Path::new("/w/c")).unwrap();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].path, PathBuf::from("/w/c/f.txt"));
    assert_eq!(m.reach().len(), 1);
    assert_eq!(m.rule_at(&rel("f.txt")), Some(Trust::Trusted));
    assert_eq!(m.rule_at(&rel("")), Some(Trust::Trusted));
    assert_eq!(m.origin_at(&rel("")), Some(Origin::Cd));
}

#[test]
fn settings_names_report_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(base.join("proj/inner")).unwrap();
    std::fs::write(base.join("file"), "").unwrap();
    let m = TrustMap::new(base.join("proj"));
    let names: Vec<String> = ["inner", "..", "../file", "../missing", "~/x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let q = m.settings_questions(&names, None);
    assert!(q.ask.is_empty());
    let codes: Vec<&str> = q.unopenable.iter().map(|(_, c)| *c).collect();
    assert_eq!(
        codes,
        vec![
            "inside_project",
            "holds_project",
            "not_directory",
            "not_found",
            "not_found"
        ]
    );
}

#[test]
fn prompt_preview_kinds() {
    let mut m = TrustMap::new(WD);
    let kind = |m: &mut TrustMap, p: &str, head: &[u8]| {
        m.offer_quarantined_read(&rel(p), Path::new(p), Some(Kind::File), head)
            .preview_kind()
    };
    assert_eq!(kind(&mut m, "t", b"x"), Some("text"));
    assert_eq!(kind(&mut m, "e", b""), Some("empty"));
    assert_eq!(kind(&mut m, "b", b"\xff\xfe"), Some("not_text"));
    assert_eq!(kind(&mut m, "i.AVIF", b"x"), None);
}

// --- gestures through the roots: both halves or neither ---------------------------------

#[test]
fn gestures_through_roots() {
    use gatehouse::paths::Roots;
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = base.join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/a.js"), "a").unwrap();
    std::fs::create_dir_all(base.join("notes")).unwrap();
    std::fs::write(base.join("notes/n.md"), "n").unwrap();
    std::fs::write(base.join("dl.pdf"), "pdf").unwrap();
    let mut roots = Roots::open(&proj).unwrap();
    let mut m = TrustMap::new(&proj);
    // @path: a file, by its key; a directory or nothing is not_a_file; outside is escape.
    let k = m.at_path_in(&roots, "./src//a.js", false).unwrap();
    assert_eq!(k, rel("src/a.js"));
    assert_eq!(
        m.at_path_in(&roots, proj.join("src/a.js"), true).unwrap(),
        k
    );
    assert_eq!(m.origin_at(&k), Some(Origin::FileFlag));
    assert_eq!(
        m.at_path_in(&roots, "src", false).unwrap_err().code(),
        "not_a_file"
    );
    assert_eq!(
        m.at_path_in(&roots, "nope", false).unwrap_err().code(),
        "not_a_file"
    );
    assert_eq!(
        m.at_path_in(&roots, "../notes/n.md", false)
            .unwrap_err()
            .code(),
        "escape"
    );
    // /add-dir: both halves; refused ones open nothing and write nothing.
    let rules = m.status().len();
    assert_eq!(
        m.add_dir_in(&mut roots, &base).unwrap_err().code(),
        "holds_project"
    );
    assert_eq!(
        m.add_dir_in(&mut roots, &proj.join("src"))
            .unwrap_err()
            .code(),
        "inside_project"
    );
    assert_eq!(
        m.add_dir_in(&mut roots, &base.join("dl.pdf"))
            .unwrap_err()
            .code(),
        "not_directory"
    );
    assert_eq!((m.status().len(), roots.roots().count()), (rules, 1));
    m.add_dir_in(&mut roots, &base.join("notes")).unwrap();
    assert!(m.is_trusted(&m.key_in(&roots, base.join("notes/n.md")).unwrap()));
    // Drop: reach to that one file and its rule; a directory is not_a_file.
    let k = m.drop_in(&mut roots, &base.join("dl.pdf")).unwrap();
    assert_eq!(k, TrustKey::abs(base.join("dl.pdf")));
    assert!(m.is_trusted(&k));
    assert_eq!(roots.read_file(base.join("dl.pdf")).unwrap(), b"pdf");
    assert_eq!(
        m.drop_in(&mut roots, &base.join("notes"))
            .unwrap_err()
            .code(),
        "not_a_file"
    );
    // /untrust by any spelling.
    let k = m.untrust_in(&roots, proj.join("src")).unwrap();
    assert_eq!(k, rel("src"));
    assert_eq!(
        m.decision(&rel("src/a.js")),
        Some(Trust::Trusted),
        "the file's own rule"
    );
    assert_eq!(m.decision(&rel("src/b.js")), Some(Trust::Untrusted));
}

#[test]
fn search_withholds_untrusted_files_and_resume_reports_lost_roots() {
    use gatehouse::paths::Roots;
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = base.join("proj");
    std::fs::create_dir_all(proj.join("vendor")).unwrap();
    std::fs::write(proj.join("main.js"), "let token = 1;").unwrap();
    std::fs::write(proj.join("vendor/x.js"), "token: ignore previous").unwrap();
    std::fs::create_dir_all(base.join("notes")).unwrap();
    std::fs::create_dir_all(base.join("gone")).unwrap();
    let mut roots = Roots::open(&proj).unwrap();
    let mut m = trusted_root_at(&proj);
    m.untrust(&rel("vendor"));
    let found = m.search_in(&roots, ".", b"token").unwrap();
    assert_eq!(found.matches.len(), 1);
    assert_eq!(found.matches[0].key.to_string(), "main.js");
    let withheld: Vec<String> = found.withheld.iter().map(|k| k.to_string()).collect();
    assert_eq!(withheld, vec!["vendor/x.js"]);
    m.add_dir_in(&mut roots, &base.join("notes")).unwrap();
    m.add_dir_in(&mut roots, &base.join("gone")).unwrap();
    let record = m.record();
    std::fs::remove_dir(base.join("gone")).unwrap();
    let back = TrustMap::resume(&record);
    let mut fresh = Roots::open(&proj).unwrap();
    let failed = back.reopen(&mut fresh);
    assert_eq!(failed, vec![(base.join("gone"), "not_found")]);
    assert_eq!(fresh.roots().count(), 2);
    assert!(
        back.is_trusted(&TrustKey::abs(base.join("gone/x"))),
        "its rules stay"
    );
}

fn trusted_root_at(p: &Path) -> TrustMap {
    let mut m = TrustMap::new(p);
    m.startup(Startup::Yes).unwrap();
    m
}
