//! The grouping rule over the recorded files of `tests/data/`, and over lines of them edited
//! into the runs that never got a result.

use serde_json::{json, Value};

use super::*;

const LEGACY: &str = include_str!("../../tests/data/legacy-smoke2.jsonl");
const CURRENT: &str = include_str!("../../tests/data/smoke2.jsonl");
const TWO_CONFIGS: &str = include_str!("../../tests/data/two-configs.jsonl");
const SWEEP: &str = include_str!("../../tests/data/sweep17-decomposition.jsonl");
const REALM_WORKER: &str = include_str!("../../tests/data/realm-worker-smoke1.jsonl");

fn runs_of(text: &str) -> Vec<Run> {
    group(record::parse_records(text).expect("records").lines)
}

/// The file's lines as JSON, to edit into other runs.
fn values(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

fn kinds(run: &Run) -> Vec<&'static str> {
    run.lines.iter().map(|(_, l)| l.record.kind()).collect()
}

#[test]
fn a_file_of_one_launch_is_one_run_whatever_its_layout() {
    for (name, file, cases) in [
        ("legacy", LEGACY, 2),
        ("current", CURRENT, 2),
        ("realm=worker", REALM_WORKER, 1),
    ] {
        let runs = runs_of(file);
        assert_eq!(runs.len(), 1, "{name}");
        let run = &runs[0];
        assert_eq!(run.lines.len(), file.lines().count(), "{name}");
        assert_eq!(kinds(run).first(), Some(&"start"), "{name}");
        assert_eq!(kinds(run).last(), Some(&"run"), "{name}");
        let summary = run.summary().expect("the page's summary");
        assert_eq!(
            run.run_id.as_deref(),
            Some(summary.run_id.as_str()),
            "{name}"
        );
        assert_eq!(run.progress().len(), cases, "{name}");
        assert_eq!(run.end().map(|e| e.outcome.as_str()), Some("result"));
        assert_eq!(run.marks().next(), Some("baseline"), "{name}");
        assert!(run.start().is_some() && run.browser().is_some(), "{name}");
    }
    // The legacy closing record names no runId: it closes the launch all the same.
    assert!(LEGACY.lines().last().unwrap().find("runId").is_none());
}

#[test]
fn three_launches_of_two_configurations_are_three_runs_in_file_order() {
    let runs = runs_of(TWO_CONFIGS);
    let ids: Vec<&str> = runs.iter().filter_map(|r| r.run_id.as_deref()).collect();
    assert_eq!(
        ids,
        [
            "tier-121-lean-url-staged-baseline-full-1796131501960",
            "tier-121-lean-url-staged-gather-opt-full-1796131539318",
            "tier-121-lean-url-staged-gather-opt-full-1796131611607",
        ]
    );
    let firsts: Vec<usize> = runs.iter().map(Run::first_line).collect();
    assert_eq!(firsts, [1, 13, 25]);
    assert!(runs
        .iter()
        .all(|r| r.lines.len() == 12 && r.end().is_some()));
    assert_eq!(
        runs[1].query(),
        Some("decoder=gather-opt&cases=smoke2&maxTokens=2")
    );
}

#[test]
fn result_records_alone_are_a_run_each() {
    let runs = runs_of(SWEEP);
    assert_eq!(runs.len(), 3);
    assert!(runs
        .iter()
        .all(|r| r.summary().is_some() && r.end().is_none() && r.start().is_none()));
}

#[test]
fn a_run_that_timed_out_keeps_its_records_and_has_no_result() {
    let mut lines = values(LEGACY);
    // The page got as far as its first cases; the runner then gave up.
    let mut closing = lines.pop().unwrap();
    lines.truncate(9);
    closing["outcome"] = json!("timeout");
    closing["message"] = json!("no result within 40 s");
    lines.push(closing);
    let runs = runs_of(&text(&lines));
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert!(run.result().is_none());
    assert_eq!(run.progress().len(), 2);
    assert_eq!(run.end().unwrap().outcome, "timeout");
}

#[test]
fn a_page_error_joins_its_run_and_the_closing_record_names_it() {
    let lines = values(CURRENT);
    let id = lines[0]["runId"].clone();
    let mut error = lines[5].clone();
    error["kind"] = json!("error");
    error["phase"] = json!("decoder-load");
    error["body"] = json!({ "phase": "decoder-load", "error": { "name": "RangeError", "message": "out of memory" } });
    let mut closing = lines[11].clone();
    closing["outcome"] = json!("error");
    closing["runId"] = id;
    let mut edited = lines[..6].to_vec();
    edited.extend([error, closing]);
    let runs = runs_of(&text(&edited));
    assert_eq!(runs.len(), 1);
    let (phase, body) = runs[0].errors().next().expect("the page's error");
    assert_eq!(phase, Some("decoder-load"));
    assert_eq!(body.message(), "RangeError: out of memory");
    assert_eq!(runs[0].end().unwrap().outcome, "error");
}

