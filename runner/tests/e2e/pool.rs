//! `pool=2`: two decoder realms read smoke2's two cases at once from one queue. In dedicated
//! workers (each its own onnxruntime-web, device and session) every case's tokens are the
//! `pool=1` run's and each realm reads one case at least; in the page (two sessions in one
//! onnxruntime-web, their steps interleaved) the same comparison is the isolation check of
//! `docs/benchmark-protocol.md`, "A pool of decoder realms".

use ocr_bench::memory::ProcessMemory;
use ocr_bench::memory_model::given_back::given_back;
use ocr_bench_core::phase::RELEASE_STEPS;
use ocr_bench_core::record::PageSummary;
use serde_json::Value;

use super::{case_results, check_finished, run, token_ids, Run};

const ONE: &str = "cases=smoke2&maxTokens=4";

/// Each case's realm and tokens, in the set's order.
fn readings(run: &Run) -> Vec<(Value, Vec<u64>)> {
    case_results(run)
        .iter()
        .map(|case| (case["decoderRealm"].clone(), token_ids(case)))
        .collect()
}

/// `query`'s run against the one-realm run's tokens; its pool figures are there and every
/// realm read a case.
fn reads_as_one_realm(browser: &str, query: &str, one: &[(Value, Vec<u64>)]) -> Run {
    let pooled = run(browser, query);
    check_finished(&pooled);
    let read = readings(&pooled);
    assert_eq!(read.len(), one.len(), "{query:?}: the cases");
    for (case, ((realm, tokens), (_, reference))) in read.iter().zip(one).enumerate() {
        eprintln!("e2e: {browser} {query:?} case {case}: realm {realm} tokens {tokens:?}");
        assert!(!tokens.is_empty(), "{query:?} case {case}: no token");
        assert_eq!(
            tokens, reference,
            "{browser} {query:?} case {case} (realm {realm}): the tokens differ from pool=1's"
        );
    }
    let pool = &pooled.record("result").expect("a result")["summary"]["pool"];
    eprintln!("e2e: {browser} {query:?} pool {pool}");
    assert_eq!(pool["realms"], 2, "{pool}");
    assert_eq!(pool["casesPerRealm"], serde_json::json!([1, 1]), "{pool}");
    assert!(pool["wallMs"].as_f64().is_some_and(|ms| ms > 0.0), "{pool}");
    let realms: Vec<&Value> = read.iter().map(|(realm, _)| realm).collect();
    assert!(
        realms.contains(&&Value::from(0)) && realms.contains(&&Value::from(1)),
        "{query:?}: each realm reads a case: {realms:?}"
    );
    pooled
}

/// `release=realm` with two decoder workers: the runner read the processes at every step,
/// the page sampled after each, the workers were gone after the realm step, and the
/// device step gave their GPU buffers back (`docs/benchmark-protocol.md`, "Release").
fn check_release_steps(pooled: &Run) {
    let result = pooled.record("result").expect("a result");
    let memory: ProcessMemory =
        serde_json::from_value(result["processMemory"].clone()).expect("the process memory");
    let summary: PageSummary =
        serde_json::from_value(result["summary"].clone()).expect("the summary");
    let steps: Vec<&str> = memory
        .beside
        .steps
        .iter()
        .map(|s| s.step.as_str())
        .collect();
    assert_eq!(steps, RELEASE_STEPS, "the runner's step readings");
    for step in &memory.beside.steps {
        let total = &step.figures.total;
        eprintln!("e2e: release step {}: {total:?}", step.step);
        assert!(
            step.phase == "release"
                && total.rss_bytes > 0
                && total.pss_bytes.is_some_and(|b| b > 0),
            "step {}: {total:?}",
            step.step
        );
        assert!(
            !step.figures.by_type.is_empty(),
            "step {}: no process type",
            step.step
        );
    }
    let workers_at = |label: &str| {
        let sample = summary.memory_samples.iter().find(|s| s.label == label);
        sample
            .unwrap_or_else(|| panic!("no page sample {label}"))
            .decoder_workers
    };
    assert_eq!(workers_at("released-sessions"), Some(2));
    assert_eq!(workers_at("released-device"), Some(2));
    assert_eq!(workers_at("released-realm"), Some(0));
    assert_eq!(workers_at("released"), Some(0));
    let returns = given_back(&memory, &summary.memory_samples);
    assert_eq!(returns.len(), RELEASE_STEPS.len());
    let device = &returns[1];
    eprintln!("e2e: the device step gave back {device:?}");
    assert!(
        device.gpu.is_some_and(|gpu| gpu.bytes > 0) && device.pss.is_some(),
        "the device step returns the workers' GPU buffers: {device:?}"
    );
}

/// One `pool=1` run in Firefox is the reference for every pooled run: the suite holds
/// Chromium's tokens to Firefox's (`same_tokens_in_chromium_and_firefox`), and a second
/// reference run on SwiftShader would cost two minutes.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn pool_of_two_reads_as_one_in_both_browsers() {
    let one = run("firefox", ONE);
    check_finished(&one);
    let one = readings(&one);
    assert!(
        one.iter().all(|(realm, _)| realm.is_null()),
        "pool=1 names no realm"
    );
    // The Firefox workers' run lets go step by step (release=realm): one extra second.
    let stepped = reads_as_one_realm(
        "firefox",
        "cases=smoke2&maxTokens=4&realm=worker&pool=2&release=realm",
        &one,
    );
    check_release_steps(&stepped);
    for (browser, query) in [
        ("firefox", "cases=smoke2&maxTokens=4&pool=2"),
        ("chromium", "cases=smoke2&maxTokens=4&realm=worker&pool=2"),
    ] {
        reads_as_one_realm(browser, query, &one);
    }
}
