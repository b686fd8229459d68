//! The logic behind `gatehouse info` and `gatehouse exec`, free of any argument parser so
//! that `main` only dispatches: the posture as the plane would report it, and one command
//! run through the fence with the plane's scrubbed environment.
//!
//! Environment: `GATEHOUSE_FENCE`, `GATEHOUSE_EMULATE_NO_USERNS`,
//! `GATEHOUSE_LANDLOCK_MAX_ABI`, `GATEHOUSE_JAIL_HELPER` (see [`FenceOptions::from_env`]) and
//! `GATEHOUSE_ENV_SCRUBBING=off` (the plane-wide opt-out).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::exit::SETUP_FAILED as EXIT_SETUP_FAILED;
use crate::fence::{
    current_posture, missing_protected, tidy_protected, Action, Fence, FenceError, FenceOptions,
    Policy,
};

/// `GATEHOUSE_ENV_SCRUBBING=off`: hand tools the full environment (reported in the posture).
pub const ENV_SCRUBBING: &str = "GATEHOUSE_ENV_SCRUBBING";

/// Whether the environment is scrubbed (the opt-out is `GATEHOUSE_ENV_SCRUBBING=off`).
pub fn env_scrubbing_from_env() -> bool {
    !matches!(
        std::env::var(ENV_SCRUBBING).as_deref(),
        Ok("off" | "0" | "false" | "no")
    )
}

/// The posture, as `gatehouse info` prints it (human, or pretty JSON). Options the
/// environment spells wrongly (`GATEHOUSE_FENCE=bogus`) are an error, not a posture: the
/// operator asked for something that does not exist.
pub fn info(json: bool) -> Result<String, FenceError> {
    let mut posture = current_posture(&FenceOptions::from_env()?);
    posture.env_scrubbing = env_scrubbing_from_env();
    Ok(if json {
        posture.to_json()
    } else {
        posture.render()
    })
}

/// Run one command in the fence as a person would: its output streams to ours, its exit
/// status is returned, and stderr says which fence held it. Workspaces default to the
/// current directory. Returns 125 when the fence refused or failed (nothing ran).
pub fn exec(workspaces: &[PathBuf], allow_degraded: bool, cmd: &[OsString]) -> i32 {
    match exec_inner(workspaces, allow_degraded, cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("gatehouse exec: {e}");
            EXIT_SETUP_FAILED
        }
    }
}

fn exec_inner(
    workspaces: &[PathBuf],
    allow_degraded: bool,
    cmd: &[OsString],
) -> Result<i32, String> {
    let mut options = FenceOptions::from_env().map_err(|e| e.to_string())?;
    options.allow_degraded |= allow_degraded;
    let argv: Vec<String> = cmd
        .iter()
        .map(|a| {
            a.clone()
                .into_string()
                .map_err(|a| format!("argument {a:?} is not UTF-8"))
        })
        .collect::<Result<_, _>>()?;
    if argv.is_empty() {
        return Err("no command given (gatehouse exec [--workspace DIR]... -- CMD ARGS...)".into());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let workspaces: Vec<PathBuf> = if workspaces.is_empty() {
        vec![cwd.clone()]
    } else {
        workspaces.to_vec()
    };
    let scratch = crate::fence::probe::tempdir().map_err(|e| format!("scratch directory: {e}"))?;
    let result = (|| {
        let mut policy = Policy::new(workspaces, scratch.clone());
        let real_cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        let resolved: Vec<PathBuf> = policy
            .workspaces
            .iter()
            .filter_map(|w| std::fs::canonicalize(w).ok())
            .collect();
        if resolved.iter().any(|w| real_cwd.starts_with(w)) {
            policy.cwd = Some(real_cwd);
        }
        let fence = Fence::prepare(policy, &options).map_err(|e| e.to_string())?;
        let scrubbing = env_scrubbing_from_env();
        let mut posture = fence.posture().clone();
        posture.env_scrubbing = scrubbing;
        // TMPDIR is the session's scratch temporary directory on every backend, a jail
        // with a private `/tmp` included (the spec's environment table, FENCE-JAIL-4).
        let env = super::env::jail_env(
            std::env::vars_os(),
            &fence.policy().home(),
            Some(&fence.policy().tmpdir()),
            scrubbing,
        );
        eprintln!("gatehouse exec: {}", posture.render());
        let created = missing_protected(fence.policy());
        let mut command = fence
            .command(Action::Exec { argv }, env)
            .map_err(|e| e.to_string())?;
        let status = relayed(&mut command).map_err(|e| format!("cannot start the fence: {e}"));
        tidy_protected(&created);
        let status = status?;
        use std::os::unix::process::ExitStatusExt;
        Ok(status
            .code()
            .or(status.signal().map(|s| 128 + s))
            .unwrap_or(EXIT_SETUP_FAILED))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// Run `command` with its standard streams relayed through pipes (FENCE-JAIL-15): the jail
/// is never handed a descriptor of ours, which may be a file outside every root (a
/// redirected stdout), a terminal or a socket, and which would keep the rights it was
/// opened with (`fchmod`, `ftruncate`, `futimes` and `fsetxattr` on fd 1 change the file
/// whatever the mounts say).
fn relayed(command: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    fn pump(mut from: impl Read, mut to: impl Write) {
        let mut buf = [0u8; 8192];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
                        break;
                    }
                }
            }
        }
    }
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let t_out = out.map(|o| std::thread::spawn(move || pump(o, std::io::stdout())));
    let t_err = err.map(|e| std::thread::spawn(move || pump(e, std::io::stderr())));
    if let Some(input) = child.stdin.take() {
        // Not joined: our stdin may be a terminal the command never reads; the thread ends
        // with the process, or at the first write the closed pipe refuses.
        std::thread::spawn(move || pump(std::io::stdin(), input));
    }
    let status = child.wait();
    for t in [t_out, t_err].into_iter().flatten() {
        let _ = t.join();
    }
    status
}
