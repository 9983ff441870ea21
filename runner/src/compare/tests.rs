use std::path::Path;

use serde_json::{json, Value};

use super::*;
use crate::record::tests::LEGACY;

/// A line of the committed results file (Firefox, smoke2), by kind: the n-th of that kind.
fn legacy(kind: &str, n: usize) -> Value {
    LEGACY
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == kind)
        .nth(n)
        .unwrap()
}

fn with_browser(mut record: Value, browser: &str) -> Value {
    record["browser"]["name"] = browser.into();
    record["browser"]["version"] = format!("{browser} 1.0").into();
    record
}

/// The start record of a run that never finished.
fn started(run_id: &str) -> String {
    let mut start = legacy("start", 0);
    start["runId"] = run_id.into();
    start.to_string() + "\n"
}

/// A finished run as JSONL, made of the committed file's records: start, one progress
/// record per case, result (with `summary`'s fields set), run.
fn finished(run_id: &str, browser: &str, cases: &[(&str, &[i64], &str)], summary: Value) -> String {
    let mut lines = vec![started(run_id)];
    for (id, tokens, actual) in cases {
        let mut progress = legacy("progress", 0);
        progress["runId"] = (*run_id).into();
        let case = &mut progress["body"]["case"];
        (case["id"], case["tokenIds"], case["actual"]) =
            ((*id).into(), json!(tokens), (*actual).into());
        lines.push(with_browser(progress, browser).to_string() + "\n");
    }
    let mut result = with_browser(legacy("result", 0), browser);
    result["summary"]["runId"] = run_id.into();
    for (field, value) in summary.as_object().unwrap() {
        result["summary"][field] = value.clone();
    }
    lines.push(result.to_string() + "\n");
    lines.push(with_browser(legacy("run", 0), browser).to_string() + "\n");
    lines.concat()
}

fn run_jsonl(run_id: &str, browser: &str, cases: &[(&str, &[i64], &str)]) -> String {
    finished(run_id, browser, cases, json!({}))
}

fn parse(text: &str) -> Run {
    parse_run(text, Path::new("x.jsonl"), None).unwrap()
}

#[test]
fn the_committed_results_file_reads_as_a_run() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/legacy-smoke2.jsonl");
    let run = load_run(&file, None).unwrap();
    assert_eq!(
        run.run_id,
        "tier-121-lean-url-staged-baseline-full-1796122366667"
    );
    assert_eq!(run.query, "cases=smoke2&maxTokens=2");
    assert_eq!(
        run.browser,
        Some((
            "firefox".to_owned(),
            "Mozilla Firefox 153.8.0esr".to_owned()
        ))
    );
    let ids: Vec<&str> = run.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["1", "2"]);
    assert_eq!(run.cases[0].token_ids, vec![960, 1032]);
    assert_eq!(run.timing.completion_bound, Some(false));
    assert!(run.timing.token_p50_ms.is_some_and(|ms| ms > 0.0));
    let itself = compare(run.clone(), run);
    assert!(itself.identical());
    assert!(itself.render().contains("config: cases=smoke2&maxTokens=2"));
}

