//! The record's `verify=wasm` answer: the tolerance used and each case against the WASM
//! reference.

use serde::{Deserialize, Serialize};

/// `verify=wasm`: every timed case against the same decode on the WASM (CPU) execution provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// `wasm`.
    pub method: String,
    pub tolerance: VerificationTolerance,
    /// Every case within the tolerance.
    pub passed: bool,
    /// Cases within the tolerance, of `total`.
    pub agreeing: usize,
    pub total: usize,
    /// A case beyond the tolerance if there is one, else the largest logit difference.
    pub worst: Option<VerifiedCase>,
    pub cases: Vec<VerifiedCase>,
    /// The whole WASM pass: creating its sessions and decoding every case.
    pub wall_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VerificationTolerance {
    /// The most a logit may differ at a step compared.
    pub max_abs_logit_diff: f64,
    /// `fp16` when an fp16 graph ran (`tier=242`, `decoder=fp16-matmul`), else `fp32`.
    pub precision: String,
    /// `equal`: every chosen token, EOS included, must be the reference's.
    pub tokens: String,
}

/// One timed case against its reference decode. Step 0 is the prefill's logits, step k the
/// k-th decode step's; logits are compared at every step whose earlier tokens agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VerifiedCase {
    pub id: String,
    pub repeat: Option<u32>,
    pub tokens_agree: bool,
    /// The first step whose chosen token differs (or where one decode stopped), else null.
    pub first_diverging_step: Option<usize>,
    /// Over the steps compared; null when a difference was not a finite number (NaN logits).
    pub max_abs_logit_diff: Option<f64>,
    pub steps_compared: usize,
    /// The tokens the reference decoded (EOS not included, as in `tokenIds`).
    pub reference_token_ids: Vec<i64>,
    pub within_tolerance: bool,
}
