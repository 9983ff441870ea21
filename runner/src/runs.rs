//! A results file as runs: each run's records (start, marks, progress, errors, result, refused
//! attempts, closing record) gathered from the file's lines, in the order the runs began.
//! Every reader of results files asks this module which lines make a run.
//!
//! The rule (`runner/README.md`, "Runs of a results file"):
//! - a record naming a `runId` joins the latest run of that id, else (under `run` and `sweep`)
//!   the unclosed run of its launch that had no id yet, else it begins a run;
//! - under `run` and `sweep` (lines that name their browser) a launch ends with its closing
//!   `run` record. One without a `runId` (older files; a page that reported nothing) closes the
//!   latest unclosed run of the same target, browser, page and query that began within the launch
//!   (its `time` less its `wallSeconds`), else it is a run of its own: a launch whose page
//!   never spoke;
//! - a record without a `runId` (a refused attempt; a page that had none yet) joins the
//!   unclosed run of the same target, browser, page and query under `run` and `sweep`, the run its
//!   refused body claimed under `serve`, else it begins a run of its own.

use std::path::Path;
use std::time::SystemTime;

use ocr_bench_core::record::{CaseResult, PageSummary};
use serde_json::Value;

use crate::browser::BrowserInfo;
use crate::record::{
    self, ErrorBody, Line, Posted, ProcessMemoryAnswer, Record, Refused, RunEnd, StartBody,
};

/// One run of a results file: its records in file order, with their line numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The page's `runId`; `None` when no record of the run named one.
    pub run_id: Option<String>,
    /// The records, each with its 1-based line number.
    pub lines: Vec<(usize, Line)>,
}

/// What a launch is known by: its target, the browser's name, the page and the query.
type LaunchKey<'a> = (
    Option<&'a str>,
    Option<&'static str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn launch_key(line: &Line) -> LaunchKey<'_> {
    (
        line.target(),
        line.browser.as_ref().map(|b| b.name.name()),
        line.page.as_deref(),
        line.query.as_deref(),
    )
}

fn parse_time(time: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(time).ok()
}

impl Run {
    fn new(number: usize, line: Line) -> Self {
        Run {
            run_id: line.record.run_id().map(str::to_owned),
            lines: vec![(number, line)],
        }
    }

    /// The first record (every run has one).
    pub fn first(&self) -> &Line {
        &self.lines[0].1
    }

    /// The 1-based line number of the run's first record.
    pub fn first_line(&self) -> usize {
        self.lines[0].0
    }

    /// The browser the runner started (`None` under `serve`).
    pub fn browser(&self) -> Option<&BrowserInfo> {
        self.lines.iter().find_map(|(_, l)| l.browser.as_ref())
    }

    /// Where the runner's browser ran (`local` for a launched run of an older file; `None`
    /// under `serve`).
    pub fn target(&self) -> Option<&str> {
        self.lines.iter().find_map(|(_, l)| l.target())
    }

    /// The canonical query the runner sent (`None` under `serve`).
    pub fn query(&self) -> Option<&str> {
        self.lines.iter().find_map(|(_, l)| l.query.as_deref())
    }

    /// The page the runner opened (`None` under `serve`).
    pub fn page(&self) -> Option<&str> {
        self.lines.iter().find_map(|(_, l)| l.page.as_deref())
    }

    /// The `start` record's machine and body.
    pub fn start(&self) -> Option<(&Value, &StartBody)> {
        self.records().find_map(|record| match record {
            Record::Start { machine, body, .. } => Some((machine, body)),
            _ => None,
        })
    }

    /// The phases the page marked, in order (a step within a phase is no new phase).
    pub fn marks(&self) -> impl Iterator<Item = &str> {
        self.records().filter_map(|record| match record {
            Record::Mark {
                phase, step: None, ..
            } => Some(phase.as_str()),
            _ => None,
        })
    }

    /// The cases reported through `/benchmark-progress`; a case reported twice counts once,
    /// as last reported, in the order of its first report.
    pub fn progress(&self) -> Vec<&CaseResult> {
        let mut cases: Vec<&CaseResult> = Vec::new();
        for record in self.records() {
            if let Record::Progress { body, .. } = record {
                match cases.iter_mut().find(|c| c.id == body.case.id) {
                    Some(slot) => *slot = &body.case,
                    None => cases.push(&body.case),
                }
            }
        }
        cases
    }

