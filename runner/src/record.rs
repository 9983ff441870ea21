//! One line of a results file: what the page posted (or how a run ended), typed, with when and
//! under which browser, query and page. The server writes these; `compare`, `report` and
//! `sweep` read them back. `runner/README.md` ("Results file") lists the fields.
//!
//! Each fact is written once per record: the run id at the top (not again in `body`), the
//! configuration in the summary, the adapter, ORT version and machine in the `start` record.
//! Older files, whose `result` records also carried `config`, `adapter`, `ortVersion`,
//! `userAgent` and `machine`, read the same: serde ignores the fields a type does not name.

use std::path::Path;

use ocr_bench_core::record::{CaseResult, Extra, PageSummary};
use ocr_bench_core::Config;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::browser::{BrowserInfo, StopReport};
use crate::gpu_route::GpuRoute;
use crate::memory::ProcessMemory;
use crate::other_page::OtherFigures;

/// A line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    #[serde(flatten)]
    pub record: Record,
    /// RFC 3339 with milliseconds, UTC.
    pub time: String,
    /// The runner's browser; null under `serve`.
    pub browser: Option<BrowserInfo>,
    /// Where the runner's browser ran: `local` (absent under `serve`, and in files written
    /// before it was recorded, whose launched runs read as `local`: [`Line::target`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The canonical query string the runner sent; null under `serve`.
    pub query: Option<String>,
    pub page: Option<String>,
}

impl Line {
    /// Where the runner's browser ran; a launched run of an older file ran locally, and a
    /// line of `serve` names none.
    pub fn target(&self) -> Option<&str> {
        match (&self.target, &self.browser) {
            (Some(target), _) => Some(target),
            (None, Some(_)) => Some(crate::target::LOCAL),
            (None, None) => None,
        }
    }
}

/// What happened, by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    #[serde(rename_all = "camelCase")]
    Start {
        run_id: Option<String>,
        /// The machine the runner measured on.
        machine: Value,
        body: StartBody,
    },
    #[serde(rename_all = "camelCase")]
    Mark {
        run_id: Option<String>,
        phase: String,
        /// A step within the phase (`docs/benchmark-protocol.md`, "Release"), which the runner
        /// samples as it samples a mark; absent for the mark that begins the phase.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Progress {
        run_id: Option<String>,
        body: ProgressBody,
    },
    #[serde(rename_all = "camelCase")]
    Error {
        run_id: Option<String>,
        /// The sampler's phase when the error arrived (null under `serve`).
        phase: Option<String>,
        body: ErrorBody,
    },
    /// The summary carries its own `runId`.
    #[serde(rename_all = "camelCase")]
    Result {
        summary: Posted,
        process_memory: ProcessMemoryAnswer,
    },
    /// The runner's closing record of one browser run.
    Run(RunEnd),
    /// A request the server refused (not from the run's page, too large, not a summary): an
    /// attempt, never a result.
    Refused(Refused),
}

impl Record {
    /// The `kind` field's value.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Start { .. } => "start",
            Record::Mark { .. } => "mark",
            Record::Progress { .. } => "progress",
            Record::Error { .. } => "error",
            Record::Result { .. } => "result",
            Record::Run(_) => "run",
            Record::Refused(_) => "refused",
        }
    }

    /// The page's run id; a `run` record's is the one its page reported, a refused attempt
    /// has none (whatever it claimed).
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Record::Start { run_id, .. }
            | Record::Mark { run_id, .. }
            | Record::Progress { run_id, .. }
            | Record::Error { run_id, .. } => run_id.as_deref(),
            Record::Result { summary, .. } => summary.run_id(),
            Record::Run(end) => end.run_id.as_deref(),
            Record::Refused(_) => None,
        }
    }
}

/// `/benchmark-start`: what the page runs and on what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartBody {
    pub config: Config,
    pub user_agent: String,
    /// The WebGPU adapter's description as the page read it.
    pub adapter: Value,
    pub ort_version: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `/benchmark-progress`: one finished case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressBody {
    pub case: CaseResult,
}

