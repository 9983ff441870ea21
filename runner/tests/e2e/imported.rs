//! An imported Hugging Face export read by the page in both browsers: `ocr-bench import` makes
//! the test model's manifest (`models/hf-test/vit-trocr-tiny/`, an optimum export), and a real
//! `ocr-bench run` reads `smoke2` with it, Firefox on the default path and Chromium with
//! `schedule=resident` and `choose=gpu`. Each case's token ids must be PyTorch `generate()`'s
//! (`expected-ids.json`), which `scripts/ocrmodel/test_hf_oracle.py` holds the onnxruntime-CPU
//! oracle to; and the record names the family and the token rule it applied.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use super::{repository_root, run_timeout, BIN};

const EXPORT: &str = "models/hf-test/vit-trocr-tiny";
const SET: &str = "smoke2";
/// Few tokens keep the runs short; a greedy reading's first tokens are its own prefix.
const MAX_TOKENS: usize = 4;

/// PyTorch's ids of `SET`'s case `id`, cut to `MAX_TOKENS`.
fn expected_ids(root: &Path, id: &str) -> Vec<i64> {
    let file = root.join(EXPORT).join("expected-ids.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let expected: Value = serde_json::from_str(&text).unwrap();
    expected["sets"][SET][id]["tokenIds"]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no ids of {SET} case {id}", file.display()))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .take(MAX_TOKENS)
        .collect()
}

/// Imports the test export into a scratch folder under the root's `target/` (served, and
/// git-ignored); returns the folder and the query `import` printed.
fn import(root: &Path) -> (tempfile::TempDir, String) {
    let target = root.join("target");
    std::fs::create_dir_all(&target).unwrap();
    // Not a dot folder: the server refuses hidden paths.
    let dir = tempfile::Builder::new()
        .prefix("e2e-import-")
        .tempdir_in(target)
        .unwrap();
    let output = Command::new(BIN)
        .arg("--root")
        .arg(root)
        .arg("import")
        .arg(root.join(EXPORT))
        .arg("--out")
        .arg(dir.path().join("vit-trocr-tiny"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let query = stdout
        .lines()
        .find_map(|line| line.strip_prefix("query: "))
        .unwrap_or_else(|| panic!("no query printed:\n{stdout}"))
        .to_owned();
    (dir, query)
}

fn read(root: &Path, browser: &str, query: &str) {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let started = Instant::now();
    let output = Command::new(BIN)
        .arg("--root")
        .arg(root)
        .args([
            "run",
            "--browser",
            browser,
            "--timeout",
            &run_timeout().to_string(),
            "--results",
        ])
        .arg(&results)
        .arg(query)
        .output()
        .unwrap();
    eprintln!(
        "e2e: {browser} {query:?}: exit {:?} in {:.0} s",
        output.status.code(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "result")
        .expect("a result record");
    let summary = &result["summary"];
    assert_eq!(
        summary["manifest"]["family"], "encoder-decoder",
        "{summary}"
    );
    let generation = &summary["manifest"]["generation"];
    assert!(generation["repetitionPenalty"].is_number(), "{generation}");
    let cases = summary["results"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{summary}");
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let ids: Vec<i64> = case["tokenIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(
            ids,
            expected_ids(root, id),
            "{browser}: {SET} case {id}: {case}"
        );
    }
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn an_imported_export_reads_pytorchs_ids_in_both_browsers() {
    let root = repository_root().canonicalize().unwrap();
    let (_dir, printed) = import(&root);
    // The printed query names the model's own token limit; these runs take fewer.
    let query: Vec<&str> = printed
        .split('&')
        .filter(|p| !p.starts_with("maxTokens="))
        .collect();
    let query = format!("{}&cases={SET}&maxTokens={MAX_TOKENS}", query.join("&"));
    read(&root, "firefox", &query);
    // The harness's fast path for the family: resident, the token chosen on the GPU under the
    // model's rule and read back every 2 steps (4 tokens: a batch that must stop at maxTokens).
    read(
        &root,
        "chromium",
        &format!("{query}&schedule=resident&choose=gpu&sync=2"),
    );
}
