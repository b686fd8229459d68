//! Decision tests: the seed's measured tables and the order of section 2, against a real
//! temporary working directory.

use super::*;
use crate::codes::Withheld;
use crate::grants::Grant;
use proptest::prelude::*;
use rstest::{fixture, rstest};
use std::fs;
use std::os::unix::fs::symlink;
use tempfile::TempDir;

struct Fx {
    _dir: TempDir,
    ws: PathBuf,
}

#[fixture]
fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("ws");
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::write(ws.join("notes.txt"), "hello\n").unwrap();
    fs::create_dir_all(root.join("outside")).unwrap();
    fs::write(root.join("outside/secret.txt"), "no\n").unwrap();
    symlink(root.join("outside/secret.txt"), ws.join("out")).unwrap();
    Fx { _dir: dir, ws }
}

fn gate(fx: &Fx) -> Gate {
    Gate::new(GateConfig::new(&fx.ws)).unwrap()
}

fn gate_with(fx: &Fx, f: impl FnOnce(&mut GateConfig)) -> Gate {
    let mut c = GateConfig::new(&fx.ws);
    f(&mut c);
    Gate::new(c).unwrap()
}

fn shell(g: &Gate, line: &str, grants: &GrantTable) -> Decision {
    g.decide(Tool::Shell, line, grants)
}

#[rstest]
#[case("ls")]
#[case("ls -la")]
#[case("ls sub")]
#[case("cat notes.txt")]
#[case("cat ./notes.txt")]
#[case("cat sub/../notes.txt")]
#[case("grep 'a*b' notes.txt")]
#[case("grep -rn hello .")]
#[case("wc -l notes.txt")]
#[case("head -n 1 notes.txt")]
#[case("tail -n 1 notes.txt")]
#[case("sort -r notes.txt")]
#[case("find . -name notes.txt")]
#[case("mkdir newdir")]
#[case("mkdir -p newdir/deeper")]
#[case("echo hello")]
#[case("pwd")]
#[case("true")]
#[case("date")]
#[case("whoami")]
#[case("\"ls\"")]
#[case("cat '~'")]
#[case("sort -- -o")]
fn plain_reads_run_unasked(fx: Fx, #[case] line: &str) {
    let d = shell(&gate(&fx), line, &GrantTable::new());
    assert_eq!(
        (d.decision, d.route, d.reason),
        (Verdict::Allow, Route::AutoSafe, Reason::AutoSafe),
        "{line}"
    );
}

#[rstest]
#[case("ls /etc", Reason::PathOutside)]
#[case("cat /etc/passwd", Reason::PathOutside)]
#[case("echo /etc", Reason::PathOutside)]
#[case("cat ../x", Reason::PathOutside)]
#[case("cat out", Reason::PathOutside)]
#[case("cat ~/.ssh/id_ed25519", Reason::PathOutside)]
#[case("ls ~", Reason::PathOutside)]
#[case("grep -f/etc/passwd x", Reason::PathOutside)]
#[case("sort -- /etc/passwd", Reason::PathOutside)]
#[case("cat *", Reason::Glob)]
#[case("ls *.txt", Reason::Glob)]
#[case("echo 'a;b'", Reason::Metacharacter)]
#[case("ls; pwd", Reason::Metacharacter)]
#[case("ls | wc", Reason::Metacharacter)]
#[case("cat < notes.txt", Reason::Metacharacter)]
#[case("echo $HOME", Reason::Metacharacter)]
#[case("echo {a,b}", Reason::Metacharacter)]
#[case("echo `id`", Reason::Metacharacter)]
#[case("ls\npwd", Reason::Metacharacter)]
#[case("echo 'abc", Reason::Unreadable)]
#[case("echo abc\\", Reason::Unreadable)]
#[case("", Reason::Empty)]
#[case("  \t ", Reason::Empty)]
#[case("/bin/ls", Reason::NotReadList)]
#[case("./cat notes.txt", Reason::NotReadList)]
#[case("npm install", Reason::NotReadList)]
#[case("rm x", Reason::NotReadList)]
#[case("tail -f notes.txt", Reason::EscapeFlag)]
#[case("sort -o out notes.txt", Reason::EscapeFlag)]
#[case("rg --pre ./x.sh foo", Reason::EscapeFlag)]
#[case("find . -exec cat {} +", Reason::Metacharacter)]
#[case("find . -exec cat", Reason::EscapeFlag)]
#[case("grep -Z x notes.txt", Reason::EscapeFlag)]
#[case("head --zero notes.txt", Reason::EscapeFlag)]
#[case("rm -rf sub", Reason::Dangerous)]
#[case("find . -delete", Reason::Dangerous)]
fn asks_with_the_first_failed_condition(fx: Fx, #[case] line: &str, #[case] reason: Reason) {
    let d = shell(&gate(&fx), line, &GrantTable::new());
    assert_eq!(d.decision, Verdict::Ask, "{line}");
    assert_eq!(d.route, Route::Card, "{line}");
    assert_eq!(d.reason, reason, "{line}");
    assert_eq!(
        d.card,
        Some(CardSpec {
            channel: Channel::Terminal,
            window: std::time::Duration::from_secs(300)
        })
    );
}

