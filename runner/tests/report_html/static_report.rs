//! `ocr-bench report --out DIR` opened from disk in headless Chromium: every chart drawn with
//! data, the run selector, a screenshot that is not blank; a results file it cannot read named.

use super::*;

#[test]
fn the_static_report_draws_every_chart_in_headless_chromium() {
    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("report");
    let written = Command::new(BIN)
        .arg("--root")
        .arg(repository())
        .arg("report")
        .arg(data("two-configs.jsonl"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&written.stdout);
    assert!(
        written.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&written.stderr)
    );
    assert!(
        stdout.contains("| firefox · cases=smoke2&maxTokens=2 | 1 | 2 | 0.6000 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| firefox · decoder=gather-opt&cases=smoke2&maxTokens=2 | 2 | 2 |"),
        "{stdout}"
    );
    for file in ["index.html", "charts.js", "report.css", "chart.umd.min.js"] {
        assert!(out.join(file).is_file(), "{file} was not written");
    }

    // The page as written, with the error probe first in its head.
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let charset = page
        .find("<meta charset=\"utf-8\">")
        .expect("the page's charset")
        + 22;
    let probed = format!("{}{ERROR_PROBE}{}", &page[..charset], &page[charset..]);
    let probed_path = out.join("probed.html");
    std::fs::write(&probed_path, probed).unwrap();
    let url = format!("file://{}", probed_path.display());

    let profile = scratch.path().join("profile");
    let dumped = chromium(&info.executable, &profile, &["--dump-dom".into(), url]);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let log = String::from_utf8_lossy(&dumped.stderr);
    assert!(
        !dom.contains("data-page-errors"),
        "the page reported errors: {:?}",
        attribute(&dom, "<html", "data-page-errors")
    );
    assert!(!log.contains("Uncaught"), "{log}");
    assert_eq!(
        attribute(&dom, "id=\"charts\"", "data-report"),
        Some("ready"),
        "{dom}"
    );
    for chart in [
        "timeline",
        "phase-peaks",
        "decomposition",
        "decomposition-across",
        "token-latency",
        "ncer",
    ] {
        let points: u64 = attribute(&dom, &format!("data-chart=\"{chart}\""), "data-points")
            .unwrap_or_else(|| panic!("no chart {chart} in {dom}"))
            .parse()
            .unwrap();
        assert!(points > 0, "chart {chart} has no data");
    }
    // 2 configurations of 2 cases × 2 tokens (one decode step each): 2 + 4 token times.
    assert_eq!(
        attribute(&dom, "data-chart=\"token-latency\"", "data-points"),
        Some("6")
    );
    // The first run is shown; the selector offers all three.
    let timeline = &dom[dom.find("data-chart=\"timeline\"").unwrap()..];
    let timeline = &timeline[..timeline.find("data-chart=\"phase-peaks\"").unwrap()];
    assert_eq!(timeline.matches("<option value=").count(), 3, "{timeline}");
    // The decomposition's selector offers both configurations.
    let decomposition = &dom[dom.find("data-chart=\"decomposition\"").unwrap()..];
    let decomposition = &decomposition[..decomposition.find("</select>").unwrap()];
    assert_eq!(
        decomposition.matches("<option value=").count(),
        2,
        "{decomposition}"
    );
    assert!(
        log.contains(r#"REPORT {"runs":3,"configurations":2"#),
        "{log}"
    );

    // A screenshot of the report, against one of an empty page with the same style sheet.
    let shot = scratch.path().join("report.png");
    let url = format!("file://{}", out.join("index.html").display());
    chromium(
        &info.executable,
        &profile,
        &[format!("--screenshot={}", shot.display()), url],
    );
    let empty_page = out.join("empty.html");
    std::fs::write(
        &empty_page,
        "<!doctype html><link rel=\"stylesheet\" href=\"./report.css\"><h1>webgpu-ocr-bench report</h1>",
    )
    .unwrap();
    let empty_shot = scratch.path().join("empty.png");
    chromium(
        &info.executable,
        &profile,
        &[
            format!("--screenshot={}", empty_shot.display()),
            format!("file://{}", empty_page.display()),
        ],
    );
    let (report_bytes, empty_bytes) = (png_is_plausible(&shot), png_is_plausible(&empty_shot));
    // Measured: 12.8 KB for the empty page, 140 KB or more with the charts drawn.
    assert!(
        report_bytes > 4 * empty_bytes,
        "the screenshot looks blank: {report_bytes} bytes, an empty page {empty_bytes}"
    );
}

/// A real `realm=worker` run (Firefox, smoke1, two tokens): the timeline draws the decoder
/// worker as a realm of its own, beside the page and the vision worker.
#[test]
fn the_timeline_draws_the_decoder_workers_gpu_bytes_and_heaps() {
    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("report");
    let written = Command::new(BIN)
        .arg("--root")
        .arg(repository())
        .arg("report")
        .arg(data("realm-worker-smoke1.jsonl"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&written.stdout);
    assert!(written.status.success(), "{stdout}");
    // Page, vision worker, decoder worker: the page made no device of its own.
    assert!(
        stdout.contains("| firefox · cases=smoke1&maxTokens=2&realm=worker | 1 | 1 | 0.6000 |"),
        "{stdout}"
    );
    assert!(stdout.contains(" | - | 34 | 202 |"), "{stdout}");
    let url = format!("file://{}", out.join("index.html").display());
    let dumped = chromium(
        &info.executable,
        &scratch.path().join("profile"),
        &["--dump-dom".into(), url],
    );
    let dom = String::from_utf8_lossy(&dumped.stdout);
    assert_eq!(
        attribute(&dom, "id=\"charts\"", "data-report"),
        Some("ready"),
        "{dom}"
    );
    let series = attribute(&dom, "data-chart=\"timeline\"", "data-series")
        .unwrap_or_else(|| panic!("the timeline lists no series: {dom}"))
        .replace("&quot;", "\"");
    let series: Vec<String> = serde_json::from_str(&series).unwrap();
    for realm in ["vision worker", "decoder worker"] {
        for label in [
            format!("GPU bytes, {realm}"),
            format!("WASM heap, {realm} onnxruntime"),
        ] {
            assert!(series.contains(&label), "no {label:?} in {series:?}");
        }
    }
    // The decoder worker loads the core too, for its token choice.
    assert!(
        series.contains(&"WASM heap, decoder worker core".to_owned()),
        "{series:?}"
    );
    assert!(
        !series.contains(&"GPU bytes, page".to_owned()),
        "{series:?}"
    );
}

/// A run whose `verify=wasm` failed (recorded in Firefox with
/// `OCR_BENCH_INJECT=diverge-token@decode:2`) beside runs that did not verify: the HTML report
/// names it above its charts, as the markdown does under its table.
#[test]
fn a_failed_verification_is_named_above_the_charts() {
    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("report");
    let written = Command::new(BIN)
        .arg("--root")
        .arg(repository())
        .arg("report")
        .arg(data("two-configs.jsonl"))
        .arg(data("verify-failed-smoke2.jsonl"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&written.stdout);
    assert!(written.status.success(), "{stdout}");
    let named = "firefox · cases=smoke2&maxTokens=4&verify=wasm (1 of 1 runs)";
    assert!(
        stdout.contains(&format!("VERIFICATION FAILED (verify=wasm: a case left the WASM reference), their figures not a result of the configuration: {named}")),
        "{stdout}"
    );
    let url = format!("file://{}", out.join("index.html").display());
    let dumped = chromium(
        &info.executable,
        &scratch.path().join("profile"),
        &["--dump-dom".into(), url],
    );
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let log = String::from_utf8_lossy(&dumped.stderr);
    assert_eq!(
        attribute(&dom, "id=\"charts\"", "data-report"),
        Some("ready"),
        "{dom}"
    );
    assert_eq!(
        attribute(&dom, "data-verification-failed", "data-verification-failed"),
        Some("1"),
        "{dom}"
    );
    // The DOM escapes `&` in text.
    assert!(
        dom.contains(&format!(
            "so these runs' figures are not results of their configuration: {}",
            named.replace('&', "&amp;")
        )),
        "{dom}"
    );
    assert!(log.contains(r#""verificationFailed":1}"#), "{log}");
}

#[test]
fn an_empty_or_unreadable_results_file_is_named() {
    let scratch = tempfile::tempdir().unwrap();
    let empty = scratch.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let missing = scratch.path().join("missing.jsonl");
    for (file, expected) in [
        (&empty, "empty.jsonl holds no records (it is empty)"),
        (&missing, "reading "),
    ] {
        let output = Command::new(BIN).arg("report").arg(file).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}
