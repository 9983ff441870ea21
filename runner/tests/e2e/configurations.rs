//! Each browser on the default configuration, the staged schedule with `poll=kick`, and every
//! other value of every parameter; an fp16 tier refused where the adapter lacks shader-f16.

use super::*;

/// On an adapter without `shader-f16` the fp16 configuration must be refused in words.
pub(super) fn check_refused_without_f16(run: &Run) {
    assert_eq!(run.exit_code, Some(1), "{}", run.describe());
    check_no_orphans(run);
    let error = run
        .record("error")
        .unwrap_or_else(|| panic!("no error record\n{}", run.describe()));
    let message = error["body"]["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("shader-f16"),
        "the refusal does not name shader-f16: {message}"
    );
    assert!(
        run.stderr.contains(message.lines().next().unwrap_or("")),
        "the runner did not print the page's message"
    );
    assert!(
        run.record("result").is_none(),
        "a refused configuration posted a result"
    );
}

pub(super) fn every_configuration(browser: &str) {
    for &query in configurations(browser) {
        let run = run(browser, query);
        if query == FP16 && !run.adapter_has("shader-f16") {
            check_refused_without_f16(&run);
        } else {
            check_finished(&run);
        }
    }
}

/// Chromium costs seconds per decode step on SwiftShader, so it runs the reference and one
/// graph capture with the fused operators' decoder against it; the GPU choice on a new
/// decoder (`NEW_DECODER_BATCHED`) is Firefox's below, and
/// `batched::same_tokens_in_chromium_and_firefox` holds the two browsers to one reading.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_default_configuration() {
    // The default configuration on smoke1, read to EOS (`configurations`).
    let reference = run("chromium", BATCHED_REFERENCE);
    check_batched_reference(&reference);
    check_captured(&reference, &run("chromium", CAPTURED_ALL_SMOKE1));
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_default_configuration() {
    check_finished(&run("firefox", DEFAULT));
    let reference = run("firefox", BATCHED_REFERENCE);
    check_batched_reference(&reference);
    // Steps queued per readback, on the default decoder and on a new one: the same tokens.
    // The first also kicks the queue in both realms of the staged schedule (the vision
    // worker's too) after a warm-up run; Firefox only (`EVERY_OTHER_VALUE` kicks in both
    // browsers, on the resident schedule). The last loads the other onnxruntime-web in every
    // realm (the page, the vision worker and the decoder's), each adopting its realm's device.
    let kicked = format!("{GPU_BATCHED}&poll=kick&warmup=1");
    let later_runtime = format!("{GPU_BATCHED}&ort=1.31.1&realm=worker");
    for query in [kicked.as_str(), NEW_DECODER_BATCHED, later_runtime.as_str()] {
        let gpu = run("firefox", query);
        check_finished(&gpu);
        assert_same_tokens(&reference, &gpu);
    }
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_every_parameter_value() {
    every_configuration("chromium");
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_every_parameter_value() {
    every_configuration("firefox");
}
