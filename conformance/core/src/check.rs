//! The `check` table of a step, evaluated by the runner itself: snapshots taken before the
//! step, the filesystem, the runner's socket and process, and the planted secrets looked
//! at after it. The implementation's answer is used only for what it alone can show (the
//! output of a command), never as evidence that a file is unchanged.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::fixture::Built;
use crate::observe::bait::Bait;
use crate::observe::snapshot::Snapshot;
use crate::scenario::Check;
use crate::verdict::Difference;

/// Each message of [`after`] as a difference of its `check` key's level.
pub fn differences(messages: Vec<String>, label: &str) -> Vec<Difference> {
    messages
        .into_iter()
        .map(|m| {
            let key = m
                .strip_prefix("check ")
                .and_then(|r| r.split([' ', ':']).next())
                .unwrap_or("")
                .to_string();
            Difference {
                level: crate::verdict::check(&key),
                field: format!("check {key}"),
                message: format!("{label}: {m}"),
            }
        })
        .collect()
}

/// The snapshots of one step, taken before it is sent.
#[derive(Debug, Default)]
pub struct Before {
    snaps: Vec<(String, String, PathBuf, Snapshot)>,
    /// The watch over the guarded places, for changes put back before the answer.
    watch: Option<crate::observe::watch::Watch>,
}

/// The paths the implicit guard of an enforcement `run` keeps unchanged.
pub fn guard_paths(sibling: bool) -> Vec<&'static str> {
    let mut v = vec!["@OUTSIDE@", "@HOME@"];
    if sibling {
        v.push("@SIBLING@");
    }
    v
}

/// Takes the snapshots `check.unchanged` (and the guard, when `guard` is set) need.
pub fn before(check: &Check, guard: &[&str], built: &Built) -> Before {
    let p = &built.paths;
    let mut snaps = Vec::new();
    for (label, shown) in guard
        .iter()
        .map(|g| ("guard", g.to_string()))
        .chain(check.unchanged.iter().map(|u| ("unchanged", u.clone())))
    {
        let path = p.locate(&shown);
        let snap = Snapshot::take(&path);
        snaps.push((label.to_string(), shown, path, snap));
    }
    let roots: Vec<PathBuf> = guard.iter().map(|g| p.locate(g)).collect();
    let watch = (!roots.is_empty())
        .then(|| crate::observe::watch::Watch::start(&roots))
        .flatten();
    Before { snaps, watch }
}

