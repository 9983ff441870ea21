//! An imported Hugging Face export read by the page in both browsers: `ocr-bench import` makes
//! the test model's manifest (`models/hf-test/vit-trocr-tiny/`, an optimum export), and a real
//! `ocr-bench run` reads `smoke2` with it, Firefox on the default path and Chromium with
//! `schedule=resident` and `choose=gpu`. Each case's token ids must be PyTorch `generate()`'s
//! (`expected-ids.json`), which `scripts/ocrmodel/test_hf_oracle.py` holds the onnxruntime-CPU
//! oracle to; and the record names the family and the token rule it applied.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{check_no_orphans, launch, repository_root, BIN};

/// The committed test export, which the transformers.js peer page reads too (`peer.rs`).
pub(super) const EXPORT: &str = "models/hf-test/vit-trocr-tiny";
const SET: &str = "smoke2";
/// Few tokens keep the runs short; a greedy reading's first tokens are its own prefix.
const MAX_TOKENS: usize = 4;

/// PyTorch `generate()`'s ids of case `id` of evaluation set `set` on the test export
/// (`expected-ids.json`), cut to `max_tokens`.
pub(super) fn pytorch_ids(root: &Path, set: &str, id: &str, max_tokens: usize) -> Vec<i64> {
    let file = root.join(EXPORT).join("expected-ids.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let expected: Value = serde_json::from_str(&text).unwrap();
    expected["sets"][set][id]["tokenIds"]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no ids of {set} case {id}", file.display()))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .take(max_tokens)
        .collect()
}

/// The ids a finished case read.
pub(super) fn case_ids(case: &Value) -> Vec<i64> {
    case["tokenIds"]
        .as_array()
        .unwrap_or_else(|| panic!("a case without tokenIds: {case}"))
        .iter()
        .map(|v| v.as_i64().unwrap())
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
    let run = launch(browser, query, None);
    assert_eq!(run.exit_code, Some(0), "{}", run.describe());
    check_no_orphans(&run);
    let summary = &run.record("result").expect("a result record")["summary"];
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
        assert_eq!(
            case_ids(case),
            pytorch_ids(root, SET, id, MAX_TOKENS),
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
