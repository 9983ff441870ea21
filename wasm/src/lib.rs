//! `ocr-bench-wasm`: the JavaScript boundary of `ocr-bench-core` (`crate/`), built by
//! `scripts/build-wasm` into `pkg/ocr_bench_core.js`. This file converts arguments, calls a
//! core module, converts the result; the browser layers beside it, `gpu_choose.rs`
//! (`GpuTokenChooser`, which drives the page's GPU device through web-sys) and `image_input.rs`
//! (`imageTensor`, which turns an image file into the vision input), are the only Rust that
//! touches the browser. The runner links the core alone.

// The browser layers: web-sys and its futures exist for the browser target only.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod gpu_choose;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod image_input;

#[cfg(all(
    target_arch = "wasm32",
    target_os = "unknown",
    not(web_sys_unstable_apis)
))]
compile_error!(
    "the GPU chooser needs web-sys's WebGPU bindings: build wasm32-unknown-unknown with \
     RUSTFLAGS containing --cfg=web_sys_unstable_apis (.cargo/config.toml sets it)"
);

// The core's modules, by the names this boundary has always used for them.
use ocr_bench_core::{
    build_summary, choose, config, latency, manifest, preprocess, score, summary, vocab,
};

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Display;

use js_sys::{Float32Array, Int32Array, Object, Uint8Array, Uint8ClampedArray};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use ocr_bench_core::{expand_sweep, parameters, parse_query, Config};

#[wasm_bindgen(start)]
pub fn start() {
    // A Rust panic in wasm is an opaque `unreachable` trap; this puts its message on the console.
    console_error_panic_hook::set_once();
}

// The TypeScript of every value with a Rust type (the Config, the record, the manifest, the
// options and answers of the functions below), generated from those types (src/typescript.rs).
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_TYPES: &'static str = include_str!("../../crate/src/types.d.ts");

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A list of values per parameter name; numbers are accepted where the query has digits. */
export type SweepAxes = Partial<Record<keyof Config, (string | number)[]>>;
"#;

/// Any error as a JS `Error` carrying its message.
fn into_error(err: impl Display) -> JsError {
    JsError::new(&err.to_string())
}

/// Rust values out: `None` becomes `null` (not `undefined`) so JSON keeps every field.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true))
        .map_err(into_error)
}

/// JS options objects in; `undefined` and `null` mean "all defaults". serde-wasm-bindgen reads
/// only the fields a struct names, so a misspelt key would pass silently: it is checked here.
fn from_js<T: for<'de> Deserialize<'de> + Default>(
    what: &str,
    value: JsValue,
    allowed: &[&str],
) -> Result<T, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    let Some(object) = value.dyn_ref::<Object>() else {
        return Err(into_error(format!("{what} must be an object")));
    };
    for key in Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !allowed.contains(&key.as_str()) {
            return Err(into_error(format!(
                "{what}: unknown field `{key}`; the fields are: {}",
                allowed.join(", ")
            )));
        }
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| into_error(format!("{what}: {e}")))
}

/// A JS number that must be a whole, non-negative id.
fn id_from_number(what: &str, value: f64) -> Result<u32, JsError> {
    if value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value) {
        Ok(value as u32)
    } else {
        Err(into_error(format!(
            "{what} {value} is not a token id; allowed: a whole number >= 0"
        )))
    }
}

#[wasm_bindgen(js_name = parseConfig, unchecked_return_type = "Config")]
pub fn parse_config(query: &str) -> Result<JsValue, JsError> {
    to_js(&parse_query(query)?)
}

#[wasm_bindgen(js_name = configToQuery)]
pub fn config_to_query(
    #[wasm_bindgen(unchecked_param_type = "Partial<Config>")] config: JsValue,
) -> Result<String, JsError> {
    Ok(from_js::<Config>("config", config, &config::PARAMETER_NAMES)?.to_query())
}

/// The folder, under the site root, that every realm of a run of `config` imports
/// onnxruntime-web from (its `ort`, the pinned version where the config leaves it out).
#[wasm_bindgen(js_name = ortDistFolder)]
pub fn ort_dist_folder(
    #[wasm_bindgen(unchecked_param_type = "Config")] config: JsValue,
) -> Result<String, JsError> {
    Ok(
        from_js::<Config>("config", config, &config::PARAMETER_NAMES)?
            .ort
            .dist_folder(),
    )
}

#[wasm_bindgen(js_name = parameters, unchecked_return_type = "ParameterDescription[]")]
pub fn parameters_js() -> Result<JsValue, JsError> {
    to_js(&parameters())
}

