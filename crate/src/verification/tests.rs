use super::*;
use crate::build_summary::build_summary;
use crate::build_summary::tests::{input_of, legacy_summary};
use crate::record::PageSummary;

/// A verify=wasm input for the legacy run: every case's reference as given by `reference`,
/// its per-step differences by `differences`.
fn verified_run(
    reference: impl Fn(&CaseResult) -> Vec<i64>,
    differences: impl Fn(&CaseResult) -> Vec<f64>,
) -> Result<PageSummary> {
    let mut posted = legacy_summary();
    posted.config.verify = crate::config::Verify::Wasm;
    let mut input = input_of(&posted);
    input.verification = Some(VerificationInput {
        method: "wasm".into(),
        vision_requires: Vec::new(),
        decoder_requires: Vec::new(),
        wall_ms: 12.5,
        cases: posted
            .results
            .iter()
            .map(|r| VerifyCaseInput {
                id: r.id.clone(),
                repeat: r.repeat,
                token_ids: r.token_ids.clone(),
                reference_token_ids: reference(r),
                step_max_abs_diff: differences(r),
            })
            .collect(),
    });
    build_summary(input)
}

#[test]
fn a_verified_run_within_the_tolerance_passes() {
    let summary = verified_run(|r| r.token_ids.clone(), |_| vec![1e-4, 2e-3]).unwrap();
    let v = summary.verification.as_ref().unwrap();
    assert!(v.passed && !summary.verification_failed());
    assert_eq!((v.agreeing, v.total), (2, 2));
    assert_eq!(v.tolerance.max_abs_logit_diff, VERIFY_MAX_ABS_LOGIT_DIFF);
    let case = &v.cases[0];
    assert!(case.tokens_agree && case.within_tolerance);
    assert_eq!(case.first_diverging_step, None);
    assert_eq!(
        (case.steps_compared, case.max_abs_logit_diff),
        (2, Some(2e-3))
    );
    assert_eq!(v.worst.as_ref().unwrap().max_abs_logit_diff, Some(2e-3));
    assert_eq!(v.wall_ms, 12.5);
}

#[test]
fn a_diverging_token_fails_and_logits_after_it_are_not_compared() {
    // Case 2's reference chose another second token: step 1 diverges; step 2's logits (after
    // the prefixes parted) are huge but not compared.
    let summary = verified_run(
        |r| {
            let mut ids = r.token_ids.clone();
            if r.id == "2" {
                ids[1] += 1;
            }
            ids
        },
        |r| {
            if r.id == "2" {
                vec![1e-3, 0.01, 50.0]
            } else {
                vec![1e-3, 0.01]
            }
        },
    )
    .unwrap();
    let v = summary.verification.as_ref().unwrap();
    assert!(!v.passed && summary.verification_failed());
    assert_eq!((v.agreeing, v.total), (1, 2));
    let case = &v.cases[1];
    assert_eq!(
        (
            case.tokens_agree,
            case.first_diverging_step,
            case.steps_compared
        ),
        (false, Some(1), 2)
    );
    assert_eq!(case.max_abs_logit_diff, Some(0.01));
    assert_eq!(v.worst.as_ref().unwrap().id, "2");
    assert!(v.cases[0].within_tolerance);
}

#[test]
fn a_reference_that_stops_earlier_diverges_where_it_stopped() {
    let summary = verified_run(|r| r.token_ids[..1].to_vec(), |_| vec![0.0, 0.0]).unwrap();
    let case = &summary.verification.unwrap().cases[0];
    assert_eq!(
        (case.first_diverging_step, case.steps_compared),
        (Some(1), 2)
    );
    assert!(!case.within_tolerance);
}

