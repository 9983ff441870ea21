//! `ocr-bench compare A.jsonl B.jsonl`: the token ids of two finished runs, case by case.
//!
//! From each results file it takes one run that has a `result` record (the last one, or the
//! one `--run-a`/`--run-b` names), collects that run's `progress` records (one per finished
//! case; the `result` record's `summary.results` when the run has none) and compares the
//! cases' `tokenIds` by case id.

use std::collections::BTreeSet;
use std::fmt::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why a results file cannot be compared: the command exits 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// One finished case of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub token_ids: Vec<i64>,
    pub actual: String,
}

/// One finished run of a results file.
#[derive(Debug, Clone)]
pub struct Run {
    /// The file, as given.
    pub file: PathBuf,
    pub run_id: String,
    /// `browser.name` and `browser.version` of the `result` record (`None` under `serve`).
    pub browser: Option<(String, String)>,
    /// The canonical query string ("" for the default configuration).
    pub query: String,
    /// The `config` object of the `result` record.
    pub config: Value,
    /// In the order the run finished them.
    pub cases: Vec<Case>,
    /// The summary's timing figures, for the side-by-side lines.
    pub timing: Timing,
}

/// A run's timing figures as its summary gives them (`None` where absent, as in records
/// written before the decode probe existed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    pub token_p50_ms: Option<f64>,
    pub ms_per_token: Option<f64>,
    pub median_case_ms: Option<f64>,
    pub first_token_p50_ms: Option<f64>,
    pub completion_bound: Option<bool>,
}

impl Timing {
    fn from_summary(summary: &Value) -> Self {
        let number = |pointer: &str| summary.pointer(pointer).and_then(Value::as_f64);
        Self {
            token_p50_ms: number("/decodeProbe/tokenLatency/p50Ms"),
            ms_per_token: number("/msPerToken"),
            median_case_ms: number("/medianMs"),
            first_token_p50_ms: number("/decodeProbe/timeToFirstToken/p50Ms"),
            completion_bound: summary.get("completionBound").and_then(Value::as_bool),
        }
    }
}

/// How one case id present in both runs compares.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseComparison {
    pub id: String,
    pub tokens_a: usize,
    pub tokens_b: usize,
    /// `None` when the token sequences are identical.
    pub first_difference: Option<Difference>,
    /// Positions below the shorter length whose token ids agree.
    pub agreeing: usize,
    pub actual_a: String,
    pub actual_b: String,
}

/// The first position where two token sequences differ; a side that has already ended has
/// no token there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub position: usize,
    pub token_a: Option<i64>,
    pub token_b: Option<i64>,
}

/// Both runs, case by case.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: Run,
    pub b: Run,
    /// Case ids in both runs, in run A's order.
    pub cases: Vec<CaseComparison>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

impl Comparison {
    /// True when every shared case has identical token ids and the case sets are equal.
    pub fn identical(&self) -> bool {
        self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.cases.iter().all(|c| c.first_difference.is_none())
    }

