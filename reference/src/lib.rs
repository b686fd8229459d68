//! Gatehouse, the reference implementation: the approval gate ([`gate`]) and the protocol
//! adapter the conformance runner drives ([`adapter`]), beside the other guardrails.
#![deny(missing_docs)]
// `deny`, not `forbid`: the kernel-interface modules under `fence::sys` opt back in, each
// block with a `SAFETY:` comment.
#![deny(unsafe_code)]

pub mod adapter;
pub mod fence;
pub mod gate;
pub mod paths;
pub mod plane;
pub mod trust;
