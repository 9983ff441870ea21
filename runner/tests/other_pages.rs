//! Results of pages other than the benchmark page, under a real `ocr-bench run` in headless
//! Firefox on small pages of the test's own: a page that posts the original experiment's
//! summary shape (per case text, a token count and vision/prefill/decode/total ms, no token
//! ids; `docs/benchmark-protocol.md`, "Another page's result") is recorded as a result and
//! shown by `table`, `report` and `compare` with what it lacks; a page whose result cannot be
//! taken ends its run at once with the reason, its body kept in the `refused` record.
//!
//! Each run takes a few seconds; the deadlines below are limits that print what was seen.

mod harness;

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use harness::{firefox_fault, records, Fault, Running, BIN, LEGACY};

/// A page that reports as the original experiment's page does: a start with only its `runId`
/// (which the runner's types refuse, as they did the original's), its phase marks, and then
/// `RESULT` as its summary; no `/benchmark-progress`.
const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>another page</title>
<script type="module">
const runId = `tier-121-lean-url-staged-baseline-full-${Date.now()}`;
const post = (path, body) => fetch(path, {
	method: "POST",
	headers: { "Content-Type": "application/json" },
	body: typeof body === "string" ? body : JSON.stringify(body),
});
await post("/benchmark-start", { runId });
for (const phase of ["baseline", "decoder-run", "release"]) await post("/benchmark-mark", { runId, phase });
for (const c of PROGRESS) await post("/benchmark-progress", { runId, case: c });
const result = RESULT;
if (typeof result === "object" && result !== null && !Array.isArray(result) && !("runId" in result)) {
	result.runId = runId;
}
await post("/benchmark-result", result);
</script>
"#;

/// The original page's summary shape, two cases; `runId` is added by the page.
fn original_summary() -> Value {
    // Whole milliseconds are integers here, as the page's JSON.stringify writes them.
    let case = |id: &str, expected: &str, actual: &str, distance: u64, ms: [u64; 4]| {
        json!({ "id": id, "expected": expected, "actual": actual, "distance": distance,
                "characters": 4, "exact": distance == 0, "text": actual, "tokens": 4,
                "visionMs": ms[0], "prefillMs": ms[1], "decodeMs": ms[2], "totalMs": ms[3] })
    };
    json!({
        "tier": "121", "memoryMode": "lean", "loaderMode": "url", "scheduleMode": "staged",
        "decoderMode": "baseline", "benchmarkScope": "full",
        "capability": { "layers": 6, "hiddenSize": 512, "intermediateSize": 1536,
            "attentionHeads": 8, "kvHeads": 2, "vocabulary": 14630, "maxTokens": 128,
            "vision": "upstream INT4", "decoder": "complete INT8-QDQ unified Gather" },
        "cases": 2, "nCER": 0.125, "distance": 1, "characters": 8, "exact": 1,
        "medianMs": 140, "peakCaseMs": 160,
        "memorySamples": [{ "label": "baseline", "atMs": 12.5 }, { "label": "released", "atMs": 900 }],
        "results": [
            case("01", "知らない", "知らない", 0, [40, 20, 60, 120]),
            case("02", "建設会社", "建設会", 1, [50, 30, 80, 160]),
        ],
    })
}

/// Writes the page with `progress` cases and `result` (a JSON value, or a string posted as it
/// is) into the fault's root as `NAME.html`.
fn write_page(fault: &Fault, name: &str, progress: &[Value], result: &Value) {
    let result = match result {
        Value::String(raw) => serde_json::to_string(raw).unwrap(),
        other => other.to_string(),
    };
    let page = PAGE
        .replace("PROGRESS", &Value::from(progress.to_vec()).to_string())
        .replace("RESULT", &result);
    std::fs::write(fault.path(&format!("{name}.html")), page).unwrap();
}

/// `ocr-bench run` of `NAME.html` in Firefox, its results in `results.jsonl`.
fn run_page(fault: &Fault, name: &str) -> Running {
    let mut args: Vec<OsString> = vec!["--root".into(), fault.dir.path().into()];
    for arg in ["run", "--browser", "firefox", "--page"] {
        args.push(arg.into());
    }
    args.push(format!("{name}.html").into());
    for arg in ["--timeout", "600", "--results"] {
        args.push(arg.into());
    }
    args.push(fault.path("results.jsonl").into());
    fault.start(&args, &[])
}

