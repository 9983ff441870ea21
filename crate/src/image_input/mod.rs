//! The page's image input: a file's bytes → the vision input `[1, 3, 224, 224]`.
//!
//! `png_decode` (pure, every target) decodes in WASM the PNGs whose RGBA the browser's decode
//! gives bit for bit (opaque 8-bit, no colour space chunk: every evaluation set's images);
//! `browser` (the browser build only) is `imageTensor` for JavaScript, which sends every other
//! file (JPEG, a transparent PNG, ...) through the browser's decode as the page always did, so
//! the tensor is the one the page computed before, for every file.

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod browser;
pub mod png_decode;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use browser::{image_decode_path, image_tensor};
