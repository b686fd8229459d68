//! The jail helper (`gatehouse __jail`): the one place its entry points are dispatched.
//! [`crate::fence::jail::enter`] reads the plan and applies every step; then the plan's
//! action runs here: a command ([`crate::fence::jail::exec`]), the plane's executor loop
//! ([`crate::plane::executor::serve`]) or the probe's legs
//! ([`crate::fence::probe::report_legs`]).
//!
//! The lingerer of a root's placeholders (`gatehouse __linger`, [`linger`]) is dispatched
//! here too.
//!
//! It sits above `fence` and `plane` so that neither calls into the other's side of the
//! helper.

use std::ffi::OsString;

use crate::fence::Action;

/// Entry point of the hidden `__jail` subcommand; `main` must call it before starting any
/// thread (the kernel refuses a new user namespace to a multi-threaded process).
pub fn main(args: &[OsString]) -> ! {
    let (plan, enforcement) = match crate::fence::jail::enter(args) {
        Ok(entered) => entered,
        Err(code) => std::process::exit(code),
    };
    // Before any jailed code runs, this process (the jail's init on the native backend,
    // a child of bubblewrap's init on the other) becomes readable by no jailed process:
    // the executor of `Serve` keeps serving call after call, and code of one call that
    // could read or trace it would see the next calls' inputs and answer for them. A
    // checked command's init does this itself on the launcher's go, after the launcher
    // has looked at it from outside (fence::jail::checked_exec).
    if !matches!(plan.action, Action::CheckedExec { .. }) {
        if let Err(code) = not_dumpable() {
            std::process::exit(code);
        }
    }
    let code = match &plan.action {
        Action::Exec { argv } => crate::fence::jail::exec(&plan, argv, &enforcement),
        Action::CheckedExec {
            argv,
            preflight,
            listener,
            terminal,
            ..
        } => checked_exec(
            &plan,
            argv,
            preflight,
            listener.as_ref(),
            *terminal,
            &enforcement,
        ),
        Action::Serve { listener } => match hand_out(listener.as_ref()) {
            Ok(()) => crate::plane::executor::serve(&plan, &enforcement),
            Err(code) => code,
        },
        Action::Probe { outside, inside } => {
            crate::fence::probe::report_legs(outside, inside, enforcement)
        }
    };
    std::process::exit(code)
}

/// Entry point of the hidden `__linger` subcommand
/// ([`crate::fence::mount_points::LINGER_ARG`]): the lingerer of a root's placeholders,
/// started by its last jail out ([`crate::fence::mount_points::linger_main`]).
#[cfg(target_os = "linux")]
pub fn linger(args: &[OsString]) -> ! {
    std::process::exit(crate::fence::mount_points::linger_main(args))
}

/// `PR_SET_DUMPABLE` 0: no process without `CAP_SYS_PTRACE` over this one may trace it
/// or read its memory, environment or descriptors through `/proc`.
#[cfg(target_os = "linux")]
fn not_dumpable() -> Result<(), i32> {
    crate::sys::ns::not_dumpable().map_err(|e| {
        eprintln!("gatehouse jail: not-dumpable: {e}");
        crate::exit::SETUP_FAILED
    })
}

/// Elsewhere the launcher's own sandbox (Seatbelt) holds the command; nothing to do.
#[cfg(not(target_os = "linux"))]
fn not_dumpable() -> Result<(), i32> {
    Ok(())
}

/// Hand out the proxy's listener (the `allow-list` mode) before anything jailed runs.
#[cfg(target_os = "linux")]
fn hand_out(listener: Option<&crate::fence::plan::ListenerHandoff>) -> Result<(), i32> {
    if let Some(l) = listener {
        if let Err(e) = crate::fence::jail::hand_out_listener(l) {
            eprintln!("gatehouse jail: the proxy's listener: {e}");
            return Err(crate::exit::SETUP_FAILED);
        }
    }
    Ok(())
}

/// Elsewhere no launcher asks for a listener; one asked for is refused.
#[cfg(not(target_os = "linux"))]
fn hand_out(listener: Option<&crate::fence::plan::ListenerHandoff>) -> Result<(), i32> {
    match listener {
        None => Ok(()),
        Some(_) => {
            eprintln!("gatehouse jail: the proxy's listener needs Linux");
            Err(crate::exit::SETUP_FAILED)
        }
    }
}

#[cfg(target_os = "linux")]
use crate::fence::jail::checked_exec;

/// Elsewhere no launcher builds a checked command; one arriving is refused.
#[cfg(not(target_os = "linux"))]
fn checked_exec(
    _plan: &crate::fence::Plan,
    _argv: &[String],
    _preflight: &crate::fence::probe::Preflight,
    _listener: Option<&crate::fence::plan::ListenerHandoff>,
    _terminal: Option<i32>,
    _enforcement: &crate::fence::Enforcement,
) -> i32 {
    eprintln!("gatehouse jail: a checked command needs Linux");
    crate::exit::SETUP_FAILED
}