/// The manifest in `text`, read as the core's type and checked against `config` (its tier,
/// decoder, maxTokens, capture and verify); the page reads the model through what it returns.
#[wasm_bindgen(js_name = checkManifest, unchecked_return_type = "Manifest")]
pub fn check_manifest(
    text: &str,
    #[wasm_bindgen(unchecked_param_type = "Config")] config: JsValue,
) -> Result<JsValue, JsError> {
    let config = from_js::<Config>("config", config, &config::PARAMETER_NAMES)?;
    let manifest = manifest::Manifest::parse(text)?;
    manifest.check_config(&config)?;
    // Plain objects for the variant maps, as the page indexes them by name.
    manifest
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(into_error)
}

/// A sweep value: the query's text, or a JS number standing for its digits.
#[derive(Deserialize)]
#[serde(untagged)]
enum SweepValue {
    Text(String),
    Number(f64),
}

impl SweepValue {
    fn into_text(self) -> String {
        match self {
            SweepValue::Text(text) => text,
            SweepValue::Number(number) => number.to_string(),
        }
    }
}

#[wasm_bindgen(js_name = expandSweep, unchecked_return_type = "Config[]")]
pub fn expand_sweep_js(
    #[wasm_bindgen(unchecked_param_type = "SweepAxes")] axes: JsValue,
) -> Result<JsValue, JsError> {
    let Some(object) = axes.dyn_ref::<Object>() else {
        return Err(into_error(
            "sweep axes must be an object: { name: [values] }",
        ));
    };
    for key in Object::keys(object).iter() {
        let list = js_sys::Reflect::get(object, &key).unwrap_or(JsValue::UNDEFINED);
        if !js_sys::Array::is_array(&list) {
            let name = key.as_string().unwrap_or_default();
            return Err(into_error(format!(
                "sweep axes: `{name}` must be a list of values, e.g. {{ {name}: [...] }}"
            )));
        }
    }
    let axes: BTreeMap<String, Vec<SweepValue>> =
        serde_wasm_bindgen::from_value(axes).map_err(|e| into_error(format!("sweep axes: {e}")))?;
    let axes: Vec<(String, Vec<String>)> = axes
        .into_iter()
        .map(|(name, values)| {
            (
                name,
                values.into_iter().map(SweepValue::into_text).collect(),
            )
        })
        .collect();
    to_js(&expand_sweep(&axes)?)
}

thread_local! {
    // One preprocessor per thread (the page's or a worker's): it keeps the resizer's buffers.
    static PREPROCESSOR: RefCell<preprocess::Preprocessor> = RefCell::new(preprocess::Preprocessor::new());
}

/// The caller's RGBA array, read band by band (never copied into wasm memory whole).
struct JsRgba(Uint8Array);

impl preprocess::RgbaSource for JsRgba {
    fn byte_len(&self) -> usize {
        self.0.length() as usize
    }

    fn copy_band(&self, offset: usize, band: &mut [u8]) {
        let end = offset + band.len();
        self.0.subarray(offset as u32, end as u32).copy_to(band);
    }
}

/// RGBA bytes of any size → the vision input `[1, 3, 224, 224]` as 150528 floats.
#[wasm_bindgen(js_name = preprocess)]
pub fn preprocess_js(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array | Uint8ClampedArray")] rgba: &JsValue,
    width: u32,
    height: u32,
) -> Result<Float32Array, JsError> {
    // A Uint8ClampedArray (ImageData's) is read through a Uint8Array over the same bytes.
    let bytes = if let Some(array) = rgba.dyn_ref::<Uint8Array>() {
        array.clone()
    } else if let Some(array) = rgba.dyn_ref::<Uint8ClampedArray>() {
        Uint8Array::new_with_byte_offset_and_length(
            &array.buffer(),
            array.byte_offset(),
            array.length(),
        )
    } else {
        return Err(into_error(format!(
            "preprocess: rgba must be a Uint8Array or Uint8ClampedArray of width × height × 4 \
             bytes; got {}",
            describe_js_type(rgba)
        )));
    };
    PREPROCESSOR.with_borrow_mut(|p| {
        Ok(Float32Array::from(p.run_from(
            &JsRgba(bytes),
            width,
            height,
        )?))
    })
}

/// Hugging Face's ViT-family image processor (`ViTImageProcessor`, `DeiTImageProcessor`), read
/// from an export folder's `preprocessor_config.json`: an imported encoder-decoder model's
/// `pixel_values` (`vitImageTensor` in `image_input.rs` feeds it the decoded image).
#[wasm_bindgen(js_name = VitImageProcessor)]
pub struct VitImageProcessorJs {
    inner: ocr_bench_core::vit_processor::VitSettings,
}

