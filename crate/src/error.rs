//! The one error type of the core. Every message names what was wrong and what is allowed,
//! because it reaches a person through the page, the runner's output or a JS `Error`.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CoreError {
    #[error("unknown parameter `{name}`; the parameters are: {allowed}")]
    UnknownParameter { name: String, allowed: String },

    #[error("parameter `{parameter}` has the value {value:?}; allowed: {allowed}")]
    InvalidValue {
        parameter: &'static str,
        value: String,
        allowed: String,
    },

    #[error("parameter `{name}` is given more than once; give it once")]
    DuplicateParameter { name: String },

    #[error("sweep parameter `{parameter}` has no values; give at least one")]
    EmptySweepAxis { parameter: &'static str },

    #[error("sweep parameter `{parameter}` lists the value {value:?} twice")]
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

    #[error("case {index} (`{id}`): {message}")]
    InvalidCase {
        index: usize,
        id: String,
        message: String,
    },
}

pub type Result<T, E = CoreError> = std::result::Result<T, E>;