/// Every check that does not hold, one line each (`check unchanged @OUTSIDE@/victim:
/// size 12 -> 0`).
pub fn after(
    check: &Check,
    is_run: bool,
    before: Before,
    answer: Option<&Map<String, Value>>,
    built: &mut Built,
    (bait, passed): (&Bait, &[String]),
) -> Vec<String> {
    let mut out = Vec::new();
    for (label, shown, path, snap) in before.snaps {
        for d in snap.diff(&Snapshot::take(&path), &shown) {
            out.push(format!("check {label} {d}"));
        }
    }
    let p = built.paths.clone();
    // What changed and was put back before the answer: the snapshots cannot see it.
    if let Some(w) = &before.watch {
        if !out.iter().any(|m| m.starts_with("check guard ")) {
            for (path, what) in w.seen() {
                out.push(format!(
                    "check guard {}: changed while the step ran ({what}) and put back before the answer",
                    path.display()
                ));
            }
        }
    }
    for a in &check.absent {
        if std::fs::symlink_metadata(p.locate(a)).is_ok() {
            out.push(format!("check absent {a}: something exists there"));
        }
    }
    for r in &check.removed {
        if std::fs::symlink_metadata(p.locate(r)).is_ok() {
            out.push(format!("check removed {r}: still there"));
        }
    }
    for e in &check.exists {
        if std::fs::symlink_metadata(p.locate(e)).is_err() {
            out.push(format!("check exists {e}: nothing there"));
        }
    }
    for (file, want) in &check.content {
        let path = p.locate(file);
        let got = match std::fs::symlink_metadata(&path) {
            Err(_) => Err("nothing there".to_string()),
            Ok(m) if !m.is_file() => Err("not a regular file".to_string()),
            Ok(_) => std::fs::read(&path).map_err(|e| format!("cannot read: {e}")),
        };
        match got {
            Ok(bytes) if bytes == want.as_bytes() => {}
            Ok(bytes) => out.push(format!(
                "check content {file}: expected {:?}, got {:?}",
                short(want),
                short(&String::from_utf8_lossy(&bytes))
            )),
            Err(why) => out.push(format!("check content {file}: {why}")),
        }
    }
    if is_run {
        let stdout = answer
            .and_then(|a| a.get("stdout"))
            .and_then(Value::as_str)
            .unwrap_or("");
        for s in &check.stdout_has {
            let s = p.apply(s);
            if !stdout.contains(&s) {
                out.push(format!(
                    "check stdout_has {s:?}: not in stdout {:?}",
                    short(stdout)
                ));
            }
        }
        for s in &check.stdout_lacks {
            let s = p.apply(s);
            if stdout.contains(&s) {
                out.push(format!("check stdout_lacks {s:?}: stdout shows it"));
            }
        }
    }
    if check.no_bait {
        out.extend(bait_checks(answer, built, bait, passed));
    }
    if check.socket_untouched {
        match &built.socket {
            Some(s) => out.extend(s.touched().map(|m| format!("check socket_untouched: {m}"))),
            None => out.push("check socket_untouched: the fixture has no socket".into()),
        }
    }
    out.extend(http_checks(check, built));
    out.extend(log_checks(check, &p.log));
    if check.keyring_unchanged {
        match &bait.keyring {
            Some(k) => out.extend(
                k.changed()
                    .into_iter()
                    .map(|m| format!("check keyring_unchanged: {m}")),
            ),
            None => out.push("check keyring_unchanged: the runner planted no keyring bait".into()),
        }
    }
    if check.process_alive {
        match built.process.as_mut() {
            Some(proc_) => out.extend(proc_.harmed().map(|m| format!("check process_alive: {m}"))),
            None => out.push("check process_alive: the runner started no process".into()),
        }
    }
    out.into_iter().map(|m| p.unapply(&m)).collect()
}

/// The most files, and the most bytes of one file, the search of the writable roots for a
/// planted secret reads after a step.
const SCAN_FILES: usize = 4000;
/// See [`SCAN_FILES`].
const SCAN_BYTES: u64 = 4 << 20;

/// `no_bait` (PROTO-OBSERVE-2): no planted secret, as written or encoded, in what the
/// runner reads itself after the step (its sink, every regular file of the session's
/// writable roots) nor in the answer. `passed`: the names the session passes on purpose.
fn bait_checks(
    answer: Option<&Map<String, Value>>,
    built: &Built,
    bait: &Bait,
    passed: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    let needles = bait.needles(passed);
    if let Some(sink) = &built.sink {
        let (data, drained) = sink.take();
        if let Err(why) = sink.intact() {
            out.push(format!(
                "check no_bait: {why}, so what the command wrote there never reached the runner"
            ));
        } else if !drained {
            out.push("check no_bait: the runner's sink did not drain".to_string());
        }
        let found = needles.found_in(&data);
        if !found.is_empty() {
            out.push(format!(
                "check no_bait: the command handed the runner's sink the planted {}",
                found.join(", ")
            ));
        }
    }
    let p = &built.paths;
    let mut files = 0usize;
    for root in [&p.workspace, &p.extra, &p.sibling] {
        for (path, found) in scan(root, &needles, &mut files) {
            out.push(format!(
                "check no_bait: {} holds the planted {}",
                path.display(),
                found.join(", ")
            ));
        }
    }
    let text = answer.map_or_else(String::new, |a| Value::Object(a.clone()).to_string());
    let found = needles.found_in(text.as_bytes());
    if !found.is_empty() {
        out.push(format!(
            "check no_bait: the answer shows the planted {}",
            found.join(", ")
        ));
    }
    out
}