fn ocr_bench(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let output = Command::new(BIN).args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_original_pages_summary_shape_is_a_result_that_table_report_and_compare_show() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    write_page(&fault, "original", &[], &original_summary());
    let (code, stderr) = run_page(&fault, "original").finish(Duration::from_secs(120));
    assert_eq!(code, Some(0), "{stderr}");
    fault.assert_nothing_left();

    let results = fault.path("results.jsonl");
    let all = records(&results);
    let kinds: Vec<&str> = all.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["mark", "mark", "mark", "result", "run"], "{all:?}");
    let result = &all[3];
    // Kept as posted: every field of the page's summary, nothing added to it.
    let mut posted = result["summary"].clone();
    let run_id = posted.as_object_mut().unwrap().remove("runId").unwrap();
    assert_eq!(posted, original_summary(), "{result}");
    assert_eq!(result["page"], "original.html");
    let closing = &all[4];
    assert_eq!(closing["outcome"], "result", "{closing}");
    assert_eq!(closing["anotherPage"], true, "{closing}");
    assert_eq!(closing["runId"], run_id, "{closing}");

    let (code, table, stderr) = ocr_bench(&[
        "table".as_ref(),
        "--against".as_ref(),
        results.as_os_str(),
        results.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    // Accuracy, the decode time per token (140 ms over 8 tokens), and what it lacks.
    assert!(
        table.contains("| original.html (the seed's loop) | 1 | - | - | - | 17.50 | 0.1250 | n/a (no token ids) | - |"),
        "{table}"
    );
    assert!(
        table.contains("another page's figures: 2 case(s), nCER 0.1250, median case 140.0 ms, per case p50 vision 45.0 / prefill 25.0 / decode 70.0 / total 140.0 ms")
            && table.contains("it has no token ids, no per-token latencies, no configuration"),
        "{table}"
    );

    let (code, report, stderr) = ocr_bench(&["report".as_ref(), results.as_os_str()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        report.contains("Other pages' results")
            && report.contains("| original.html |")
            && report.contains("| 2 | 0.1250 | 140.0 | 17.5 | 45.0 / 25.0 / 70.0 / 140.0 |")
            && report.contains("token ids, per-token latencies, configuration |"),
        "{report}"
    );

    let (code, compare, stderr) =
        ocr_bench(&["compare".as_ref(), results.as_os_str(), results.as_os_str()]);
    assert_eq!(code, Some(0), "{compare}{stderr}");
    assert!(
        compare.contains("A and B have no token ids")
            && compare.contains("by text, 2 of 2 shared cases read the same"),
        "{compare}"
    );
}

/// A result that is not an object ends the run at once: exit 1 (the page's failure), the
/// server's reason in the message and the closing record, the case reported before counted,
/// and the body in the `refused` record.
#[test]
fn a_result_that_is_not_an_object_ends_the_run_at_once_with_its_reason() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let case: Value = LEGACY
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "progress")
        .unwrap()["body"]["case"]
        .clone();
    write_page(&fault, "refused", &[case], &json!([1, 2, 3]));
    let (code, stderr) = run_page(&fault, "refused").finish(Duration::from_secs(120));
    assert_eq!(code, Some(1), "{stderr}");
    let reason = "/benchmark-result refused (400): the body must be a JSON object, got an array";
    assert!(
        stderr.contains(&format!(
            "the page's result was refused in phase release with 1 case(s) reported: {reason}"
        )),
        "{stderr}"
    );
    fault.assert_nothing_left();

    let all = records(&fault.path("results.jsonl"));
    let kinds: Vec<&str> = all.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["mark", "mark", "mark", "progress", "refused", "run"],
        "{all:?}"
    );
    let refused = &all[4];
    assert_eq!(refused["status"], 400, "{refused}");
    assert_eq!(refused["posted"], "[1,2,3]", "{refused}");
    assert_eq!(refused["postedBytes"], 7, "{refused}");
    let closing = &all[5];
    assert_eq!(closing["outcome"], "result-refused", "{closing}");
    assert!(
        closing["message"].as_str().unwrap().contains(reason),
        "{closing}"
    );
}

/// A result object without a `runId` is refused (422) and ends the run the same way.
#[test]
fn a_result_without_a_run_id_ends_the_run_at_once() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    // A string result is posted as it is: JSON naming no runId.
    write_page(&fault, "anonymous", &[], &json!(r#"{"cases":2}"#));
    let (code, stderr) = run_page(&fault, "anonymous").finish(Duration::from_secs(120));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("with 0 case(s) reported: /benchmark-result refused (422): the result names no `runId` (got none)"),
        "{stderr}"
    );
    let all = records(&fault.path("results.jsonl"));
    let refused = all.iter().find(|r| r["kind"] == "refused").unwrap();
    assert_eq!(refused["posted"], r#"{"cases":2}"#, "{refused}");
    assert_eq!(all.last().unwrap()["outcome"], "result-refused");
}