/// `/benchmark-error`: where the page failed and the error it caught.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub phase: Option<String>,
    pub error: PageError,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PageError {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ErrorBody {
    /// `Name: message` (the name left out when it is the plain `Error`).
    pub fn message(&self) -> String {
        let error = &self.error;
        let message = error
            .message
            .clone()
            .unwrap_or_else(|| serde_json::to_string(error).unwrap_or_default());
        match error.name.as_deref() {
            Some(name) if !name.is_empty() && name != "Error" => format!("{name}: {message}"),
            _ => message,
        }
    }
}

/// What reached `/benchmark-result`: the benchmark page's summary, or another page's figures
/// (the original experiment's page, `bench/core/`'s micro-benchmarks, a person's own page: any
/// JSON object naming its `runId`), kept as posted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Posted {
    Benchmark(Box<PageSummary>),
    Other(Value),
}

impl Posted {
    pub fn benchmark(&self) -> Option<&PageSummary> {
        match self {
            Posted::Benchmark(summary) => Some(summary),
            Posted::Other(_) => None,
        }
    }

    /// The figures `table`, `compare` and `report` read from another page's result.
    pub fn other(&self) -> Option<OtherFigures> {
        match self {
            Posted::Benchmark(_) => None,
            Posted::Other(posted) => Some(OtherFigures::read(posted)),
        }
    }

    /// The `runId` the summary or the other page's figures name.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Posted::Benchmark(summary) => Some(&summary.run_id),
            Posted::Other(posted) => posted.get("runId").and_then(Value::as_str),
        }
    }
}

/// The `processMemory` answer: the sampler's figures, or why there are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessMemoryAnswer {
    #[serde(flatten)]
    pub measured: Option<ProcessMemory>,
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ProcessMemoryAnswer {
    pub fn measured(memory: ProcessMemory) -> Self {
        Self {
            measured: Some(memory),
            available: true,
            reason: None,
        }
    }

    /// No figures, for `reason` (a browser whose processes the runner cannot read).
    pub fn unavailable(reason: &str) -> Self {
        Self {
            measured: None,
            available: false,
            reason: Some(reason.to_owned()),
        }
    }

    pub fn not_sampled() -> Self {
        Self {
            measured: None,
            available: false,
            reason: Some("the browser was not started by ocr-bench (serve mode), so its processes are not sampled; use `ocr-bench run`".to_owned()),
        }
    }
}

/// How one browser run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEnd {
    /// `result`, `error`, `timeout`, `interrupted`, `browser-exited`, `not-started` (the
    /// browser or its WebDriver session could not be started) or `write-failed`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub wall_seconds: f64,
    pub stop: StopReport,
    pub url: String,
    /// The `runId` the page reported (absent in files written before it was recorded, and
    /// when the page reported nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// True when the result was another page's figures, kept as posted (absent otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub another_page: bool,
    /// How the browser reached WebGPU: the route asked for and taken, why, the switches and
    /// environment it added, and the page's adapter (absent in older files and `serve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_route: Option<GpuRoute>,
    /// A WebDriver run: what the session reported of the browser (`browserName`,
    /// `browserVersion`, `platformName`, the driver's version), never the whole echo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_capabilities: Option<Value>,
    /// A WebDriver run with BiDi: how many console lines the page and its workers logged
    /// (the last of them are in the run's message on a failure; absent where none were read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_lines: Option<usize>,
    /// `--keep-profile`: the profile the browser started on, and whether an earlier run had
    /// left it (warm caches) or this run made it (absent with a fresh profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_profile: Option<crate::browser::KeptProfile>,
}

/// A refused request: which endpoint, the HTTP status it got and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refused {
    pub endpoint: String,
    pub status: u16,
    pub reason: String,
    /// The `runId` the body claimed, if it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_run_id: Option<String>,
    /// The body as posted, as text, cut to its first `REFUSED_BODY_LIMIT_BYTES` (absent when
    /// it was over the body limit and never read, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted: Option<String>,
    /// The body's whole length in bytes, when `posted` holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posted_bytes: Option<usize>,
}

/// How much of a refused body its record keeps: enough to see what a page posted (the
/// original experiment's summary of 13 cases is about 10 KB), never a runaway body.
pub const REFUSED_BODY_LIMIT_BYTES: usize = 64 << 10;

impl Refused {
    /// Keeps `body` as text, cut on a character boundary at `REFUSED_BODY_LIMIT_BYTES`.
    pub fn keep_posted(mut self, body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(body);
        let mut end = text.len().min(REFUSED_BODY_LIMIT_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.posted = Some(text[..end].to_owned());
        self.posted_bytes = Some(body.len());
        self
    }
}

/// A line that is not a record this runner reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub message: String,
}

