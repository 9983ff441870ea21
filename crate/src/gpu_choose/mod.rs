//! The seed's token choice on the GPU (`choose.wgsl`), for `choose=gpu`: the same answer as
//! [`crate::choose::TokenChooser`], bit for bit, without reading the logits back.
//!
//! `layout` (pure, every target) says what the shader's buffers hold; `webgpu` (the browser
//! build only: web-sys's WebGPU bindings need `--cfg=web_sys_unstable_apis`, which
//! `.cargo/config.toml` sets for wasm32-unknown-unknown) is the `GpuTokenChooser` class that
//! JavaScript drives.

pub mod layout;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod webgpu;

#[cfg(all(
    target_arch = "wasm32",
    target_os = "unknown",
    not(web_sys_unstable_apis)
))]
compile_error!(
    "the GPU chooser needs web-sys's WebGPU bindings: build wasm32-unknown-unknown with \
     RUSTFLAGS containing --cfg=web_sys_unstable_apis (.cargo/config.toml sets it)"
);

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use webgpu::GpuTokenChooser;