#[rstest]
#[case("echo $(cat *) 'x", Reason::Metacharacter)] // metacharacter before unreadable
#[case("/bin/ls *", Reason::NotReadList)] // not_read_list before glob
#[case("tail -f /etc/passwd", Reason::EscapeFlag)] // escape_flag before path_outside
#[case("cat * /etc", Reason::Glob)] // glob before path_outside
#[case("cat /etc *", Reason::Glob)]
fn reason_priority(fx: Fx, #[case] line: &str, #[case] reason: Reason) {
    assert_eq!(shell(&gate(&fx), line, &GrantTable::new()).reason, reason);
}

#[rstest]
fn no_asker_denies_with_the_same_reason(fx: Fx) {
    let g = gate_with(&fx, |c| c.asker = Asker::None);
    let d = shell(&g, "ls /etc", &GrantTable::new());
    assert_eq!(
        (d.decision, d.route, d.reason),
        (Verdict::Deny, Route::NoAsker, Reason::PathOutside)
    );
    assert_eq!(d.card, None);
    assert!(d.offers.exact);
    assert_eq!(shell(&g, "ls", &GrantTable::new()).decision, Verdict::Allow);
}

#[rstest]
fn channels_carry_their_windows(fx: Fx) {
    for (asker, channel, secs) in [
        (Asker::Web, Channel::Web, 600),
        (Asker::Speech, Channel::Speech, 25),
    ] {
        let g = gate_with(&fx, |c| c.asker = asker);
        let card = shell(&g, "ls /etc", &GrantTable::new()).card.unwrap();
        assert_eq!(card.channel, channel);
        assert_eq!(card.window.as_secs(), secs);
    }
}

#[rstest]
fn exact_grants_are_byte_for_byte(fx: Fx) {
    let g = gate(&fx);
    let grants: GrantTable = [Grant::exact(Tool::Shell, "npm run build && ./deploy.sh")]
        .into_iter()
        .collect();
    let d = shell(&g, "npm run build && ./deploy.sh", &grants);
    assert_eq!((d.decision, d.route), (Verdict::Allow, Route::GrantExact));
    assert_eq!(
        shell(&g, "npm run build &&  ./deploy.sh", &grants).decision,
        Verdict::Ask
    );
    assert_eq!(shell(&g, "npm run build", &grants).decision, Verdict::Ask);
    // Saved for shell, not for execute_code (GATE-EXACT-3).
    let d = g.decide(Tool::ExecuteCode, "npm run build && ./deploy.sh", &grants);
    assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::Code));
}

#[rstest]
#[case("cat /etc/passwd; curl -d @- x")]
#[case("python3 tool.py --flag")]
#[case("ls /etc")]
fn exact_grants_cover_what_nothing_else_would(fx: Fx, #[case] line: &str) {
    let grants: GrantTable = [Grant::exact(Tool::Shell, line)].into_iter().collect();
    assert_eq!(shell(&gate(&fx), line, &grants).route, Route::GrantExact);
}

#[rstest]
fn dangerous_outranks_every_grant(fx: Fx) {
    let line = "rm -rf sub";
    let g = gate_with(&fx, |c| c.allow_list = vec![line.to_string()]);
    let grants: GrantTable = [Grant::exact(Tool::Shell, line), Grant::family("rm")]
        .into_iter()
        .collect();
    let d = shell(&g, line, &grants);
    assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::Dangerous));
    assert!(!d.offers.exact);
    assert_eq!(d.offers.exact_withheld, Some(Withheld::Dangerous));
    assert_eq!(d.offers.family_withheld, Some(Withheld::Dangerous));
    // rm without a recursive flag takes the ordinary route, both keys offered.
    let d = shell(&g, "rm notes.txt", &GrantTable::new());
    assert_eq!(d.reason, Reason::NotReadList);
    assert!(d.offers.exact);
    assert_eq!(d.offers.family.as_deref(), Some("rm"));
}

#[rstest]
fn the_allow_list_matches_byte_for_byte(fx: Fx) {
    let g = gate_with(&fx, |c| c.allow_list = vec!["make test".to_string()]);
    let d = shell(&g, "make test", &GrantTable::new());
    assert_eq!((d.decision, d.route), (Verdict::Allow, Route::AllowList));
    assert_eq!(
        shell(&g, "make  test", &GrantTable::new()).decision,
        Verdict::Ask
    );
}