/// Every record of JSONL text with its 1-based line number; blank lines are skipped.
pub fn parse_lines(text: &str) -> impl Iterator<Item = Result<(usize, Line), BadLine>> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str::<Line>(line)
                .map(|record| (index + 1, record))
                .map_err(|e| BadLine {
                    line: index + 1,
                    message: format!("not a results record: {e}"),
                })
        })
}

/// The records of JSONL text, and the lines skipped because they are not complete JSON.
#[derive(Debug, Default)]
pub struct Records {
    pub lines: Vec<(usize, Line)>,
    /// Torn lines (a crash or a full disk mid-append): each costs only itself.
    pub torn: Vec<BadLine>,
}

impl Records {
    /// One warning per torn line, `file:line: …`.
    pub fn warnings(&self, file: &Path) -> Vec<String> {
        self.torn
            .iter()
            .map(|bad| {
                format!(
                    "warning: {}:{}: skipped a torn line ({})",
                    file.display(),
                    bad.line,
                    bad.message
                )
            })
            .collect()
    }
}

/// Whether a line that is not complete JSON can be what a crash or a full disk left of a
/// record: the start of one (every record begins with `{`), or the zeros a file system may
/// leave where an append was lost. Any other line is no record's remains.
fn may_be_torn(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_whitespace() || c == '\0');
    rest.is_empty() || rest.starts_with('{')
}

fn is_json(line: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
}

/// How much of a line that is not JSON its error repeats.
const SHOWN_LINE_CHARS: usize = 60;

/// Every record of JSONL text. A line that is not complete JSON but begins as a record does
/// is torn and skipped; a line that is JSON but not a record, or that is not JSON and never
/// began as a record (a README, a log), is an error (`Err`), since it is no crash's doing.
pub fn parse_records(text: &str) -> Result<Records, BadLine> {
    let mut records = Records::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = index + 1;
        match serde_json::from_str::<Line>(line) {
            Ok(record) => records.lines.push((number, record)),
            Err(e) if is_json(line) => {
                return Err(BadLine {
                    line: number,
                    message: format!("not a results record: {e}"),
                })
            }
            Err(_) if !may_be_torn(line) => {
                let shown: String = line.chars().take(SHOWN_LINE_CHARS).collect();
                return Err(BadLine {
                    line: number,
                    message: format!(
                        "not JSON lines: a results file holds one JSON object per line, and this line begins {shown:?}"
                    ),
                });
            }
            Err(e) => records.torn.push(BadLine {
                line: number,
                message: format!("not complete JSON: {e}"),
            }),
        }
    }
    Ok(records)
}

