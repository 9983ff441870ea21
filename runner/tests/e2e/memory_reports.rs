//! `--memory-reports` in Firefox: the browser's own memory report at the start of each phase,
//! at the end and once Firefox minimized its memory, each read into named parts per process
//! type, and the minimize's reading beside the release steps'.

use serde_json::Value;

use super::Run;

/// Every phase the page marked has its report, and so have the end and the minimize; each
/// holds the parent's and the content process's parts, which add up to their `explicit`.
pub(super) fn check_memory_reports(run: &Run) {
    let result = run.record("result").expect("a result");
    let memory = &result["processMemory"];
    let reports = memory["reports"].as_array().expect("processMemory.reports");
    let taken: Vec<&str> = reports
        .iter()
        .map(|r| r["atPhase"].as_str().expect("atPhase"))
        .collect();
    let mut expected: Vec<&str> = run
        .records
        .iter()
        .filter(|r| r["kind"] == "mark" && r.get("step").is_none_or(Value::is_null))
        .map(|r| r["phase"].as_str().unwrap())
        .collect();
    expected.extend(["end", "minimized"]);
    assert_eq!(
        taken, expected,
        "a report per phase, the end and the minimize"
    );
    for report in reports {
        let at = &report["atPhase"];
        let by_type = report["byType"]
            .as_object()
            .unwrap_or_else(|| panic!("{at}: no parts ({})", report["reason"]));
        for kind in ["browser", "renderer"] {
            let parts = &by_type[kind];
            let explicit = parts["explicit"].as_u64().expect("explicit");
            let named: u64 = [
                "heapUnclassified",
                "wasmMemory",
                "wasmCode",
                "js",
                "gfx",
                "rest",
            ]
            .iter()
            .map(|p| {
                parts[p]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{at} {kind}: {p}"))
            })
            .sum();
            assert!(explicit > 0, "{at} {kind}: {parts}");
            assert_eq!(named, explicit, "{at} {kind}: the parts add up");
        }
    }
    // The minimize's reading follows the release steps, in a phase of its own.
    let steps = memory["steps"].as_array().expect("processMemory.steps");
    let last = steps.last().expect("the steps");
    assert_eq!(
        (last["phase"].as_str(), last["step"].as_str()),
        (Some("minimize"), Some("minimized")),
        "{steps:?}"
    );
    assert!(last["total"]["pssBytes"].as_u64().unwrap() > 0, "{last}");
    assert!(
        steps[..steps.len() - 1]
            .iter()
            .all(|s| s["phase"] == "release"),
        "{steps:?}"
    );
}