    pub fn identical_cases(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.first_difference.is_none())
            .count()
    }

    /// Token positions compared (the longer sequence's length, per shared case) and those
    /// holding the same token id on both sides.
    pub fn positions(&self) -> (usize, usize) {
        self.cases.iter().fold((0, 0), |(compared, agreeing), c| {
            (compared + c.tokens_a.max(c.tokens_b), agreeing + c.agreeing)
        })
    }

    /// The report: one line per case, the cases present in only one run, a summary line and
    /// what each side is.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let width = self
            .cases
            .iter()
            .map(|c| c.id.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        let _ = writeln!(out, "{:<width$}  {:>4}  {:>4}  tokens", "case", "A", "B");
        for c in &self.cases {
            let _ = write!(
                out,
                "{:<width$}  {:>4}  {:>4}  ",
                c.id, c.tokens_a, c.tokens_b
            );
            match &c.first_difference {
                None => out.push_str("same\n"),
                Some(d) => {
                    let _ = writeln!(
                        out,
                        "differ at {}: A {} B {}; A {:?} B {:?}",
                        d.position,
                        token(d.token_a),
                        token(d.token_b),
                        c.actual_a,
                        c.actual_b
                    );
                }
            }
        }
        for (side, ids) in [("A", &self.only_in_a), ("B", &self.only_in_b)] {
            if !ids.is_empty() {
                let _ = writeln!(out, "only in {side} ({}): {}", ids.len(), ids.join(", "));
            }
        }
        let (compared, agreeing) = self.positions();
        let _ = writeln!(
            out,
            "{} cases compared, {} with identical tokens; {agreeing}/{compared} token positions agree; {} only in A, {} only in B",
            self.cases.len(),
            self.identical_cases(),
            self.only_in_a.len(),
            self.only_in_b.len()
        );
        self.render_timing(&mut out);
        for (side, run) in [("A", &self.a), ("B", &self.b)] {
            let _ = writeln!(out, "{side}: {}", describe(run));
        }
        out
    }

    /// One line per timing figure both runs have: A, B and B/A.
    fn render_timing(&self, out: &mut String) {
        let (a, b) = (&self.a.timing, &self.b.timing);
        let figures = [
            ("per-token p50", a.token_p50_ms, b.token_p50_ms),
            ("ms per decode step", a.ms_per_token, b.ms_per_token),
            (
                "first token p50",
                a.first_token_p50_ms,
                b.first_token_p50_ms,
            ),
            ("median case", a.median_case_ms, b.median_case_ms),
        ];
        for (name, x, y) in figures {
            let (Some(x), Some(y)) = (x, y) else { continue };
            let ratio = if x > 0.0 {
                format!("{:.3}", y / x)
            } else {
                "-".to_owned()
            };
            let _ = writeln!(out, "{name}: A {x:.2} ms, B {y:.2} ms, B/A {ratio}");
        }
        for (side, timing) in [("A", a), ("B", b)] {
            if timing.completion_bound == Some(true) {
                let _ = writeln!(
                    out,
                    "{side} is completion-bound: its token times are the browser's GPU-completion timer, not the model"
                );
            }
        }
    }
}

fn token(id: Option<i64>) -> String {
    id.map_or_else(|| "(end)".to_owned(), |id| id.to_string())
}

/// `FILE run RUNID: BROWSER VERSION · QUERY · key=value …`
fn describe(run: &Run) -> String {
    let browser = match &run.browser {
        Some((name, version)) => format!("{name} ({version})"),
        None => "browser unknown".to_owned(),
    };
    let query = if run.query.is_empty() {
        "default configuration".to_owned()
    } else {
        run.query.clone()
    };
    let config = match run.config.as_object() {
        Some(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => "no config".to_owned(),
    };
    format!(
        "{} run {}: {browser} · {query} · {config}",
        run.file.display(),
        run.run_id
    )
}

/// The run id of a record: top-level `runId`, else `body.runId`.
fn run_id_of(record: &Value) -> Option<&str> {
    record
        .get("runId")
        .and_then(Value::as_str)
        .or_else(|| record.pointer("/body/runId").and_then(Value::as_str))
}

/// A case object (`progress` record's `body.case`, or an entry of `summary.results`).
fn parse_case(case: &Value, file: &Path, line: usize) -> Result<Case, InputError> {
    let at = || format!("{}:{line}", file.display());
    let id = match case.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(InputError(format!("{}: a case without an id", at()))),
    };
    let token_ids = case
        .get("tokenIds")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError(format!("{}: case {id} has no tokenIds array", at())))?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            InputError(format!(
                "{}: case {id} has a tokenIds entry that is not an integer",
                at()
            ))
        })?;
    let actual = case
        .get("actual")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(Case {
        id,
        token_ids,
        actual,
    })
}

