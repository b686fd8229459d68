//! The `gatehouse` binary end to end: `gate check` on the seed's examples, and an adapter
//! round trip over standard input and output.
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

/// A working directory holding `notes.txt` and `sub/`, as the seed measured.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    dir
}

fn check(ws: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["gate", "check", "--workspace"])
        .arg(ws)
        .args(args)
        .output()
        .unwrap()
}

fn decide(ws: &Path, args: &[&str]) -> Value {
    let out = check(ws, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON object: {text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn ls_runs_unasked() {
    let ws = workspace();
    let d = decide(ws.path(), &["--", "ls"]);
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["route"], "auto_safe");
    assert_eq!(d["reason"], "auto_safe");
    assert!(d.get("card").is_none());
}

#[test]
fn ls_etc_asks() {
    let ws = workspace();
    let d = decide(ws.path(), &["--", "ls /etc"]);
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["route"], "card");
    assert_eq!(d["reason"], "path_outside");
    assert_eq!(
        d["offers"],
        json!({"exact": true, "exact_withheld": null, "family": "ls",
               "family_withheld": null, "text": null})
    );
    assert_eq!(
        d["card"],
        json!({"channel": "terminal", "window_ms": 300000})
    );
}

#[test]
fn no_asker_denies() {
    let ws = workspace();
    let d = decide(ws.path(), &["--asker", "none", "--", "ls /etc"]);
    assert_eq!(d["decision"], "deny");
    assert_eq!(d["route"], "no_asker");
    assert_eq!(d["reason"], "path_outside");
    assert!(d.get("card").is_none());
}

#[test]
fn a_git_family_covers_git_push() {
    let ws = workspace();
    let d = decide(ws.path(), &["--grant-family", "git", "--", "git push"]);
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["route"], "grant_family");
    let d = decide(ws.path(), &["--grant-family", "git", "--", "gitk"]);
    assert_eq!(d["decision"], "ask");
}

#[test]
fn an_exact_grant_covers_its_line_only() {
    let ws = workspace();
    let line = "npm run build && ./deploy.sh";
    let d = decide(ws.path(), &["--grant-exact", line, "--", line]);
    assert_eq!(d["route"], "grant_exact");
    let d = decide(ws.path(), &["--grant-exact", line, "--", "npm run build"]);
    assert_eq!(d["decision"], "ask");
}

#[test]
fn a_chained_line_withholds_its_family() {
    let ws = workspace();
    let d = decide(ws.path(), &["--", "npm run build && ./deploy.sh"]);
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["reason"], "metacharacter");
    assert_eq!(d["offers"]["exact"], true);
    assert_eq!(d["offers"]["family"], Value::Null);
    assert_eq!(d["offers"]["family_withheld"], "chained");
    assert_eq!(
        d["offers"]["text"],
        "This line chains commands, so a rule for \"npm\" would never match it again."
    );
}

#[test]
fn windows_asks_for_ls_and_withholds_both_keys() {
    let ws = workspace();
    let d = decide(ws.path(), &["--host", "windows", "--", "ls"]);
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["reason"], "windows_host");
    assert_eq!(d["offers"]["exact"], false);
    assert_eq!(d["offers"]["exact_withheld"], "windows_host");
    assert_eq!(d["offers"]["family_withheld"], "windows_host");
}

#[test]
fn code_is_never_auto_safe() {
    let ws = workspace();
    let d = decide(ws.path(), &["--risk", "code", "--", "print(1)"]);
    assert_eq!(d["reason"], "code");
    assert_eq!(d["offers"]["family_withheld"], "code");
}

#[test]
fn the_allow_list_matches_its_line_byte_for_byte() {
    let ws = workspace();
    let d = decide(ws.path(), &["--allow", "npm test", "--", "npm test"]);
    assert_eq!(d["route"], "allow_list");
    let d = decide(ws.path(), &["--allow", "npm test", "--", "npm test "]);
    assert_eq!(d["decision"], "ask");
}

#[test]
fn a_card_only_tool_asks_whatever_is_saved() {
    let ws = workspace();
    let saved = "--tool mcp_install --allow x --grant-exact x -- x";
    let d = decide(ws.path(), &saved.split(' ').collect::<Vec<_>>());
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["reason"], "card_only");
    let both = "--tool mcp_install --risk code -- x";
    let out = check(ws.path(), &both.split(' ').collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2), "--tool excludes --risk");
}

