//! The settings of an export folder's JSON files that decide whether the page can read the
//! model: the tokenizer's model type and size, the token rule of `generation_config.json`, the
//! special ids and the decoder's numbers in `config.json`. Each function answers what it read
//! or pushes the problems it found, so that `import` names them all at once.

use serde_json::Value;

use ocr_bench_core::manifest::Generation;

/// The tokenizer models the page decodes (`tokenizer.json`'s `model.type`).
pub const TOKENIZER_MODELS: [&str; 3] = ["WordPiece", "BPE", "Unigram"];

/// Generation settings the page does not implement, each with the value that leaves it off:
/// a file that sets one otherwise is refused by name.
const INERT_GENERATION: [(&str, &str); 19] = [
    ("num_beams", "1"),
    ("num_beam_groups", "1"),
    ("do_sample", "false"),
    ("min_length", "0"),
    ("min_new_tokens", "null"),
    ("forced_bos_token_id", "null"),
    ("forced_eos_token_id", "null"),
    ("forced_decoder_ids", "null"),
    ("bad_words_ids", "null"),
    ("force_words_ids", "null"),
    ("suppress_tokens", "null"),
    ("begin_suppress_tokens", "null"),
    ("sequence_bias", "null"),
    ("exponential_decay_length_penalty", "null"),
    ("encoder_no_repeat_ngram_size", "0"),
    ("diversity_penalty", "0.0"),
    ("penalty_alpha", "null"),
    ("guidance_scale", "null"),
    ("constraints", "null"),
];

/// What `tokenizer.json` holds that the import checks: its model type and how many ids it
/// decodes (the model's vocabulary and the added tokens).
pub struct TokenizerFacts {
    pub model_type: String,
    pub size: u64,
}

pub fn tokenizer_facts(tokenizer: &Value, problems: &mut Vec<String>) -> Option<TokenizerFacts> {
    let Some(model_type) = tokenizer["model"]["type"].as_str() else {
        problems.push(
            "tokenizer.json has no model.type; allowed: a Hugging Face tokenizers file with a \
             WordPiece, BPE or Unigram model"
                .to_owned(),
        );
        return None;
    };
    if !TOKENIZER_MODELS.contains(&model_type) {
        problems.push(format!(
            "tokenizer.json: unsupported tokenizer model {model_type:?}; allowed: {}",
            TOKENIZER_MODELS.join(", ")
        ));
        return None;
    }
    // WordPiece and BPE map tokens to ids; Unigram lists [token, score] pairs in id order.
    let vocab = &tokenizer["model"]["vocab"];
    let model_ids = match vocab {
        Value::Object(map) => map
            .values()
            .filter_map(Value::as_u64)
            .map(|id| id + 1)
            .max(),
        Value::Array(list) => Some(list.len() as u64),
        _ => None,
    }
    .unwrap_or(0);
    let added = tokenizer["added_tokens"].as_array().into_iter().flatten();
    let added_ids = added
        .filter_map(|t| t["id"].as_u64())
        .map(|id| id + 1)
        .max();
    Some(TokenizerFacts {
        model_type: model_type.to_owned(),
        size: model_ids.max(added_ids.unwrap_or(0)),
    })
}

/// The first of `keys` that `files` (in order of precedence) set to a non-null value.
fn first<'a>(files: &[&'a Value], keys: &[&str]) -> Option<&'a Value> {
    files
        .iter()
        .flat_map(|file| keys.iter().map(move |key| &file[*key]))
        .find(|value| !value.is_null())
}

