//! `gatehouse exec` with the person's choices, end to end on every Linux backend: each
//! option beside its allowed twin, the files checked from outside afterwards, and a jail
//! whose layer fails silently refused by its own probe before the command runs.
#![cfg(target_os = "linux")]
// A test's helpers panic to fail it, as its #[test] functions do (clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::backends;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gatehouse");

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ws", "outside", "extra", "config"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("outside/data.txt"), "outside data\n").unwrap();
        std::fs::write(dir.path().join("ws/.env"), "API_KEY=planted\n").unwrap();
        Case { dir }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn exec(&self, backend: &str, args: &[&str], script: &str) -> Output {
        let mut c = Command::new(BIN);
        c.arg("exec")
            .arg("--workspace")
            .arg(self.p("ws"))
            .args(args)
            .args(["--", "sh", "-c", script])
            .env("GATEHOUSE_FENCE", backend)
            .env("XDG_CONFIG_HOME", self.p("config"))
            .env("CARGO_HOME", "/opt/cargo-home")
            .env("NPM_TOKEN", "npm_bait_token")
            .env_remove(gatehouse::fence::plan::FAULT_ENV);
        let o = c.output().unwrap();
        // Whatever ran, ran in the fence the test named (FENCE-RUN-5's posture line).
        if o.status.success() {
            common::assert_ran_on(backend, &String::from_utf8_lossy(&o.stderr));
        }
        o
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_jail_whose_layer_fails_silently_is_refused_and_nothing_runs() {
    for b in backends() {
        let c = Case::new();
        let marker = c.p("ws/ran");
        let script = format!("touch {}", marker.display());
        let mut cmd = Command::new(BIN);
        cmd.arg("exec")
            .arg("--workspace")
            .arg(c.p("ws"))
            .args(["--", "sh", "-c", &script])
            .env("GATEHOUSE_FENCE", b)
            .env("XDG_CONFIG_HOME", c.p("config"))
            .env(gatehouse::fence::plan::FAULT_ENV, "read-only-hole");
        let o = cmd.output().unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{b}: {err}");
        assert!(err.contains("write-outside"), "{b}: {err}");
        assert!(
            !marker.exists(),
            "{b}: the command ran in a jail its probe refused"
        );
        // The allowed twin: the same command without the fault runs.
        let o = c.exec(b, &[], &script);
        assert_eq!(o.status.code(), Some(0), "{b}: {}", text(&o).1);
        assert!(marker.exists(), "{b}");
    }
}

#[test]
fn a_native_jail_left_on_the_hosts_network_is_refused_and_nothing_runs() {
    // The native jail's network namespace is the init's own join after the fork; the
    // launcher sees the init's namespace from outside before the verdict.
    let c = Case::new();
    let marker = c.p("ws/ran");
    let script = format!("touch {}", marker.display());
    let faulty = |mode: &str, thread: &str| {
        Command::new(BIN)
            .arg("exec")
            .arg("--workspace")
            .arg(c.p("ws"))
            .args(["--network", mode, "--", "sh", "-c", &script])
            .env("GATEHOUSE_FENCE", "native")
            .env("XDG_CONFIG_HOME", c.p("config"))
            .env(gatehouse::fence::plan::FAULT_ENV, "shared-network")
            .env("GATEHOUSE_JAIL_NETWORK_THREAD", thread)
            .output()
            .unwrap()
    };
    // Whether the init makes its namespace on a thread of its own or by itself.
    for thread in ["always", "never"] {
        let o = faulty("off", thread);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{thread}: {err}");
        assert!(
            err.contains("network: the jail's init is in the launcher's network namespace"),
            "{thread}: {err}"
        );
        assert!(
            !marker.exists(),
            "the command ran in a jail its probe refused ({thread})"
        );
    }
    // The `host` mode joins nothing, so the fault changes nothing there; and without the
    // fault the command runs.
    let o = faulty("host", "always");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    common::assert_ran_on("native", &text(&o).1);
    std::fs::remove_file(&marker).unwrap();
    let o = c.exec("native", &[], &script);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(marker.exists());
}

#[test]
fn pass_env_and_set_env_reach_the_command_and_nothing_else_does() {
    for b in backends() {
        let c = Case::new();
        let script =
            "echo \"cargo=${CARGO_HOME-unset} log=${RUST_LOG-unset} npm=${NPM_TOKEN-unset}\"";
        let o = c.exec(
            b,
            &["--pass-env", "CARGO_HOME", "--set-env", "RUST_LOG=debug"],
            script,
        );
        assert_eq!(
            text(&o).0.trim(),
            "cargo=/opt/cargo-home log=debug npm=unset",
            "{b}: {}",
            text(&o).1
        );
        let o = c.exec(b, &[], script);
        assert_eq!(text(&o).0.trim(), "cargo=unset log=unset npm=unset", "{b}");
    }
}

#[test]
fn a_secret_looking_name_passes_only_on_purpose_and_the_posture_lists_it() {
    for b in backends() {
        let c = Case::new();
        let o = c.exec(b, &["--pass-env", "NPM_TOKEN"], "echo ran");
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{b}");
        assert!(
            out.is_empty() && err.contains("--pass-secret-env NPM_TOKEN"),
            "{b}: {err}"
        );
        let o = c.exec(b, &["--pass-secret-env", "NPM_TOKEN"], "echo $NPM_TOKEN");
        let (out, err) = text(&o);
        assert_eq!(out.trim(), "npm_bait_token", "{b}: {err}");
        assert!(err.contains("passed on purpose: NPM_TOKEN"), "{b}: {err}");
        assert!(
            !err.contains("npm_bait_token"),
            "{b}: the posture shows names, never values"
        );
    }
}

#[test]
fn ro_makes_a_path_visible_read_only() {
    for b in backends() {
        let c = Case::new();
        let data = c.p("outside/data.txt");
        let script = format!(
            "cat {0}; echo changed > {0}; touch {1}/new",
            data.display(),
            c.p("outside").display()
        );
        let o = c.exec(b, &["--ro", c.p("outside").to_str().unwrap()], &script);
        let (out, err) = text(&o);
        assert!(out.contains("outside data"), "{b}: {err}");
        assert_eq!(
            std::fs::read_to_string(&data).unwrap(),
            "outside data\n",
            "{b}"
        );
        assert!(!c.p("outside/new").exists(), "{b}");
        // The twin: without --ro the path is not there at all.
        let o = c.exec(b, &[], &format!("cat {}", data.display()));
        assert!(!text(&o).0.contains("outside data"), "{b}");
        assert!(err.contains("extra read-only: "), "{b}: {err}");
    }
}

#[test]
fn rw_adds_a_writable_root_whose_protected_paths_stay_read_only() {
    for b in backends() {
        let c = Case::new();
        let extra = c.p("extra");
        let script = format!(
            "echo built > {0}/out.txt; mkdir -p {0}/.gatehouse 2>/dev/null; echo x > {0}/.gatehouse/config.toml",
            extra.display()
        );
        let o = c.exec(b, &["--rw", extra.to_str().unwrap()], &script);
        assert_eq!(
            std::fs::read_to_string(extra.join("out.txt")).unwrap(),
            "built\n",
            "{b}: {}",
            text(&o).1
        );
        assert!(
            !extra.join(".gatehouse/config.toml").exists(),
            "{b}: a protected path inside --rw was written"
        );
        // The twin: without --rw the write is refused.
        std::fs::remove_file(extra.join("out.txt")).unwrap();
        let _ = c.exec(b, &[], &format!("echo built > {}/out.txt", extra.display()));
        assert!(!extra.join("out.txt").exists(), "{b}");
    }
}

#[test]
fn hide_makes_a_path_unreadable_even_inside_the_workspace() {
    for b in backends() {
        let c = Case::new();
        let env = c.p("ws/.env");
        let o = c.exec(
            b,
            &["--hide", env.to_str().unwrap()],
            &format!("cat {}", env.display()),
        );
        assert!(!text(&o).0.contains("planted"), "{b}: {:?}", text(&o));
        assert_eq!(
            std::fs::read_to_string(&env).unwrap(),
            "API_KEY=planted\n",
            "{b}"
        );
        let o = c.exec(b, &[], &format!("cat {}", env.display()));
        assert!(text(&o).0.contains("planted"), "{b}: the twin reads it");
    }
}

#[test]
fn a_missing_or_weakening_path_is_refused_in_one_line() {
    let c = Case::new();
    let missing = c.p("nope");
    for flag in ["--ro", "--rw", "--hide"] {
        let o = c.exec("native", &[flag, missing.to_str().unwrap()], "echo ran");
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{flag}");
        assert!(out.is_empty(), "{flag}");
        assert_eq!(err.lines().count(), 1, "{flag}: {err}");
        assert!(
            err.contains(&format!("{flag} {}", missing.display())),
            "{err}"
        );
    }
    // A writable root holding the user's configuration would let jailed code rewrite it.
    let o = c.exec(
        "native",
        &["--rw", c.dir.path().to_str().unwrap()],
        "echo ran",
    );
    assert_eq!(o.status.code(), Some(125));
    assert!(text(&o).1.contains("never change"), "{}", text(&o).1);
}

#[test]
fn the_config_file_is_strict_and_flags_win() {
    let c = Case::new();
    let file = c.p("config/gatehouse/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "[env]\npass = [\"CARGO_HOME\"]\nset = { RUST_LOG = \"info\" }\n",
    )
    .unwrap();
    let o = c.exec(
        "native",
        &["--set-env", "RUST_LOG=debug"],
        "echo $CARGO_HOME $RUST_LOG",
    );
    assert_eq!(text(&o).0.trim(), "/opt/cargo-home debug", "{}", text(&o).1);
    std::fs::write(&file, "[env]\npass = [\"CARGO_HOME\"]\npas = []\n").unwrap();
    let o = c.exec("native", &[], "echo ran");
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(125));
    assert!(
        err.contains(&format!("{}:3: unknown field `pas`", file.display())),
        "{err}"
    );
}

#[test]
fn info_says_where_each_setting_came_from() {
    let c = Case::new();
    let file = c.p("config/gatehouse/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "[env]\n\npass = [\"EDITOR\"]\n").unwrap();
    let o = Command::new(BIN)
        .arg("info")
        .current_dir(c.p("ws"))
        .env("XDG_CONFIG_HOME", c.p("config"))
        .output()
        .unwrap();
    let out = text(&o).0;
    assert!(
        out.contains(&format!("pass-env EDITOR  ({}:3)", file.display())),
        "{out}"
    );
    assert!(out.contains("network = off  (default)"), "{out}");
}

/// A loopback HTTP server the test starts: answers `hello` and counts connections.
fn server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { break };
            s.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });
    (port, seen)
}

