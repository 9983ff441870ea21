//! The static report in headless Chromium: `ocr-bench report --out DIR` on a committed results
//! file of two configurations (three real Firefox runs of smoke2), then DIR/index.html opened
//! from disk. Checked: no uncaught exception and no console error, every chart has data, the
//! run selector redraws, and a screenshot is not blank. A real `realm=worker` run (one Firefox
//! run of smoke1) checks that the timeline draws the decoder worker's series.
//!
//! Where Chromium is not installed each test fails naming what installs it (skipped instead
//! under `OCR_BENCH_SKIP_BROWSER_TESTS=1`, as the fault tests); each browser start takes a
//! second or two.

mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ocr_bench::browser::BrowserKind;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Records every uncaught exception, unhandled rejection and console error of the page in
/// `data-page-errors` on the root element, where `--dump-dom` shows it (Chromium's own log
/// gives every console message the same level).
const ERROR_PROBE: &str = r#"<script>
(() => {
	const errors = [];
	const note = (text) => {
		errors.push(String(text));
		document.documentElement.dataset.pageErrors = JSON.stringify(errors);
	};
	addEventListener("error", (event) => note(`uncaught: ${event.message ?? event.target?.src ?? "a resource failed to load"}`), true);
	addEventListener("unhandledrejection", (event) => note(`unhandled rejection: ${event.reason}`));
	const error = console.error.bind(console);
	console.error = (...args) => {
		note(`console.error: ${args.join(" ")}`);
		error(...args);
	};
})();
</script>"#;