/// Reads one finished run from JSONL text; `file` names it in messages.
pub fn parse_run(text: &str, file: &Path, run_id: Option<&str>) -> Result<Run, InputError> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(line).map_err(|e| {
            InputError(format!(
                "{}:{}: not a JSON record: {e}",
                file.display(),
                index + 1
            ))
        })?;
        if !record.is_object() {
            return Err(InputError(format!(
                "{}:{}: not a JSON object",
                file.display(),
                index + 1
            )));
        }
        records.push((index + 1, record));
    }
    let kind = |r: &Value, k: &str| r.get("kind").and_then(Value::as_str) == Some(k);

    // Every run id in file order, and the finished ones (those with a `result` record).
    let mut all_ids: Vec<&str> = Vec::new();
    let mut finished: Vec<(usize, &Value)> = Vec::new();
    for (line, record) in &records {
        if let Some(id) = run_id_of(record) {
            if !all_ids.contains(&id) {
                all_ids.push(id);
            }
            if kind(record, "result") {
                finished.push((*line, record));
            }
        }
    }
    let finished_ids: Vec<&str> = finished.iter().filter_map(|(_, r)| run_id_of(r)).collect();
    let unfinished: Vec<&str> = all_ids
        .iter()
        .copied()
        .filter(|id| !finished_ids.contains(id))
        .collect();
    let list = |ids: &[&str]| {
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        }
    };
    let chosen = match run_id {
        Some(wanted) => finished
            .iter()
            .rev()
            .find(|(_, r)| run_id_of(r) == Some(wanted))
            .ok_or_else(|| {
                InputError(format!(
                    "{} has no finished run with runId {wanted:?}; finished runs: {}; runs without a result record: {}",
                    file.display(),
                    list(&finished_ids),
                    list(&unfinished)
                ))
            })?,
        None => finished.last().ok_or_else(|| {
            InputError(format!(
                "{} has no finished run (no result record); runs without a result record: {}",
                file.display(),
                list(&unfinished)
            ))
        })?,
    };
    let (result_line, result) = *chosen;
    let id = run_id_of(result).unwrap_or_default().to_owned();

    let mut cases: Vec<Case> = Vec::new();
    for (line, record) in &records {
        if !kind(record, "progress") || run_id_of(record) != Some(id.as_str()) {
            continue;
        }
        let case = record.pointer("/body/case").ok_or_else(|| {
            InputError(format!(
                "{}:{line}: a progress record without body.case",
                file.display()
            ))
        })?;
        let case = parse_case(case, file, *line)?;
        // A case reported twice counts once, as last reported.
        cases.retain(|c| c.id != case.id);
        cases.push(case);
    }
    if cases.is_empty() {
        if let Some(results) = result.pointer("/summary/results").and_then(Value::as_array) {
            for case in results {
                cases.push(parse_case(case, file, result_line)?);
            }
        }
    }

    let browser = result.get("browser").and_then(|b| {
        Some((
            b.get("name")?.as_str()?.to_owned(),
            b.get("version")
                .and_then(Value::as_str)
                .unwrap_or("unknown version")
                .to_owned(),
        ))
    });
    Ok(Run {
        file: file.to_owned(),
        run_id: id,
        browser,
        query: result
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        config: result.get("config").cloned().unwrap_or(Value::Null),
        cases,
        timing: result
            .get("summary")
            .map(Timing::from_summary)
            .unwrap_or_default(),
    })
}

/// Reads one finished run from a results file.
pub fn load_run(file: &Path, run_id: Option<&str>) -> Result<Run, InputError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| InputError(format!("reading {}: {e}", file.display())))?;
    parse_run(&text, file, run_id)
}

fn compare_case(a: &Case, b: &Case) -> CaseComparison {
    let shorter = a.token_ids.len().min(b.token_ids.len());
    let agreeing = (0..shorter)
        .filter(|&i| a.token_ids[i] == b.token_ids[i])
        .count();
    let first_difference = (0..a.token_ids.len().max(b.token_ids.len()))
        .find(|&i| a.token_ids.get(i) != b.token_ids.get(i))
        .map(|position| Difference {
            position,
            token_a: a.token_ids.get(position).copied(),
            token_b: b.token_ids.get(position).copied(),
        });
    CaseComparison {
        id: a.id.clone(),
        tokens_a: a.token_ids.len(),
        tokens_b: b.token_ids.len(),
        first_difference,
        agreeing,
        actual_a: a.actual.clone(),
        actual_b: b.actual.clone(),
    }
}

/// Matches the two runs' cases by id.
pub fn compare(a: Run, b: Run) -> Comparison {
    let ids_b: BTreeSet<&str> = b.cases.iter().map(|c| c.id.as_str()).collect();
    let ids_a: BTreeSet<&str> = a.cases.iter().map(|c| c.id.as_str()).collect();
    let cases = a
        .cases
        .iter()
        .filter_map(|ca| {
            let cb = b.cases.iter().find(|cb| cb.id == ca.id)?;
            Some(compare_case(ca, cb))
        })
        .collect();
    let only_in_a = ids_missing_from(&a.cases, &ids_b);
    let only_in_b = ids_missing_from(&b.cases, &ids_a);
    Comparison {
        a,
        b,
        cases,
        only_in_a,
        only_in_b,
    }
}

