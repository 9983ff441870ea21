//! The tables printed after a run or a sweep: accuracy, case times and peak process memory
//! per phase.

use std::fmt::Write;

use serde_json::Value;

const MIB: f64 = 1024.0 * 1024.0;
const TYPES: [&str; 5] = ["browser", "gpu", "renderer", "utility", "other"];

fn mib(value: Option<u64>) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |bytes| format!("{:.0}", bytes as f64 / MIB),
    )
}

fn ms(value: &Value) -> String {
    value
        .as_f64()
        .map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// nCER as a number, or "n/a" where accuracy does not apply (the decoder-only scope).
fn ncer(summary: &Value) -> String {
    match summary.get("nCER").and_then(Value::as_f64) {
        Some(v) => format!("{v:.4}"),
        None => "n/a".to_owned(),
    }
}

fn exact(summary: &Value) -> String {
    match (
        summary.get("exact").and_then(Value::as_u64),
        summary.get("cases").and_then(Value::as_u64),
    ) {
        (Some(e), Some(c)) => format!("{e}/{c}"),
        (None, Some(_)) => "n/a".to_owned(),
        _ => "-".to_owned(),
    }
}

/// Milliseconds with the precision a GPU step needs (12.70, 0.50), or "-".
fn fine_ms(value: Option<&Value>) -> String {
    value.and_then(Value::as_f64).map_or_else(
        || "-".to_owned(),
        |v| {
            if v < 10.0 {
                format!("{v:.2}")
            } else {
                format!("{v:.1}")
            }
        },
    )
}

/// The decode probe's lines: per-token latency, its split, first token, and the completion verdict.
fn probe_lines(out: &mut String, summary: &Value) {
    let Some(probe) = summary.get("decodeProbe").filter(|p| p.is_object()) else {
        return;
    };
    let p50 = |name: &str| fine_ms(probe.pointer(&format!("/{name}/p50Ms")));
    let _ = writeln!(
        out,
        "per token p50 {} ms  p90 {} ms  max {} ms  (p50 submit {} / sync {} / choose {} ms)  first token p50 {} ms  {} tokens/s",
        p50("tokenLatency"),
        fine_ms(probe.pointer("/tokenLatency/p90Ms")),
        fine_ms(probe.pointer("/tokenLatency/maxMs")),
        p50("submit"),
        p50("sync"),
        p50("choose"),
        p50("timeToFirstToken"),
        probe
            .get("tokensPerSecond")
            .and_then(Value::as_f64)
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.1}")),
    );
    if let Some(completion) = summary.get("completion") {
        let poll = summary
            .pointer("/poll/mode")
            .and_then(Value::as_str)
            .unwrap_or("none");
        let _ = writeln!(
            out,
            "completion floor {} ms (dispatch + readback; empty queue {} ms; poll={poll}): {}",
            fine_ms(completion.pointer("/page/dispatchReadback/p50Ms")),
            fine_ms(completion.pointer("/page/emptyQueue/p50Ms")),
            completion
                .pointer("/check/verdict")
                .and_then(Value::as_str)
                .unwrap_or("not judged"),
        );
    }
}

/// True when the body looks like the benchmark page's summary (others are printed as JSON).
pub fn is_benchmark_summary(summary: &Value) -> bool {
    ["cases", "medianMs", "peakCaseMs", "results"]
        .iter()
        .all(|f| summary.get(f).is_some())
}

/// The largest total of a field over every phase.
fn overall_peak(process_memory: &Value, field: &str) -> Option<u64> {
    process_memory
        .get("phases")?
        .as_object()?
        .values()
        .filter_map(|p| p.pointer(&format!("/total/{field}"))?.as_u64())
        .max()
}

