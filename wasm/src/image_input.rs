//! `imageTensor(file: Blob)` for JavaScript: the file decoded in WASM when it is a PNG that
//! `png_decode` reproduces bit for bit, else by the browser exactly as the page did before
//! (`createImageBitmap` with no premultiplication and no colour conversion, a 1:1 `drawImage`
//! onto an `OffscreenCanvas`, `getImageData`), then the core's preprocess.
//!
//! `vitImageTensor(file, processor)` decodes the same way for an imported model's ViT image
//! processor.
//!
//! Why WASM for PNG: the browser's path decodes, uploads the bitmap to a canvas and reads it
//! back whole; in Firefox that was 2-7× the seed's whole path (which reads back only 224×224).

use js_sys::{ArrayBuffer, Float32Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, ColorSpaceConversion, ImageBitmap, ImageBitmapOptions, OffscreenCanvas,
    OffscreenCanvasRenderingContext2d, PremultiplyAlpha, Window, WorkerGlobalScope,
};

use crate::{into_error, JsRgba, VitImageProcessorJs, PREPROCESSOR};
use ocr_bench_core::image_input::png_decode::{decode_png, PngDecode};
use ocr_bench_core::preprocess::RgbaSource;

/// An image file (a fetched response's `blob()`) → the 150528 floats of `pixel_values`. A
/// failure's message is the reason alone, for the caller to say which case and file:
/// "could not be read (...)", "could not be decoded as an image (...); is it a valid PNG?" or
/// "could not be preprocessed (...)".
#[wasm_bindgen(js_name = imageTensor)]
pub async fn image_tensor(file: Blob) -> Result<Float32Array, JsError> {
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| into_error(format!("could not be read ({})", describe(&e))))?;
    let bytes = Uint8Array::new(&buffer.unchecked_into::<ArrayBuffer>()).to_vec();
    match decode_png(&bytes) {
        PngDecode::Decoded(png) => PREPROCESSOR.with_borrow_mut(|p| {
            p.run_from(&png, png.width, png.height)
                .map(Float32Array::from)
                .map_err(preprocess_error)
        }),
        PngDecode::Browser(_) => {
            let (rgba, width, height) = browser_rgba(&file).await?;
            PREPROCESSOR.with_borrow_mut(|p| {
                p.run_from(&JsRgba(rgba), width, height)
                    .map(Float32Array::from)
                    .map_err(preprocess_error)
            })
        }
    }
}

/// An image file → an imported model's `pixel_values` by its ViT image processor: decoded as
/// [`image_tensor`] decodes it (in WASM where that is the browser's decode bit for bit), then
/// `processor`'s resize, rescale and normalisation. Rejects with the reason alone, as
/// `imageTensor` does.
#[wasm_bindgen(js_name = vitImageTensor)]
pub async fn vit_image_tensor(
    file: Blob,
    processor: &VitImageProcessorJs,
) -> Result<Float32Array, JsError> {
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| into_error(format!("could not be read ({})", describe(&e))))?;
    let bytes = Uint8Array::new(&buffer.unchecked_into::<ArrayBuffer>()).to_vec();
    let (rgba, width, height) = match decode_png(&bytes) {
        PngDecode::Decoded(png) => {
            let mut rgba = vec![0; png.byte_len()];
            png.copy_band(0, &mut rgba);
            (rgba, png.width, png.height)
        }
        PngDecode::Browser(_) => {
            let (rgba, width, height) = browser_rgba(&file).await?;
            (rgba.to_vec(), width, height)
        }
    };
    processor
        .inner
        .pixel_values(&rgba, width, height)
        .map(|values| Float32Array::from(&values[..]))
        .map_err(preprocess_error)
}

fn preprocess_error(err: ocr_bench_core::CoreError) -> JsError {
    into_error(format!("could not be preprocessed ({err})"))
}

/// "Name: message" of a thrown DOMException or Error, else its string form.
fn describe(error: &JsValue) -> String {
    let field = |name: &str| {
        Reflect::get(error, &name.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    match (field("name"), field("message")) {
        (Some(name), Some(message)) => format!("{name}: {message}"),
        _ => format!("{error:?}"),
    }
}

/// The browser's decode of `file` at its natural size: RGBA, width, height.
async fn browser_rgba(file: &Blob) -> Result<(Uint8Array, u32, u32), JsError> {
    let options = ImageBitmapOptions::new();
    options.set_premultiply_alpha(PremultiplyAlpha::None);
    options.set_color_space_conversion(ColorSpaceConversion::None);
    let global = js_sys::global();
    let promise = if let Some(window) = global.dyn_ref::<Window>() {
        window.create_image_bitmap_with_blob_and_image_bitmap_options(file, &options)
    } else if let Some(worker) = global.dyn_ref::<WorkerGlobalScope>() {
        worker.create_image_bitmap_with_blob_and_image_bitmap_options(file, &options)
    } else {
        return Err(into_error(
            "could not be decoded as an image: no createImageBitmap in this realm (a window \
             or a worker is needed)",
        ));
    };
    let decoded = match promise {
        Ok(promise) => JsFuture::from(promise).await,
        Err(error) => Err(error),
    };
    let bitmap: ImageBitmap = decoded
        .map_err(|e| {
            into_error(format!(
                "could not be decoded as an image ({}); is it a valid PNG?",
                describe(&e)
            ))
        })?
        .unchecked_into();
    let read = read_back(&bitmap);
    bitmap.close();
    read.map_err(|e| into_error(format!("could not be read back ({})", describe(&e))))
}

/// The 1:1 `drawImage` + `getImageData` of the page's former path.
fn read_back(bitmap: &ImageBitmap) -> Result<(Uint8Array, u32, u32), JsValue> {
    let (width, height) = (bitmap.width(), bitmap.height());
    let canvas = OffscreenCanvas::new(width, height)?;
    let options = js_sys::Object::new();
    Reflect::set(&options, &"willReadFrequently".into(), &JsValue::TRUE)?;
    let context: OffscreenCanvasRenderingContext2d = canvas
        .get_context_with_context_options("2d", &options)?
        .ok_or_else(|| JsValue::from_str("no 2d context"))?
        .unchecked_into();
    context.draw_image_with_image_bitmap(bitmap, 0.0, 0.0)?;
    let image = context.get_image_data(0, 0, width as i32, height as i32)?;
    // ImageData.data as a JS array, read band by band by the preprocess (web-sys's `data()`
    // would copy it whole into wasm memory first).
    let data = Reflect::get(&image, &"data".into())?;
    let data: js_sys::Uint8ClampedArray = data.unchecked_into();
    let rgba = Uint8Array::new_with_byte_offset_and_length(
        &data.buffer(),
        data.byte_offset(),
        data.length(),
    );
    Ok((rgba, width, height))
}

/// Which decode `imageTensor` gives a file's bytes: `"wasm"`, or `"browser: "` and why (for
/// tests and benchmarks that must know which path they measured).
#[wasm_bindgen(js_name = imageDecodePath)]
pub fn image_decode_path(bytes: &[u8]) -> String {
    match decode_png(bytes) {
        PngDecode::Decoded(_) => "wasm".to_owned(),
        PngDecode::Browser(why) => format!("browser: {why}"),
    }
}