#[test]
fn timing_is_set_side_by_side_with_the_ratio() {
    let probe = |token: f64, first: f64| {
        json!({ "tokenLatency": { "count": 1, "minMs": token, "p50Ms": token, "p90Ms": token, "maxMs": token, "meanMs": token },
                "timeToFirstToken": { "count": 1, "minMs": first, "p50Ms": first, "p90Ms": first, "maxMs": first, "meanMs": first } })
    };
    let with = |summary: Value| finished("r", "firefox", &[("1", &[5, 6], "ab")], summary);
    let mut a = json!({ "msPerToken": 100.1, "medianMs": 2400.0, "completionBound": true });
    a["decodeProbe"] = legacy("result", 0)["summary"]["decodeProbe"].clone();
    for (field, value) in probe(100.1, 300.0).as_object().unwrap() {
        a["decodeProbe"][field] = value.clone();
    }
    let mut b = json!({ "msPerToken": 12.9, "medianMs": 500.0, "completionBound": false });
    b["decodeProbe"] = a["decodeProbe"].clone();
    for (field, value) in probe(12.7, 40.0).as_object().unwrap() {
        b["decodeProbe"][field] = value.clone();
    }
    let text = compare(parse(&with(a)), parse(&with(b))).render();
    assert!(
        text.contains("per-token p50: A 100.10 ms, B 12.70 ms, B/A 0.127"),
        "{text}"
    );
    assert!(
        text.contains("ms per decode step: A 100.10 ms, B 12.90 ms, B/A 0.129"),
        "{text}"
    );
    assert!(text.contains("A is completion-bound"), "{text}");
    assert!(!text.contains("B is completion-bound"), "{text}");
}

#[test]
fn another_pages_result_has_no_timing_and_no_config() {
    let text = started("r")
        + &json!({"kind": "result", "summary": {"preprocessMs": 1.0},
            "processMemory": {"available": false, "reason": "serve"},
            "time": "t", "browser": null, "query": null, "page": null})
        .to_string();
    // Without a summary run id the result belongs to no run: nothing finished.
    let err = parse_run(&text, Path::new("x.jsonl"), None).unwrap_err();
    assert!(err.0.contains("no finished run"), "{}", err.0);
}

#[test]
fn identical_runs_compare_identical() {
    let cases: &[(&str, &[i64], &str)] = &[("01", &[5, 6, 7], "abc"), ("02", &[9], "d")];
    let a = parse(&run_jsonl("r1", "chromium", cases));
    let b = parse(&run_jsonl("r2", "firefox", cases));
    let c = compare(a, b);
    assert!(c.identical());
    assert_eq!(c.cases.len(), 2);
    assert_eq!(c.identical_cases(), 2);
    assert_eq!(c.positions(), (4, 4));
    let text = c.render();
    assert!(text.contains("01    ") && text.contains("same"), "{text}");
    assert!(
        text.contains("2 cases compared, 2 with identical tokens; 4/4 token positions agree"),
        "{text}"
    );
    assert!(
        text.contains("A: x.jsonl run r1: chromium (chromium 1.0) · cases=smoke2&maxTokens=2 · config: cases=smoke2&maxTokens=2"),
        "{text}"
    );
    assert!(text.contains("B: x.jsonl run r2: firefox (firefox 1.0)"));
}

