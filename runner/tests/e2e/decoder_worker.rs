//! `realm=worker`: the decoder, its loop and the token choice in a worker of their own, with
//! the page realm's tokens, alone and with the other parameters.

use super::*;

/// `realm=worker` against `realm=page`: the same tokens per case, the decoder worker's own
/// memory in the record (its GPU bytes per sample and at the end, its onnxruntime and core
/// heaps, its completion floor), and a page that held no decoder of its own.
pub(super) fn decoder_in_a_worker(browser: &str, query: &str, page_query: &str) {
    let worker = run(browser, query);
    check_finished(&worker);
    assert_eq!(worker.config.realm, Realm::Worker, "{query:?}");
    let page = run(browser, page_query);
    check_finished(&page);
    assert_eq!(page.config.realm, Realm::Page, "{page_query:?}");
    let (in_worker, in_page) = (case_results(&worker), case_results(&page));
    assert_eq!(in_worker.len(), in_page.len(), "{query:?}: the cases");
    assert!(!in_worker.is_empty(), "{query:?}: no cases");
    for (left, right) in in_worker.iter().zip(&in_page) {
        assert_eq!(left["id"], right["id"], "{query:?}: the cases in order");
        let (a, b) = (token_ids(left), token_ids(right));
        eprintln!(
            "e2e: {browser} case {}: realm=worker {a:?} realm=page {b:?}",
            left["id"]
        );
        assert!(!a.is_empty(), "{query:?} case {}: no token", left["id"]);
        assert_eq!(
            a, b,
            "{browser} case {}: the tokens of {query:?} and {page_query:?} differ",
            left["id"]
        );
    }

    let summary = &worker.record("result").expect("a result")["summary"];
    assert_eq!(
        summary["config"]["realm"], "worker",
        "{}",
        summary["config"]
    );
    let samples = summary["memorySamples"].as_array().expect("memorySamples");
    let sample = |label: &str| {
        samples
            .iter()
            .find(|s| s["label"].as_str().is_some_and(|l| l.starts_with(label)))
            .unwrap_or_else(|| panic!("no {label} sample: {samples:?}"))
    };
    let heaps = |realm: &Value| -> Vec<String> {
        realm["wasmHeaps"]
            .as_array()
            .unwrap_or_else(|| panic!("no wasmHeaps in {realm}"))
            .iter()
            .map(|h| {
                assert!(h["bytes"].as_u64().is_some_and(|b| b > 0), "{h}");
                text_of(&h["label"])
            })
            .collect()
    };
    for label in ["decoder-session-ready", "after-case-"] {
        let decoder = &sample(label)["decoderWorker"];
        let live = decoder["gpu"]["liveBytes"].as_u64().unwrap_or(0);
        assert!(
            live > 0,
            "{label}: the decoder worker's live GPU bytes: {decoder}"
        );
        let labels = heaps(decoder);
        for heap in ["onnxruntime", "core"] {
            assert!(
                labels.iter().any(|l| l == heap),
                "{label}: no {heap} heap in the decoder worker: {labels:?}"
            );
        }
        // The page decodes nothing: no device (staged: none at all) and no onnxruntime heap.
        let page_realm = sample(label);
        assert!(
            page_realm["gpu"].is_null(),
            "{label}: the page made a device: {}",
            page_realm["gpu"]
        );
        assert!(
            !heaps(page_realm).iter().any(|l| l == "onnxruntime"),
            "{label}: onnxruntime started in the page: {page_realm}"
        );
    }
    let gpu = &summary["gpuMemory"];
    assert!(gpu["page"].is_null(), "the page's device: {}", gpu["page"]);
    assert!(
        gpu["decoderWorker"]["peakBytes"]
            .as_u64()
            .is_some_and(|b| b > 0),
        "the decoder worker's GPU peak: {gpu}"
    );
    assert_eq!(
        gpu["decoderWorker"]["deviceDestroyed"], true,
        "released: {gpu}"
    );
    assert!(
        summary["environment"]["decoderWorkerAdapter"].is_object(),
        "{}",
        summary["environment"]
    );
    let leak = &gpu["leakCheck"]["afterCases"];
    assert_eq!(
        leak.as_array().map(Vec::len),
        Some(in_worker.len()),
        "the leak check follows the decoder worker's device: {leak}"
    );
    eprintln!(
        "e2e: {browser} {query:?}: decoder worker GPU peak {} bytes, token p50 {} ms (realm=page {} ms)",
        gpu["decoderWorker"]["peakBytes"],
        summary["decodeProbe"]["tokenLatency"]["p50Ms"],
        page.record("result").expect("a result")["summary"]["decodeProbe"]["tokenLatency"]["p50Ms"]
    );
}

pub(super) fn text_of(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
        .to_owned()
}

/// The GPU chooser with 4 steps queued per readback, in the worker, against the seed's loop
/// in the page on smoke1.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_decoder_in_a_worker() {
    decoder_in_a_worker(
        "firefox",
        &format!("{GPU_BATCHED}&realm=worker"),
        BATCHED_REFERENCE,
    );
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_decoder_in_a_worker() {
    decoder_in_a_worker(
        "chromium",
        &format!("{BATCHED_REFERENCE_QUERY}&realm=worker"),
        BATCHED_REFERENCE,
    );
}

/// The other parameters in the worker: the resident schedule (embeddings read back from the
/// page's vision output), the queue kick in both realms, a warm-up run, two repeats (the same
/// tokens each pass), onnxruntime-web's profiler of the worker's session and the WASM
/// reference in the page against the logits the worker sent back; and the decoder-only scope,
/// whose zeros the worker makes, with Firefox's own memory reports and the worker's realm
/// let go of first. Both start on one profile kept across them (`--keep-profile`): the first
/// makes it, the second finds it. Firefox only: each costs about two minutes on lavapipe.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_decoder_in_a_worker_with_the_other_parameters() {
    let kept = tempfile::tempdir().unwrap();
    let kept_dir = kept.path().to_str().unwrap();
    for (index, query) in [
        "realm=worker&schedule=resident&poll=kick&warmup=1&repeat=2&profile=ops&verify=wasm",
        "realm=worker&scope=decoder&release=realm",
    ]
    .into_iter()
    .enumerate()
    {
        let reports = query.contains("scope=decoder");
        let mut extra = vec!["--keep-profile", kept_dir];
        if reports {
            extra.push("--memory-reports");
        }
        let run = launch_with("firefox", query, None, &extra);
        check_finished(&run);
        if reports {
            memory_reports::check_memory_reports(&run);
        }
        let closing = run.record("run").expect("a closing record");
        let profile = kept.path().join("firefox");
        assert_eq!(
            closing["keptProfile"],
            serde_json::json!({ "dir": profile.to_str().unwrap(), "reused": index > 0 }),
            "{query:?}"
        );
        // The browser wrote its profile there, and it outlived the run.
        assert!(profile.join("prefs.js").is_file(), "{query:?}");
        let summary = &run.record("result").expect("a result")["summary"];
        assert!(
            summary["completion"]["decoderWorker"]["dispatchReadback"]["p50Ms"].is_number(),
            "{query:?}: the decoder worker's floor: {}",
            summary["completion"]
        );
    }
}
