//! The page's image input: a file's bytes → the vision input `[1, 3, 224, 224]`.
//!
//! `png_decode` decodes in WASM the PNGs whose RGBA the browser's decode gives bit for bit
//! (opaque 8-bit, no colour space chunk: every evaluation set's images); the boundary crate's
//! `imageTensor` (`wasm/src/image_input.rs`) sends every other file (JPEG, a transparent PNG, ...)
//! through the browser's decode as the page always did, so the tensor is the one the page
//! computed before, for every file.

pub mod png_decode;