/// Every regular file below `root` (links not followed) that shows a planted secret.
fn scan(
    root: &std::path::Path,
    needles: &crate::observe::bait::Needles<'_>,
    files: &mut usize,
) -> Vec<(PathBuf, Vec<String>)> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                dirs.push(e.path());
            } else if ft.is_file() && *files < SCAN_FILES {
                *files += 1;
                let mut bytes = Vec::new();
                let read = std::fs::File::open(e.path())
                    .and_then(|f| f.take(SCAN_BYTES).read_to_end(&mut bytes));
                if read.is_ok() {
                    let found = needles.found_in(&bytes);
                    if !found.is_empty() {
                        out.push((e.path(), found));
                    }
                }
            }
        }
    }
    out
}

/// `http_seen`, `http_unseen`, `http_untouched`: judged from what the runner's own server
/// recorded.
fn http_checks(check: &Check, built: &Built) -> Vec<String> {
    let asked =
        !check.http_seen.is_empty() || !check.http_unseen.is_empty() || check.http_untouched;
    if !asked {
        return Vec::new();
    }
    let Some(server) = &built.http else {
        return vec!["check http: the fixture has no HTTP server".into()];
    };
    server.settle();
    let seen = server.requests();
    let shown = || {
        let v: Vec<String> = seen
            .iter()
            .map(|s| {
                format!(
                    "{} {} (Host {})",
                    s.method,
                    s.target,
                    s.host.as_deref().unwrap_or("-")
                )
            })
            .collect();
        if v.is_empty() {
            "nothing".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut out = Vec::new();
    for path in &check.http_seen {
        if !seen.iter().any(|s| s.path() == path) {
            out.push(format!(
                "check http_seen {path}: the runner's server never saw it (it saw {})",
                shown()
            ));
        }
    }
    for path in &check.http_unseen {
        if seen.iter().any(|s| s.path() == path) {
            out.push(format!(
                "check http_unseen {path}: the runner's server was asked for it ({})",
                shown()
            ));
        }
    }
    if check.http_untouched && server.connections() > 0 {
        out.push(format!(
            "check http_untouched: {} connection(s) reached the runner's server (requests: {})",
            server.connections(),
            shown()
        ));
    }
    out
}

/// `log_has`: each wanted record matched by one record of one `.jsonl` file in the
/// session's log directory, as the runner reads it.
fn log_checks(check: &Check, dir: &std::path::Path) -> Vec<String> {
    if check.log_has.is_empty() {
        return Vec::new();
    }
    let mut records = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "jsonl") {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                records.extend(
                    text.lines()
                        .filter_map(|l| serde_json::from_str::<Map<String, Value>>(l).ok()),
                );
            }
        }
    }
    check
        .log_has
        .iter()
        .filter(|want| {
            !records
                .iter()
                .any(|r| want.iter().all(|(k, v)| r.get(k) == Some(v)))
        })
        .map(|want| {
            format!(
                "check log_has {}: no such record in the session log ({} records read)",
                serde_json::to_string(want).unwrap_or_default(),
                records.len()
            )
        })
        .collect()
}

