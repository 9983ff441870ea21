//! Token choice on the GPU, for `choose=gpu`, without reading the logits back. Two shaders:
//! the seed's rule (`wasm/src/choose.wgsl`), the same answer as [`crate::choose::TokenChooser`]
//! bit for bit, and an imported model's (`wasm/src/generation_choose.wgsl`), the same as
//! [`crate::generation_choose::GenerationChooser`].
//!
//! `layout` and `generation` say what the shaders' buffers hold; the boundary crate's
//! `GpuTokenChooser` and `GpuGenerationChooser` (`wasm/src/gpu_choose.rs`) are the classes
//! that JavaScript drives.

pub mod generation;
pub mod layout;