#[test]
fn a_logit_beyond_the_tolerance_or_not_a_number_fails() {
    for bad in [VERIFY_MAX_ABS_LOGIT_DIFF * 1.01, f64::NAN, f64::INFINITY] {
        let summary = verified_run(|r| r.token_ids.clone(), |_| vec![0.0, bad]).unwrap();
        let v = summary.verification.unwrap();
        assert!(!v.passed, "{bad}");
        assert!(v
            .cases
            .iter()
            .all(|c| c.tokens_agree && !c.within_tolerance));
        if !bad.is_finite() {
            assert_eq!(v.cases[0].max_abs_logit_diff, None);
        }
    }
    // Nothing compared is no verification.
    let summary = verified_run(|r| r.token_ids.clone(), |_| Vec::new()).unwrap();
    assert!(!summary.verification.unwrap().passed);
}

#[test]
fn a_verification_of_other_cases_or_without_verify_is_refused() {
    let mut posted = legacy_summary();
    posted.config.verify = crate::config::Verify::Wasm;
    let err = build_summary(input_of(&posted)).unwrap_err().to_string();
    assert!(err.contains("verify=wasm"), "{err}");

    let mut input = input_of(&legacy_summary());
    input.verification = Some(VerificationInput {
        method: "wasm".into(),
        vision_requires: Vec::new(),
        decoder_requires: Vec::new(),
        wall_ms: 1.0,
        cases: Vec::new(),
    });
    let err = build_summary(input).unwrap_err().to_string();
    assert!(err.contains("verify=none"), "{err}");

    // Another case's reference at an index: refused, not compared.
    let mut posted = legacy_summary();
    posted.config.verify = crate::config::Verify::Wasm;
    let mut input = input_of(&posted);
    let other = &posted.results[1];
    input.verification = Some(VerificationInput {
        method: "wasm".into(),
        vision_requires: Vec::new(),
        decoder_requires: Vec::new(),
        wall_ms: 1.0,
        cases: posted
            .results
            .iter()
            .map(|_| VerifyCaseInput {
                id: other.id.clone(),
                repeat: other.repeat,
                token_ids: other.token_ids.clone(),
                reference_token_ids: other.token_ids.clone(),
                step_max_abs_diff: vec![0.0],
            })
            .collect(),
    });
    let err = build_summary(input).unwrap_err().to_string();
    assert!(err.contains("is not the result at this index"), "{err}");
}

#[test]
fn an_fp16_graph_has_the_fp16_tolerance() {
    // Chosen by what the manifest says the graphs require, not by their names.
    use crate::config::Scope;
    let mut config = Config::default();
    let f16 = vec![FP16_FEATURE.to_owned()];
    assert_eq!(
        logit_tolerance(&config, &[], &[]),
        (VERIFY_MAX_ABS_LOGIT_DIFF, "fp32")
    );
    assert_eq!(
        logit_tolerance(&config, &[], &f16),
        (VERIFY_MAX_ABS_LOGIT_DIFF_FP16, "fp16")
    );
    assert_eq!(logit_tolerance(&config, &f16, &[]).1, "fp16");
    // Without vision the fp16 tier runs nothing.
    config.scope = Scope::Decoder;
    assert_eq!(logit_tolerance(&config, &f16, &[]).1, "fp32");

    // 0.23, as measured with both fp16 graphs: within the fp16 tolerance, beyond the other.
    let mut posted = legacy_summary();
    posted.config.verify = crate::config::Verify::Wasm;
    let input = VerificationInput {
        method: "wasm".into(),
        vision_requires: Vec::new(),
        decoder_requires: Vec::new(),
        wall_ms: 1.0,
        cases: posted
            .results
            .iter()
            .map(|r| VerifyCaseInput {
                id: r.id.clone(),
                repeat: r.repeat,
                token_ids: r.token_ids.clone(),
                reference_token_ids: r.token_ids.clone(),
                step_max_abs_diff: vec![0.23, 0.1],
            })
            .collect(),
    };
    assert!(
        !verification(input.clone(), &posted.results, &posted.config)
            .unwrap()
            .passed
    );
    let input = VerificationInput {
        vision_requires: vec![FP16_FEATURE.to_owned()],
        ..input
    };
    let fp16 = verification(input, &posted.results, &posted.config).unwrap();
    assert!(fp16.passed);
    assert_eq!(fp16.tolerance.precision, "fp16");
}
