//! A terminal for a command in the fence: the pseudo-terminal relayed from outside
//! ([`tty`]) and what of the command's output a terminal may act on
//! ([`control_strings`]).

pub mod control_strings;
pub mod tty;
