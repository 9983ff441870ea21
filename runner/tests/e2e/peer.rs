//! The transformers.js peer page (`www/peers/transformers-js.html`) on the test model
//! (`models/hf-test/vit-trocr-tiny/`, an optimum export) under a real `ocr-bench run` in
//! Firefox: it reads PyTorch `generate()`'s token ids (`expected-ids.json`), reports as another
//! page with process memory sampled per phase, and `table` sets it down with its per-token p50.
//! `pixels=core` feeds it the core's `VitImageProcessor` pixels: transformers.js resizes with
//! the canvas, not with PIL's filter, so its own pixels are another input than PyTorch's.

use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use super::imported::{case_ids, pytorch_ids, EXPORT as MODEL};
use super::{repository_root, run_timeout, BIN};

const PAGE: &str = "www/peers/transformers-js.html";
const SET: &str = "smoke2";
/// Few tokens keep the run short; a greedy reading's first tokens are its own prefix.
const MAX_TOKENS: usize = 3;

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_peer_page_reads_pytorchs_ids_with_the_cores_pixels() {
    let root = repository_root().canonicalize().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let query = format!("model=/{MODEL}/&cases={SET}&maxTokens={MAX_TOKENS}&pixels=core");
    let started = Instant::now();
    let output = Command::new(BIN)
        .arg("--root")
        .arg(&root)
        .args([
            "run",
            "--browser",
            "firefox",
            "--timeout",
            &run_timeout().to_string(),
        ])
        .args(["--page", PAGE, "--results"])
        .arg(&results)
        .arg(&query)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!(
        "e2e: firefox {PAGE} {query:?}: exit {:?} in {:.0} s",
        output.status.code(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");

    let records: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let result = records
        .iter()
        .find(|r| r["kind"] == "result")
        .expect("a result record");
    let summary = &result["summary"];
    assert!(
        summary["transformersVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("4.")),
        "{summary}"
    );
    assert!(summary["ortVersion"].as_str().is_some(), "{summary}");
    let phases = result["processMemory"]["phases"]
        .as_object()
        .expect("process memory per phase");
    for phase in [
        "baseline",
        "vision-load",
        "decoder-load",
        "decoder-run",
        "release",
    ] {
        assert!(
            phases.contains_key(phase),
            "no process memory of {phase}: {phases:?}"
        );
    }

    let cases = summary["results"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{summary}");
    for case in cases {
        let id = case["id"].as_str().unwrap();
        assert_eq!(
            case_ids(case),
            pytorch_ids(&root, SET, id, MAX_TOKENS),
            "{SET} case {id}: {case}"
        );
        // One latency per token after the first: each decoder step after the first one.
        assert_eq!(
            case["tokenMs"].as_array().unwrap().len() as u64,
            case["decodeSteps"].as_u64().unwrap()
        );
        assert!(case["timeToFirstTokenMs"].as_f64().unwrap() >= case["visionMs"].as_f64().unwrap());
        // What transformers.js's own processor gives next to the core's: printed, for the docs.
        eprintln!(
            "e2e: case {id}: its own pixels differ from the core's by at most {}",
            case["pixelsMaxDiff"]
        );
    }

    let table = Command::new(BIN)
        .arg("table")
        .arg("--against")
        .arg(&results)
        .arg(&results)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    // The row's per-token p50 is the page's own streamer figure, not "-".
    let row = format!("| {PAGE}?{query} (the seed's loop) | 1 | ");
    let per_token = table
        .lines()
        .find_map(|line| line.strip_prefix(row.as_str()))
        .and_then(|rest| rest.split(" |").next())
        .and_then(|cell| cell.parse::<f64>().ok());
    assert!(per_token.is_some_and(|ms| ms > 0.0), "{table}");
}
