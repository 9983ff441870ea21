//! The same tokens by every route: the seed's loop against the WASM reference and the CPU
//! oracle, the GPU choice with batched readbacks, graph capture, and the two browsers against
//! each other.

use super::*;

/// The choice on the GPU needs more than `maxTokens=2` to queue steps: its batches never pass
/// `maxTokens`, so two tokens make one batch of one step. smoke1's string is five characters
/// and EOS its sixth choice: with `maxTokens=8` and `sync=4` the loop queues one full batch of
/// four steps, then one of three that EOS ends after its first (the other two discarded).
/// The reference is the same reading with the seed's loop (`choose=cpu`).
/// The seed's loop on smoke1, read to EOS at the sixth choice: the verified run, which
/// `reads_to_eos_as_the_wasm_reference` makes anyway (a Chromium run costs minutes).
pub(super) const BATCHED_REFERENCE: &str = VERIFIED;

pub(super) const GPU_BATCHED: &str = "cases=smoke1&maxTokens=8&choose=gpu&sync=4";

/// The seed's loop on smoke1 without the reference check, for runs in another realm.
pub(super) const BATCHED_REFERENCE_QUERY: &str = "cases=smoke1&maxTokens=8";

/// Graph capture on a static-shape decoder (`capture=on` needs one and `choose=gpu`):
/// `fixed-kv-ops`, `fixed-kv-fused` with onnxruntime's fused operators (its
/// SkipSimplifiedLayerNormalization and RotaryEmbedding nodes must run and replay on WebGPU too);
/// `fixed-kv-fused` itself reads under `capture=all` below. With 8-bit weights both are about 7×
/// faster than `fixed-kv-gpu` on lavapipe; all replay through the same
/// `browser/decoding/decode-capture.js`.
pub(super) const CAPTURED_BATCHED: &str =
    "cases=smoke1&maxTokens=8&decoder=fixed-kv-ops&choose=gpu&sync=4&capture=on";

/// `capture=all`: the vision encoder and the prefill replay recorded graphs too. smoke2's two
/// cases, so the second case's replays must read new pixels and new embeddings, not the
/// first's; the resident schedule, so the embeddings cross on the GPU (copied out of the
/// vision replay's buffer, then into the prefill's fixed input). The staged schedule hands
/// them over from the CPU, as it does with `capture=on`.
pub(super) const CAPTURED_ALL: &str =
    "maxTokens=8&decoder=fixed-kv-fused&choose=gpu&sync=4&capture=all&schedule=resident";

/// Graph capture in Chromium, where a decode step costs seconds on SwiftShader: one smoke1
/// run of `fixed-kv-ops` with `capture=all`, so the steps record and replay and the vision
/// encoder and the prefill are recorded (smoke2's second case, which replays them, is
/// Firefox's, `CAPTURED_ALL`).
pub(super) const CAPTURED_ALL_SMOKE1: &str =
    "cases=smoke1&maxTokens=8&decoder=fixed-kv-ops&choose=gpu&sync=4&capture=all&schedule=resident";

/// One of the decoders whose every node runs on WebGPU: its weights are 4-bit, yet it reads
/// smoke1 to EOS with the baseline's tokens in both browsers (and smoke2 at `maxTokens=4`).
pub(super) const NEW_DECODER_BATCHED: &str =
    "cases=smoke1&maxTokens=8&decoder=nbits-int4&choose=gpu&sync=4";

/// The reference read to EOS (`check_read_to_eos`: before `maxTokens`, as the CPU oracle
/// read it) after at least 1 + 4 tokens, so the batched runs did queue a full batch of four
/// and steps past EOS.
pub(super) fn check_batched_reference(run: &Run) {
    let readings = check_finished(run);
    let cases = case_results(run);
    let summary = &run.record("result").expect("a result")["summary"];
    checks::check_read_to_eos(summary, &cases, &run.config, &readings);
    for case in &cases {
        let tokens = token_ids(case).len();
        assert!(
            tokens >= 5,
            "case {}: {tokens} tokens; the batched runs need at least 5 to fill a batch",
            case["id"]
        );
    }
}

/// Every case of `other` holds the same token ids as the same case of `reference`, in order.
pub(super) fn assert_same_tokens(reference: &Run, other: &Run) {
    let (left, right) = (case_results(reference), case_results(other));
    assert!(!left.is_empty(), "{:?}: no cases", reference.query);
    assert_eq!(
        left.len(),
        right.len(),
        "{:?} has {} cases, {:?} {}",
        reference.query,
        left.len(),
        other.query,
        right.len()
    );
    for (left, right) in left.iter().zip(&right) {
        assert_eq!(
            left["id"], right["id"],
            "{:?}: the cases in order",
            other.query
        );
        let (a, b) = (token_ids(left), token_ids(right));
        assert!(
            !a.is_empty(),
            "{:?} case {}: no token",
            reference.query,
            left["id"]
        );
        assert_eq!(
            a, b,
            "case {}: the tokens of {:?} and {:?} differ",
            left["id"], reference.query, other.query
        );
    }
}