#[wasm_bindgen(js_class = VitImageProcessor)]
impl VitImageProcessorJs {
    /// `text` is the file's text; an unknown processor or setting throws, naming it.
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str) -> Result<VitImageProcessorJs, JsError> {
        Ok(Self {
            inner: ocr_bench_core::vit_processor::VitSettings::parse(text)?,
        })
    }

    /// The settings read, with the processor's defaults filled in.
    #[wasm_bindgen(getter, unchecked_return_type = "VitSettings")]
    pub fn settings(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner)
    }

    /// RGBA bytes → `pixel_values` `[1, 3, height, width]` (the crop's size for DeiT), CHW.
    #[wasm_bindgen(js_name = pixelValues)]
    pub fn pixel_values(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
    ) -> Result<Float32Array, JsError> {
        Ok(Float32Array::from(
            &self.inner.pixel_values(rgba, width, height)?[..],
        ))
    }
}

/// A short name for what a JS value is, for error messages: its constructor's name for an
/// object (`Array`, `Float32Array`), else `null` or its `typeof`. Read through `Reflect`, which
/// cannot throw into the caller, so an object without a constructor still gets the message.
fn describe_js_type(value: &JsValue) -> String {
    if value.is_null() {
        return "null".to_owned();
    }
    let constructor_name = || {
        let constructor = js_sys::Reflect::get(value, &"constructor".into()).ok()?;
        js_sys::Reflect::get(&constructor, &"name".into())
            .ok()?
            .as_string()
    };
    match (value.is_object(), constructor_name()) {
        (true, Some(name)) if !name.is_empty() => name,
        _ => value.js_typeof().as_string().unwrap_or_default(),
    }
}

#[wasm_bindgen(js_name = Vocabulary)]
pub struct VocabularyJs {
    inner: vocab::Vocabulary,
}

#[wasm_bindgen(js_class = Vocabulary)]
impl VocabularyJs {
    /// `chars` is `vocab.json`'s array: entry `i` is id `i + 4`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string[]")] chars: JsValue,
    ) -> Result<VocabularyJs, JsError> {
        let entries: Vec<String> = serde_wasm_bindgen::from_value(chars).map_err(|e| {
            into_error(format!(
                "Vocabulary: chars must be an array of strings: {e}"
            ))
        })?;
        Ok(Self {
            inner: vocab::Vocabulary::new(entries)?,
        })
    }

    /// The number of ids: entries + 4 (the length the logits must have).
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.inner.size()
    }

    /// The text of the ids; special ids (0..3) are "", an id outside the vocabulary throws.
    pub fn decode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Int32Array | number[]")] ids: JsValue,
    ) -> Result<String, JsError> {
        let ids: Vec<i64> = if let Some(array) = ids.dyn_ref::<Int32Array>() {
            array.to_vec().into_iter().map(i64::from).collect()
        } else {
            serde_wasm_bindgen::from_value(ids)
                .map_err(|e| into_error(format!("decode: ids must be whole numbers: {e}")))?
        };
        Ok(self.inner.decode(ids)?)
    }

    #[wasm_bindgen(js_name = isContent)]
    pub fn is_content(&self, id: f64) -> bool {
        id.fract() == 0.0 && self.inner.is_content(id as i64)
    }
}

#[wasm_bindgen(js_name = TokenChooser)]
pub struct TokenChooserJs {
    inner: choose::TokenChooser,
}

#[wasm_bindgen(js_class = TokenChooser)]
impl TokenChooserJs {
    #[wasm_bindgen(constructor)]
    pub fn new(
        vocabulary: &VocabularyJs,
        #[wasm_bindgen(unchecked_param_type = "TokenChooserOptions")] options: Option<Object>,
    ) -> Result<TokenChooserJs, JsError> {
        let options: choose::ChooserOptions = from_js(
            "TokenChooser options",
            options.into(),
            &["penalty", "maxRun", "bos"],
        )?;
        Ok(Self {
            inner: choose::TokenChooser::new(&vocabulary.inner, options)?,
        })
    }

    /// Starts a new sequence (BOS only).
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// Appends a decoded token to the sequence.
    pub fn push(&mut self, id: f64) -> Result<(), JsError> {
        Ok(self.inner.push(id_from_number("push: id", id)?)?)
    }

    /// The next token: greedy with the seed's penalty and repetition block.
    pub fn choose(&self, logits: &[f32]) -> Result<u32, JsError> {
        Ok(self.inner.choose(logits)?)
    }
}

/// An imported encoder-decoder model's token choice: greedy under its
/// `encoderDecoder.generation` (repetition penalty, n-gram ban), as transformers' `generate()`
/// (`crate/src/generation_choose.rs`). The built-in model's rule is `TokenChooser`'s.
#[wasm_bindgen(js_name = GenerationChooser)]
pub struct GenerationChooserJs {
    inner: ocr_bench_core::generation_choose::GenerationChooser,
}