#[test]
fn a_launch_whose_page_never_spoke_is_a_run_of_its_own() {
    let mut lines = values(LEGACY);
    // A second launch of the same configuration, a minute later: the browser exited before
    // the page posted anything, so its closing record names no run.
    let mut closing = lines[11].clone();
    closing["time"] = json!("2026-12-01T10:54:40.000Z");
    closing["wallSeconds"] = json!(5.0);
    closing["outcome"] = json!("browser-exited");
    lines.push(closing);
    let runs = runs_of(&text(&lines));
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].end().unwrap().outcome, "result");
    assert_eq!(kinds(&runs[1]), ["run"]);
    assert_eq!(runs[1].run_id, None);
    assert_eq!(runs[1].end().unwrap().outcome, "browser-exited");
}

#[test]
fn a_killed_runners_run_stays_open_and_the_next_launch_does_not_join_it() {
    let lines = values(LEGACY);
    // The runner was killed after the marks: no result and no closing record. The next
    // launch timed out before its page spoke; it began after the killed run's records.
    let mut closing = lines[11].clone();
    closing["time"] = json!("2026-12-01T11:10:00.000Z");
    closing["wallSeconds"] = json!(60.0);
    closing["outcome"] = json!("timeout");
    let mut edited = lines[..7].to_vec();
    edited.push(closing);
    let runs = runs_of(&text(&edited));
    assert_eq!(runs.len(), 2);
    assert!(runs[0].end().is_none() && runs[0].result().is_none());
    assert_eq!(runs[0].lines.len(), 7);
    assert_eq!(runs[1].end().unwrap().outcome, "timeout");
}

/// A refused record of the current layout, as `run` writes it.
fn refused(browser_line: &Value, claimed: Option<&str>) -> Value {
    json!({
        "kind": "refused",
        "endpoint": "/benchmark-result",
        "status": 422,
        "reason": "the body names no runId",
        "claimedRunId": claimed,
        "time": browser_line["time"],
        "browser": browser_line["browser"],
        "query": browser_line["query"],
        "page": browser_line["page"],
    })
}

#[test]
fn a_refused_result_belongs_to_the_launch_it_was_posted_in() {
    let lines = values(CURRENT);
    let mut closing = lines[11].clone();
    closing["outcome"] = json!("result-refused");
    closing["runId"] = lines[0]["runId"].clone();
    let mut edited = lines[..10].to_vec();
    edited.push(refused(&lines[9], None));
    edited.push(closing);
    let runs = runs_of(&text(&edited));
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].refused().count(), 1);
    assert!(runs[0].result().is_none());
    assert_eq!(runs[0].end().unwrap().outcome, "result-refused");
}

#[test]
fn a_refused_attempt_before_the_page_named_itself_opens_the_launchs_run() {
    let lines = values(CURRENT);
    let mut edited = vec![refused(&lines[0], None)];
    edited.extend(lines.iter().cloned());
    let runs = runs_of(&text(&edited));
    assert_eq!(runs.len(), 1);
    assert_eq!(kinds(&runs[0])[..2], ["refused", "start"]);
    assert!(runs[0].run_id.is_some() && runs[0].summary().is_some());
}

#[test]
fn under_serve_a_refused_attempt_joins_the_run_it_claimed_or_stands_alone() {
    let mut lines = values(CURRENT);
    lines.pop();
    for line in &mut lines {
        for key in ["browser", "query", "page"] {
            line[key] = Value::Null;
        }
    }
    let id = lines[0]["runId"].as_str().unwrap().to_owned();
    let claimed = refused(&lines[3], Some(&id));
    let stray = refused(&lines[3], Some("another-page-1"));
    let mut edited = lines.clone();
    edited.insert(4, claimed);
    edited.push(stray);
    let runs = runs_of(&text(&edited));
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].refused().count(), 1);
    assert!(runs[0].summary().is_some() && runs[0].end().is_none());
    assert_eq!(kinds(&runs[1]), ["refused"]);
}

#[test]
fn read_runs_names_the_file_it_cannot_read() {
    let missing = Path::new("tests/data/no-such-file.jsonl");
    let error = read_runs(missing).unwrap_err();
    assert!(error.contains("no-such-file.jsonl"), "{error}");
    let runs = read_runs(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/two-configs.jsonl"
    )))
    .unwrap();
    assert_eq!(runs.len(), 3);
}