/// The case results of a finished run; a run without a result or a result without its list
/// of cases fails here instead of comparing as empty.
pub(super) fn case_results(run: &Run) -> Vec<Value> {
    let result = run
        .record("result")
        .unwrap_or_else(|| panic!("no result\n{}", run.describe()));
    result["summary"]["results"]
        .as_array()
        .unwrap_or_else(|| {
            panic!(
                "the result has no list of cases: {}\n{}",
                result["summary"]["results"],
                run.describe()
            )
        })
        .clone()
}

pub(super) fn token_ids(case: &Value) -> Vec<u64> {
    case["tokenIds"]
        .as_array()
        .unwrap_or_else(|| panic!("case {}: tokenIds is not a list", case["id"]))
        .iter()
        .map(|t| {
            t.as_u64()
                .unwrap_or_else(|| panic!("case {}: token id {t} is not one", case["id"]))
        })
        .collect()
}

/// Chromium (SwiftShader) and Firefox (lavapipe) run the same graphs on different software
/// GPUs. Every token of every case must be the same in both: greedy choice from logits that
/// differ only in the last bits agrees unless two logits nearly tie, and a difference beyond
/// that is a bug in one of the paths. Only configurations whose tokens the model chooses
/// take part (`scope=decoder` forces them); the default decoder and the captured
/// `fixed-kv-ops` between them cover both cache layouts, each read to EOS.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn same_tokens_in_chromium_and_firefox() {
    let mut compared = 0usize;
    for query in [VERIFIED, CAPTURED_ALL_SMOKE1] {
        let chromium = run("chromium", query);
        let firefox = run("firefox", query);
        assert_ne!(
            chromium.config.scope,
            Scope::Decoder,
            "{query:?} forces its tokens"
        );
        let (left, right) = (case_results(&chromium), case_results(&firefox));
        assert_eq!(
            left.len(),
            right.len(),
            "{query:?}: chromium has {} cases, firefox {}",
            left.len(),
            right.len()
        );
        assert!(!left.is_empty(), "{query:?}: no cases");
        for (left, right) in left.iter().zip(right.iter()) {
            assert_eq!(left["id"], right["id"], "{query:?}: the cases in order");
            let (a, b) = (token_ids(left), token_ids(right));
            eprintln!(
                "e2e: {query:?} case {}: chromium {a:?} firefox {b:?}",
                left["id"]
            );
            assert!(!a.is_empty(), "{query:?} case {}: no token", left["id"]);
            assert_eq!(
                a, b,
                "{query:?} case {}: the tokens differ (chromium, firefox)",
                left["id"]
            );
            compared += a.len();
        }
    }
    eprintln!("e2e: chromium and firefox agree on all {compared} tokens");
}