/// The ids of `cases` that `other` lacks, in `cases`' order.
fn ids_missing_from(cases: &[Case], other: &BTreeSet<&str>) -> Vec<String> {
    cases
        .iter()
        .filter(|c| !other.contains(c.id.as_str()))
        .map(|c| c.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A finished run as JSONL: start, one progress record per case, result, run.
    fn run_jsonl(run_id: &str, browser: &str, cases: &[(&str, &[i64], &str)]) -> String {
        let mut lines = vec![json!({"kind": "start", "runId": run_id, "body": {}}).to_string()];
        for (id, tokens, actual) in cases {
            lines.push(
                json!({"kind": "progress", "runId": run_id, "body": {"runId": run_id, "case": {
                    "id": id, "expected": actual, "actual": actual, "tokenIds": tokens,
                    "exact": true, "distance": 0}}})
                .to_string(),
            );
        }
        lines.push(
            json!({"kind": "result", "runId": run_id, "config": {"tier": "121"},
                "browser": {"name": browser, "version": format!("{browser} 1.0")},
                "query": "cases=smoke2", "summary": {}})
            .to_string(),
        );
        lines.push(json!({"kind": "run", "outcome": "result"}).to_string());
        lines.join("\n") + "\n"
    }

    fn parse(text: &str) -> Run {
        parse_run(text, Path::new("x.jsonl"), None).unwrap()
    }

    #[test]
    fn timing_is_set_side_by_side_with_the_ratio() {
        let with_summary = |summary: Value| {
            run_jsonl("r", "firefox", &[("1", &[5, 6], "ab")])
                .replace(r#""summary":{}"#, &format!(r#""summary":{summary}"#))
        };
        let a = parse(&with_summary(
            json!({ "msPerToken": 100.1, "medianMs": 2400.0,
            "decodeProbe": { "tokenLatency": { "p50Ms": 100.1 }, "timeToFirstToken": { "p50Ms": 300.0 } },
            "completionBound": true }),
        ));
        let b = parse(&with_summary(
            json!({ "msPerToken": 12.9, "medianMs": 500.0,
            "decodeProbe": { "tokenLatency": { "p50Ms": 12.7 }, "timeToFirstToken": { "p50Ms": 40.0 } },
            "completionBound": false }),
        ));
        let text = compare(a, b).render();
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
        // Records from before the decode probe have no such figures: no line, no error.
        let old = compare(
            parse(&run_jsonl("r", "x", &[("1", &[5], "a")])),
            parse(&run_jsonl("r", "y", &[("1", &[5], "a")])),
        );
        assert!(!old.render().contains("per-token p50"), "{}", old.render());
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
            text.contains("A: x.jsonl run r1: chromium (chromium 1.0) · cases=smoke2 · tier=121")
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
            + &json!({"kind": "start", "runId": "crashed", "body": {}}).to_string()
            + "\n";
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
        let text = json!({"kind": "start", "runId": "r1", "body": {}}).to_string()
            + "\n"
            + &json!({"kind": "progress", "runId": "r1", "body": {"case": {"id": "01", "tokenIds": [1]}}})
                .to_string()
            + "\n";
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
        lines.insert(3, "{\"kind\": \"progress\", \"runId\": ");
        let err = parse_run(&lines.join("\n"), Path::new("b.jsonl"), None).unwrap_err();
        assert!(
            err.0.starts_with("b.jsonl:4: not a JSON record"),
            "{}",
            err.0
        );
    }

    #[test]
    fn a_case_without_token_ids_is_refused() {
        let text = json!({"kind": "progress", "runId": "r1", "body": {"case": {"id": "07", "actual": "a"}}})
            .to_string()
            + "\n"
            + &json!({"kind": "result", "runId": "r1", "summary": {}}).to_string();
        let err = parse_run(&text, Path::new("c.jsonl"), None).unwrap_err();
        assert_eq!(err.0, "c.jsonl:1: case 07 has no tokenIds array");
    }

    #[test]
    fn summary_results_stand_in_when_a_run_has_no_progress_records() {
        let text = json!({"kind": "result", "runId": "r1", "summary": {"results": [
            {"id": "01", "actual": "a", "tokenIds": [3, 4]}]}})
        .to_string();
        let run = parse(&text);
        assert_eq!(
            run.cases,
            vec![Case {
                id: "01".to_owned(),
                token_ids: vec![3, 4],
                actual: "a".to_owned()
            }]
        );
        assert_eq!(run.browser, None);
    }
}
