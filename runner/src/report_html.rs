//! `ocr-bench report RESULTS.jsonl... [--out DIR]`: a markdown summary of the finished runs,
//! and with `--out` a static HTML report with the charts of `www/report/` that opens from
//! disk (the records embedded as JSON, Chart.js copied beside it, no server, no network).
//!
//! Reading the files is here, the summary is `summary.rs`'s job: prose and tables of the table
//! model, printed as markdown and written into the page as HTML from the same tables
//! (`document.rs`), readable before and without its charts; the
//! charts are drawn by `www/report/charts.js`, the same code the served `www/report.html` runs.

mod configuration;
mod decomposition;
mod document;
mod finished_run;
mod least_memory;
mod prose_html;
mod release_table;
mod rise_table;
mod summary;
#[cfg(test)]
mod tests;

#[cfg(test)]
use crate::units::MIB;
pub use configuration::{configurations, Configuration};
pub use decomposition::{decompose, Decomposition, PhaseShare};
pub use finished_run::FinishedRun;
pub use summary::{markdown, run_for_phase};

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::other_page::OtherFigures;
use crate::record::{self, Line, Record};
use crate::runs::{self, Run};

/// The report's own files in the repository, copied next to the written `index.html`.
const TEMPLATE: &str = "www/report/static.html";
/// The chart code's parts in the order `static.html` loads them (`www/report/charts.js` says why).
const SHARED_FILES: [&str; 7] = [
    "www/report/runs.js",
    "www/report/chart-kit.js",
    "www/report/timeline.js",
    "www/report/configuration-charts.js",
    "www/report/decomposition.js",
    "www/report/charts.js",
    "www/report/report.css",
];
/// Chart.js's UMD build: a classic script, which a page opened from file:// may load.
pub const CHART_LIBRARY: &str = "node_modules/chart.js/dist/chart.umd.min.js";
const DATA_PLACEHOLDER: &str = "@REPORT_DATA@";
/// Where the template takes the summary's tables as HTML.
const TABLES_PLACEHOLDER: &str = "@REPORT_TABLES@";

