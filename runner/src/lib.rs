//! `ocr-bench` as a library: the command line (`main.rs`), the examples and the tests share
//! these modules.

pub mod browser;
pub mod browser_processes;
pub mod combos;
pub mod compare;
pub mod exit;
pub mod export;
pub mod gpu_route;
pub mod machine;
pub mod memory;
pub mod memory_model;
pub mod model_manifest;
pub mod other_page;
pub mod process_type;
pub mod procfs;
pub mod reach;
pub mod record;
pub mod report;
pub mod report_html;
pub mod run;
pub mod runs;
pub mod server;
pub mod sweep;
pub mod target;
pub mod units;