#[test]
fn one_differing_token_is_located() {
    let a = parse(&run_jsonl(
        "r1",
        "chromium",
        &[("01", &[5, 6, 7], "abc"), ("02", &[9], "d")],
    ));
    let b = parse(&run_jsonl(
        "r2",
        "firefox",
        &[("01", &[5, 8, 7], "axc"), ("02", &[9], "d")],
    ));
    let c = compare(a, b);
    assert!(!c.identical());
    assert_eq!(
        c.cases[0].first_difference,
        Some(Difference {
            position: 1,
            token_a: Some(6),
            token_b: Some(8)
        })
    );
    assert_eq!(c.cases[1].first_difference, None);
    assert_eq!(c.identical_cases(), 1);
    assert_eq!(c.positions(), (4, 3));
    let text = c.render();
    assert!(
        text.contains(r#"differ at 1: A 6 B 8; A "abc" B "axc""#),
        "{text}"
    );
    assert!(text.contains("3/4 token positions agree"), "{text}");
}

#[test]
fn a_shorter_sequence_differs_where_it_ends() {
    let a = parse(&run_jsonl("r1", "chromium", &[("01", &[5, 6], "ab")]));
    let b = parse(&run_jsonl("r2", "firefox", &[("01", &[5, 6, 7], "abc")]));
    let c = compare(a, b);
    assert!(!c.identical());
    assert_eq!(
        c.cases[0].first_difference,
        Some(Difference {
            position: 2,
            token_a: None,
            token_b: Some(7)
        })
    );
    assert_eq!(c.positions(), (3, 2));
    assert!(c.render().contains("differ at 2: A (end) B 7"));
}

#[test]
fn a_case_in_one_file_only_is_listed_and_counted() {
    let a = parse(&run_jsonl(
        "r1",
        "chromium",
        &[("01", &[5], "a"), ("02", &[9], "d")],
    ));
    let b = parse(&run_jsonl(
        "r2",
        "firefox",
        &[("01", &[5], "a"), ("03", &[4], "e")],
    ));
    let c = compare(a, b);
    assert!(!c.identical());
    assert_eq!(c.cases.len(), 1);
    assert_eq!(c.only_in_a, vec!["02".to_owned()]);
    assert_eq!(c.only_in_b, vec!["03".to_owned()]);
    let text = c.render();
    assert!(text.contains("only in A (1): 02"), "{text}");
    assert!(text.contains("only in B (1): 03"), "{text}");
    assert!(
        text.contains("1 cases compared, 1 with identical tokens; 1/1 token positions agree; 1 only in A, 1 only in B"),
        "{text}"
    );
}

#[test]
fn the_last_finished_run_is_taken_unless_one_is_named() {
    let text = run_jsonl("old", "chromium", &[("01", &[1], "a")])
        + &run_jsonl("new", "chromium", &[("01", &[2], "b")])
        // Started but never finished: not a candidate.
        + &started("crashed");
    let last = parse(&text);
    assert_eq!(last.run_id, "new");
    assert_eq!(last.cases[0].token_ids, vec![2]);
    let named = parse_run(&text, Path::new("x.jsonl"), Some("old")).unwrap();
    assert_eq!(named.cases[0].token_ids, vec![1]);
    let err = parse_run(&text, Path::new("x.jsonl"), Some("nope")).unwrap_err();
    assert_eq!(
        err.0,
        "x.jsonl has no finished run with runId \"nope\"; finished runs: old, new; runs without a result record: crashed"
    );
    let err = parse_run(&text, Path::new("x.jsonl"), Some("crashed")).unwrap_err();
    assert!(err.0.contains("runs without a result record: crashed"));
}

#[test]
fn a_file_without_a_finished_run_is_refused() {
    let mut progress = legacy("progress", 0);
    progress["runId"] = "r1".into();
    let text = started("r1") + &progress.to_string() + "\n";
    let err = parse_run(&text, Path::new("a.jsonl"), None).unwrap_err();
    assert_eq!(
        err.0,
        "a.jsonl has no finished run (no result record); runs without a result record: r1"
    );
    let err = parse_run("", Path::new("empty.jsonl"), None).unwrap_err();
    assert_eq!(
        err.0,
        "empty.jsonl has no finished run (no result record); runs without a result record: none"
    );
}

#[test]
fn a_malformed_line_is_named_by_file_and_line() {
    let mut text = run_jsonl("r1", "chromium", &[("01", &[1], "a")]);
    text.insert(0, '\n'); // blank lines are skipped but still counted
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "{\"kind\": \"progress\", \"runId\": 7}");
    let err = parse_run(&lines.join("\n"), Path::new("b.jsonl"), None).unwrap_err();
    assert!(
        err.0.starts_with("b.jsonl:4: not a results record"),
        "{}",
        err.0
    );
}

#[test]
fn a_torn_line_is_skipped_and_the_run_still_reads() {
    let text = run_jsonl("r1", "chromium", &[("01", &[1], "a")]);
    let mut lines: Vec<&str> = text.lines().collect();
    // A crash mid-append: half a record, then the next append on a fresh line.
    lines.insert(1, "{\"kind\": \"progress\", \"runId\": ");
    let run = parse_run(&lines.join("\n"), Path::new("b.jsonl"), None).unwrap();
    assert_eq!(run.run_id, "r1");
    assert_eq!(run.cases.len(), 1);
}

