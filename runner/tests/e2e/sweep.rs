//! `ocr-bench sweep`: every combination recorded once, and a second sweep that resumes with
//! what is missing.

use super::*;

/// A sweep records every combination, and a second invocation finds them finished and runs
/// nothing. The combinations are ones the adapter refuses quickly where it lacks
/// `shader-f16` (Chromium on SwiftShader), so the test costs seconds there.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn sweep_records_every_combination_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("sweep.jsonl");
    let sweep = |runs: &str| {
        Command::new(BIN)
            .arg("--root")
            .arg(repository_root())
            .args([
                "sweep",
                "--browser",
                "chromium",
                "--timeout",
                &run_timeout().to_string(),
                "--runs",
                runs,
            ])
            .args([
                "--param",
                "tier=242",
                "--param",
                "decoder=baseline,fixed-kv",
                "--param",
                "cases=smoke2",
                "--param",
                "maxTokens=1",
            ])
            .arg("--results")
            .arg(&results)
            .output()
            .expect("running ocr-bench sweep")
    };
    let first = sweep("1");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 0 already finished"),
        "{stderr}"
    );
    let closing: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "run")
        .collect();
    let queries: Vec<&str> = closing
        .iter()
        .map(|r| r["query"].as_str().unwrap())
        .collect();
    assert_eq!(
        queries,
        [
            "tier=242&cases=smoke2&maxTokens=1",
            "tier=242&decoder=fixed-kv&cases=smoke2&maxTokens=1"
        ]
    );
    assert!(
        closing
            .iter()
            .all(|r| r["outcome"] == "result" || r["outcome"] == "error"),
        "{closing:?}"
    );
    // Each run names where its browser ran, which the resume below matches on.
    assert!(
        closing.iter().all(|r| r["target"] == "local"),
        "{closing:?}"
    );
    let table = String::from_utf8_lossy(&first.stdout);
    assert!(table.contains("decoder=fixed-kv"), "{table}");

    let second = sweep("1");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 2 already finished"),
        "{stderr}"
    );
    // --runs: two more runs of each combination, with the runner's own footprint after each.
    let third = sweep("3");
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(third.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 3 run(s), 2 already finished in"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("runner after run").count(), 4, "{stderr}");
    let table = String::from_utf8_lossy(&third.stdout);
    assert!(table.contains("runner over 4 runs: RSS"), "{table}");
    let closing_runs = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""kind":"run""#))
        .count();
    assert_eq!(closing_runs, 6, "each combination three times");
    assert!(descendants().is_empty(), "{:?}", descendants());
}
