use serde_json::{json, Value};

use super::*;
use crate::record::tests::assert_within;

/// The committed file was written by a runner whose JSON parser could read a time one ulp off
/// (serde_json without `float_roundtrip`), so what the page derived from the exact time can
/// differ from what the core derives from the file in the last bit.
const ULPS: f64 = 1e-15;

/// The summary the page built before these figures moved into the core (Firefox, smoke2).
const LEGACY: &str = include_str!("../../../runner/tests/data/legacy-smoke2.jsonl");

pub(crate) fn legacy_summary() -> PageSummary {
    let result = LEGACY
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["kind"] == "result")
        .unwrap();
    serde_json::from_value(result["summary"].clone()).unwrap()
}

/// What the page measured for a case, read back out of its result.
pub(crate) fn measured(case: &CaseResult, accuracy_applicable: bool) -> CaseRun {
    CaseRun {
        id: case.id.clone(),
        expected: case.expected.clone(),
        text: case.text.clone(),
        token_ids: case.token_ids.clone(),
        vision_ms: case.vision_ms,
        prefill_ms: case.prefill_ms,
        decode_ms: case.decode_ms,
        total_ms: case.total_ms,
        decode_steps: case.decode_steps,
        vision_call_ms: case.vision_call_ms,
        probe: case.decode_probe.clone(),
        repeat: case.repeat,
        accuracy_applicable,
    }
}

pub(crate) fn input_of(summary: &PageSummary) -> SummaryInput {
    SummaryInput {
        run_id: summary.run_id.clone(),
        config: summary.config.clone(),
        capability: summary.capability.clone(),
        manifest: summary.manifest.clone(),
        results: summary.results.clone(),
        warmup_results: summary.warmup_results.clone(),
        memory_samples: summary.memory_samples.clone(),
        environment: summary.environment.clone(),
        session_ms: summary.session_ms.clone(),
        wall_ms: summary.wall_ms,
        timing_notes: summary.timing_notes.clone(),
        completion_floors: CompletionFloors {
            page: summary.completion.page.as_ref().map(|f| f.rounds.clone()),
            worker: summary.completion.worker.as_ref().map(|f| f.rounds.clone()),
            decoder_worker: summary
                .completion
                .decoder_worker
                .as_ref()
                .map(|f| f.rounds.clone()),
        },
        profile: summary.profile.clone(),
        gpu_memory: summary.gpu_memory.clone(),
        sessions: summary.sessions.clone(),
        verification: None,
    }
}

#[test]
fn case_results_are_the_ones_the_page_computed() {
    for case in legacy_summary().results {
        let built = serde_json::to_value(case_result(measured(&case, true))).unwrap();
        assert_within(&built, &serde_json::to_value(&case).unwrap(), "case", ULPS);
    }
}

#[test]
fn the_summary_is_the_one_the_page_computed() {
    let posted = legacy_summary();
    let built = serde_json::to_value(build_summary(input_of(&posted)).unwrap()).unwrap();
    assert_within(
        &built,
        &serde_json::to_value(&posted).unwrap(),
        "summary",
        ULPS,
    );
}

#[test]
fn decoder_scope_has_no_accuracy() {
    let mut posted = legacy_summary();
    posted.config.scope = crate::config::Scope::Decoder;
    let case = case_result(measured(&posted.results[0], false));
    assert_eq!(
        (case.distance, case.characters, case.exact),
        (None, None, None)
    );
    posted.results = vec![case];
    let summary = build_summary(input_of(&posted)).unwrap();
    assert_eq!(
        (
            summary.ncer,
            summary.distance,
            summary.characters,
            summary.exact
        ),
        (None, None, None, None)
    );
    assert_eq!(summary.cases_name, "synthetic");
    assert_eq!(summary.benchmark_scope, "decoder");
    assert!(!summary.accuracy_applicable);
}

#[test]
fn realm_worker_checks_the_steps_against_the_decoder_workers_floor() {
    let posted = legacy_summary();
    let page_floor = posted.completion.page.clone().unwrap();
    let mut input = input_of(&posted);
    input.config.realm = crate::config::Realm::Worker;
    // The page's own floor is far above every step: checked against it, the steps would
    // not be whole multiples of anything; the decoder worker measured none here.
    let mut slow = page_floor.rounds.clone();
    slow.dispatch_readback_ms = vec![1.0e6; slow.dispatch_readback_ms.len()];
    input.completion_floors.page = Some(slow);
    input.completion_floors.decoder_worker = None;
    let without = build_summary(input.clone()).unwrap();
    assert!(without.completion.decoder_worker.is_none());
    assert!(
        without.completion.check.floor_ms.is_nan() && !without.completion.check.bound,
        "{:?}",
        without.completion.check
    );
    // With the decoder worker's floor the check is the one the page realm gave before.
    input.completion_floors.decoder_worker = Some(page_floor.rounds.clone());
    let with = build_summary(input).unwrap();
    assert_eq!(with.completion.decoder_worker, Some(page_floor));
    assert_eq!(with.completion.check, posted.completion.check);
    let json = serde_json::to_value(&with).unwrap();
    assert!(
        json["completion"]["decoderWorker"].is_object(),
        "{}",
        json["completion"]
    );
    // A page summary of realm=page writes no decoder-worker floor at all.
    let page = serde_json::to_value(build_summary(input_of(&posted)).unwrap()).unwrap();
    assert!(page["completion"].get("decoderWorker").is_none());
}

