//! `ocr-bench-wasm-hf`: the second JavaScript boundary of `ocr-bench-core`, built by
//! `scripts/build-wasm` into `pkg-hf/ocr_bench_hf.js`. It holds what only an imported
//! encoder-decoder model needs, the Hugging Face tokenizer above all, whose crate would more
//! than double the page's own module (`pkg/`) that every run loads; the page imports this one
//! only for `family: "encoder-decoder"`.

use std::fmt::Display;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use ocr_bench_core::hf_tokenizer::HfTokenizer;
use ocr_bench_core::special_ids::SpecialIds;

#[wasm_bindgen(start)]
pub fn start() {
    // A Rust panic in wasm is an opaque `unreachable` trap; this puts its message on the console.
    console_error_panic_hook::set_once();
}

// The core's generated TypeScript (src/typescript.rs), for TokenizerModel and SpecialIds.
#[wasm_bindgen(typescript_custom_section)]
const GENERATED_TYPES: &'static str = include_str!("../../crate/src/types.d.ts");

/// Any error as a JS `Error` carrying its message.
fn into_error(err: impl Display) -> JsError {
    JsError::new(&err.to_string())
}

/// A Rust value as a plain JS value, `None` as `null`.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true))
        .map_err(into_error)
}

/// The tokenizer of a Hugging Face export, read from its `tokenizer.json` by Hugging Face's own
/// `tokenizers` crate (`crate/src/hf_tokenizer.rs`): the encoder-decoder loop
/// (`browser/decoding/decode-encoder-decoder.js`) decodes each reading's generated ids with it,
/// special tokens skipped, as transformers' `batch_decode` does.
#[wasm_bindgen(js_name = HfTokenizer)]
pub struct HfTokenizerJs {
    inner: HfTokenizer,
}

#[wasm_bindgen(js_class = HfTokenizer)]
impl HfTokenizerJs {
    /// `text` is the file's text; a file the crate cannot read throws, with its reason.
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(text: &str) -> Result<HfTokenizerJs, JsError> {
        Ok(Self {
            inner: HfTokenizer::from_json(text)?,
        })
    }

    /// `model.type`: the tokenizer's kind.
    #[wasm_bindgen(getter, unchecked_return_type = "TokenizerModel")]
    pub fn model(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner.model())
    }

    /// The number of tokens, added tokens included.
    #[wasm_bindgen(getter, js_name = vocabSize)]
    pub fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// The text of `ids`; `skipSpecial` leaves out the special tokens (`</s>`, `[SEP]`, …).
    /// An id the vocabulary does not hold throws, naming it.
    pub fn decode(
        &self,
        ids: &[u32],
        #[wasm_bindgen(js_name = skipSpecial)] skip_special: bool,
    ) -> Result<String, JsError> {
        Ok(self.inner.decode(ids, skip_special)?)
    }
}

/// The special ids a Hugging Face decoder generates with (decoder start, EOS, pad, BOS), from
/// the texts of the export's `generation_config.json` (may be missing) and `config.json`
/// (`crate/src/special_ids.rs` says which file wins); a missing or malformed id throws, naming
/// where it looked.
#[wasm_bindgen(js_name = specialIds, unchecked_return_type = "SpecialIds")]
pub fn special_ids(
    #[wasm_bindgen(js_name = generationConfig)] generation_config: Option<String>,
    config: &str,
) -> Result<JsValue, JsError> {
    to_js(&SpecialIds::read(generation_config.as_deref(), config)?)
}
