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

/// Two jobs of one sweep whose runs overlap for certain: the test-only hold keeps the first
/// run to reach `release` there until the other has entered `decoder-run`, and the other's
/// result unanswered until the first's browser is stopped, so the first ends (and its browser
/// is stopped) while the other's browser is mid-run. Both end with their
/// results, each with its own marks, and each run's process memory is its own browser's: as
/// many processes as the same configuration run alone, not the two browsers together (as
/// when every descendant of the runner was sampled, stopped and reaped by each job).
///
/// The run alone goes to the sweep's results file, so it also checks the probe cache: it
/// reuses the page's completion floor a run of the sweep measured (the very rounds, so no
/// round was run again), and a last run with `--probe always` measures it again.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn a_sweep_with_two_jobs_whose_runs_overlap_ends_with_both_results() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("overlap.jsonl");
    const FUSED: &str = "decoder=fixed-kv-fused&scope=decoder&maxTokens=2";
    let out = Command::new(BIN)
        .arg("--root")
        .arg(repository_root())
        .env("OCR_BENCH_TEST_HOLD", "release:decoder-run")
        .args([
            "sweep",
            "--browser",
            "firefox",
            "--jobs",
            "2",
            "--local-jobs",
            "2",
        ])
        .args(["--timeout", &run_timeout().to_string()])
        .args(["--param", "decoder=baseline,fixed-kv-fused"])
        .args(["--param", "scope=decoder", "--param", "maxTokens=2"])
        .arg("--results")
        .arg(&results)
        .output()
        .expect("running ocr-bench sweep");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let records: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seconds = |r: &Value| {
        humantime::parse_rfc3339(r["time"].as_str().unwrap())
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let of = |query: &str, kind: &str| -> Vec<Value> {
        records
            .iter()
            .filter(|r| r["query"] == query && r["kind"] == kind)
            .cloned()
            .collect()
    };
    let queries = ["scope=decoder&maxTokens=2", FUSED];
    for query in queries {
        let closing = of(query, "run");
        assert_eq!(closing.len(), 1, "{query}: {closing:?}");
        assert_eq!(
            closing[0]["outcome"], "result",
            "{query}: {}\n{stderr}",
            closing[0]
        );
        // Its own marks, under one runId, and its result under the same.
        let run_ids: std::collections::BTreeSet<&str> = records
            .iter()
            .filter(|r| r["query"] == query && r["kind"] != "run")
            .filter_map(|r| r["runId"].as_str().or(r["summary"]["runId"].as_str()))
            .collect();
        assert_eq!(run_ids.len(), 1, "{query}: {run_ids:?}");
        let marks = of(query, "mark");
        let phases: Vec<&str> = marks
            .iter()
            .filter(|m| m["step"].is_null())
            .map(|m| m["phase"].as_str().unwrap())
            .collect();
        assert!(
            phases.ends_with(&["decoder-load", "decoder-run", "release"]),
            "{query}: {phases:?}"
        );
    }
    // The first to end ended while the other was in its decoder-run, before its result.
    let ended = |query: &str| seconds(&of(query, "run")[0]);
    let (first, other) = if ended(queries[0]) < ended(queries[1]) {
        (queries[0], queries[1])
    } else {
        (queries[1], queries[0])
    };
    let other_in_run = of(other, "mark")
        .iter()
        .find(|m| m["phase"] == "decoder-run")
        .map(seconds)
        .unwrap();
    assert!(
        other_in_run < ended(first) && ended(first) < seconds(&of(other, "result")[0]),
        "the runs did not overlap: {first} ended at {}, {other} entered decoder-run at \
         {other_in_run}",
        ended(first)
    );

    let run_alone = |probe: &str| {
        let out = Command::new(BIN)
            .arg("--root")
            .arg(repository_root())
            .args([
                "run",
                "--browser",
                "firefox",
                "--probe",
                probe,
                FUSED,
                "--results",
            ])
            .arg(&results)
            .output()
            .expect("running ocr-bench run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let records: Vec<Value> = std::fs::read_to_string(&results)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let result = records
            .iter()
            .rfind(|r| r["kind"] == "result")
            .unwrap()
            .clone();
        // The probe phase as the runner's sampler timed it: from its mark to the next one.
        let probe_ms = result["processMemory"]["phases"]["probe"]["durationMs"]
            .as_f64()
            .expect("the probe phase was sampled");
        (result, probe_ms, records)
    };
    let (alone, reused_probe_ms, records) = run_alone("reuse");
    let floor = |result: &Value| result["summary"]["completion"]["page"].clone();
    let sweep_floors: Vec<Value> = records
        .iter()
        .filter(|r| r["kind"] == "result")
        .filter(|r| r["summary"]["runId"] != alone["summary"]["runId"])
        .map(floor)
        .collect();
    let reused = floor(&alone);
    assert_eq!(reused["source"]["origin"], "reused", "{reused}");
    let measured_by = sweep_floors
        .iter()
        .find(|f| {
            f["source"]["key"] == reused["source"]["key"]
                && f["dispatchReadbackMs"] == reused["dispatchReadbackMs"]
        })
        .unwrap_or_else(|| {
            panic!("the reused floor is no run's of the sweep: {reused}\n{sweep_floors:?}")
        });
    assert_eq!(measured_by["source"]["origin"], "measured", "{measured_by}");
    assert_eq!(reused["emptyQueueMs"], measured_by["emptyQueueMs"]);
    let (again, measured_probe_ms, _) = run_alone("always");
    let remeasured = floor(&again);
    assert_eq!(remeasured["source"]["origin"], "measured", "{remeasured}");
    assert_eq!(remeasured["source"]["key"], reused["source"]["key"]);
    assert_ne!(
        remeasured["dispatchReadbackMs"], reused["dispatchReadbackMs"],
        "rounds run again"
    );
    eprintln!(
        "e2e: firefox {FUSED}: probe phase {reused_probe_ms:.0} ms reusing the floor, \
         {measured_probe_ms:.0} ms with --probe always"
    );
    let cache: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("overlap.jsonl.probe-cache.json")).unwrap(),
    )
    .unwrap();
    assert!(
        cache["floors"].as_array().unwrap().iter().any(|kept| {
            kept["measuredRunId"] == again["summary"]["runId"]
                && kept["key"] == remeasured["source"]["key"]
        }),
        "the floor measured again replaced the kept one: {cache}"
    );

    let max_processes = |result: &Value| {
        result["processMemory"]["sampler"]["maxProcesses"]
            .as_u64()
            .unwrap()
    };
    let overlapped = records
        .iter()
        .find(|r| r["kind"] == "result" && r["query"] == FUSED)
        .map(max_processes)
        .unwrap();
    // The run alone skipped the page's probe rounds, which start no process of their own.
    let by_itself = max_processes(&alone);
    eprintln!("e2e: processes sampled, overlapped {overlapped}, alone {by_itself}");
    // A process or two may come and go (a utility process); the other browser would double it.
    assert!(
        overlapped <= by_itself + 2 && by_itself <= overlapped + 2,
        "a run of the sweep sampled {overlapped} processes, the same run alone {by_itself}"
    );
    assert!(descendants().is_empty(), "{:?}", descendants());
}
