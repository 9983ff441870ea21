//! `ocr-bench serve` and its `www/report.html` on the same results file: the same charts as the
//! static report, drawn by the same parts of `www/report/`.

use super::*;

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
    // The folders `serve` hands out that the report page loads from (report.js takes the
    // browser code's error wording from browser/).
    for dir in ["www", "browser", "pkg", "node_modules"] {
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
