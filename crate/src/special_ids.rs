//! The special token ids a Hugging Face decoder generates with, read from an export's
//! `generation_config.json` and `config.json`: the token the decoder starts from, the tokens
//! that end a reading, and the pad and BOS tokens.
//!
//! Each key is taken from the first place that sets it (a `null` sets nothing):
//! `generation_config.json`, then `config.json`, then `config.json`'s `decoder` (where a
//! `VisionEncoderDecoder` keeps its decoder's ids). That is what transformers 4.57's `generate()`
//! reads for an export, whose `generation_config.json` was written from the same `config.json`,
//! and what `GenerationConfig.from_model_config` builds when the file is missing. As in
//! `generate()`, the start falls back to `bos_token_id` where `decoder_start_token_id` is unset.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{CoreError, Result};

/// The special ids of a Hugging Face decoder, as its decoding loop uses them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "SpecialIds"))]
#[serde(rename_all = "camelCase")]
pub struct SpecialIds {
    /// The first `input_ids` token: `decoder_start_token_id`, else `bos_token_id`.
    pub decoder_start: u32,
    /// `eos_token_id`: any of them ends a reading (a list in some configs).
    pub eos: Vec<u32>,
    pub pad: Option<u32>,
    pub bos: Option<u32>,
}

fn refuse(message: impl Into<String>) -> CoreError {
    CoreError::SpecialIds {
        message: message.into(),
    }
}

/// A file's text as a JSON object; `file` names it in a refusal.
fn object(file: &str, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(refuse(format!("{file} is not a JSON object"))),
        Err(e) => Err(refuse(format!("{file} is not JSON: {e}"))),
    }
}

/// The places a key is looked up in, in order, each with the name a refusal gives it.
struct Sources<'a>(Vec<(&'static str, &'a Map<String, Value>)>);

impl Sources<'_> {
    /// The first value set for `key`, with where it was found.
    fn find(&self, key: &str) -> Option<(&'static str, &Value)> {
        self.0
            .iter()
            .find_map(|(place, fields)| match fields.get(key) {
                None | Some(Value::Null) => None,
                Some(value) => Some((*place, value)),
            })
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|(place, _)| *place).collect();
        names.join(", ")
    }

    fn id(&self, key: &str) -> Result<Option<u32>> {
        self.find(key)
            .map(|(place, value)| id(place, key, value))
            .transpose()
    }
}

fn id(place: &str, key: &str, value: &Value) -> Result<u32> {
    value
        .as_u64()
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| {
            refuse(format!(
                "{place} has `{key}` {value}; allowed: a token id, a whole number 0..={}",
                u32::MAX
            ))
        })
}