#[test]
fn the_card_window_is_the_askers_default_or_the_configured_one() {
    let ws = workspace();
    let d = decide(ws.path(), &["--asker", "web", "--", "npm i"]);
    assert_eq!(d["card"], json!({"channel": "web", "window_ms": 600000}));
    let d = decide(ws.path(), &["--asker", "speech", "--", "npm i"]);
    assert_eq!(d["card"], json!({"channel": "speech", "window_ms": 25000}));
    let d = decide(ws.path(), &["--card-window-ms", "1000", "--", "npm i"]);
    assert_eq!(d["card"], json!({"channel": "terminal", "window_ms": 1000}));
    let too_long = "--asker speech --card-window-ms 30000 -- ls";
    let out = check(ws.path(), &too_long.split(' ').collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2), "a speech window above 25 s");
    assert!(String::from_utf8_lossy(&out.stderr).contains("25000 ms"));
}

#[test]
fn a_missing_workspace_is_a_usage_error() {
    let ws = workspace();
    let missing = ws.path().join("nope");
    let out = check(&missing, &["--", "ls"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_arguments_exit_2() {
    let ws = workspace();
    let out = check(ws.path(), &["--host", "plan9", "--", "ls"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unknown_fence_backend_stops_info_with_one_line() {
    let out = Command::new(BIN)
        .arg("info")
        .env("GATEHOUSE_FENCE", "bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("GATEHOUSE_FENCE"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn info_names_the_chapters_protections() {
    let out = Command::new(BIN)
        .args(["info", "--json"])
        .env("GATEHOUSE_FENCE", "off")
        .output()
        .unwrap();
    assert!(out.status.success());
    let posture: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nc: Vec<&str> = posture["not_covered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for code in ["write", "rename_link", "hidden", "uts", "unix_abstract"] {
        assert!(nc.contains(&code), "{nc:?}");
    }
}

#[test]
fn info_json_names_every_extra_path_the_config_makes() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    for p in ["cfg/gatehouse", "sdk", "cache", "ws/private"] {
        std::fs::create_dir_all(root.join(p)).unwrap();
    }
    std::fs::write(
        root.join("cfg/gatehouse/config.toml"),
        format!(
            "[paths]\nread-only = [\"{0}/sdk\"]\nwritable = [\"{0}/cache\"]\nhidden = [\"{0}/ws/private\"]\n",
            root.display()
        ),
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["info", "--json"])
        .current_dir(root.join("ws"))
        .env("XDG_CONFIG_HOME", root.join("cfg"))
        .env("GATEHOUSE_FENCE", "off")
        // No toolchain of this machine's home adds its own paths (FENCE-TOOL-1).
        .env("HOME", root.join("cfg"))
        .env_remove("CARGO_HOME")
        .env_remove("RUSTUP_HOME")
        .env_remove("PYENV_ROOT")
        .env_remove("VIRTUAL_ENV")
        .env_remove("NVM_DIR")
        .env_remove("GOPATH")
        .env_remove("GOROOT")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let posture: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &posture["choices"];
    let show = |p: &str| Value::from(vec![root.join(p).display().to_string()]);
    assert_eq!(c["read_only"], show("sdk"), "{c}");
    assert_eq!(c["writable"], show("cache"), "{c}");
    assert_eq!(c["hidden"], show("ws/private"), "{c}");
}

#[test]
fn help_promises_nothing_for_later() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("(later)"), "{help}");
}

#[test]
fn adapter_round_trip() {
    let ws = workspace();
    let mut child = Command::new(BIN)
        .arg("adapter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |request: Value| -> Value {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let hello = ask(json!({"id": 0, "op": "hello", "protocol": "1.0"}));
    assert_eq!(hello["ok"], true);
    assert_eq!(hello["name"], "gatehouse");
    assert_eq!(hello["version"], env!("CARGO_PKG_VERSION"));
    // The declared backend is the one the probe proved, the same the posture names.
    assert_eq!(
        hello["environment"]["fence_backend"],
        hello["environment"]["posture"]["backend"]
    );
    let open = ask(json!({"id": 1, "op": "open", "session": "s1", "setup": {
        "workspace": ws.path(), "home": "/tmp", "host": "posix", "asker": "terminal",
        "allow_list": [], "grants": [{"kind": "family", "key": "git"}], "card_window_ms": null}}));
    assert_eq!((&open["id"], &open["ok"]), (&json!(1), &json!(true)));
    assert_eq!(open["started"], true, "the trust map's session started");
    let d = ask(
        json!({"id": 2, "op": "decide", "session": "s1", "tool": "shell", "input": "git status"}),
    );
    assert_eq!(d["route"], "grant_family");
    let d = ask(
        json!({"id": 3, "op": "decide", "session": "s1", "tool": "shell", "input": "cat notes.txt"}),
    );
    assert_eq!(d["route"], "auto_safe");
    let d = ask(
        json!({"id": 4, "op": "decide", "session": "s1", "tool": "shell", "input": "rm -rf sub"}),
    );
    assert_eq!(d["reason"], "dangerous");
    let a = ask(json!({"id": 5, "op": "answer", "session": "s1", "choice": "family"}));
    assert_eq!(
        a,
        json!({"id": 5, "ok": true, "outcome": "not_offered", "saved": null})
    );
    let a = ask(json!({"id": 6, "op": "answer", "session": "s1", "choice": "refuse"}));
    assert_eq!(a["outcome"], "refused");
    let bad = ask(json!({"id": 7, "op": "open", "session": "s2", "setup": {
        "workspace": ws.path(), "sandbox": "strict"}}));
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["error"]["kind"], "unsupported");
    let audit = ask(json!({"id": 8, "op": "audit", "session": "s1"}));
    let outcomes: Vec<&str> = audit["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["allowed", "allowed", "refused"]);
    assert_eq!(
        ask(json!({"id": 9, "op": "bye"})),
        json!({"id": 9, "ok": true})
    );
    assert!(child.wait().unwrap().success());
}

/// The Landlock-only fence (no user namespaces, with the degraded opt-in) as a normal
/// user: outside a user namespace there is no CAP_SETPCAP to shrink the bounding set
/// with, and the fence must run anyway (the kernel matrix's unprivileged guests showed
/// `step 2 (drop-capabilities): ... Operation not permitted` on every kernel). As root the
/// command runs as uid 65534; as anyone else, as themselves.
#[cfg(target_os = "linux")]
#[test]
fn the_landlock_only_fence_runs_for_an_unprivileged_user() {
    use std::os::unix::process::CommandExt as _;
    let ws = tempfile::tempdir().unwrap();
    let root = rustix::process::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(ws.path(), Some(65534), Some(65534)).unwrap();
    }
    let mut cmd = Command::new(BIN);
    cmd.args(["exec", "--allow-degraded", "--workspace"])
        .arg(ws.path())
        .args([
            "--",
            "sh",
            "-c",
            "printf ran > made.txt && grep NoNewPrivs /proc/self/status",
        ])
        .current_dir(ws.path())
        .env("GATEHOUSE_EMULATE_NO_USERNS", "1");
    if root {
        cmd.uid(65534).gid(65534);
    }
    if common::landlock_abi().is_none() {
        // Nothing can fence here without user namespaces; the refusal is pinned elsewhere.
        common::skip(
            "the Landlock-only fence",
            "the kernel offers no Landlock (GATEHOUSE_TEST_LANDLOCK_ABI makes that a failure)",
        );
        return;
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    common::assert_ran_on("native", &stderr);
    assert!(String::from_utf8_lossy(&out.stdout).contains("NoNewPrivs:\t1"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("made.txt")).unwrap(),
        "ran"
    );
    assert!(
        stderr.contains("DEGRADED"),
        "the posture must say so: {stderr}"
    );
}

/// When the namespaced fences fail (here: a jail helper that does nothing, as a broken
/// `pivot_root` did on kernels before 7.0 with an initramfs root), the refusal names that
/// failure, and does not blame user namespaces on a host that has them.
#[cfg(target_os = "linux")]
#[test]
fn a_refusal_names_the_fence_that_failed_not_a_missing_kernel_feature() {
    let ws = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["exec", "--workspace"])
        .arg(ws.path())
        .args(["--", "true"])
        .current_dir(ws.path())
        .env("GATEHOUSE_JAIL_HELPER", "/bin/false")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("probe failed for native"), "{stderr}");
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .map(|s| s.trim() != "0")
        .unwrap_or(false);
    if userns {
        assert!(!stderr.contains("no user namespaces"), "{stderr}");
    }
}

/// One `hello` from the adapter with these environment variables.
fn hello_with(vars: &[(&str, &str)]) -> Output {
    let mut child = Command::new(BIN)
        .arg("adapter")
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"id": 0, "op": "hello", "protocol": "1.1"})
    )
    .unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// Without user namespaces the default builds no fence (backend null, posture `none`),
/// but the Landlock ABI declared is still the host's, capped by the operator: the runner
/// selects the scenarios that emulate a poorer kernel by it (the kernel matrix's
/// `userns-off` guests declared null, and every such scenario went unchecked).
#[cfg(target_os = "linux")]
#[test]
fn hello_declares_the_hosts_landlock_abi_where_no_fence_is_built() {
    let out = hello_with(&[
        ("GATEHOUSE_EMULATE_NO_USERNS", "1"),
        ("GATEHOUSE_LANDLOCK_MAX_ABI", "2"),
    ]);
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let hello: Value = serde_json::from_str(&first).unwrap();
    let env = &hello["environment"];
    assert!(env["fence_backend"].is_null(), "{env}");
    assert_eq!(env["posture"]["state"], "none", "{env}");
    let kernel_has_landlock = Path::new("/sys/kernel/security/landlock").exists()
        || env["posture"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("kernel has"));
    if kernel_has_landlock {
        assert_eq!(env["landlock_abi"], 2, "{env}");
    } else {
        assert!(env["landlock_abi"].is_null(), "{env}");
    }
}

#[test]
fn a_bad_run_timeout_stops_the_adapter_with_one_line() {
    let out = hello_with(&[("GATEHOUSE_RUN_TIMEOUT", "soon")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("GATEHOUSE_RUN_TIMEOUT=soon"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
/// FENCE-JAIL-15: `gatehouse exec` relays the command's standard streams through pipes, so
/// a stdout redirected to a file outside the workspace is never handed to the jail: the
/// file's mode, size and times stay as the host left them, whatever `fchmod`, `ftruncate`
/// and `futimes` on fds 0 to 2 try. Checked from outside, on both Linux backends.
#[cfg(target_os = "linux")]
#[test]
fn exec_never_hands_the_jail_an_outside_stream() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let python = Path::new("/usr/bin/python3");
    if !python.exists() {
        common::skip(
            "the outside-stream attacks",
            "they are written in Python and /usr/bin/python3 is missing",
        );
        return;
    }
    for backend in common::backends() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "twelve bytes").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let before = std::fs::metadata(&victim).unwrap();
        let out_file = std::fs::OpenOptions::new()
            .append(true)
            .open(&victim)
            .unwrap();
        let err_file = out_file.try_clone().unwrap();
        let in_file = std::fs::File::open(&victim).unwrap();
        let script = "import os\nfor fd in (0, 1, 2):\n    for f in (lambda: os.fchmod(fd, 0o4755), lambda: os.ftruncate(fd, 0), lambda: os.utime(fd, (0, 0))):\n        try:\n            f()\n        except OSError:\n            pass\n";
        let status = Command::new(BIN)
            .args(["exec", "--workspace"])
            .arg(&ws)
            .arg("--")
            .arg(python)
            .args(["-c", script])
            .current_dir(&ws)
            .env("GATEHOUSE_FENCE", backend)
            .stdin(in_file)
            .stdout(out_file)
            .stderr(err_file)
            .status()
            .unwrap();
        // The command's stderr went to the victim too, after its twelve bytes: the
        // posture line says which fence held it.
        let written = std::fs::read_to_string(&victim).unwrap();
        assert_eq!(status.code(), Some(0), "{backend}: {written}");
        let after_bytes = written.strip_prefix("twelve bytes").unwrap_or(&written);
        common::assert_ran_on(backend, after_bytes);
        let after = std::fs::metadata(&victim).unwrap();
        assert_eq!(after.mode(), before.mode(), "{backend}: mode changed");
        assert!(after.len() >= 12, "{backend}: truncated to {}", after.len());
        assert!(
            after.mtime() >= before.mtime(),
            "{backend}: times set back to {}",
            after.mtime()
        );
        assert!(
            std::fs::read_to_string(&victim)
                .unwrap()
                .starts_with("twelve bytes"),
            "{backend}"
        );
    }
}

/// FENCE-JAIL-2 on a host with a submount below `/usr`: the system directories are bound
/// recursively and every submount stays read-only (a non-recursive bind of a tree whose
/// submounts the kernel locked fails with `EINVAL`, and the fence was refused). The
/// submount is a tmpfs made in a private mount namespace of the test (`unshare -rm`), so
/// the host is not touched; the file in it is checked from that namespace afterwards.
#[cfg(target_os = "linux")]
#[test]
fn a_submount_below_usr_is_fenced_and_stays_read_only() {
    if !Path::new("/usr/bin/unshare").exists() || !Path::new("/usr/share/doc").is_dir() {
        common::skip(
            "a submount below /usr",
            "the test needs /usr/bin/unshare to mount one, and /usr/share/doc to mount it on",
        );
        return;
    }
    for backend in common::backends() {
        let ws = tempfile::tempdir().unwrap();
        let script = format!(
            "mount -t tmpfs none /usr/share/doc || exit 77; echo host > /usr/share/doc/f; \
             GATEHOUSE_FENCE={backend} {BIN} exec --workspace {ws} -- sh -c \
             'cat /usr/share/doc/f; echo jail > /usr/share/doc/f && echo WROTE' ; \
             echo \"after=$(cat /usr/share/doc/f)\"",
            ws = ws.path().display()
        );
        let out = Command::new("/usr/bin/unshare")
            .args(["-rm", "sh", "-c", &script])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(77) {
            common::skip(
                "a submount below /usr",
                &format!("this host lets no user namespace mount a tmpfs: {stderr}"),
            );
            return;
        }
        assert!(out.status.success(), "{backend}: {stdout} {stderr}");
        common::assert_ran_on(backend, &stderr);
        assert!(stdout.starts_with("host\n"), "{backend}: {stdout} {stderr}");
        assert!(!stdout.contains("WROTE"), "{backend}: {stdout}");
        assert!(stdout.contains("after=host"), "{backend}: {stdout}");
    }
}
