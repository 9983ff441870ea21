//! `ocr-bench-core`: the benchmark's pure logic, shared by the page and the runner. Nothing here
//! knows JavaScript: the page reaches it through `ocr-bench-wasm` (`wasm/`), the boundary crate
//! that converts arguments, calls a module and converts the result, and that holds the browser
//! layers (the GPU token chooser's WebGPU half, the image input's browser decode). The runner
//! links this crate alone, so it carries no wasm-only dependency.

pub mod box_reduce;
pub mod build_summary;
pub mod choose;
pub mod config;
pub mod error;
pub mod generation_choose;
pub mod gpu_choose;
pub mod hf_tokenizer;
pub mod image_input;
pub mod lanczos;
pub mod latency;
pub mod manifest;
pub(crate) mod parameter;
pub mod per_style;
pub mod phase;
pub mod pil_resize;
pub mod preprocess;
pub mod record;
pub mod runtime;
pub mod score;
pub mod special_ids;
pub mod stats;
pub mod summary;
pub mod sweep_grid;
#[cfg(test)]
mod typescript;
pub mod verification;
pub mod vit_processor;
pub mod vocab;

pub use config::{parameters, parse_query, Config};
pub use error::CoreError;
pub use sweep_grid::{expand_sweep, expand_sweep_from};