#[test]
fn a_case_without_token_ids_is_refused() {
    let mut progress = legacy("progress", 0);
    progress["body"]["case"]
        .as_object_mut()
        .unwrap()
        .remove("tokenIds");
    let text = progress.to_string() + "\n" + &run_jsonl("r1", "firefox", &[]);
    let err = parse_run(&text, Path::new("c.jsonl"), None).unwrap_err();
    assert!(
        err.0.starts_with("c.jsonl:1: not a results record"),
        "{}",
        err.0
    );
    assert!(err.0.contains("tokenIds"), "{}", err.0);
}

#[test]
fn summary_results_stand_in_when_a_run_has_no_progress_records() {
    let run = parse(&run_jsonl("r1", "firefox", &[]));
    let ids: Vec<&str> = run.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["1", "2"]);
    assert_eq!(run.cases[1].token_ids.len(), 2);
}

/// Three real Firefox runs of smoke2: one of the baseline decoder, then two of gather-opt.
const TWO_CONFIGS: &str = include_str!("../../tests/data/two-configs.jsonl");

fn two_configs(run: usize) -> Run {
    let ids: Vec<String> = TWO_CONFIGS
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "result")
        .map(|r| r["summary"]["runId"].as_str().unwrap().to_owned())
        .collect();
    parse_run(TWO_CONFIGS, Path::new("t.jsonl"), Some(&ids[run])).unwrap()
}

fn figure(run: &Run, name: &str) -> f64 {
    let figures = &run.measured.figures;
    figures.iter().find(|f| f.name == name).unwrap().value
}

#[test]
fn the_spread_of_several_runs_of_one_configuration_judges_the_difference() {
    let (a, b, other_b) = (two_configs(0), two_configs(2), two_configs(1));
    // A has one run of its configuration, B two: B's range is the spread.
    assert!(a.measured.spreads.is_empty(), "{:?}", a.measured.spreads);
    let name = "per-token p50";
    let range = (figure(&b, name) - figure(&other_b, name)).abs();
    let (_, spread) = b.measured.spreads.iter().find(|(n, _)| n == name).unwrap();
    assert!((spread.width - range).abs() < 1e-9);
    assert_eq!(
        spread.source,
        "range of 2 runs of this configuration in t.jsonl"
    );
    let difference = figure(&b, name) - figure(&a, name);
    assert!(
        difference.abs() > range,
        "the recorded runs differ by more than their spread"
    );
    let text = compare(a.clone(), b.clone()).render();
    let line = text
        .lines()
        .find(|l| l.starts_with("per-token p50: "))
        .unwrap();
    assert_eq!(
        line,
        format!(
            "per-token p50: A {:.2} ms, B {:.2} ms, B/A {:.3}, B−A +{difference:.2} ms: beyond the spread ({range:.2} ms, range of 2 runs of this configuration in t.jsonl)",
            figure(&a, name),
            figure(&b, name),
            figure(&b, name) / figure(&a, name)
        )
    );
    // Memory too: peak PSS of every phase both have, and the GPU bytes of both realms.
    for name in [
        "peak PSS decoder-run",
        "peak GPU bytes, page",
        "peak GPU bytes, vision worker",
    ] {
        assert!(text.contains(&format!("\n{name}: A ")), "{name}: {text}");
    }
    // The same runs the other way round: the sign turns, the verdict stays.
    let back = compare(b, a).render();
    assert!(
        back.contains(&format!("B−A -{difference:.2} ms: beyond the spread")),
        "{back}"
    );
}

#[test]
fn a_difference_inside_the_spread_is_said_to_be_within_it() {
    let (b, other_b) = (two_configs(2), two_configs(1));
    // Two runs of one configuration differ by exactly their own range: not beyond it.
    let text = compare(other_b, b).render();
    let line = text
        .lines()
        .find(|l| l.starts_with("per-token p50: "))
        .unwrap();
    assert!(line.contains(": within the spread ("), "{line}");
}