    /// The errors the page reported: the sampler's phase and the body.
    pub fn errors(&self) -> impl Iterator<Item = (Option<&str>, &ErrorBody)> {
        self.records().filter_map(|record| match record {
            Record::Error { phase, body, .. } => Some((phase.as_deref(), body)),
            _ => None,
        })
    }

    /// The run's result record with its line number (the last, should the page have posted
    /// two).
    pub fn result_entry(&self) -> Option<&(usize, Line)> {
        self.lines
            .iter()
            .rev()
            .find(|(_, line)| matches!(line.record, Record::Result { .. }))
    }

    /// The line of the run's result (the last, should the page have posted two).
    pub fn result_line(&self) -> Option<&Line> {
        self.result_entry().map(|(_, line)| line)
    }

    /// What the page posted as its result, and the process memory answered to it.
    pub fn result(&self) -> Option<(&Posted, &ProcessMemoryAnswer)> {
        match &self.result_line()?.record {
            Record::Result {
                summary,
                process_memory,
            } => Some((summary, process_memory)),
            _ => None,
        }
    }

    /// The benchmark page's summary, when the result is one.
    pub fn summary(&self) -> Option<&PageSummary> {
        self.result()?.0.benchmark()
    }

    /// The requests the server refused during the run.
    pub fn refused(&self) -> impl Iterator<Item = &Refused> {
        self.records().filter_map(|record| match record {
            Record::Refused(refused) => Some(refused),
            _ => None,
        })
    }

    /// The runner's closing record (`None` under `serve`, and when the runner was killed).
    pub fn end(&self) -> Option<&RunEnd> {
        self.records().find_map(|record| match record {
            Record::Run(end) => Some(end),
            _ => None,
        })
    }

    fn records(&self) -> impl Iterator<Item = &Record> {
        self.lines.iter().map(|(_, line)| &line.record)
    }

    fn is_closed(&self) -> bool {
        self.end().is_some()
    }

    /// Whether the run's first record is no earlier than `since` (true where a time is not
    /// readable: older files' times all are).
    fn began_since(&self, since: Option<SystemTime>) -> bool {
        match (since, parse_time(&self.first().time)) {
            (Some(since), Some(began)) => began >= since,
            _ => true,
        }
    }
}

/// The launch a closing record ends began `wallSeconds` before it was written.
fn launch_began(line: &Line, end: &RunEnd) -> Option<SystemTime> {
    let closed = parse_time(&line.time)?;
    let wall = std::time::Duration::try_from_secs_f64(end.wall_seconds).ok()?;
    closed.checked_sub(wall)
}

/// The index of the run `line` joins, or `None` when it begins one.
fn run_of(runs: &[Run], line: &Line) -> Option<usize> {
    let latest = |wanted: &dyn Fn(&Run) -> bool| runs.iter().rposition(wanted);
    let unclosed_launch =
        |run: &Run| !run.is_closed() && launch_key(run.first()) == launch_key(line);
    let launched = line.browser.is_some();
    if let Some(id) = line.record.run_id() {
        // A launch's records before the page named itself (a refused attempt) are its too.
        return latest(&|run: &Run| run.run_id.as_deref() == Some(id)).or_else(|| {
            launched
                .then(|| latest(&|run: &Run| run.run_id.is_none() && unclosed_launch(run)))
                .flatten()
        });
    }
    match &line.record {
        Record::Run(end) if launched => {
            let began = launch_began(line, end);
            latest(&|run: &Run| unclosed_launch(run) && run.began_since(began))
        }
        Record::Run(_) => None,
        _ if launched => latest(&unclosed_launch),
        Record::Refused(Refused {
            claimed_run_id: Some(claimed),
            ..
        }) => latest(&|run: &Run| run.run_id.as_deref() == Some(claimed.as_str())),
        _ => None,
    }
}

/// The runs of a file's records (as `record::parse_records` reads them), in the order their
/// first records appear.
pub fn group(lines: Vec<(usize, Line)>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (number, line) in lines {
        match run_of(&runs, &line) {
            Some(index) => {
                let run = &mut runs[index];
                if run.run_id.is_none() {
                    run.run_id = line.record.run_id().map(str::to_owned);
                }
                run.lines.push((number, line));
            }
            None => runs.push(Run::new(number, line)),
        }
    }
    runs
}

/// Every run of a results file; torn lines are skipped with a warning on stderr, a line that
/// is not a record is an error (`file:line: why`).
pub fn read_runs(file: &Path) -> Result<Vec<Run>, String> {
    Ok(group(record::read_file(file)?))
}

#[cfg(test)]
mod tests;