/// Chromium on a file with a fresh profile, the page given `budget_ms` of virtual time.
fn chromium(executable: &Path, profile: &Path, args: &[String]) -> Output {
    let mut command = Command::new(executable);
    command.args([
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--window-size=1280,2200",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    // SAFETY: geteuid has no preconditions. Chromium refuses root without this switch.
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--no-sandbox");
    }
    command.args(args);
    let output = command.output().expect("starting Chromium");
    assert!(
        output.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The value of `attribute` in the element that has `marker` (`data-chart="ncer"`).
fn attribute<'a>(dom: &'a str, marker: &str, attribute: &str) -> Option<&'a str> {
    let start = dom.find(marker)?;
    let tag_end = start + dom[start..].find('>')?;
    let tag_start = dom[..start].rfind('<')?;
    let tag = &dom[tag_start..tag_end];
    let at = tag.find(&format!("{attribute}=\""))? + attribute.len() + 2;
    let end = at + tag[at..].find('"')?;
    Some(&tag[at..end])
}

fn png_is_plausible(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    bytes.len() as u64
}

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

/// The server of a test, stopped however the test ends.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `serve` and its `www/report.html` on the same results file: the same charts, drawn by the
/// same parts of `www/report/`, with Chart.js from `node_modules` and the core from `pkg/`.
#[test]
fn the_served_report_page_draws_the_same_charts() {
    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    // A root of the page, its modules and the results file to show.
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir_all(root.join("results")).unwrap();
    for dir in ["www", "pkg", "node_modules"] {
        std::os::unix::fs::symlink(
            repository().join(dir).canonicalize().unwrap(),
            root.join(dir),
        )
        .unwrap();
    }
    std::fs::copy(data("two-configs.jsonl"), root.join("results/shown.jsonl")).unwrap();
    let mut server = KilledOnDrop(
        Command::new(BIN)
            .arg("--root")
            .arg(&root)
            .args(["serve", "--port", "0", "--results"])
            .arg(scratch.path().join("appended.jsonl"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The pipe stays open to the end: the server prints more lines, and a closed pipe ends it.
    let mut output = std::io::BufReader::new(server.0.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut output, &mut first).unwrap();
    let address = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    let dumped = chromium(
        &info.executable,
        &scratch.path().join("profile"),
        &[
            "--dump-dom".into(),
            format!("http://{address}/www/report.html?file=/results/shown.jsonl"),
        ],
    );
    drop(server);
    drop(output);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let log = String::from_utf8_lossy(&dumped.stderr);
    assert_eq!(
        attribute(&dom, "id=\"charts\"", "data-report"),
        Some("ready"),
        "{dom}"
    );
    assert!(!log.contains("Uncaught"), "{log}");
    assert!(
        log.contains(r#"REPORT {"runs":3,"configurations":2"#),
        "{log}"
    );
    for chart in [
        "timeline",
        "phase-peaks",
        "decomposition",
        "decomposition-across",
        "token-latency",
        "ncer",
    ] {
        let points = attribute(&dom, &format!("data-chart=\"{chart}\""), "data-points");
        assert!(
            points.is_some_and(|p| p != "0"),
            "chart {chart}: {points:?}"
        );
    }
    // The table of runs is there too: one column per run.
    assert!(dom.contains("3 run(s) from /results/shown.jsonl"), "{dom}");
}

/// `&quot;` and `&amp;` back to the characters, as an attribute of `--dump-dom` writes them.
fn unescape(attribute: &str) -> String {
    attribute.replace("&quot;", "\"").replace("&amp;", "&")
}

/// Three real Firefox runs of smoke1 (staged; staged gather-opt with external weights;
/// resident with the decoder worker): both decomposition charts draw GPU bytes, WASM heaps,
/// the rest and the floor, and their figures are the runner's, phase by phase.
#[test]
fn the_decomposition_charts_show_the_runners_figures() {
    use ocr_bench::report_html::{configurations, decompose, run_for_phase, ResultsFile};

    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("report");
    let fixture = data("sweep17-decomposition.jsonl");
    let written = Command::new(BIN)
        .arg("--root")
        .arg(repository())
        .arg("report")
        .arg(&fixture)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&written.stdout);
    assert!(written.status.success(), "{stdout}");
    assert!(
        stdout.contains("## Where the memory went, per phase"),
        "{stdout}"
    );

    let url = format!("file://{}", out.join("index.html").display());
    let profile = scratch.path().join("profile");
    let dumped = chromium(
        &info.executable,
        &profile,
        &["--dump-dom".into(), url.clone()],
    );
    let dom = String::from_utf8_lossy(&dumped.stdout);
    assert_eq!(
        attribute(&dom, "id=\"charts\"", "data-report"),
        Some("ready"),
        "{dom}"
    );
    let file = ResultsFile::read(&fixture).unwrap();
    let files = [file];
    let groups = configurations(&files);
    let runner: Vec<Vec<_>> = groups
        .iter()
        .map(|g| g.runs.iter().filter_map(decompose).collect())
        .collect();
    for chart in ["decomposition", "decomposition-across"] {
        let marker = format!("data-chart=\"{chart}\"");
        let points: u64 = attribute(&dom, &marker, "data-points")
            .unwrap_or_else(|| panic!("no chart {chart}"))
            .parse()
            .unwrap();
        assert!(points > 0, "chart {chart} has no data");
        let series: Vec<String> =
            serde_json::from_str(&unescape(attribute(&dom, &marker, "data-series").unwrap()))
                .unwrap();
        assert_eq!(
            series,
            [
                "GPU bytes, all realms",
                "WASM heaps, all realms",
                "rest of PSS",
                "floor"
            ],
            "{chart}"
        );
    }
    let values = |chart: &str| -> serde_json::Value {
        let marker = format!("data-chart=\"{chart}\"");
        serde_json::from_str(&unescape(attribute(&dom, &marker, "data-values").unwrap())).unwrap()
    };
    // One phase across the configurations: decoder-run first, each bar the runner's figures.
    let across = values("decomposition-across");
    assert_eq!(
        attribute(&dom, "data-chart=\"decomposition-across\"", "data-phase"),
        Some("decoder-run")
    );
    for (group, runs) in groups.iter().zip(&runner) {
        let (run, share) = run_for_phase(runs, "decoder-run").unwrap();
        let shown = &across[group.name.as_str()];
        assert_eq!(shown["pss"], serde_json::json!(share.pss), "{}", group.name);
        assert_eq!(shown["gpu"], serde_json::json!(share.gpu), "{}", group.name);
        assert_eq!(
            shown["wasm"],
            serde_json::json!(share.wasm),
            "{}",
            group.name
        );
        assert_eq!(
            shown["floor"],
            serde_json::json!(share.floor),
            "{}",
            group.name
        );
        assert_eq!(
            shown["rest"],
            serde_json::json!(share.rest(run.placement)),
            "{}",
            group.name
        );
    }
    // The first configuration's phases: every phase the runner splits, with its figures.
    let phases = values("decomposition");
    let first = &runner[0][0];
    assert_eq!(
        phases.as_object().unwrap().len(),
        first.phases.len(),
        "{phases}"
    );
    for share in &first.phases {
        let shown = &phases[share.phase.as_str()];
        assert_eq!(
            shown["gpu"],
            serde_json::json!(share.gpu),
            "{}",
            share.phase
        );
        assert_eq!(
            shown["wasm"],
            serde_json::json!(share.wasm),
            "{}",
            share.phase
        );
        assert_eq!(
            shown["rest"],
            serde_json::json!(share.rest(first.placement)),
            "{}",
            share.phase
        );
    }

    // A screenshot of the report with the decomposition drawn, beside the results.
    let shot = scratch.path().join("decomposition.png");
    chromium(
        &info.executable,
        &profile,
        &[format!("--screenshot={}", shot.display()), url],
    );
    // Measured: 12.8 KB for an empty page with the style sheet, far more with charts.
    assert!(
        png_is_plausible(&shot) > 50_000,
        "the screenshot looks blank"
    );
    if let Ok(dir) = std::env::var("REPORT_SCREENSHOT_DIR") {
        std::fs::copy(&shot, Path::new(&dir).join("decomposition.png")).unwrap();
    }
}

/// Another page's result (the original experiment page's summary shape, kept as posted) beside
/// this page's runs: the HTML report lists it above the charts in the runner's words, with
/// what it lacks, and still draws the benchmark page's charts; alone, it is listed and nothing
/// is drawn.
#[test]
fn another_pages_result_is_listed_above_the_charts() {
    let Some(info) = harness::browser_or_fail(BrowserKind::Chromium) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let said = "another page's figures: 2 case(s), nCER 0.2500, median case 80.0 ms";
    for (name, files) in [
        (
            "beside",
            vec![data("two-configs.jsonl"), data("other-page.jsonl")],
        ),
        ("alone", vec![data("other-page.jsonl")]),
    ] {
        let out = scratch.path().join(name);
        let written = Command::new(BIN)
            .arg("--root")
            .arg(repository())
            .arg("report")
            .args(&files)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&written.stderr);
        assert!(written.status.success(), "{name}: {stderr}");
        // The page as written, with the error probe first in its head.
        let page = std::fs::read_to_string(out.join("index.html")).unwrap();
        let charset = page
            .find("<meta charset=\"utf-8\">")
            .expect("the page's charset")
            + 22;
        let probed = out.join("probed.html");
        std::fs::write(
            &probed,
            format!("{}{ERROR_PROBE}{}", &page[..charset], &page[charset..]),
        )
        .unwrap();
        let url = format!("file://{}", probed.display());
        let dumped = chromium(
            &info.executable,
            &scratch.path().join(format!("profile-{name}")),
            &["--dump-dom".into(), url],
        );
        let dom = String::from_utf8_lossy(&dumped.stdout);
        let log = String::from_utf8_lossy(&dumped.stderr);
        assert_eq!(
            attribute(&dom, "id=\"charts\"", "data-report"),
            Some("ready"),
            "{name}: {dom}"
        );
        assert_eq!(
            attribute(&dom, "data-other-pages", "data-other-pages"),
            Some("1"),
            "{name}: {dom}"
        );
        assert!(
            dom.contains(said) && dom.contains("it has no token ids, no per-token latencies"),
            "{name}: {dom}"
        );
        assert_eq!(
            attribute(&dom, "<html", "data-page-errors"),
            None,
            "{name}: {log}"
        );
        let charts = dom.matches("class=\"chart\"").count();
        if name == "alone" {
            assert_eq!(charts, 0, "{dom}");
        } else {
            assert!(charts > 0, "{dom}");
        }
    }
}
