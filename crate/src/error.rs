//! The one error type of the core. Every message names what was wrong and what is allowed,
//! because it reaches a person through the page, the runner's output or a JS `Error`.

use thiserror::Error;

/// How many characters of a refused input a message repeats: enough to recognise it, never a
/// 100 KB query echoed back whole.
pub const EXCERPT_CHARS: usize = 200;

/// `text` as a message repeats it: whole up to [`EXCERPT_CHARS`] characters, else its start
/// and how long it was.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
    }
}

/// `text` quoted as `{:?}` quotes it, cut as [`excerpt`] cuts it (the length outside the
/// quotes).
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}… ({} characters)", &text[..end], text.chars().count()),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CoreError {
    #[error("unknown parameter `{}`; the parameters are: {allowed}", excerpt(name))]
    UnknownParameter { name: String, allowed: String },

    #[error(
        "parameter `{parameter}` has the value {}; allowed: {allowed}",
        quoted(value)
    )]
    InvalidValue {
        parameter: &'static str,
        value: String,
        allowed: String,
    },

    #[error("parameter `{}` is given more than once; give it once", excerpt(name))]
    DuplicateParameter { name: String },

    #[error("sweep parameter `{parameter}` has no values; give at least one")]
    EmptySweepAxis { parameter: &'static str },

    #[error(
        "sweep parameter `{parameter}` lists the value {} twice",
        quoted(value)
    )]
    DuplicateSweepValue {
        parameter: &'static str,
        value: String,
    },

    #[error("config field `{field}` is invalid: {message}")]
    InvalidConfig { field: String, message: String },

    #[error("the model manifest is not one the core can read: {message}")]
    InvalidManifest { message: String },

    #[error("the vocabulary has no characters; `vocab.json` must be a non-empty array")]
    EmptyVocabulary,

    #[error("token id {id} is outside the vocabulary (ids 0..{size})")]
    TokenOutOfRange { id: i64, size: usize },

    #[error("logits have {actual} entries; the vocabulary has {expected} ids")]
    LogitsLength { expected: usize, actual: usize },

    #[error(
        "no token can be chosen: every score is NaN, -Infinity or blocked \
         ({logits} logits, blocked id: {})",
        .blocked.map_or_else(|| "none".to_owned(), |id| id.to_string())
    )]
    NoCandidate { logits: usize, blocked: Option<u32> },

    #[error("token choice option `{option}` is {value}; allowed: {allowed}")]
    InvalidChooserOption {
        option: &'static str,
        value: String,
        allowed: &'static str,
    },

    #[error("image size {width}x{height} is invalid; width and height must be 1..={max}")]
    ImageSize { width: u32, height: u32, max: u32 },

    #[error(
        "RGBA data has {actual} bytes; a {width}x{height} image needs {expected} (4 per pixel)"
    )]
    RgbaLength {
        width: u32,
        height: u32,
        expected: usize,
        actual: usize,
    },

    #[error("preprocessor_config.json: `{setting}` {message}")]
    PreprocessorConfig { setting: String, message: String },

    #[error("tokenizer.json: {message}")]
    TokenizerJson { message: String },

    #[error(
        "token id {id} is not in tokenizer.json's vocabulary ({size} tokens, added tokens \
         included): the decoder and the tokenizer disagree"
    )]
    UnknownTokenId { id: u32, size: usize },

    #[error("the decoder's special ids: {message}")]
    SpecialIds { message: String },

    #[error("case {index} (`{id}`): {message}")]
    InvalidCase {
        index: usize,
        id: String,
        message: String,
    },
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_input_is_repeated_cut_with_its_length() {
        assert_eq!(excerpt("speed"), "speed");
        assert_eq!(quoted("fast"), "\"fast\"");
        let long = "é".repeat(100_000);
        let cut = excerpt(&long);
        assert_eq!(
            cut,
            format!("{}… (100000 characters)", "é".repeat(EXCERPT_CHARS))
        );
        let quoted = quoted(&long);
        assert!(quoted.ends_with("\"… (100000 characters)"), "{quoted}");
        let error = CoreError::InvalidValue {
            parameter: "tier",
            value: long,
            allowed: "121, 242".to_owned(),
        };
        assert!(error.to_string().len() < 1024, "{error}");
    }
}
