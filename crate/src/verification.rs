//! `verify=wasm`: the page's reference decode of every timed case (`www/verify.js`) checked
//! against the timed run. A case agrees with its WASM reference when every chosen token is the
//! same and no logit differs by more than [`VERIFY_MAX_ABS_LOGIT_DIFF`] at a step compared
//! ([`VERIFY_MAX_ABS_LOGIT_DIFF_FP16`] with an fp16 graph); a run passes when every case
//! agrees. [`crate::build_summary`] calls it and carries its answer in the summary.

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{CoreError, Result};
use crate::record::{CaseResult, Verification, VerificationTolerance, VerifiedCase};

/// What `www/verify.js` measured: each timed case's reference tokens and logit differences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationInput {
    /// `wasm`.
    pub method: String,
    pub wall_ms: f64,
    pub cases: Vec<VerifyCaseInput>,
    /// The WebGPU features the manifest says the run's vision tier requires (its `requires`;
    /// empty in the decoder-only scope): `shader-f16` marks an fp16 graph.
    pub vision_requires: Vec<String>,
    /// The same for the run's decoder.
    pub decoder_requires: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyCaseInput {
    pub id: String,
    pub repeat: Option<u32>,
    /// The timed run's tokens (its `tokenIds`).
    pub token_ids: Vec<i64>,
    pub reference_token_ids: Vec<i64>,
    /// Per step both decodes ran (0 = prefill): the largest |WebGPU logit − WASM logit|;
    /// NaN where a logit was NaN.
    pub step_max_abs_diff: Vec<f64>,
}

/// The most a logit of the WebGPU run may differ from the WASM reference's at a step compared,
/// when every graph of the run computes in fp32 or int8. Measured on smoke2 read to EOS (six
/// steps a case): 2.5e-5 in Firefox on lavapipe (baseline decoder), 1.5e-3 in Chromium on
/// SwiftShader (`fixed-kv`) (docs/benchmark-protocol.md, "Verification"); 0.05 leaves room
/// for other GPUs' kernels.
pub const VERIFY_MAX_ABS_LOGIT_DIFF: f64 = 0.05;

/// The same with an fp16 graph in the run (one whose manifest entry requires [`FP16_FEATURE`],
/// as the built-in `tier=242` and `decoder=fp16-matmul` do): measured 0.23 in Firefox on
/// lavapipe with both, where fp16 kernels round differently on WebGPU and CPU.
pub const VERIFY_MAX_ABS_LOGIT_DIFF_FP16: f64 = 1.0;

/// The WebGPU feature a graph that computes in fp16 requires (its manifest entry's `requires`).
pub const FP16_FEATURE: &str = "shader-f16";

/// The tolerance of a run of `config` whose graphs require these features, and the precision
/// it is for (`fp16` or `fp32`): fp16 when a graph the run ran requires [`FP16_FEATURE`].
pub fn logit_tolerance(
    config: &Config,
    vision_requires: &[String],
    decoder_requires: &[String],
) -> (f64, &'static str) {
    let fp16 = |requires: &[String]| requires.iter().any(|f| f == FP16_FEATURE);
    // Without vision (scope=decoder) the tier runs nothing.
    let vision_fp16 = config.scope == crate::config::Scope::Full && fp16(vision_requires);
    if vision_fp16 || fp16(decoder_requires) {
        (VERIFY_MAX_ABS_LOGIT_DIFF_FP16, "fp16")
    } else {
        (VERIFY_MAX_ABS_LOGIT_DIFF, "fp32")
    }
}

/// One case against its reference: the first step whose token differs (a decode that stopped
/// earlier differs there too), and the logits compared at every step up to and including it.
fn verified_case(case: VerifyCaseInput, tolerance: f64) -> VerifiedCase {
    let (timed, reference) = (&case.token_ids, &case.reference_token_ids);
    let common = timed.len().min(reference.len());
    let first_diverging_step = (0..common)
        .find(|&step| timed[step] != reference[step])
        .or((timed.len() != reference.len()).then_some(common));
    // Step k's logits chose token k: they are comparable while tokens 0..k agree.
    let compared = first_diverging_step.map_or(case.step_max_abs_diff.len(), |step| step + 1);
    let differences = &case.step_max_abs_diff[..compared.min(case.step_max_abs_diff.len())];
    let max_abs_logit_diff = differences
        .iter()
        .try_fold(0.0_f64, |max, &d| d.is_finite().then(|| max.max(d)));
    let tokens_agree = first_diverging_step.is_none();
    VerifiedCase {
        within_tolerance: tokens_agree
            && !differences.is_empty()
            && max_abs_logit_diff.is_some_and(|max| max <= tolerance),
        id: case.id,
        repeat: case.repeat,
        tokens_agree,
        first_diverging_step,
        max_abs_logit_diff,
        steps_compared: differences.len(),
        reference_token_ids: case.reference_token_ids,
    }
}

/// The verification of a run of `config`: every timed case in `results`' order, each checked
/// to be the same run (id, repeat, tokens) before its figures count.
pub fn verification(
    input: VerificationInput,
    results: &[CaseResult],
    config: &Config,
) -> Result<Verification> {
    if input.cases.len() != results.len() {
        return Err(CoreError::InvalidCase {
            index: input.cases.len().min(results.len()),
            id: String::new(),
            message: format!(
                "the verification has {} cases but the run has {} timed results; give one per result, in order",
                input.cases.len(),
                results.len()
            ),
        });
    }
    for (index, (case, result)) in input.cases.iter().zip(results).enumerate() {
        if case.id != result.id
            || case.repeat != result.repeat
            || case.token_ids != result.token_ids
        {
            return Err(CoreError::InvalidCase {
                index,
                id: case.id.clone(),
                message: format!(
                    "the verification's case (repeat {:?}, tokens {:?}) is not the result at this index (`{}`, repeat {:?}, tokens {:?})",
                    case.repeat, case.token_ids, result.id, result.repeat, result.token_ids
                ),
            });
        }
    }
    let (tolerance, precision) =
        logit_tolerance(config, &input.vision_requires, &input.decoder_requires);
    let cases: Vec<VerifiedCase> = input
        .cases
        .into_iter()
        .map(|case| verified_case(case, tolerance))
        .collect();
    let agreeing = cases.iter().filter(|c| c.within_tolerance).count();
    // Beyond the tolerance first, then the largest difference (not a number counts as largest).
    let worst = cases
        .iter()
        .max_by(|a, b| {
            let rank = |c: &VerifiedCase| {
                (
                    !c.within_tolerance,
                    c.max_abs_logit_diff.unwrap_or(f64::INFINITY),
                )
            };
            let (ra, rb) = (rank(a), rank(b));
            ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1))
        })
        .cloned();
    Ok(Verification {
        method: input.method,
        tolerance: VerificationTolerance {
            max_abs_logit_diff: tolerance,
            precision: precision.to_owned(),
            tokens: "equal".to_owned(),
        },
        passed: !cases.is_empty() && agreeing == cases.len(),
        agreeing,
        total: cases.len(),
        worst,
        cases,
        wall_ms: input.wall_ms,
    })
}

#[cfg(test)]
mod tests;