/// The report of one run of the benchmark page.
pub fn run_table(
    browser: &str,
    query: &str,
    summary: &Value,
    process_memory: &Value,
    wall_seconds: f64,
) -> String {
    let mut out = String::new();
    let config = if query.is_empty() {
        "default configuration".to_owned()
    } else {
        query.to_owned()
    };
    let _ = writeln!(
        out,
        "{browser} · {config} · {} in {wall_seconds:.1} s",
        summary
            .get("casesName")
            .and_then(Value::as_str)
            .unwrap_or("cases")
    );
    let _ = writeln!(
        out,
        "cases {}  nCER {}  exact {}  median {} ms  peak {} ms  mean {} ms/token",
        summary
            .get("cases")
            .map_or("-".to_owned(), Value::to_string),
        ncer(summary),
        exact(summary),
        ms(&summary["medianMs"]),
        ms(&summary["peakCaseMs"]),
        summary.get("msPerToken").map_or("-".to_owned(), ms),
    );
    probe_lines(&mut out, summary);
    let Some(phases) = process_memory.get("phases").and_then(Value::as_object) else {
        let reason = process_memory
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("not measured");
        let _ = writeln!(out, "process memory: {reason}");
        return out;
    };
    let _ = writeln!(
        out,
        "peak process memory per phase, MiB (RSS; PSS total last):"
    );
    let _ = writeln!(
        out,
        "  {:<16} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6} | {:>8} {:>8}",
        "phase", "samples", "browser", "gpu", "renderer", "utility", "other", "RSS", "PSS"
    );
    for (name, phase) in phases {
        let by_type = |t: &str| {
            phase
                .pointer(&format!("/byType/{t}/peakRssBytes"))
                .and_then(Value::as_u64)
        };
        let _ = writeln!(
            out,
            "  {:<16} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6} | {:>8} {:>8}",
            name,
            phase["samples"].as_u64().unwrap_or(0),
            mib(by_type(TYPES[0])),
            mib(by_type(TYPES[1])),
            mib(by_type(TYPES[2])),
            mib(by_type(TYPES[3])),
            mib(by_type(TYPES[4])),
            mib(phase.pointer("/total/peakRssBytes").and_then(Value::as_u64)),
            mib(phase.pointer("/total/peakPssBytes").and_then(Value::as_u64)),
        );
    }
    if let Some(s) = process_memory.get("sampler") {
        let _ = writeln!(
            out,
            "sampler: RSS {:.1} Hz, PSS {:.1} Hz ({:.1} ms CPU per pass), {:.1}% of one core in all",
            s["achievedHz"].as_f64().unwrap_or(0.0),
            s["pssHz"].as_f64().unwrap_or(0.0),
            s["meanPssPassCpuMs"].as_f64().unwrap_or(0.0),
            s["cpuShareOfOneCore"].as_f64().unwrap_or(0.0) * 100.0,
        );
    }
    out
}

/// One row of the sweep table.
pub struct SweepRow {
    pub browser: String,
    pub query: String,
    pub outcome: String,
    pub summary: Option<Value>,
    pub process_memory: Option<Value>,
}