/// The full reading: the default decoder on smoke1 and (in Firefox) `fixed-kv` on smoke2 decode
/// to EOS with the CPU oracle's tokens (nCER recomputed here), and every token and every step's
/// logits agree with the same decode on onnxruntime-web's WASM (CPU) execution provider
/// (`verify=wasm`). The runs are the ones `every_configuration` uses (`configurations`).
pub(super) fn reads_to_eos_as_the_wasm_reference(browser: &str) {
    let queries: &[&str] = if configurations(browser).contains(&FIXED_KV) {
        &[VERIFIED, FIXED_KV]
    } else {
        &[VERIFIED]
    };
    for &query in queries {
        let run = run(browser, query);
        let readings = check_finished(&run);
        let summary = &run.record("result").expect("a result")["summary"];
        checks::check_read_to_eos(summary, &case_results(&run), &run.config, &readings);
    }
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_reads_to_eos_as_the_wasm_reference() {
    reads_to_eos_as_the_wasm_reference("chromium");
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_reads_to_eos_as_the_wasm_reference() {
    reads_to_eos_as_the_wasm_reference("firefox");
}

/// `capture=on` (browser/decoding/decode-capture.js): the decode steps replay one graph that
/// onnxruntime-web recorded, on the static-shape decoder, with four steps queued per readback;
/// they must read smoke1 with the seed loop's tokens (a full batch, then one that EOS ends).
/// `capture=all` must read smoke2 as the CPU oracle does, its vision and prefill replayed.
pub(super) fn graph_capture_reads_the_seeds_tokens(browser: &str) {
    let reference = run(browser, BATCHED_REFERENCE);
    check_batched_reference(&reference);
    let captured = run(browser, CAPTURED_BATCHED);
    check_captured(&reference, &captured);
    check_dispatches(&reference, false);

    let all = run(browser, CAPTURED_ALL);
    let readings = check_finished(&all);
    let summary = &all.record("result").expect("a result")["summary"];
    checks::check_read_to_eos(summary, &case_results(&all), &all.config, &readings);
    check_dispatches(&all, true);
    check_recorded_once(&all, "vision");
    check_recorded_once(&all, "prefill");
}

/// A captured run finished with the reference's tokens, on a session created with
/// `enableGraphCapture`, its steps replaying one recorded count.
pub(super) fn check_captured(reference: &Run, captured: &Run) {
    check_finished(captured);
    assert!(
        captured.record("result").expect("a result")["summary"]["sessions"]
            .as_array()
            .is_some_and(|sessions| sessions
                .iter()
                .any(|s| s["options"]["enableGraphCapture"] == true)),
        "{}: no session was created with enableGraphCapture\n{}",
        captured.query,
        captured.describe()
    );
    assert_same_tokens(reference, captured);
    check_dispatches(captured, true);
}

/// With `capture=all` the first case records the vision encoder and the prefill (onnxruntime
/// runs the graph once plainly, then again capturing it) and every later case replays them:
/// one count, the same for each replay and below the recording's.
fn check_recorded_once(run: &Run, part: &str) {
    let counts: Vec<u64> = case_results(run)
        .iter()
        .map(|case| {
            case["dispatches"][part]
                .as_u64()
                .unwrap_or_else(|| panic!("case {}: no {part} count", case["id"]))
        })
        .collect();
    let (recording, replays) = counts.split_first().expect("a case");
    assert!(
        !replays.is_empty() && replays.iter().all(|&c| c == replays[0] && c < *recording),
        "{part}: the first case records, the others replay one count below it: {counts:?}\n{}",
        run.describe()
    );
}

/// Every timed case counted the dispatches onnxruntime-web encoded (browser/dispatch-count.js):
/// some for its vision, its prefill and each decode step it kept. Nothing orders the prefill's
/// count against a step's (with a fixed-KV decoder both are one graph, and a kernel may split
/// its work otherwise at one position than at 257). With `capture=on` the step session's
/// first run records (onnxruntime runs the graph once plainly, then again capturing it: 436
/// against 218 for fixed-kv-fused) and every later step replays it: one count, not 0, which
/// a replay that bypassed `dispatchWorkgroups` would give.
fn check_dispatches(run: &Run, captured: bool) {
    let counted = |value: &Value, what: &str| {
        value
            .as_u64()
            .unwrap_or_else(|| panic!("{what} is not a count: {value}\n{}", run.describe()))
    };
    for case in case_results(run) {
        let id = &case["id"];
        let probe = &case["decodeProbe"];
        let prefill = counted(&probe["prefillDispatches"], "prefillDispatches");
        assert!(
            prefill > 0,
            "case {id}: no dispatch counted for the prefill\n{}",
            run.describe()
        );
        let steps: Vec<u64> = probe["stepDispatches"]
            .as_array()
            .unwrap_or_else(|| panic!("case {id}: no stepDispatches: {probe}"))
            .iter()
            .map(|c| counted(c, "a step's dispatches"))
            .collect();
        assert_eq!(
            steps.len() as u64,
            counted(&case["decodeSteps"], "decodeSteps"),
            "case {id}: a dispatch count per kept step: {steps:?}"
        );
        assert!(
            steps.iter().all(|&c| c > 0),
            "case {id}: a step without a dispatch: {steps:?}\n{}",
            run.describe()
        );
        let dispatches = &case["dispatches"];
        assert_eq!(
            counted(&dispatches["prefill"], "dispatches.prefill"),
            prefill,
            "case {id}: {dispatches}"
        );
        assert!(
            counted(&dispatches["vision"], "dispatches.vision") > 0,
            "case {id}: no dispatch counted for the vision encode: {dispatches}"
        );
    }
    if captured {
        let summary = &run.record("result").expect("a result")["summary"];
        let runs = ["warmupResults", "results"]
            .into_iter()
            .flat_map(|runs| summary[runs].as_array().cloned().unwrap_or_default());
        let steps: Vec<u64> = runs
            .flat_map(|case| {
                case["decodeProbe"]["stepDispatches"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|c| counted(&c, "a step's dispatches"))
            .collect();
        let (recording, replays) = steps.split_first().expect("a decode step");
        assert!(
            !replays.is_empty() && replays.iter().all(|&c| c == replays[0]),
            "the replayed steps encoded different counts: {steps:?}\n{}",
            run.describe()
        );
        assert!(
            *recording >= replays[0],
            "the recording step encoded fewer dispatches than a replay: {steps:?}"
        );
    }
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_graph_capture() {
    graph_capture_reads_the_seeds_tokens("firefox");
}