fn short(s: &str) -> String {
    const MAX: usize = 120;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{build, Extras};
    use crate::fixture::{Fixture, SocketKind, SocketSpec};

    #[test]
    fn unchanged_absent_exists_and_content() {
        let mut f = Fixture::default();
        f.outside
            .files
            .insert("victim".into(), "keep me safe".into());
        let mut built = build(&f, Extras::default()).unwrap();
        let check = Check {
            unchanged: vec!["@OUTSIDE@/victim".into()],
            absent: vec!["@OUTSIDE@/new".into()],
            exists: vec!["inside.txt".into()],
            content: [("inside.txt".to_string(), "hi\n".to_string())].into(),
            ..Check::default()
        };
        let b = before(&check, &guard_paths(false), &built);
        std::fs::write(built.paths.outside.join("victim"), "").unwrap();
        std::fs::write(built.paths.outside.join("new"), "x").unwrap();
        let m = after(&check, true, b, None, &mut built, (&Bait::generate(), &[]));
        assert_eq!(m[0], "check guard @OUTSIDE@: entries +new");
        assert!(
            m[1].starts_with("check guard @OUTSIDE@/new: created (file)"),
            "{m:#?}"
        );
        assert!(
            m[2].starts_with("check guard @OUTSIDE@/victim: size 12 -> 0"),
            "{m:#?}"
        );
        assert!(
            m[3].starts_with("check unchanged @OUTSIDE@/victim: size 12 -> 0"),
            "{m:#?}"
        );
        assert_eq!(
            &m[4..],
            [
                "check absent @OUTSIDE@/new: something exists there",
                "check exists inside.txt: nothing there",
                "check content inside.txt: nothing there",
            ]
        );
        std::fs::write(built.paths.workspace.join("inside.txt"), "hi\n").unwrap();
        let check = Check {
            guard: None,
            ..check
        };
        let b = before(&check, &[], &built);
        let m = after(&check, true, b, None, &mut built, (&Bait::generate(), &[]));
        assert_eq!(
            m,
            vec!["check absent @OUTSIDE@/new: something exists there"]
        );
        // `removed`: the twin's removal, judged at the exactness level (PROTO-VERDICT-17).
        let check = Check {
            removed: vec!["inside.txt".into()],
            ..Check::default()
        };
        let b = before(&check, &[], &built);
        let m = after(&check, true, b, None, &mut built, (&Bait::generate(), &[]));
        assert_eq!(m, vec!["check removed inside.txt: still there"]);
        assert_eq!(
            crate::verdict::check_class("removed").level,
            crate::verdict::Level::Exactness
        );
    }

    #[test]
    fn bait_stdout_and_socket() {
        let f = Fixture {
            socket: Some(SocketSpec {
                kind: SocketKind::Path,
                path: None,
                sock_type: crate::fixture::spec::SocketType::Stream,
            }),
            ..Fixture::default()
        };
        let mut built = build(
            &f,
            Extras {
                home_secret: None,
                runner_process: true,
                sink: false,
            },
        )
        .unwrap();
        let bait = Bait::generate();
        let check = Check {
            no_bait: true,
            socket_untouched: true,
            process_alive: true,
            stdout_has: vec!["ok".into()],
            stdout_lacks: vec!["@HOME@".into()],
            ..Check::default()
        };
        let clean: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"stdout": "ok\n"})).unwrap();
        let m = after(
            &check,
            true,
            Before::default(),
            Some(&clean),
            &mut built,
            (&bait, &[]),
        );
        assert!(m.is_empty(), "{m:?}");
        let sock = built.paths.socket.clone().unwrap();
        let _c = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        let home = built.paths.home.display().to_string();
        let dirty: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "stdout": format!("{home}\n{}", bait.value_of("OPENAI_API_KEY").unwrap())}))
        .unwrap();
        let m = after(
            &check,
            true,
            Before::default(),
            Some(&dirty),
            &mut built,
            (&bait, &[]),
        );
        assert_eq!(m, vec![
            format!("check stdout_has \"ok\": not in stdout {:?}", format!("@HOME@\n{}", bait.value_of("OPENAI_API_KEY").unwrap())),
            format!("check stdout_lacks {:?}: stdout shows it", "@HOME@"),
            "check no_bait: the answer shows the planted OPENAI_API_KEY".to_string(),
            "check socket_untouched: a connection reached the runner's socket @OUTSIDE@/gatehouse-bait.sock".to_string(),
        ]);
    }
}
