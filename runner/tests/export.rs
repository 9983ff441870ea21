//! `ocr-bench export` on recorded results files: the CSV and the JSON lines it writes are read
//! back and their cells checked against the records they came from.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Map, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn export(results: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("export")
        .arg(results)
        .args(args)
        .output()
        .expect("running ocr-bench export")
}

/// The file's records as JSON, in file order.
fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Both formats of one file as read back: the CSV's header and rows, the JSON objects.
struct Written {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    objects: Vec<Map<String, Value>>,
}

/// Writes both formats of one file to files, every column (`--all-columns`, so that a cell a
/// run lacks is checked as empty), and reads them back.
fn both(results: &Path) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("runs.csv");
    let jsonl_path = dir.path().join("runs.jsonl");
    for (format, out) in [("csv", &csv_path), ("jsonl", &jsonl_path)] {
        let output = export(
            results,
            &[
                "--format",
                format,
                "--out",
                out.to_str().unwrap(),
                "--all-columns",
            ],
        );
        assert!(
            output.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    let objects = std::fs::read_to_string(&jsonl_path)
        .unwrap()
        .lines()
        .map(|line| match serde_json::from_str(line).unwrap() {
            Value::Object(object) => object,
            other => panic!("a row that is not an object: {other}"),
        })
        .collect();
    Written {
        header,
        rows,
        objects,
    }
}

/// A CSV cell as the JSON value it stands for (numbers compared as numbers).
fn same_cell(csv: &str, json: &Value) -> bool {
    match json {
        Value::Null => csv.is_empty(),
        Value::String(text) => csv == text,
        Value::Bool(flag) => csv == flag.to_string(),
        Value::Number(number) => csv.parse::<f64>().ok() == number.as_f64(),
        _ => false,
    }
}

#[test]
fn csv_and_jsonl_hold_the_same_cells_under_the_same_columns() {
    let Written {
        header,
        rows,
        objects,
    } = both(&data("two-configs.jsonl"));
    assert_eq!(rows.len(), 3);
    assert_eq!(objects.len(), 3);
    for (row, object) in rows.iter().zip(&objects) {
        let keys: Vec<&String> = object.keys().collect();
        assert_eq!(keys, header.iter().collect::<Vec<_>>());
        for ((name, cell), value) in header.iter().zip(row).zip(object.values()) {
            assert!(same_cell(cell, value), "{name}: csv {cell:?}, json {value}");
        }
    }
}

#[test]
fn each_row_holds_its_runs_figures_as_recorded() {
    let file = data("realm-worker-smoke1.jsonl");
    let lines = records(&file);
    let start = &lines[0];
    let result = lines.iter().find(|l| l["kind"] == "result").unwrap();
    let closing = lines.iter().find(|l| l["kind"] == "run").unwrap();
    let summary = &result["summary"];
    let memory = &result["processMemory"];
    let Written {
        header,
        rows,
        objects,
    } = both(&file);
    assert_eq!(rows.len(), 1);
    let row = &objects[0];
    let expected = [
        ("runId", start["runId"].clone()),
        ("outcome", closing["outcome"].clone()),
        ("wallSeconds", closing["wallSeconds"].clone()),
        ("browser.name", start["browser"]["name"].clone()),
        ("query", start["query"].clone()),
        ("userAgent", start["body"]["userAgent"].clone()),
        ("machine.cores", start["machine"]["cores"].clone()),
        ("config.realm", summary["config"]["realm"].clone()),
        ("config.maxTokens", summary["config"]["maxTokens"].clone()),
        ("capability.layers", summary["capability"]["layers"].clone()),
        ("distance", summary["distance"].clone()),
        ("cases", summary["cases"].clone()),
        ("medianCaseMs", summary["medianMs"].clone()),
        (
            "tokenLatency.p50Ms",
            summary["decodeProbe"]["tokenLatency"]["p50Ms"].clone(),
        ),
        (
            "gpu.decoderWorker.peakBytes",
            summary["gpuMemory"]["decoderWorker"]["peakBytes"].clone(),
        ),
        (
            "phase.decoder-run.peakPssBytes",
            memory["phases"]["decoder-run"]["total"]["peakPssBytes"].clone(),
        ),
        (
            "phase.vision-load.peakRssBytes",
            memory["phases"]["vision-load"]["total"]["peakRssBytes"].clone(),
        ),
        (
            "phase.decoder-run.floorBytes",
            memory["floor"]["phases"]["decoder-run"]["bytes"].clone(),
        ),
    ];
    for (name, value) in expected {
        assert!(!value.is_null(), "{name}: the record has no such figure");
        assert_eq!(row[name], value, "{name}");
        let column = header.iter().position(|h| h == name).unwrap();
        assert!(
            same_cell(&rows[0][column], &value),
            "{name}: csv {:?}",
            rows[0][column]
        );
    }
    // The file predates the record's `target`: its run ran locally.
    assert!(start.get("target").is_none());
    assert_eq!(row["target"], "local");
    // GPU bytes in decoder-run (the decoder worker's); none before the page's first sample.
    assert!(row["phase.decoder-run.gpuBytes"].as_u64().unwrap() > 0);
    assert_eq!(row["phase.startup.gpuBytes"], Value::Null);
}

#[test]
fn a_run_without_a_result_is_a_row_with_how_it_ended() {
    let mut lines = records(&data("smoke2.jsonl"));
    let mut closing = lines.pop().unwrap();
    lines.truncate(9);
    closing["outcome"] = "timeout".into();
    closing["message"] = "no result within 40 s".into();
    lines.push(closing);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("timeout.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let Written { objects, .. } = both(&file);
    assert_eq!(objects.len(), 1);
    let row = &objects[0];
    assert_eq!(row["outcome"], "timeout");
    assert_eq!(row["message"], "no result within 40 s");
    assert_eq!(row["finished"], false);
    assert_eq!(row["casesReported"], 2);
    assert_eq!(row["ncer"], Value::Null);
    // The configuration comes from the start record when there is no summary.
    assert_eq!(row["config.maxTokens"], 2);
}

#[test]
fn the_target_a_run_recorded_is_its_rows() {
    let mut lines = records(&data("smoke2.jsonl"));
    for line in &mut lines {
        line["target"] = "webdriver:http://grid.example:4444".into();
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("remote.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let Written { objects, .. } = both(&file);
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0]["target"], "webdriver:http://grid.example:4444");
    assert_eq!(objects[0]["browser.name"], lines[0]["browser"]["name"]);
}

#[test]
fn bad_input_says_what_was_wrong() {
    let missing = export(Path::new("no-such-results.jsonl"), &[]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("no-such-results.jsonl"), "{stderr}");
    let format = export(&data("smoke2.jsonl"), &["--format", "xml"]);
    assert_eq!(format.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&format.stderr);
    assert!(stderr.contains("allowed: csv, jsonl"), "{stderr}");
    let unwritable = export(
        &data("smoke2.jsonl"),
        &["--out", "/proc/no-such-dir/runs.csv"],
    );
    assert_eq!(unwritable.status.code(), Some(6));
}

#[test]
fn rows_go_to_stdout_without_out() {
    let output = export(&data("sweep17-decomposition.jsonl"), &["--format", "jsonl"]);
    assert!(output.status.success());
    let rows: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let queries: Vec<&str> = rows.iter().map(|r| r["query"].as_str().unwrap()).collect();
    assert_eq!(
        queries,
        [
            "cases=smoke1&maxTokens=8",
            "decoder=gather-opt&cases=smoke1&weights=external&maxTokens=8",
            "schedule=resident&cases=smoke1&maxTokens=8&realm=worker",
        ]
    );
    // No start record: the adapter and user agent come from the summary's environment.
    assert!(rows.iter().all(|r| r["userAgent"]
        .as_str()
        .is_some_and(|a| a.contains("Firefox"))));
}

#[test]
fn several_files_are_rows_in_the_order_given_as_report_takes_them() {
    let (a, b) = (data("smoke2.jsonl"), data("sweep17-decomposition.jsonl"));
    let rows = |args: &[&std::ffi::OsStr]| -> Vec<String> {
        let output = Command::new(BIN)
            .arg("export")
            .args(args)
            .args(["--format", "jsonl"])
            .output()
            .expect("running ocr-bench export");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["runId"].to_string())
            .collect()
    };
    let (of_a, of_b) = (rows(&[a.as_os_str()]), rows(&[b.as_os_str()]));
    let both = rows(&[a.as_os_str(), b.as_os_str()]);
    assert_eq!(both, [of_a.clone(), of_b].concat());
    // The option earlier versions took still names a file.
    assert_eq!(rows(&["--results".as_ref(), a.as_os_str()]), of_a);
}

#[test]
fn a_failed_verification_and_the_gpu_route_are_in_the_row() {
    let file = data("verify-failed-smoke2.jsonl");
    let lines = records(&file);
    let closing = lines.iter().find(|l| l["kind"] == "run").unwrap();
    let result = lines.iter().find(|l| l["kind"] == "result").unwrap();
    let verification = &result["summary"]["verification"];
    let Written { objects, .. } = both(&file);
    let row = &objects[0];
    assert_eq!(row["verification.passed"], false);
    assert_eq!(row["verification.agreeing"], verification["agreeing"]);
    assert_eq!(row["verification.total"], verification["total"]);
    assert_eq!(row["message"], closing["message"]);
    assert_eq!(row["gpuRoute.asked"], closing["gpuRoute"]["asked"]);
    assert_eq!(row["gpuRoute.route"], closing["gpuRoute"]["route"]);
    assert_eq!(row["gpuRoute.adapter"], closing["gpuRoute"]["adapter"]);
}

#[test]
fn firefox_report_parts_are_columns_that_close_the_rise() {
    let with_reports = both(&data("firefox-memory-reports-smoke1.jsonl"));
    let row = &with_reports.objects[0];
    let cell = |name: &str| row[name].as_f64();
    let mut checked = 0;
    for phase in ["vision-load", "vision-encode", "decoder-run", "release"] {
        let at = |part: &str| cell(&format!("rise.{phase}.{part}"));
        let Some(unexplained) = at("unexplainedBytes") else {
            continue;
        };
        // Every named part is a number where the run took its reports.
        let named: f64 = [
            "gpuBytes",
            "wasmPageBytes",
            "wasmVisionWorkerBytes",
            "wasmDecoderWorkerBytes",
            "shmemBytes",
        ]
        .iter()
        .map(|part| at(part).unwrap_or_else(|| panic!("{phase}: {part} is empty")))
        .sum::<f64>()
            + at("jsHeapBytes").unwrap_or(0.0);
        let report: f64 = [
            "reportJsBytes",
            "reportWasmCodeBytes",
            "reportHeapUnclassifiedBytes",
            "reportGfxBytes",
            "reportOtherBytes",
        ]
        .iter()
        .map(|part| at(part).unwrap_or_else(|| panic!("{phase}: {part} is empty")))
        .sum::<f64>()
            - at("reportHeldAsGpuBytes").unwrap();
        // The columns add up: the rise less every part is what is left unexplained.
        assert_eq!(
            at("pssBytes").unwrap() - named - report,
            unexplained,
            "{phase}: {row:?}"
        );
        checked += 1;
    }
    assert!(checked > 0, "no phase with an unexplained part: {row:?}");

    // A run without Firefox's reports has the columns, empty.
    let without = both(&data("realm-worker-smoke1.jsonl"));
    assert!(without
        .header
        .contains(&"rise.decoder-run.reportJsBytes".to_owned()));
    assert_eq!(
        without.objects[0]["rise.decoder-run.reportJsBytes"],
        Value::Null
    );
}

#[test]
fn a_pools_row_counts_every_decoder_workers_bytes() {
    // Firefox on lavapipe, cases=smoke2&maxTokens=4&realm=worker&pool=2: each realm's last
    // report is in the summary's pool.realmMemory; the page's samples carry realm 0's.
    let file = data("pool/2.jsonl");
    let result = records(&file)
        .into_iter()
        .find(|l| l["kind"] == "result")
        .unwrap();
    let realms = result["summary"]["pool"]["realmMemory"].as_array().unwrap();
    assert_eq!(realms.len(), 2);
    let sum = |figure: &dyn Fn(&Value) -> u64| realms.iter().map(figure).sum::<u64>() as f64;
    let peaks = sum(&|r| r["gpu"]["peakBytes"].as_u64().unwrap());
    let live = sum(&|r| r["gpu"]["liveBytes"].as_u64().unwrap());
    let heaps = sum(&|r| {
        r["wasmHeaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["bytes"].as_u64().unwrap())
            .sum()
    });
    let written = both(&file);
    let row = &written.objects[0];
    let cell = |name: &str| {
        row[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name} is empty: {row:?}"))
    };
    assert_eq!(cell("gpu.decoderWorker.peakBytes"), peaks);
    assert_eq!(cell("phase.decoder-run.gpuBytes"), peaks);
    // decoder-run's end, above baseline (where no worker stood): both devices' live bytes
    // (a software adapter's are process memory) and both workers' heaps.
    assert_eq!(cell("rise.decoder-run.gpuBytes"), live);
    assert_eq!(cell("rise.decoder-run.wasmDecoderWorkerBytes"), heaps);
}

#[test]
fn empty_columns_are_left_out_unless_all_are_asked_for() {
    let file = data("smoke2.jsonl");
    let header = |args: &[&str]| -> Vec<String> {
        let output = export(&file, args);
        assert!(output.status.success(), "{args:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_owned)
            .collect()
    };
    let lean = header(&[]);
    let all = header(&["--all-columns"]);
    assert!(lean.len() < all.len(), "{} of {}", lean.len(), all.len());
    // The kept columns keep their order, and the run's figures are among them.
    let in_order: Vec<&String> = all.iter().filter(|c| lean.contains(c)).collect();
    assert_eq!(in_order, lean.iter().collect::<Vec<_>>());
    assert!(lean.contains(&"phase.decoder-run.peakPssBytes".to_owned()));
    let jsonl = export(&file, &["--format", "jsonl"]);
    let row: Map<String, Value> = serde_json::from_slice(&jsonl.stdout).unwrap();
    assert_eq!(
        row.keys().collect::<Vec<_>>(),
        lean.iter().collect::<Vec<_>>()
    );
    // One run: every column kept is one it holds.
    assert!(row.values().all(|v| !v.is_null()));
}
