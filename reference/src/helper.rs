//! The jail helper (`gatehouse __jail`): the one place its entry points are dispatched.
//! [`crate::fence::jail::enter`] reads the plan and applies every step; then the plan's
//! action runs here: a command ([`crate::fence::jail::exec`]), the plane's executor loop
//! ([`crate::plane::executor::serve`]) or the probe's legs
//! ([`crate::fence::probe::report_legs`]).
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
    let code = match &plan.action {
        Action::Exec { argv } => crate::fence::jail::exec(&plan, argv, &enforcement),
        Action::CheckedExec {
            argv,
            preflight,
            listener,
        } => {
            #[cfg(target_os = "linux")]
            if let Some(l) = listener {
                if let Err(e) = crate::fence::jail::hand_out_listener(l) {
                    eprintln!("gatehouse jail: the proxy's listener: {e}");
                    std::process::exit(crate::exit::SETUP_FAILED);
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = listener;
            #[cfg(target_os = "linux")]
            if let Err(e) = crate::fence::probe::preflight_in_jail(preflight, &enforcement) {
                eprintln!("gatehouse jail: {e}");
                std::process::exit(crate::exit::SETUP_FAILED);
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = preflight;
                eprintln!("gatehouse jail: a checked command needs Linux");
                std::process::exit(crate::exit::SETUP_FAILED);
            }
            crate::fence::jail::exec(&plan, argv, &enforcement)
        }
        Action::Serve => crate::plane::executor::serve(&plan, &enforcement),
        Action::Probe { outside, inside } => {
            crate::fence::probe::report_legs(outside, inside, enforcement)
        }
    };
    std::process::exit(code)
}
