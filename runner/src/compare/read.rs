//! One finished run out of a results file: its cases' token ids and its summary's timings.

use std::path::Path;

use ocr_bench_core::record::{CaseResult, PageSummary};

use super::deltas::{self, Measured};
use super::{Case, InputError, Run, Timing};
use crate::memory::ProcessMemory;
use crate::record::{self, Line, Record};
use crate::runs;

impl From<&CaseResult> for Case {
    fn from(case: &CaseResult) -> Self {
        Case {
            id: case.id.clone(),
            token_ids: case.token_ids.clone(),
            actual: case.actual.clone(),
        }
    }
}

fn list(ids: &[&str]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

/// Reads one finished run from JSONL text; `file` names it in messages.
pub fn parse_run(text: &str, file: &Path, run_id: Option<&str>) -> Result<Run, InputError> {
    let records = record::parse_records(text)
        .map_err(|bad| InputError(format!("{}:{}: {}", file.display(), bad.line, bad.message)))?;
    for warning in records.warnings(file) {
        eprintln!("ocr-bench: {warning}");
    }
    let runs = runs::group(records.lines);

    // The finished runs (those with a `result` record naming the run) and the ids of the
    // others.
    let (finished_runs, unfinished_runs): (Vec<&runs::Run>, Vec<&runs::Run>) =
        runs.iter().partition(|run| {
            run.result_line()
                .is_some_and(|line| line.record.run_id().is_some())
        });
    let ids = |runs: &[&'_ runs::Run]| -> Vec<String> {
        runs.iter().filter_map(|run| run.run_id.clone()).collect()
    };
    let (finished_ids, unfinished) = (ids(&finished_runs), ids(&unfinished_runs));
    let finished_ids: Vec<&str> = finished_ids.iter().map(String::as_str).collect();
    let unfinished: Vec<&str> = unfinished.iter().map(String::as_str).collect();
    let chosen_run = match run_id {
        Some(wanted) => finished_runs
            .iter()
            .rev()
            .find(|run| run.run_id.as_deref() == Some(wanted))
            .ok_or_else(|| {
                InputError(format!(
                    "{} has no finished run with runId {wanted:?}; finished runs: {}; runs without a result record: {}",
                    file.display(),
                    list(&finished_ids),
                    list(&unfinished)
                ))
            })?,
        None => finished_runs.last().ok_or_else(|| {
            InputError(format!(
                "{} has no finished run (no result record); runs without a result record: {}",
                file.display(),
                list(&unfinished)
            ))
        })?,
    };
    // Each finished run's result line: the chosen run's, and its peers' for the spread.
    let finished: Vec<&Line> = finished_runs
        .iter()
        .filter_map(|r| r.result_line())
        .collect();
    let chosen = chosen_run
        .result_line()
        .expect("a finished run has a result line");
    let Record::Result {
        summary,
        process_memory,
    } = &chosen.record
    else {
        unreachable!("only result records are finished runs")
    };
    let memory = process_memory.measured.as_ref();
    let posted = summary;
    let summary = summary.benchmark();
    let measured = summary
        .map(|s| measured(s, memory, chosen, &finished, file))
        .unwrap_or_default();
    let id = chosen.record.run_id().unwrap_or_default().to_owned();

    let mut cases: Vec<Case> = chosen_run.progress().into_iter().map(Case::from).collect();
    let another_page = posted.other();
    if cases.is_empty() {
        cases = match (summary, &another_page) {
            (Some(s), _) => s.results.iter().map(Case::from).collect(),
            // Another page's cases: its token ids where it has them, its text.
            (None, Some(figures)) => figures
                .cases
                .iter()
                .map(|c| Case {
                    id: c.id.clone(),
                    token_ids: c.token_ids.clone().unwrap_or_default(),
                    actual: c.actual.clone().unwrap_or_default(),
                })
                .collect(),
            (None, None) => Vec::new(),
        };
    }
    Ok(Run {
        file: file.to_owned(),
        run_id: id,
        browser: chosen
            .browser
            .as_ref()
            .map(|b| (b.name.name().to_owned(), b.version.clone())),
        target: chosen_run.target().map(str::to_owned),
        query: chosen.query.clone().unwrap_or_default(),
        config: summary.map(|s| s.config.clone()),
        cases,
        timing: summary.map(Timing::from_summary).unwrap_or_default(),
        verification: summary.and_then(crate::report::verification_line),
        measured,
        another_page,
    })
}

/// The target, browser and query that make a configuration.
fn configuration(line: &Line) -> (Option<&str>, Option<&str>, Option<&str>) {
    (
        line.target(),
        line.browser.as_ref().map(|b| b.name.name()),
        line.query.as_deref(),
    )
}

/// The chosen run's figures, and their spread from its repeats or from the file's other
/// finished runs of the same configuration.
fn measured(
    summary: &PageSummary,
    memory: Option<&ProcessMemory>,
    chosen: &Line,
    finished: &[&Line],
    file: &Path,
) -> Measured {
    let figures = deltas::figures(summary, memory);
    let peers: Vec<_> = finished
        .iter()
        .filter(|line| configuration(line) == configuration(chosen))
        .filter_map(|line| match &line.record {
            Record::Result {
                summary,
                process_memory,
            } => Some(deltas::figures(
                summary.benchmark()?,
                process_memory.measured.as_ref(),
            )),
            _ => None,
        })
        .collect();
    let spreads = deltas::spreads(summary, &figures, &peers, &file.display().to_string());
    Measured { figures, spreads }
}

/// Reads one finished run from a results file.
pub fn load_run(file: &Path, run_id: Option<&str>) -> Result<Run, InputError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| InputError(format!("reading {}: {e}", file.display())))?;
    parse_run(&text, file, run_id)
}