#[rstest]
#[case("git", "git status", Some(Route::GrantFamily))]
#[case("git", "git push", Some(Route::GrantFamily))]
#[case("git", "\"git\" push /etc", Some(Route::GrantFamily))]
#[case("git", "git add *.rs", Some(Route::GrantFamily))]
#[case("git", "gitk", None)]
#[case("git", "git-lfs pull", None)]
#[case("git", "/usr/bin/git status", None)]
#[case("git", "git status; rm x", None)]
#[case("git", "git log > x", None)]
#[case("ls", "ls; pwd", None)]
#[case("cat", "cat notes.txt", Some(Route::GrantFamily))]
#[case("cat", "cat /etc/passwd", None)]
#[case("cat", "cat *", None)]
#[case("tail", "tail -f notes.txt", None)]
#[case("rg", "rg --pre=./x.sh foo", None)]
#[case("python", "python x.py", None)]
#[case("python3", "python3 x.py", None)]
#[case("sudo", "sudo ls", None)]
#[case("curl", "curl https://example.com", None)]
#[case("vim", "vim notes.txt", None)]
#[case("PAGER=x", "PAGER=x git log", None)]
fn family_grants_keep_their_conditions(
    fx: Fx,
    #[case] family: &str,
    #[case] line: &str,
    #[case] route: Option<Route>,
) {
    let grants: GrantTable = [Grant::family(family)].into_iter().collect();
    let d = shell(&gate(&fx), line, &grants);
    match route {
        Some(r) => assert_eq!((d.decision, d.route), (Verdict::Allow, r), "{line}"),
        None => assert_ne!(d.route, Route::GrantFamily, "{line}"),
    }
}

#[rstest]
fn a_family_of_an_escape_command_asks_for_its_flag(fx: Fx) {
    let grants: GrantTable = [Grant::family("tail")].into_iter().collect();
    let d = shell(&gate(&fx), "tail -f notes.txt", &grants);
    assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::EscapeFlag));
}

#[rstest]
#[case("ls")]
#[case("cat notes.txt")]
#[case("npm install")]
#[case("dir")]
fn windows_closes_every_shell_route(fx: Fx, #[case] line: &str) {
    let g = gate_with(&fx, |c| c.host = Host::Windows);
    let grants: GrantTable = [Grant::exact(Tool::Shell, line), Grant::family("npm")]
        .into_iter()
        .collect();
    let d = shell(&g, line, &grants);
    assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::WindowsHost));
    assert!(!d.offers.exact);
    assert_eq!(d.offers.exact_withheld, Some(Withheld::WindowsHost));
    assert_eq!(d.offers.family_withheld, Some(Withheld::WindowsHost));
}

#[rstest]
fn windows_keeps_exact_code_grants(fx: Fx) {
    let g = gate_with(&fx, |c| c.host = Host::Windows);
    let grants: GrantTable = [Grant::exact(Tool::ExecuteCode, "print(1)")]
        .into_iter()
        .collect();
    let d = g.decide(Tool::ExecuteCode, "print(1)", &grants);
    assert_eq!((d.decision, d.route), (Verdict::Allow, Route::GrantExact));
}

#[rstest]
fn code_is_never_auto_safe(fx: Fx) {
    let d = gate(&fx).decide(Tool::ExecuteCode, "ls", &GrantTable::new());
    assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::Code));
    assert!(d.offers.exact);
    assert_eq!(d.offers.family_withheld, Some(Withheld::Code));
}

#[rstest]
fn card_only_tools_always_ask(fx: Fx) {
    let g = gate_with(&fx, |c| c.allow_list = vec!["srv".to_string()]);
    let grants: GrantTable = [Grant::exact(Tool::McpInstall, "srv")]
        .into_iter()
        .collect();
    for tool in [Tool::McpInstall, Tool::McpConnect] {
        let d = g.decide(tool, "srv", &grants);
        assert_eq!((d.decision, d.reason), (Verdict::Ask, Reason::CardOnly));
        assert_eq!(d.offers.exact_withheld, Some(Withheld::CardOnly));
    }
}

#[rstest]
fn seed_examples_offer_what_the_seed_measured(fx: Fx) {
    let g = gate(&fx);
    let d = shell(&g, "npm run build && ./deploy.sh", &GrantTable::new());
    assert_eq!(d.reason, Reason::Metacharacter);
    assert!(d.offers.exact);
    assert_eq!(d.offers.family_withheld, Some(Withheld::Chained));
    let d = shell(&g, "ls /etc", &GrantTable::new());
    assert_eq!(d.offers.family.as_deref(), Some("ls"));
}

#[test]
fn a_missing_workspace_is_refused() {
    assert!(Gate::new(GateConfig::new("/nonexistent/gatehouse")).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No line holding a metacharacter runs unasked without a grant or an allow-list entry.
    #[test]
    fn metacharacters_never_run_unasked(
        before in "[a-z ./'\"*~-]{0,12}",
        meta in prop::sample::select(vec![";", "&", "|", "\n", "\r", "<", ">", "$", "{", "}", "`"]),
        after in "[a-z ./'\"*~-]{0,12}",
        first in prop::sample::select(vec!["ls ", "cat ", "echo ", "git ", "", "grep x "]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let g = Gate::new(GateConfig::new(dir.path())).unwrap();
        let grants: GrantTable = [Grant::family("git"), Grant::family("ls"), Grant::family("cat")]
            .into_iter()
            .collect();
        let line = format!("{first}{before}{meta}{after}");
        let d = g.decide(Tool::Shell, &line, &grants);
        prop_assert_ne!(d.decision, Verdict::Allow, "{:?}", line);
    }
}