/// A client inside the jail: Python's urllib, which follows `HTTP_PROXY`; prints the
/// status or the error's first words.
fn fetch(url: &str, proxied: bool) -> String {
    let opener = if proxied {
        "urllib.request.build_opener()"
    } else {
        "urllib.request.build_opener(urllib.request.ProxyHandler({}))"
    };
    format!(
        "/usr/bin/python3 -c 'import urllib.request,sys\ntry:\n  r={opener}.open(\"{url}\",timeout=10); print(r.status, r.read().decode())\nexcept Exception as e: print(\"error\", getattr(e, \"code\", \"\"), type(e).__name__)'"
    )
}

#[test]
fn allow_list_reaches_an_allowed_host_through_the_proxy_and_nothing_else() {
    if !Path::new("/usr/bin/python3").exists() {
        panic!("/usr/bin/python3 is needed inside the jail (.ci/run installs it)");
    }
    for b in backends() {
        let c = Case::new();
        let (port, seen) = server();
        let state = c.p("state");
        let run = |args: &[&str], script: &str| {
            let mut cmd = Command::new(BIN);
            cmd.arg("exec")
                .arg("--workspace")
                .arg(c.p("ws"))
                .args(args)
                .args(["--", "sh", "-c", script])
                .env("GATEHOUSE_FENCE", b)
                .env("XDG_CONFIG_HOME", c.p("config"))
                .env("XDG_STATE_HOME", &state);
            cmd.output().unwrap()
        };
        let allowed = format!("http://localhost:{port}/");
        let literal = format!("http://127.0.0.1:{port}/");
        let o = run(&["--allow-domain", "localhost"], &fetch(&allowed, true));
        assert_eq!(text(&o).0.trim(), "200 hello", "{b}: {}", text(&o).1);
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1, "{b}");
        // The same server by a name off the list: refused by the proxy, never reached.
        let o = run(&["--allow-domain", "localhost"], &fetch(&literal, true));
        assert_eq!(
            text(&o).0.trim(),
            "error 403 HTTPError",
            "{b}: {}",
            text(&o).1
        );
        assert!(text(&o).1.contains("refused (403)"), "{b}");
        // Around the proxy: the jail's loopback holds nothing of the host's.
        let o = run(&["--allow-domain", "localhost"], &fetch(&literal, false));
        assert!(text(&o).0.starts_with("error"), "{b}: {}", text(&o).0);
        // No resolver inside: a name cannot even be looked up (no DNS to leak through).
        let o = run(
            &["--allow-domain", "localhost"],
            "/usr/bin/python3 -c 'import socket\ntry: socket.getaddrinfo(\"leak.example.org\", 80); print(\"resolved\")\nexcept OSError: print(\"no resolver\")'",
        );
        assert_eq!(text(&o).0.trim(), "no resolver", "{b}");
        // Default network off: not even the allowed host.
        let o = run(&[], &fetch(&allowed, true));
        assert!(text(&o).0.starts_with("error"), "{b}: {}", text(&o).0);
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1, "{b}");
        // Every decision was logged outside the jail's reach.
        let logs: String = std::fs::read_dir(state.join("gatehouse/sessions"))
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        assert!(logs.contains("\"decision\":\"refused\""), "{b}: {logs}");
        assert!(logs.contains("\"decision\":\"allowed\""), "{b}: {logs}");
    }
}