#[wasm_bindgen(js_class = GenerationChooser)]
impl GenerationChooserJs {
    /// `vocabulary`: the logits per step (capability.vocabulary); `generation`: the manifest's
    /// `encoderDecoder.generation`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        vocabulary: usize,
        #[wasm_bindgen(unchecked_param_type = "ManifestGeneration")] generation: JsValue,
    ) -> Result<GenerationChooserJs, JsError> {
        let generation: manifest::Generation = serde_wasm_bindgen::from_value(generation)
            .map_err(|e| into_error(format!("GenerationChooser generation: {e}")))?;
        Ok(Self {
            inner: ocr_bench_core::generation_choose::GenerationChooser::new(
                vocabulary,
                (&generation).into(),
            )?,
        })
    }

    /// Starts a new sequence (the decoder start only).
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// Appends a decoded token to the decoder's input ids.
    pub fn push(&mut self, id: f64) -> Result<(), JsError> {
        Ok(self.inner.push(id_from_number("push: id", id)?)?)
    }

    /// The next token under the rule.
    pub fn choose(&mut self, logits: &[f32]) -> Result<u32, JsError> {
        Ok(self.inner.choose(logits)?)
    }
}

/// NFKC, then JS `\s` whitespace removed (the seed's `normalize`).
#[wasm_bindgen(js_name = normalize)]
pub fn normalize_js(text: &str) -> String {
    score::normalize(text)
}

/// Levenshtein distance over Unicode scalar values.
#[wasm_bindgen(js_name = editDistance)]
pub fn edit_distance_js(a: &str, b: &str) -> usize {
    score::edit_distance(a, b)
}

#[wasm_bindgen(js_name = summarize, unchecked_return_type = "Summary")]
pub fn summarize_js(
    #[wasm_bindgen(unchecked_param_type = "CaseInput[]")] cases: JsValue,
    #[wasm_bindgen(unchecked_param_type = "SummaryOptions")] options: Option<Object>,
) -> Result<JsValue, JsError> {
    let cases: Vec<summary::CaseInput> = serde_wasm_bindgen::from_value(cases)
        .map_err(|e| into_error(format!("summarize cases: {e}")))?;
    let options: summary::SummaryOptions =
        from_js("summarize options", options.into(), &["accuracyApplicable"])?;
    to_js(&summary::summarize(&cases, options)?)
}

/// The record's values out: as [`to_js`], and maps (the open JSON parts, `sessionMs`) as
/// plain objects, so `JSON.stringify` writes them.
fn record_to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(
            &serde_wasm_bindgen::Serializer::new()
                .serialize_missing_as_null(true)
                .serialize_maps_as_objects(true),
        )
        .map_err(into_error)
}

/// One case's result from what the page measured: its score and decode-probe figures.
#[wasm_bindgen(js_name = caseResult, unchecked_return_type = "CaseResult")]
pub fn case_result_js(
    #[wasm_bindgen(unchecked_param_type = "CaseRun")] run: JsValue,
) -> Result<JsValue, JsError> {
    let run: build_summary::CaseRun =
        serde_wasm_bindgen::from_value(run).map_err(|e| into_error(format!("caseResult: {e}")))?;
    record_to_js(&build_summary::case_result(run))
}

/// The whole summary the page posts, every statistic computed here.
#[wasm_bindgen(js_name = buildSummary, unchecked_return_type = "PageSummary")]
pub fn build_summary_js(
    #[wasm_bindgen(unchecked_param_type = "SummaryInput")] input: JsValue,
) -> Result<JsValue, JsError> {
    let input: build_summary::SummaryInput = serde_wasm_bindgen::from_value(input)
        .map_err(|e| into_error(format!("buildSummary: {e}")))?;
    record_to_js(&build_summary::build_summary(input)?)
}

/// Nearest-rank percentiles of finite latencies; `null` when there are none.
#[wasm_bindgen(js_name = latencyStats, unchecked_return_type = "LatencyStats | null")]
pub fn latency_stats_js(values: &[f64]) -> Result<JsValue, JsError> {
    to_js(&latency::latency_stats(values))
}

/// Whether GPU waits sit at multiples of the completion floor (the browser's timer).
#[wasm_bindgen(js_name = completionCheck, unchecked_return_type = "CompletionCheck")]
pub fn completion_check_js(floor_ms: f64, waits: &[f64], kicked: bool) -> Result<JsValue, JsError> {
    to_js(&latency::completion_check(floor_ms, waits, kicked))
}

/// Mean and two-sided 95 % interval across repeats; `null` when there is no finite value.
#[wasm_bindgen(js_name = meanInterval, unchecked_return_type = "MeanInterval | null")]
pub fn mean_interval_js(values: &[f64]) -> Result<JsValue, JsError> {
    to_js(&latency::mean_interval(values))
}