/// Why no report was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// A file that cannot be read, holds a line that is not a record, or no finished run.
    Input(String),
    /// The report could not be written, or a part of it to copy is missing.
    Write(String),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Input(message) | ReportError::Write(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ReportError {}

/// One results file as read: its typed records as runs (`runs::group`), the same lines as
/// JSON in file order (the charts read fields this runner's types may not name, such as
/// another runner's driver VRAM), and a warning per torn line.
#[derive(Debug, Clone)]
pub struct ResultsFile {
    /// The path as given.
    pub name: String,
    pub runs: Vec<Run>,
    pub raw: Vec<Value>,
    pub warnings: Vec<String>,
}

impl ResultsFile {
    /// Reads JSONL text; `file` names it in messages. Refused: a line that is JSON but not a
    /// record (`file:line: why`), a file without records, a file without a finished run of
    /// the benchmark page. Torn lines are skipped, each with a warning.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ReportError> {
        let name = file.display().to_string();
        let records = record::parse_records(text)
            .map_err(|bad| ReportError::Input(format!("{name}:{}: {}", bad.line, bad.message)))?;
        let warnings = records.warnings(file);
        if records.lines.is_empty() {
            return Err(ReportError::Input(format!(
                "{name} holds no records{}",
                if records.torn.is_empty() {
                    " (it is empty)".to_owned()
                } else {
                    format!(" (only {} torn line(s))", records.torn.len())
                }
            )));
        }
        let texts: Vec<&str> = text.lines().collect();
        let mut raw = Vec::with_capacity(records.lines.len());
        for (number, _) in &records.lines {
            // The line parsed as a record, so it is JSON.
            let value = serde_json::from_str(texts[number - 1])
                .map_err(|e| ReportError::Input(format!("{name}:{number}: not JSON: {e}")))?;
            raw.push(value);
        }
        let file = Self {
            name,
            runs: runs::group(records.lines),
            raw,
            warnings,
        };
        if file.finished().next().is_none() && file.other_pages().next().is_none() {
            return Err(ReportError::Input(format!(
                "{} has no finished run of the benchmark page (no result record with the page's summary); record kinds in it: {}",
                file.name,
                file.kinds()
            )));
        }
        Ok(file)
    }

    pub fn read(file: &Path) -> Result<Self, ReportError> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ReportError::Input(format!("reading {}: {e}", file.display())))?;
        Self::parse(&text, file)
    }

    /// Each run's result record, in the order the runs began.
    fn results(&self) -> impl Iterator<Item = &Line> {
        self.runs.iter().filter_map(Run::result_line)
    }

    /// The result records of the benchmark page, one per finished run.
    pub fn finished(&self) -> impl Iterator<Item = &Line> {
        self.results().filter(|line| {
            matches!(&line.record, Record::Result { summary, .. } if summary.benchmark().is_some())
        })
    }

    /// The result records of other pages (kept as posted), with their figures, one per run.
    pub fn other_pages(&self) -> impl Iterator<Item = (&Line, OtherFigures)> {
        self.results().filter_map(|line| match &line.record {
            Record::Result { summary, .. } => Some((line, summary.other()?)),
            _ => None,
        })
    }

    /// `start ×2, mark ×14, …`, in order of first appearance.
    fn kinds(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for (_, line) in self.runs.iter().flat_map(|run| &run.lines) {
            let kind = line.record.kind();
            match counts.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((kind, 1)),
            }
        }
        counts
            .iter()
            .map(|(kind, n)| format!("{kind} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads every file; the first that fails names itself.
pub fn read_all(files: &[PathBuf]) -> Result<Vec<ResultsFile>, ReportError> {
    files.iter().map(|file| ResultsFile::read(file)).collect()
}

/// The page's data: every file's records and warnings, as `www/report/charts.js` reads them.
fn embedded_data(files: &[ResultsFile], written: &str) -> String {
    let data = json!({
        "written": written,
        "files": files.iter().map(|f| json!({
            "name": f.name,
            "records": f.raw,
            "warnings": f.warnings,
            // Another page's figures in the runner's words, so the page lists them as said here.
            "otherPages": f.other_pages().map(|(line, figures)| json!({
                "page": line.page,
                "runId": figures.run_id,
                "figures": figures.describe(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    // `<` only occurs inside JSON strings, where \u003c is the same character: no record can
    // close the script element (`</script>`) or open a comment in it.
    data.to_string().replace('<', "\\u003c")
}

fn copy(root: &Path, from: &str, to: &Path) -> Result<(), ReportError> {
    let source = root.join(from);
    std::fs::copy(&source, to).map(|_| ()).map_err(|e| {
        let hint = if from == CHART_LIBRARY {
            " (Chart.js is installed by `npm ci` in the repository root)"
        } else {
            ""
        };
        ReportError::Write(format!(
            "copying {} to {}: {e}{hint}",
            source.display(),
            to.display()
        ))
    })
}

/// Writes `out/index.html` with the records embedded, and beside it the chart code, its
/// style sheet and Chart.js, all from the repository `root`. Returns the page's path.
pub fn write_static(
    files: &[ResultsFile],
    root: &Path,
    out: &Path,
    written: &str,
) -> Result<PathBuf, ReportError> {
    let template_path = root.join(TEMPLATE);
    let template = std::fs::read_to_string(&template_path).map_err(|e| {
        ReportError::Write(format!(
            "reading the report template {}: {e}",
            template_path.display()
        ))
    })?;
    for (placeholder, what) in [(DATA_PLACEHOLDER, "data"), (TABLES_PLACEHOLDER, "tables")] {
        if !template.contains(placeholder) {
            return Err(ReportError::Write(format!(
                "the report template {} has no {placeholder} for the {what}",
                template_path.display()
            )));
        }
    }
    std::fs::create_dir_all(out)
        .map_err(|e| ReportError::Write(format!("creating {}: {e}", out.display())))?;
    for shared in SHARED_FILES.iter().chain([&CHART_LIBRARY]) {
        let name = Path::new(shared).file_name().unwrap_or_default();
        copy(root, shared, &out.join(name))?;
    }
    let page = out.join("index.html");
    // Each placeholder once, at its first place: the records (in the data and the tables)
    // may spell either, and the template's own tables placeholder comes before its data.
    let html = template
        .replacen(DATA_PLACEHOLDER, &embedded_data(files, written), 1)
        .replacen(TABLES_PLACEHOLDER, &summary::document(files).html(), 1);
    std::fs::write(&page, html)
        .map_err(|e| ReportError::Write(format!("writing {}: {e}", page.display())))?;
    Ok(page)
}