#[test]
fn repeats_are_compared_and_a_changed_token_is_a_finding() {
    let mut posted = legacy_summary();
    posted.config.repeat = 2;
    let mut again = posted.results.clone();
    for case in &mut again {
        case.repeat = Some(1);
        case.total_ms += 10.0;
    }
    posted.results.extend(again.clone());
    let summary = build_summary(input_of(&posted)).unwrap();
    assert_eq!(summary.repeats.count, 2);
    assert_eq!(summary.repeats.per_repeat.len(), 2);
    assert!(summary.repeats.tokens_agree);
    let case_p50 = summary.repeats.interval.case_p50_ms.unwrap();
    assert_eq!(case_p50.n, 2);
    assert!(case_p50.half_width.is_some());

    posted.results.last_mut().unwrap().token_ids[0] += 1;
    assert!(
        !build_summary(input_of(&posted))
            .unwrap()
            .repeats
            .tokens_agree
    );
}

#[test]
fn a_warmup_run_is_the_first_in_pipeline_compilation() {
    let mut posted = legacy_summary();
    let mut warmup = posted.results[0].clone();
    (warmup.repeat, warmup.prefill_ms) = (None, 20_000.0);
    posted.warmup_results = vec![warmup];
    let summary = build_summary(input_of(&posted)).unwrap();
    let compilation = summary.pipeline_compilation.unwrap();
    assert!(compilation.first.warmup);
    assert_eq!(compilation.steady.as_ref().unwrap().runs, 2);
    let steady_prefill = compilation.steady.unwrap().prefill_p50_ms.unwrap();
    assert_eq!(
        compilation.prefill_extra_ms,
        Some(20_000.0 - steady_prefill)
    );
    // Warm-up runs are not in the statistics.
    assert_eq!(summary.cases, 2);
}

#[test]
fn the_profiles_gpu_time_per_decoder_run() {
    let mut posted = legacy_summary();
    posted.profile = json!({ "decoder": { "gpuTimestamps": true, "runs": 4, "gpuMs": 10.0 } });
    let summary = build_summary(input_of(&posted)).unwrap();
    assert_eq!(summary.decode_probe.gpu_ms_per_decoder_run, Some(2.5));
}

#[test]
fn a_step_without_its_choice_is_left_out_of_the_latencies() {
    let probe = CaseProbe {
        prefill_submit_ms: 1.0,
        prefill_sync_ms: 1.0,
        submit_ms: vec![1.0, 2.0],
        sync_ms: vec![3.0, 4.0],
        choose_ms: vec![0.5, 0.25],
        steps_per_readback: None,
    };
    let latencies = token_latencies(&probe);
    assert_eq!(latencies[0], 4.25);
    assert!(latencies[1].is_nan());
    assert_eq!(latency_stats(&latencies).unwrap().count, 1);
}

#[test]
fn a_batch_of_steps_shares_its_one_wait() {
    // sync=4 over 6 steps: one batch of 4 (its wait, 40 ms, on the 4th), one of 2 that EOS
    // ended (its wait, 10 ms, on the last kept step).
    let probe = CaseProbe {
        prefill_submit_ms: 1.0,
        prefill_sync_ms: 1.0,
        submit_ms: vec![1.0; 6],
        sync_ms: vec![0.0, 0.0, 0.0, 40.0, 0.0, 10.0],
        choose_ms: vec![0.0; 7],
        steps_per_readback: Some(4),
    };
    assert_eq!(token_latencies(&probe), [11.0, 11.0, 11.0, 11.0, 6.0, 6.0]);
    let unbatched = CaseProbe {
        steps_per_readback: Some(1),
        ..probe.clone()
    };
    assert_eq!(
        token_latencies(&unbatched),
        [1.0, 1.0, 1.0, 41.0, 1.0, 11.0]
    );
}

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
    use crate::config::{Decoder, Scope, Tier};
    let mut config = Config::default();
    assert_eq!(
        logit_tolerance(&config),
        (VERIFY_MAX_ABS_LOGIT_DIFF, "fp32")
    );
    config.decoder = Decoder::Fp16Matmul;
    assert_eq!(
        logit_tolerance(&config),
        (VERIFY_MAX_ABS_LOGIT_DIFF_FP16, "fp16")
    );
    config.decoder = Decoder::FixedKv;
    config.tier = Tier::Fp16;
    assert_eq!(logit_tolerance(&config).1, "fp16");
    // Without vision the fp16 tier runs nothing.
    config.scope = Scope::Decoder;
    assert_eq!(logit_tolerance(&config).1, "fp32");

    // 0.23, as measured with both fp16 graphs: within the fp16 tolerance, beyond the other.
    let mut posted = legacy_summary();
    posted.config.verify = crate::config::Verify::Wasm;
    let input = VerificationInput {
        method: "wasm".into(),
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
    posted.config.tier = Tier::Fp16;
    let fp16 = verification(input, &posted.results, &posted.config).unwrap();
    assert!(fp16.passed);
    assert_eq!(fp16.tolerance.precision, "fp16");
}
