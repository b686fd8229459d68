//! The run owns its implementation's processes (PROTO-OBSERVE-5): the runner makes itself
//! a child subreaper before it starts the implementation, so that every process the
//! implementation starts, daemons that fork and `setsid` included, stays its descendant;
//! and before it writes a report it kills every descendant still alive and reaps them.
//! What the implementation left running can then change no report.
//!
//! Descendants are found in `/proc`: every process whose chain of parents leads to the
//! runner. The search repeats until a pass finds none, since a process may fork while the
//! one before it is killed.

use rustix::process::{Pid, Signal, WaitOptions};

/// How many passes [`kill_descendants`] makes at most.
const PASSES: usize = 50;

/// Makes the runner the reaper of its orphaned descendants (Linux; elsewhere a no-op,
/// and descendants that double-fork may escape, which [`kill_descendants`] says).
pub fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The parent of every process `/proc` lists, and whether it is a zombie (dead, waiting
/// for its parent to reap it).
fn parents() -> Vec<(i32, i32, bool)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
            let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
            let zombie = rest.next()? == "Z";
            let ppid: i32 = rest.next()?.parse().ok()?;
            Some((pid, ppid, zombie))
        })
        .collect()
}

/// Every descendant of process `root` that is not yet dead (zombies are left to reap).
fn descendants(root: i32) -> Vec<i32> {
    let all = parents();
    let mut children: std::collections::HashMap<i32, Vec<(i32, bool)>> =
        std::collections::HashMap::new();
    for (pid, ppid, zombie) in &all {
        children.entry(*ppid).or_default().push((*pid, *zombie));
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    let mut seen = std::collections::HashSet::new();
    while let Some(p) = todo.pop() {
        for (pid, zombie) in children.get(&p).into_iter().flatten() {
            if seen.insert(*pid) {
                todo.push(*pid);
                if !zombie {
                    found.push(*pid);
                }
            }
        }
    }
    found
}

/// Stops, kills and reaps every descendant of the runner; the number killed.
pub fn kill_descendants() -> usize {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut killed = std::collections::HashSet::new();
    for _ in 0..PASSES {
        let live = descendants(me);
        // Threads of the runner are not processes; its own children are all the
        // implementation's by now (the fixture's process and servers are gone).
        if live.is_empty() {
            break;
        }
        for pid in &live {
            if let Some(p) = Pid::from_raw(*pid) {
                // Stopped first, so that none forks again before it is killed.
                let _ = rustix::process::kill_process(p, Signal::STOP);
            }
        }
        for pid in &live {
            if let Some(p) = Pid::from_raw(*pid) {
                if rustix::process::kill_process(p, Signal::KILL).is_ok() {
                    killed.insert(*pid);
                }
            }
        }
        reap();
    }
    // A process killed is gone once it is reaped: its parent (killed too, or the runner,
    // which has adopted it) may take a moment to die first.
    let settle = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        reap();
        let left = killed
            .iter()
            .any(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
        if !left || std::time::Instant::now() >= settle {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    killed.len()
}

/// Waits for every child that has ended, in any process group (`waitpid(-1)`; rustix's
/// `waitpid(None)` is the caller's group only, which misses a child that left it).
fn reap() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_that_left_its_session_is_found_and_killed() {
        // It kills every descendant of the test's process: under `cargo test`, whose
        // tests share one process, it would kill the children of the tests beside it
        // (fixture::resources's runner process). Alone in a process of its own, as
        // nextest runs every test.
        // The test's name as the harness knows it: its module path without the crate's.
        let path = concat!(
            module_path!(),
            "::a_daemon_that_left_its_session_is_found_and_killed"
        );
        let name = path.split_once("::").map_or(path, |(_, rest)| rest);
        if std::env::var_os("NEXTEST").is_none()
            && std::env::var_os("GATEHOUSE_REAP_ALONE").is_none()
        {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--test-threads=1", "--quiet"])
                .env("GATEHOUSE_REAP_ALONE", "1")
                .status()
                .unwrap();
            assert!(status.success(), "{name} alone: {status}");
            return;
        }
        assert!(adopt_orphans());
        // A grandchild in a session of its own, whose parent exits at once.
        let mut sh = std::process::Command::new("sh")
            .args([
                "-c",
                "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(sh.stdout.as_mut().unwrap(), &mut out).unwrap();
        sh.wait().unwrap();
        let daemon: i32 = out.trim().parse().unwrap();
        let me = rustix::process::getpid().as_raw_nonzero().get();
        assert!(descendants(me).contains(&daemon), "adopted: {daemon}");
        assert!(kill_descendants() >= 1);
        let left = std::fs::read_to_string(format!("/proc/{daemon}/stat")).unwrap_or_default();
        assert!(left.is_empty(), "{left}");
    }
}
