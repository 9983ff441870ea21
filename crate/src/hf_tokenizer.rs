//! The tokenizer of a Hugging Face export, read from its `tokenizer.json` and decoding token ids
//! to text through Hugging Face's own `tokenizers` crate (the version Cargo.toml pins), so that
//! every model kind (WordPiece, byte-level BPE, BPE with Metaspace or byte fallback, Unigram)
//! and every decoder chain the file names decode as `transformers` decodes them. This module
//! adds only what the harness needs around it: ids the vocabulary does not hold are refused
//! (the crate would drop them silently, hiding a decoder whose logits and vocabulary disagree),
//! and the file's errors come back as the core's.
//!
//! The tokenizer itself is behind the `hf-tokenizer` feature (the crate and its regex engines
//! are most of a wasm module): the imported model's module (`wasm-hf/`) and the runner build it,
//! the page's own module does not. [`TokenizerModel`] is always here, for the declarations.

#[cfg(feature = "hf-tokenizer")]
use std::str::FromStr;

use serde::Serialize;
#[cfg(feature = "hf-tokenizer")]
use tokenizers::{ModelWrapper, Tokenizer};

#[cfg(feature = "hf-tokenizer")]
use crate::error::{CoreError, Result};

/// The model kinds of `tokenizer.json`'s `model.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "TokenizerModel"))]
pub enum TokenizerModel {
    #[serde(rename = "BPE")]
    Bpe,
    WordPiece,
    WordLevel,
    Unigram,
}

/// The names `model.type` takes for the kinds of [`TokenizerModel`].
#[cfg(feature = "hf-tokenizer")]
const MODEL_TYPES: [&str; 4] = ["BPE", "WordPiece", "WordLevel", "Unigram"];

/// Why the crate refused `text`: an unknown `model.type` named, with the types allowed, since
/// the crate's own message only says that no variant of its model enum matched.
#[cfg(feature = "hf-tokenizer")]
fn refusal(text: &str, crate_error: impl std::fmt::Display) -> CoreError {
    let file = serde_json::from_str::<serde_json::Value>(text).ok();
    let message = match file
        .as_ref()
        .and_then(|file| file.pointer("/model/type")?.as_str())
    {
        Some(kind) if !MODEL_TYPES.contains(&kind) => {
            format!(
                "`model.type` is {kind:?}; allowed: {}",
                MODEL_TYPES.join(", ")
            )
        }
        _ => format!("not a tokenizer file that tokenizers 0.23 reads: {crate_error}"),
    };
    CoreError::TokenizerJson { message }
}

/// A `tokenizer.json`, ready to decode.
#[cfg(feature = "hf-tokenizer")]
#[derive(Debug)]
pub struct HfTokenizer {
    inner: Tokenizer,
}

#[cfg(feature = "hf-tokenizer")]
impl HfTokenizer {
    /// Reads the text of a `tokenizer.json`; a file the crate cannot read is refused with its
    /// reason.
    pub fn from_json(text: &str) -> Result<HfTokenizer> {
        let inner = Tokenizer::from_str(text).map_err(|e| refusal(text, e))?;
        Ok(HfTokenizer { inner })
    }

    pub fn model(&self) -> TokenizerModel {
        match self.inner.get_model() {
            ModelWrapper::BPE(_) => TokenizerModel::Bpe,
            ModelWrapper::WordPiece(_) => TokenizerModel::WordPiece,
            ModelWrapper::WordLevel(_) => TokenizerModel::WordLevel,
            ModelWrapper::Unigram(_) => TokenizerModel::Unigram,
        }
    }

    /// The number of tokens, added tokens included: what a decoder's logits must cover.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The token an id stands for, if the vocabulary (or the added tokens) holds it.
    pub fn token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The text of `ids`, as `tokenizer.decode(ids, skip_special_tokens=...)` gives it:
    /// `skip_special` leaves out the added tokens marked special (`[CLS]`, `</s>`, `<pad>`, …).
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        if let Some(&id) = ids.iter().find(|&&id| self.token(id).is_none()) {
            return Err(CoreError::UnknownTokenId {
                id,
                size: self.vocab_size(),
            });
        }
        self.inner
            .decode(ids, skip_special)
            .map_err(|e| CoreError::TokenizerJson {
                message: format!("its decoder failed on the ids {ids:?}: {e}"),
            })
    }
}

#[cfg(all(test, feature = "hf-tokenizer"))]
mod tests {
    use super::*;

    /// A BERT-style WordPiece file, as `BertTokenizerFast` saves one, cut to a few tokens.
    const WORDPIECE: &str = r###"{
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [
            {"id": 0, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": true},
            {"id": 1, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": true},
            {"id": 2, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": true},
            {"id": 8, "content": "<mark>", "single_word": false, "lstrip": false, "rstrip": false,
             "normalized": false, "special": false}
        ],
        "normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3, "漫": 4, "##画": 5,
                            "ok": 6, "##!": 7, "<mark>": 8}}
    }"###;

