//! The bodies of the commands, one module each; `main.rs` parses the command line and calls
//! one of them. Each answers the process's exit status.

pub mod combos;
pub mod compare;
pub mod export;
pub mod import;
pub mod predict;
pub mod report;
pub mod run;
pub mod serve;
pub mod sweep;

/// The exit status of bad input to `compare` (the same as `run`'s and `sweep`'s).
pub const EXIT_USAGE: u8 = ocr_bench::exit::Cause::Usage.code();