/// The table of a sweep, one row per combination.
pub fn sweep_table(rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|r| r.query.len())
        .max()
        .unwrap_or(0)
        .max(13);
    let _ = writeln!(
        out,
        "{:<9} {:<width$} {:>8} {:>6} {:>9} {:>9} {:>12} {:>9} {:>9}",
        "browser",
        "configuration",
        "nCER",
        "exact",
        "median ms",
        "peak ms",
        "token p50 ms",
        "peak RSS",
        "peak PSS"
    );
    for row in rows {
        let query = if row.query.is_empty() {
            "(default)"
        } else {
            &row.query
        };
        match (&row.summary, &row.process_memory) {
            (Some(summary), memory) => {
                let memory = memory.clone().unwrap_or(Value::Null);
                // A completion-bound token time is the browser's timer: marked, never bare.
                let bound = summary.get("completionBound") == Some(&Value::Bool(true));
                let token = fine_ms(summary.pointer("/decodeProbe/tokenLatency/p50Ms"));
                let _ = writeln!(
                    out,
                    "{:<9} {:<width$} {:>8} {:>6} {:>9} {:>9} {:>12} {:>9} {:>9}",
                    row.browser,
                    query,
                    ncer(summary),
                    exact(summary),
                    ms(&summary["medianMs"]),
                    ms(&summary["peakCaseMs"]),
                    if bound {
                        format!("{token} (bound)")
                    } else {
                        token
                    },
                    mib(overall_peak(&memory, "peakRssBytes")),
                    mib(overall_peak(&memory, "peakPssBytes")),
                );
            }
            (None, _) => {
                let _ = writeln!(out, "{:<9} {:<width$} {}", row.browser, query, row.outcome);
            }
        }
    }
    let _ = writeln!(out, "(memory in MiB: the largest total over all phases; per-phase figures are in the results file)");
    if rows.iter().any(|r| {
        r.summary
            .as_ref()
            .is_some_and(|s| s.get("completionBound") == Some(&Value::Bool(true)))
    }) {
        let _ = writeln!(out, "(bound: completion-bound, the token time is the browser's GPU-completion timer, not the model; run with poll=kick)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn memory() -> Value {
        json!({
            "sampler": { "achievedHz": 39.5, "pssHz": 3.2, "meanPssPassCpuMs": 2.0, "cpuShareOfOneCore": 0.02 },
            "phases": {
                "baseline": { "samples": 3, "byType": { "browser": { "peakRssBytes": 100 * 1024 * 1024 } }, "total": { "peakRssBytes": 100 * 1024 * 1024, "peakPssBytes": 80 * 1024 * 1024 } },
                "decoder-run": { "samples": 9, "byType": { "gpu": { "peakRssBytes": 300 * 1024 * 1024 } }, "total": { "peakRssBytes": 500 * 1024 * 1024 } }
            }
        })
    }

    #[test]
    fn run_table_shows_accuracy_times_and_phases_in_order() {
        let summary = json!({ "cases": 2, "nCER": 0.125, "exact": 1, "medianMs": 1500.4, "peakCaseMs": 2100.0, "results": [], "casesName": "smoke2" });
        let text = run_table("chromium", "tier=242", &summary, &memory(), 12.3);
        assert!(
            text.contains("nCER 0.1250") && text.contains("exact 1/2"),
            "{text}"
        );
        assert!(
            text.contains("median 1500 ms") && text.contains("peak 2100 ms"),
            "{text}"
        );
        let baseline = text.find("baseline").unwrap();
        let run = text.find("decoder-run").unwrap();
        assert!(baseline < run, "{text}");
        assert!(
            text.contains("  baseline               3      100"),
            "{text}"
        );
        assert!(text.contains("39.5 Hz"), "{text}");
    }

    #[test]
    fn the_decode_probe_and_a_completion_bound_run_are_said_in_words() {
        let summary = json!({
            "cases": 13, "nCER": 0.0, "exact": 13, "medianMs": 2400.0, "peakCaseMs": 4100.0, "results": [],
            "decodeProbe": {
                "tokenLatency": { "p50Ms": 100.1, "p90Ms": 100.3, "maxMs": 200.2 },
                "submit": { "p50Ms": 14.9 }, "sync": { "p50Ms": 85.2 }, "choose": { "p50Ms": 0.04 },
                "timeToFirstToken": { "p50Ms": 295.0 }, "tokensPerSecond": 9.99
            },
            "poll": { "mode": "none", "kickMs": null },
            "completion": {
                "page": { "dispatchReadback": { "p50Ms": 100.1 }, "emptyQueue": { "p50Ms": 100.1 } },
                "check": { "bound": true, "verdict": "completion-bound: 230 of 238 GPU waits ..." }
            },
            "completionBound": true
        });
        let text = run_table("firefox", "", &summary, &memory(), 32.0);
        assert!(
            text.contains("per token p50 100.1 ms  p90 100.3 ms  max 200.2 ms"),
            "{text}"
        );
        assert!(
            text.contains("(p50 submit 14.9 / sync 85.2 / choose 0.04 ms)"),
            "{text}"
        );
        assert!(
            text.contains("first token p50 295.0 ms  10.0 tokens/s"),
            "{text}"
        );
        assert!(text.contains("completion floor 100.1 ms (dispatch + readback; empty queue 100.1 ms; poll=none): completion-bound"), "{text}");
        let rows = [SweepRow {
            browser: "firefox".into(),
            query: String::new(),
            outcome: "result".into(),
            summary: Some(summary),
            process_memory: Some(memory()),
        }];
        let table = sweep_table(&rows);
        assert!(table.contains("100.1 (bound)"), "{table}");
        assert!(table.contains("run with poll=kick"), "{table}");
    }

    #[test]
    fn decoder_scope_reads_not_applicable() {
        let summary = json!({ "cases": 2, "nCER": null, "exact": null, "medianMs": 1.0, "peakCaseMs": 2.0, "results": [] });
        let text = run_table(
            "firefox",
            "scope=decoder",
            &summary,
            &json!({ "available": false, "reason": "serve mode" }),
            1.0,
        );
        assert!(
            text.contains("nCER n/a") && text.contains("exact n/a"),
            "{text}"
        );
        assert!(text.contains("process memory: serve mode"), "{text}");
    }

    #[test]
    fn sweep_table_has_a_row_per_combination() {
        let rows = vec![
            SweepRow {
                browser: "chromium".into(),
                query: String::new(),
                outcome: "result".into(),
                summary: Some(
                    json!({ "cases": 2, "nCER": 0.0, "exact": 2, "medianMs": 10, "peakCaseMs": 12 }),
                ),
                process_memory: Some(memory()),
            },
            SweepRow {
                browser: "chromium".into(),
                query: "tier=242".into(),
                outcome: "error: needs shader-f16".into(),
                summary: None,
                process_memory: None,
            },
        ];
        let text = sweep_table(&rows);
        assert!(
            text.contains("(default)") && text.contains("500") && text.contains("80"),
            "{text}"
        );
        assert!(
            text.contains("tier=242") && text.contains("error: needs shader-f16"),
            "{text}"
        );
    }
}