    fn wordpiece() -> HfTokenizer {
        HfTokenizer::from_json(WORDPIECE).unwrap()
    }

    #[test]
    fn wordpiece_joins_continuations_and_skips_special_tokens() {
        let tokenizer = wordpiece();
        assert_eq!(tokenizer.model(), TokenizerModel::WordPiece);
        assert_eq!(tokenizer.vocab_size(), 9);
        assert_eq!(
            tokenizer.decode(&[1, 4, 5, 6, 7, 2, 0], true).unwrap(),
            "漫画 ok!"
        );
        assert_eq!(
            tokenizer.decode(&[1, 4, 5, 2], false).unwrap(),
            "[CLS] 漫画 [SEP]"
        );
        // An added token that is not special stays.
        assert_eq!(tokenizer.decode(&[8, 6], true).unwrap(), "<mark> ok");
        assert_eq!(tokenizer.decode(&[], true).unwrap(), "");
    }

    #[test]
    fn an_id_outside_the_vocabulary_is_refused_not_dropped() {
        let err = wordpiece().decode(&[4, 9, 5], true).unwrap_err();
        assert_eq!(err, CoreError::UnknownTokenId { id: 9, size: 9 });
        assert!(err
            .to_string()
            .contains("token id 9 is not in tokenizer.json's vocabulary"));
    }

    #[test]
    fn a_file_the_crate_cannot_read_is_refused_with_its_reason() {
        let not_json = HfTokenizer::from_json("{").unwrap_err().to_string();
        assert!(
            not_json.starts_with("tokenizer.json: not a tokenizer file"),
            "{not_json}"
        );
        let unknown_model = WORDPIECE.replace(
            r#""type": "WordPiece", "unk"#,
            r#""type": "Tiktoken", "unk"#,
        );
        let err = HfTokenizer::from_json(&unknown_model)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "tokenizer.json: `model.type` is \"Tiktoken\"; allowed: BPE, WordPiece, WordLevel, \
             Unigram"
        );
    }

    /// The Python `tokenizers`' text for every sequence of the parity fixture (its README says
    /// how it was made), natively and, through scripts/test-core-wasm, as WASM; the wasm
    /// build's boundary is held to the same fixture by test_hf_tokenizer.py.
    #[test]
    fn every_model_kind_decodes_as_the_python_package_does() {
        macro_rules! fixture {
            ($name:literal) => {
                (
                    $name,
                    include_str!(concat!(
                        "../../scripts/tokenizer_parity/fixture/",
                        $name,
                        ".json"
                    )),
                )
            };
        }
        let files = [
            fixture!("wordpiece"),
            fixture!("bpe_byte_level"),
            fixture!("bpe_metaspace"),
            fixture!("unigram"),
        ];
        let tokenizers: Vec<(&str, HfTokenizer)> = files
            .iter()
            .map(|(name, text)| (*name, HfTokenizer::from_json(text).unwrap()))
            .collect();
        let kinds: Vec<TokenizerModel> = tokenizers.iter().map(|(_, t)| t.model()).collect();
        assert_eq!(
            kinds,
            [
                TokenizerModel::WordPiece,
                TokenizerModel::Bpe,
                TokenizerModel::Bpe,
                TokenizerModel::Unigram
            ]
        );
        let fixture: serde_json::Value = serde_json::from_str(fixture!("cases").1).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 100, "{} cases", cases.len());
        for case in cases {
            let (_, tokenizer) = tokenizers
                .iter()
                .find(|(name, _)| case["tokenizer"] == *name)
                .unwrap();
            let ids: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
            let skip = case["skipSpecial"].as_bool().unwrap();
            assert_eq!(
                tokenizer.decode(&ids, skip).unwrap(),
                case["text"].as_str().unwrap(),
                "{} {} skip {skip}: {ids:?}",
                case["tokenizer"],
                case["what"]
            );
        }
    }

    /// GPT-2's byte-level BPE: `Ġ` is the space byte, and a multi-byte character split over
    /// tokens comes back whole.
    #[test]
    fn byte_level_bpe_decodes_bytes_back_to_characters() {
        // "画" is E7 94 BB: ç, Ķ and » in GPT-2's byte-to-character table.
        let text = r#"{
            "version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": false,
                "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
            "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                              "use_regex": true},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true,
                        "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null,
                      "continuing_subword_prefix": null, "end_of_word_suffix": null,
                      "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                      "vocab": {"<|endoftext|>": 0, "ok": 1, "Ġ": 2, "ç": 3, "Ķ": 4, "»": 5},
                      "merges": []}
        }"#;
        let tokenizer = HfTokenizer::from_json(text).unwrap();
        assert_eq!(tokenizer.model(), TokenizerModel::Bpe);
        assert_eq!(
            tokenizer.decode(&[1, 2, 3, 4, 5, 0], true).unwrap(),
            "ok 画"
        );
        // A character cut short is the replacement character, as transformers gives it.
        assert_eq!(tokenizer.decode(&[3, 4], true).unwrap(), "\u{fffd}");
    }
}
