//! The seed's token choice on the GPU (`wasm/src/choose.wgsl`), for `choose=gpu`: the same
//! answer as [`crate::choose::TokenChooser`], bit for bit, without reading the logits back.
//!
//! `layout` says what the shader's buffers hold; the boundary crate's `GpuTokenChooser`
//! (`wasm/src/gpu_choose.rs`) is the class that JavaScript drives.

pub mod layout;