impl SpecialIds {
    /// Reads the ids from the files' texts; `generation_config.json` may be missing.
    /// A refusal names the key that is missing or malformed and every place it was looked for.
    pub fn read(generation_config: Option<&str>, config: &str) -> Result<SpecialIds> {
        let generation = generation_config
            .map(|text| object("generation_config.json", text))
            .transpose()?;
        let config = object("config.json", config)?;
        let decoder = match config.get("decoder") {
            None | Some(Value::Null) => None,
            Some(Value::Object(fields)) => Some(fields),
            Some(other) => {
                return Err(refuse(format!(
                    "config.json has `decoder` {other}; allowed: the decoder's config, an object"
                )))
            }
        };
        let mut places = Vec::new();
        if let Some(generation) = &generation {
            places.push(("generation_config.json", generation));
        }
        places.push(("config.json", &config));
        if let Some(decoder) = decoder {
            places.push(("config.json's decoder", decoder));
        }
        let sources = Sources(places);

        let bos = sources.id("bos_token_id")?;
        let decoder_start = match sources.id("decoder_start_token_id")?.or(bos) {
            Some(id) => id,
            None => {
                return Err(refuse(format!(
                    "neither `decoder_start_token_id` nor `bos_token_id` is set in {}; the \
                     decoder needs the token it starts from",
                    sources.names()
                )))
            }
        };
        let eos = match sources.find("eos_token_id") {
            None => {
                return Err(refuse(format!(
                    "`eos_token_id` is not set in {}; a reading needs the token that ends it",
                    sources.names()
                )))
            }
            Some((place, Value::Array(values))) if !values.is_empty() => values
                .iter()
                .map(|value| id(place, "eos_token_id", value))
                .collect::<Result<Vec<u32>>>()?,
            Some((place, Value::Array(_))) => {
                return Err(refuse(format!(
                    "{place} has `eos_token_id` []; allowed: a token id or a non-empty list of them"
                )))
            }
            Some((place, value)) => vec![id(place, "eos_token_id", value)?],
        };
        Ok(SpecialIds {
            decoder_start,
            eos,
            pad: sources.id("pad_token_id")?,
            bos,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(generation: Option<&str>, config: &str) -> String {
        SpecialIds::read(generation, config)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn generation_config_comes_first_then_config_then_its_decoder() {
        // A TrOCR export: the ids in generation_config.json, config.json's decoder holding
        // others that generate() does not read.
        let ids = SpecialIds::read(
            Some(
                r#"{"decoder_start_token_id": 2, "eos_token_id": 2, "pad_token_id": 1,
                     "bos_token_id": 0, "max_length": 64}"#,
            ),
            r#"{"model_type": "vision-encoder-decoder", "decoder_start_token_id": 7,
                "decoder": {"eos_token_id": 9, "pad_token_id": 9}}"#,
        )
        .unwrap();
        assert_eq!(
            ids,
            SpecialIds {
                decoder_start: 2,
                eos: vec![2],
                pad: Some(1),
                bos: Some(0),
            }
        );
        // No generation_config.json: config.json, then its decoder for what it leaves unset
        // (a null sets nothing).
        let ids = SpecialIds::read(
            None,
            r#"{"decoder_start_token_id": 1, "pad_token_id": null,
                "decoder": {"eos_token_id": [3, 4], "pad_token_id": 0}}"#,
        )
        .unwrap();
        assert_eq!(ids.decoder_start, 1);
        assert_eq!(ids.eos, [3, 4]);
        assert_eq!((ids.pad, ids.bos), (Some(0), None));
    }

    #[test]
    fn the_start_falls_back_to_bos_as_generate_does() {
        let ids =
            SpecialIds::read(Some(r#"{"bos_token_id": 5, "eos_token_id": 6}"#), "{}").unwrap();
        assert_eq!((ids.decoder_start, ids.bos), (5, Some(5)));
    }

    #[test]
    fn a_missing_or_malformed_id_is_refused_naming_where_it_was_looked_for() {
        let no_start = error(Some(r#"{"eos_token_id": 2}"#), r#"{"decoder": {}}"#);
        assert_eq!(
            no_start,
            "the decoder's special ids: neither `decoder_start_token_id` nor `bos_token_id` is \
             set in generation_config.json, config.json, config.json's decoder; the decoder \
             needs the token it starts from"
        );
        let no_eos = error(None, r#"{"decoder_start_token_id": 2}"#);
        assert!(
            no_eos.contains("`eos_token_id` is not set in config.json;"),
            "{no_eos}"
        );
        let negative = error(None, r#"{"decoder_start_token_id": -1, "eos_token_id": 2}"#);
        assert!(
            negative.contains("config.json has `decoder_start_token_id` -1; allowed: a token id"),
            "{negative}"
        );
        let in_list = error(None, r#"{"bos_token_id": 0, "eos_token_id": [2, "x"]}"#);
        assert!(in_list.contains("`eos_token_id` \"x\""), "{in_list}");
        let empty = error(None, r#"{"bos_token_id": 0, "eos_token_id": []}"#);
        assert!(empty.contains("a non-empty list"), "{empty}");
        assert!(error(Some("[]"), "{}").contains("generation_config.json is not a JSON object"));
        assert!(error(None, "{").contains("config.json is not JSON"));
        let decoder = error(None, r#"{"decoder": 3}"#);
        assert!(decoder.contains("`decoder` 3"), "{decoder}");
    }
}
