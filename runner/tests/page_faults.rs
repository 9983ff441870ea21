//! The GPU-side fault matrix: a real `ocr-bench run` of the benchmark page (onnxruntime-web,
//! the worker and the models) in headless Firefox on short runs, each hit by one fault: the
//! page's device lost in the middle of decoding, the vision worker throwing or ending during
//! encode, a page that stops reporting, the process that holds the WebGPU device killed, a
//! corrupt image, and Ctrl-C during a sweep then its resumption. The in-page faults come from
//! the test-only `OCR_BENCH_INJECT` (`docs/benchmark-protocol.md`, "Fault injection").
//!
//! Each checks the message naming the fault, that every case finished before it is in the
//! results file, that the run is marked failed and never scored, that no browser process or
//! profile is left, and the exit status for its cause (`runner/README.md`, "Exit status").
//! Where Firefox or the built page and models are missing, each fails naming what installs or
//! builds them (skipped instead under `OCR_BENCH_SKIP_BROWSER_TESTS=1`). About 6 minutes in all on
//! the 2-core development machine at a load of 20 (the hang alone waits its 25 s timeout, and
//! twice that where the page is slower to reach it).

#[path = "page_faults/bad_inputs.rs"]
mod bad_inputs;
#[path = "page_faults/device_and_workers.rs"]
mod device_and_workers;
#[path = "page_faults/run_control.rs"]
mod run_control;

mod harness;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use harness::{firefox_fault, records, Fault, Running, BIN};

/// The checkout: the page, the worker, the built core and models.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether the page can run here: the wasm core and the models are built. Where they are not,
/// the test fails naming what builds them (or is skipped under `OCR_BENCH_SKIP_BROWSER_TESTS=1`).
fn page_built() -> bool {
    let root = checkout();
    let missing: Vec<&str> = [
        "pkg/ocr_bench_core_bg.wasm",
        "models/generated/vision_int4.onnx",
        "models/eval/smoke2/cases.json",
        "node_modules/onnxruntime-web",
    ]
    .into_iter()
    .filter(|p| !root.join(p).exists())
    .collect();
    if !missing.is_empty() {
        harness::skip_or_fail(
            &format!("the page is not built: {} missing", missing.join(", ")),
            "./scripts/setup && ./scripts/build-wasm && (cd scripts && ../.venv/bin/python -m ocrmodel.build_models)",
        );
    }
    missing.is_empty()
}

/// `ocr-bench run` of the benchmark page in Firefox with `query`, and the fault `inject`.
fn run_page(
    fault: &Fault,
    root: &Path,
    query: &str,
    inject: Option<&str>,
    timeout_s: u64,
) -> Running {
    let mut args: Vec<OsString> = vec!["--root".into(), root.into()];
    for arg in [
        "run",
        "--browser",
        "firefox",
        "--timeout",
        &timeout_s.to_string(),
        "--results",
    ] {
        args.push(arg.into());
    }
    args.push(fault.path("results.jsonl").into());
    args.push(query.into());
    let env: Vec<(&str, &str)> = inject
        .map(|spec| ("OCR_BENCH_INJECT", spec))
        .into_iter()
        .collect();
    fault.start(&args, &env)
}

fn kinds(all: &[Value]) -> Vec<&str> {
    all.iter().map(|r| r["kind"].as_str().unwrap()).collect()
}

/// The results of a failed run: `progress` records for the cases finished before the fault,
/// no `result`, a closing record with `outcome`; and `compare` finds no finished run to score.
fn assert_failed_run(fault: &Fault, cases_before: usize, outcome: &str) -> Value {
    let results = fault.path("results.jsonl");
    let all = records(&results);
    let kinds = kinds(&all);
    assert_eq!(
        kinds.iter().filter(|k| **k == "progress").count(),
        cases_before,
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"result"), "{kinds:?}");
    let closing = all.last().unwrap();
    assert_eq!(closing["kind"], "run", "{kinds:?}");
    assert_eq!(closing["outcome"], outcome, "{closing}");
    // Never scored: compare takes only finished runs.
    let compare = Command::new(BIN)
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&compare.stderr).contains("no finished run"));
    // The fault is never part of the configuration.
    for record in &all {
        let query = record["query"].as_str().unwrap_or_default();
        assert!(!query.contains("inject"), "{record}");
        assert!(
            !record["body"]["config"].to_string().contains("inject"),
            "{record}"
        );
    }
    closing.clone()
}

/// The page's error message as written in its `error` record.
fn page_error(fault: &Fault) -> String {
    let all = records(&fault.path("results.jsonl"));
    let error = all
        .iter()
        .find(|r| r["kind"] == "error")
        .expect("an error record");
    error["body"]["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned()
}
