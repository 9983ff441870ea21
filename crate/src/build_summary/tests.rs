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
        vision_dispatches: case.dispatches.as_ref().and_then(|d| d.vision),
        probe: case.decode_probe.clone(),
        repeat: case.repeat,
        accuracy_applicable,
        decoder_realm: case.decoder_realm,
        style: case.style.clone(),
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
        pool: None,
    }
}

/// Figures the core added after the legacy file was written: the file cannot hold them, so
/// they leave the comparison (their own tests are in `score` and `summary`).
const NEWER_THAN_LEGACY: [&str; 1] = ["trailingExtras"];

fn without_newer_fields(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for name in NEWER_THAN_LEGACY {
                    map.remove(name);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn case_results_are_the_ones_the_page_computed() {
    for case in legacy_summary().results {
        let built =
            without_newer_fields(serde_json::to_value(case_result(measured(&case, true))).unwrap());
        assert_within(&built, &serde_json::to_value(&case).unwrap(), "case", ULPS);
    }
}

#[test]
fn the_summary_is_the_one_the_page_computed() {
    let posted = legacy_summary();
    let built = without_newer_fields(
        serde_json::to_value(build_summary(input_of(&posted)).unwrap()).unwrap(),
    );
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
        prefill_dispatches: None,
        step_dispatches: None,
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
        prefill_dispatches: None,
        step_dispatches: None,
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

/// A probe with dispatch counts: `prefill` for the prefill, `steps` one per step.
fn counted(case: &mut CaseResult, vision: Option<u32>, prefill: u32, steps: &[u32]) {
    case.decode_probe.prefill_dispatches = Some(prefill);
    case.decode_probe.step_dispatches = Some(steps.to_vec());
    *case = case_result(CaseRun {
        vision_dispatches: vision,
        ..measured(case, true)
    });
}

#[test]
fn a_cases_dispatches_are_its_prefills_and_its_steps_median() {
    let mut case = legacy_summary().results[0].clone();
    assert_eq!(case.dispatches, None, "the legacy page counted none");
    counted(&mut case, Some(40), 300, &[200, 210, 200, 250]);
    assert_eq!(
        case.dispatches,
        Some(CaseDispatches {
            vision: Some(40),
            prefill: 300,
            // Nearest rank: a count some step had, not the mean of the middle two.
            step_p50: Some(200.0),
        })
    );
    counted(&mut case, None, 300, &[]);
    assert_eq!(case.dispatches.unwrap().step_p50, None);
}

#[test]
fn the_steady_runs_dispatch_medians_leave_the_first_run_apart() {
    let mut posted = legacy_summary();
    // The warm-up run is the first: its counts (compilation may split work otherwise) apart.
    let mut warmup = posted.results[0].clone();
    warmup.repeat = None;
    counted(&mut warmup, Some(99), 999, &[999]);
    counted(&mut posted.results[0], Some(40), 300, &[200, 200]);
    counted(&mut posted.results[1], Some(42), 302, &[204, 206, 204]);
    posted.warmup_results = vec![warmup];
    let summary = build_summary(input_of(&posted)).unwrap();
    let compilation = summary.pipeline_compilation.unwrap();
    assert_eq!(compilation.first.dispatches.unwrap().prefill, 999);
    assert_eq!(
        compilation.steady.unwrap().dispatches,
        Some(DispatchMedians {
            vision_p50: Some(40.0),
            prefill_p50: Some(300.0),
            step_p50: Some(200.0),
        })
    );
    // Without any count (an older page), no medians at all.
    let legacy = build_summary(input_of(&legacy_summary())).unwrap();
    assert_eq!(
        legacy
            .pipeline_compilation
            .unwrap()
            .steady
            .unwrap()
            .dispatches,
        None
    );
}
