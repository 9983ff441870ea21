//! The bodies of the commands, one module each; `main.rs` parses the command line and calls
//! one of them. Each answers the process's exit status.

pub mod compare;
pub mod run;
pub mod serve;
pub mod sweep;

/// Exit codes beyond 0; clap's own usage errors exit 2 too.
pub const EXIT_PAGE_ERROR: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_TIMEOUT: u8 = 3;
pub const EXIT_BROWSER_EXITED: u8 = 4;
pub const EXIT_PROCESSES_LEFT: u8 = 5;
pub const EXIT_INTERRUPTED: u8 = 130;