/// Every record of a results file, torn lines skipped with a warning on stderr, or the first
/// line that is not a record (`file:line: why`).
pub fn read_file(file: &Path) -> Result<Vec<(usize, Line)>, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    let records = parse_records(&text)
        .map_err(|bad| format!("{}:{}: {}", file.display(), bad.line, bad.message))?;
    for warning in records.warnings(file) {
        eprintln!("ocr-bench: {warning}");
    }
    Ok(records.lines)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const LEGACY: &str = include_str!("../tests/data/legacy-smoke2.jsonl");

    #[test]
    fn every_record_of_todays_file_reads_typed() {
        let lines: Vec<Line> = parse_lines(LEGACY).map(|r| r.unwrap().1).collect();
        let kinds: Vec<&str> = lines.iter().map(|l| l.record.kind()).collect();
        assert_eq!(
            kinds,
            [
                "start", "mark", "mark", "mark", "mark", "mark", "mark", "progress", "progress",
                "mark", "result", "run"
            ]
        );
        let Record::Result {
            summary,
            process_memory,
            ..
        } = &lines[10].record
        else {
            panic!("line 11 is the result");
        };
        let summary = summary.benchmark().expect("the page's summary");
        assert_eq!(summary.results.len(), 2);
        let memory = process_memory.measured.as_ref().expect("sampled");
        assert!(process_memory.available);
        assert_eq!(memory.phases[0].0, "startup");
        let Record::Run(end) = &lines[11].record else {
            panic!("the closing record")
        };
        assert_eq!(end.outcome, "result");
        assert!(lines
            .iter()
            .all(|l| l.query.as_deref() == Some("cases=smoke2&maxTokens=2")));
    }

    /// The file was written before `verify` existed: a `config` read from it writes that
    /// parameter back at its default, so the expected line has it too.
    fn spell_added_parameters(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    if key == "config" {
                        if let Value::Object(config) = inner {
                            config.entry("verify").or_insert_with(|| "none".into());
                        }
                    }
                    spell_added_parameters(inner);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(spell_added_parameters),
            _ => {}
        }
    }

    /// The same run written by this layout: each fact once.
    const CURRENT: &str = include_str!("../tests/data/smoke2.jsonl");

    #[test]
    fn a_file_of_this_layout_reads_back_and_writes_the_same_lines() {
        let texts: Vec<&str> = CURRENT.lines().collect();
        for line in parse_lines(CURRENT) {
            let (number, line) = line.unwrap();
            let mut original: Value = serde_json::from_str(texts[number - 1]).unwrap();
            spell_added_parameters(&mut original);
            assert_eq!(
                serde_json::to_value(&line).unwrap(),
                original,
                "line {number}"
            );
            if let Record::Result { summary, .. } = &line.record {
                let summary = summary.benchmark().expect("the page's summary");
                assert!(summary.extra.is_empty(), "{:?}", summary.extra.keys());
                assert!(original.get("runId").is_none() && original.get("config").is_none());
            }
        }
    }

    #[test]
    fn a_line_without_a_target_ran_locally_when_the_runner_launched_it() {
        let (_, mut line) = parse_lines(LEGACY).next().unwrap().unwrap();
        assert_eq!(line.target, None, "the committed file predates the field");
        assert_eq!(line.target(), Some("local"));
        line.target = Some("webdriver:http://grid.example:4444".to_owned());
        assert_eq!(line.target(), Some("webdriver:http://grid.example:4444"));
        let written: serde_json::Value = serde_json::to_value(&line).unwrap();
        assert_eq!(written["target"], "webdriver:http://grid.example:4444");
        // Under `serve` no browser was launched: no target, and none written.
        line.target = None;
        line.browser = None;
        assert_eq!(line.target(), None);
        assert!(serde_json::to_value(&line).unwrap().get("target").is_none());
    }

    #[test]
    fn a_torn_line_costs_only_itself() {
        let lines: Vec<&str> = LEGACY.lines().collect();
        let torn = &lines[1][..lines[1].len() / 2];
        let text = format!("{}\n{torn}\n{}\n", lines[0], lines[2]);
        let records = parse_records(&text).unwrap();
        let numbers: Vec<usize> = records.lines.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [1, 3]);
        assert_eq!(records.torn.len(), 1);
        let warning = &records.warnings(Path::new("r.jsonl"))[0];
        assert!(
            warning.contains("r.jsonl:2: skipped a torn line"),
            "{warning}"
        );
    }

    #[test]
    fn a_line_that_never_began_as_a_record_is_no_torn_line() {
        let first = LEGACY.lines().next().unwrap();
        // What a crash or a lost append leaves is skipped: a record's start, or zeros.
        let text = format!("{first}\n{}\n\0\0\0\0\n{first}\n", &first[..40]);
        let records = parse_records(&text).unwrap();
        assert_eq!(records.lines.len(), 2);
        assert_eq!(records.torn.len(), 2);
        // Anything else means the file is not JSON lines: refused at that line.
        let text = format!("{first}\n\n## Results\n{first}\nmore prose\n");
        let bad = parse_records(&text).unwrap_err();
        assert_eq!(bad.line, 3);
        assert_eq!(
            bad.message,
            "not JSON lines: a results file holds one JSON object per line, and this line begins \"## Results\""
        );
    }

    #[test]
    fn a_line_that_is_not_a_record_names_its_line() {
        let mark = LEGACY
            .lines()
            .nth(1)
            .unwrap()
            .replace(r#""phase":"baseline","#, "");
        let text = format!("{}\n\n{mark}\n", LEGACY.lines().next().unwrap());
        let bad = parse_lines(&text).nth(1).unwrap().unwrap_err();
        assert_eq!(bad.line, 3);
        assert!(bad.message.contains("phase"), "{}", bad.message);
        let bad = parse_records(&text).unwrap_err();
        assert_eq!(bad.line, 3);
    }
}
