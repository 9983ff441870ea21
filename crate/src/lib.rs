//! `ocr-bench-core`: the benchmark's pure logic, shared by the page (through wasm) and the runner.

pub mod config;
pub mod error;

pub use config::{expand_sweep, expand_sweep_from, parameters, parse_query, Config};
pub use error::CoreError;