/// The token rule: from `generation_config.json` where the export has one, else from
/// `config.json` (older exports kept it there); the special ids from either, then the
/// decoder's own configuration. `max_tokens_allowed` is the most the page decodes.
pub fn generation(
    generation_config: Option<&Value>,
    config: &Value,
    problems: &mut Vec<String>,
) -> Option<Generation> {
    let rule = generation_config.unwrap_or(config);
    let rule_file = if generation_config.is_some() {
        "generation_config.json"
    } else {
        "config.json"
    };
    for (key, inert) in INERT_GENERATION {
        let value = &rule[key];
        // The table's values are JSON; 1 and 1.0 are the same setting.
        let inert_value: Value = serde_json::from_str(inert).unwrap_or(Value::Null);
        let off = value.is_null()
            || *value == inert_value
            || value
                .as_f64()
                .is_some_and(|v| inert_value.as_f64() == Some(v))
            || value.as_array().is_some_and(Vec::is_empty);
        if !off {
            problems.push(format!(
                "{rule_file}: {key} is {value}, which the page's greedy decoding does not \
                 implement; allowed: {key} {inert} (supported: greedy, repetition_penalty, \
                 no_repeat_ngram_size, max_length or max_new_tokens)"
            ));
        }
    }
    let files: Vec<&Value> = [generation_config, Some(config), Some(&config["decoder"])]
        .into_iter()
        .flatten()
        .collect();
    let id = |value: &Value| u32::try_from(value.as_u64()?).ok();
    let start = first(&files, &["decoder_start_token_id"]).and_then(id);
    if start.is_none() {
        problems.push(
            "no decoder_start_token_id in generation_config.json, config.json or its decoder; \
             the first step needs it"
                .to_owned(),
        );
    }
    let eos: Vec<u32> = match first(&files, &["eos_token_id"]) {
        Some(Value::Array(ids)) => ids.iter().filter_map(id).collect(),
        Some(value) => id(value).into_iter().collect(),
        None => Vec::new(),
    };
    if eos.is_empty() {
        problems.push(
            "no eos_token_id in generation_config.json, config.json or its decoder; a case \
             ends at it"
                .to_owned(),
        );
    }
    let max_length = match (rule["max_new_tokens"].as_u64(), rule["max_length"].as_u64()) {
        (Some(new_tokens), _) => new_tokens + 1,
        (None, Some(length)) => length,
        // transformers' own default.
        (None, None) => 20,
    };
    let number = |key: &str, default: f64| rule[key].as_f64().unwrap_or(default);
    Some(Generation {
        decoder_start_token_id: start?,
        eos_token_ids: eos.clone(),
        pad_token_id: first(&files, &["pad_token_id"]).and_then(id),
        max_length: u32::try_from(max_length).unwrap_or(u32::MAX),
        repetition_penalty: number("repetition_penalty", 1.0),
        no_repeat_ngram_size: number("no_repeat_ngram_size", 0.0) as u32,
    })
    .filter(|_| !eos.is_empty())
}

/// A number of the decoder's `config.json` section under the first of `keys` that it sets
/// (BERT, TrOCR and GPT-2 spell them differently).
pub fn decoder_number(config: &Value, keys: &[&str]) -> Option<u32> {
    let decoder = &config["decoder"];
    keys.iter()
        .find_map(|key| decoder[*key].as_u64())
        .and_then(|n| u32::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_greedy_rule_reads_and_every_setting_the_page_lacks_is_named() {
        let config = json!({ "decoder": { "eos_token_id": 3 } });
        let mut problems = Vec::new();
        let rule = json!({ "decoder_start_token_id": 2, "max_new_tokens": 30,
            "repetition_penalty": 1.2, "num_beams": 1, "suppress_tokens": [] });
        let read = generation(Some(&rule), &config, &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            (read.eos_token_ids, read.max_length, read.repetition_penalty),
            (vec![3], 31, 1.2)
        );
        let rule = json!({ "decoder_start_token_id": 2, "num_beams": 4, "do_sample": true,
            "forced_eos_token_id": 3 });
        generation(Some(&rule), &config, &mut problems);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[0].contains("num_beams is 4") && problems[0].contains("allowed: num_beams 1")
        );
        assert!(problems[1].contains("do_sample is true"));
        assert!(problems[2].contains("forced_eos_token_id is 3"));
    }
}