/// FENCE-ENV-12 through `gatehouse exec`: a `PATH` that starts in a pyenv layout below a
/// directory no jail reads (the agent's own `PATH`, and one set with `--set-env`) loses
/// that entry, the posture line names it, and `python3` finds itself in the system's
/// directories, on every backend and on the Landlock-only fence (emulated), where the
/// entry is still there to look up. The allowed twin: an entry in the workspace stays and
/// its program runs.
#[test]
fn path_entries_the_jail_cannot_read_are_left_out_and_named() {
    use std::os::unix::fs::PermissionsExt;
    let c = Case::new();
    let python = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a system python3");
    let version = Command::new(python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    // A pyenv version: a python3 and the landmark by which CPython takes the directory
    // above it for its prefix.
    let prefix = c.p("outside/home/.pyenv/versions/9.9");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::create_dir_all(prefix.join(format!("lib/python{}", version.trim()))).unwrap();
    std::fs::write(
        prefix.join(format!("lib/python{}/os.py", version.trim())),
        "",
    )
    .unwrap();
    let fake = prefix.join("bin/python3");
    std::fs::write(&fake, format!("#!/bin/sh\nexec {python} \"$@\"\n")).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tools = c.p("ws/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("ws-tool"), "#!/bin/sh\necho ws-tool-ran\n").unwrap();
    std::fs::set_permissions(
        tools.join("ws-tool"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let hidden_bin = prefix.join("bin").display().to_string();
    let path = format!("{hidden_bin}:{}:/usr/bin:/bin", tools.display());
    let script = "echo PATH=$PATH; python3 -c 'import sys; print(\"real\", sys.prefix)'; ws-tool";
    let want_path = format!("PATH={}:/usr/bin:/bin\n", tools.display());
    let named = format!("PATH entries the jail cannot read, left out: {hidden_bin}");
    let set = format!("PATH={path}");
    let mut runs: Vec<(String, Output)> = Vec::new();
    for b in backends() {
        for how in ["inherited", "set"] {
            let mut cmd = Command::new(BIN);
            cmd.arg("exec").arg("--workspace").arg(c.p("ws"));
            if how == "set" {
                cmd.args(["--set-env", &set]);
            }
            cmd.args(["--", "sh", "-c", script])
                .env("GATEHOUSE_FENCE", b)
                .env("XDG_CONFIG_HOME", c.p("config"))
                .env("PATH", &path)
                .env_remove(gatehouse::fence::plan::FAULT_ENV);
            runs.push((format!("{b}, {how}"), cmd.output().unwrap()));
        }
    }
    let mut degraded = Command::new(BIN);
    degraded
        .arg("exec")
        .arg("--allow-degraded")
        .arg("--workspace")
        .arg(c.p("ws"))
        .args(["--", "sh", "-c", script])
        .env("GATEHOUSE_FENCE", "native")
        .env(gatehouse::fence::policy::ENV_NO_USERNS, "1")
        .env("XDG_CONFIG_HOME", c.p("config"))
        .env("PATH", &path)
        .env_remove(gatehouse::fence::plan::FAULT_ENV);
    runs.push(("landlock only".into(), degraded.output().unwrap()));
    for (what, o) in runs {
        let (out, err) = text(&o);
        assert!(o.status.success(), "{what}: {out}\n{err}");
        assert!(out.contains(&want_path), "{what}: {out}");
        assert!(out.contains("real /usr\n"), "{what}: {out}\n{err}");
        assert!(out.contains("ws-tool-ran"), "{what}: {out}");
        assert!(err.contains(&named), "{what}: {err}");
    }
}

/// FENCE-ENV-13: a command whose only copy lies in a `PATH` entry the jail cannot read is
/// not found (127), and one line names the entry and the flag that would show it. The
/// twins: a command the jail can find, and a 127 of the command's own, get no such line.
#[test]
fn a_command_left_out_with_its_path_entry_is_named_with_the_flag_that_shows_it() {
    use std::os::unix::fs::PermissionsExt;
    let c = Case::new();
    let hidden_bin = c.p("outside/home/.cargo/bin");
    std::fs::create_dir_all(&hidden_bin).unwrap();
    let tool = hidden_bin.join("hidden-tool");
    std::fs::write(&tool, "#!/bin/sh\necho hidden-tool-ran\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", hidden_bin.display());
    let hint = format!(
        "`hidden-tool` is in {dir}, a PATH entry the jail cannot read; `--ro {dir}` would make it visible read-only",
        dir = hidden_bin.display()
    );
    for b in backends() {
        let run = |argv: &[&str]| {
            Command::new(BIN)
                .arg("exec")
                .arg("--workspace")
                .arg(c.p("ws"))
                .arg("--no-tty")
                .arg("--")
                .args(argv)
                .env("GATEHOUSE_FENCE", b)
                .env("XDG_CONFIG_HOME", c.p("config"))
                .env("PATH", &path)
                .env_remove(gatehouse::fence::plan::FAULT_ENV)
                .output()
                .unwrap()
        };
        let o = run(&["hidden-tool"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(127), "{b}: {out}{err}");
        assert!(err.contains(&hint), "{b}: {err}");
        // The twins: found in the jail; and a 127 of the command's own.
        let o = run(&["true"]);
        assert!(o.status.success(), "{b}: {:?}", text(&o));
        assert!(
            !text(&o).1.contains("a PATH entry the jail cannot read;"),
            "{b}"
        );
        let o = run(&["sh", "-c", "exit 127"]);
        assert_eq!(o.status.code(), Some(127), "{b}");
        assert!(
            !text(&o).1.contains("a PATH entry the jail cannot read;"),
            "{b}"
        );
    }
}

/// FENCE-NET-13: with the network off, a name the command really looked up (glibc's
/// `getent`, Python's `getaddrinfo`, a raw query) fails at once and is named after the
/// command, one line each, with the flags that would allow it; the jail's `resolv.conf`
/// names the fence's own resolver, which refuses (`REFUSED`) and resolves nothing. A name
/// that could carry a terminal's control strings is counted, never shown. The twins: a
/// command that looks nothing up, the host network and an allow-listed name get no line;
/// bubblewrap, which cannot answer, says so in its posture.
#[test]
fn a_name_looked_up_with_the_network_off_is_named_with_the_flag_that_allows_it() {
    let c = Case::new();
    let line = |name: &str| {
        format!("gatehouse exec: the network is off; the command looked up {name} (allow it with --allow-domain {name})")
    };
    let registry_line = |name: &str| {
        format!("gatehouse exec: the network is off; the command looked up {name} (allow it with --allow-domain {name}, or --fetch for the package registries)")
    };
    let run = |backend: &str, flags: &[&str], argv: &[&str]| {
        Command::new(BIN)
            .arg("exec")
            .arg("--workspace")
            .arg(c.p("ws"))
            .arg("--no-tty")
            .args(flags)
            .arg("--")
            .args(argv)
            .env("GATEHOUSE_FENCE", backend)
            .env("XDG_CONFIG_HOME", c.p("config"))
            .env_remove(gatehouse::fence::plan::FAULT_ENV)
            .output()
            .unwrap()
    };
    let o = run("native", &[], &["getent", "hosts", "example.com"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "getent: not found: {out}{err}");
    assert!(err.lines().any(|l| l == line("example.com")), "{err}");
    let py = "import socket\ntry:\n    socket.getaddrinfo('Files.PythonHosted.org', 443)\n    print('RESOLVED')\nexcept socket.gaierror as e:\n    print('failed', e.errno == socket.EAI_AGAIN)\n";
    let o = run("native", &[], &["python3", "-c", py]);
    let (out, err) = text(&o);
    assert_eq!(out.trim(), "failed True", "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("the network is off;"))
            .collect::<Vec<_>>(),
        vec![registry_line("files.pythonhosted.org")],
        "one line per distinct name, A and AAAA asked: {err}"
    );
    // The resolver answers from outside: REFUSED, the question echoed; nothing resolves.
    let raw = "import socket, struct\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(5)\nq = struct.pack('>HHHHHH', 0x4748, 0x0100, 1, 0, 0, 0) + b'\\x05a\\x1b[2J\\x07example\\x00' + struct.pack('>HH', 1, 1)\ns.sendto(q, ('127.0.0.1', 53))\na = s.recv(512)\nprint(a[:2] == q[:2], a[3] & 15, a[12:] == q[12:], open('/etc/resolv.conf').read().split('\\n')[1])\n";
    let o = run("native", &[], &["python3", "-c", raw]);
    let (out, err) = text(&o);
    assert_eq!(out.trim(), "True 5 True nameserver 127.0.0.1", "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(
        err.lines().any(|l| l == "gatehouse exec: the network is off; the command made 1 lookup of names not shown (allow one with --allow-domain NAME)"),
        "{err}"
    );
    // The twins.
    let o = run("native", &[], &["true"]);
    assert!(o.status.success());
    assert!(
        !text(&o).1.contains("the network is off;"),
        "{:?}",
        text(&o)
    );
    let o = run(
        "native",
        &["--network", "host"],
        &["getent", "hosts", "localhost"],
    );
    assert!(
        !text(&o).1.contains("the network is off;"),
        "{:?}",
        text(&o)
    );
    let o = run(
        "native",
        &["--allow-domain", "example.com"],
        &["getent", "hosts", "example.com"],
    );
    assert!(
        !text(&o).1.contains("the network is off;"),
        "{:?}",
        text(&o)
    );
    if backends().contains(&"bwrap") {
        let o = run("bwrap", &[], &["getent", "hosts", "example.com"]);
        let (_, err) = text(&o);
        assert_ne!(o.status.code(), Some(0));
        assert!(!err.contains("the network is off;"), "{err}");
        assert!(
            err.contains("network: off (failed name lookups are named on the native backend only)"),
            "{err}"
        );
    }
}