#[test]
fn the_interval_of_repeats_is_the_spread_when_the_run_has_one() {
    let mut result = legacy("result", 0);
    result["summary"]["repeats"]["interval"]["tokenP50Ms"] =
        json!({ "n": 3, "mean": 2063.0, "ci95Low": 2000.0, "ci95High": 2100.0, "halfWidth": 50.0 });
    let text = LEGACY
        .lines()
        .map(|l| {
            let record: Value = serde_json::from_str(l).unwrap();
            if record["kind"] == "result" {
                result.to_string()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let a = parse(&text);
    let b = load_run(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/smoke2.jsonl"),
        None,
    )
    .unwrap();
    let rendered = compare(a, b).render();
    let line = rendered
        .lines()
        .find(|l| l.starts_with("per-token p50: "))
        .unwrap();
    assert!(
        line.ends_with("(100.00 ms, 95% interval of 3 repeats)"),
        "{line}"
    );
    // A figure without an interval and a single run on each side: nothing to judge by.
    let line = rendered
        .lines()
        .find(|l| l.starts_with("median case: "))
        .unwrap();
    assert!(line.ends_with(": no spread known"), "{line}");
}

#[test]
fn a_realm_worker_run_compares_its_decoder_workers_gpu_bytes() {
    // A real realm=worker run (Firefox, smoke1): its decoder worker's device peaked at
    // 212055504 bytes, 202.2 MiB; the page made no device of its own.
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/realm-worker-smoke1.jsonl");
    let (a, b) = (
        load_run(&file, None).unwrap(),
        load_run(&file, None).unwrap(),
    );
    let text = compare(a, b).render();
    let line = text
        .lines()
        .find(|l| l.starts_with("peak GPU bytes, decoder worker: "))
        .unwrap_or_else(|| panic!("no decoder worker line in {text}"));
    assert!(
        line.starts_with("peak GPU bytes, decoder worker: A 202.2 MiB, B 202.2 MiB, B/A 1.000"),
        "{line}"
    );
    assert!(!text.contains("peak GPU bytes, page: "), "{text}");
}

#[test]
fn each_sides_verification_is_said_and_a_failed_one_in_capitals() {
    let verified = |diverging: bool| {
        let verification = crate::report::tests::verified(diverging).verification;
        json!({ "verification": serde_json::to_value(verification).unwrap() })
    };
    let cases: &[(&str, &[i64], &str)] = &[("1", &[5, 6], "ab")];
    let a = parse(&finished("a", "firefox", cases, verified(false)));
    let b = parse(&finished("b", "firefox", cases, verified(true)));
    let text = compare(a, b).render();
    assert!(
        text.contains("\nA verified (wasm): 2/2 cases agree"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nB VERIFICATION FAILED: these figures are not a result of this configuration (wasm): 1/2 cases agree"
        ),
        "{text}"
    );
    // A run that did not verify says nothing of it.
    let plain = compare(
        parse(&run_jsonl("a", "firefox", cases)),
        parse(&run_jsonl("b", "firefox", cases)),
    );
    assert!(!plain.render().contains("verif"), "{}", plain.render());
}

#[test]
fn a_run_says_its_target_where_it_is_not_the_local_machine() {
    let local = parse(&run_jsonl("a", "firefox", &[("c1", &[5, 2], "x")]));
    assert_eq!(
        local.target.as_deref(),
        Some("local"),
        "older files ran locally"
    );
    assert!(!describe(&local).contains(" on "), "{}", describe(&local));
    let remote: String = run_jsonl("b", "firefox", &[("c1", &[5, 2], "x")])
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            record["target"] = "webdriver:http://grid.example:4444".into();
            record.to_string() + "\n"
        })
        .collect();
    let remote = parse(&remote);
    assert!(
        describe(&remote).contains("firefox (firefox 1.0) on webdriver:http://grid.example:4444"),
        "{}",
        describe(&remote)
    );
}
