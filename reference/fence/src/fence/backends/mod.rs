//! The backends that apply a plan: [`jail`] (native: the helper applying the plan in new
//! namespaces), [`bwrap`] (the system's bubblewrap, with Landlock and seccomp inside) and
//! [`seatbelt`] (macOS). Uses the [`super::model`], the [`super::runtime`] and the
//! [`super::terminal`].

pub mod bwrap;
pub mod jail;
pub mod seatbelt;
