//! The runs of a report grouped by configuration (one browser on one target and one query):
//! what the summary and its tables share, below all of them.

use ocr_bench_core::record::PageSummary;

use super::finished_run::FinishedRun;
use super::ResultsFile;
use crate::record::{Line, Record};

/// The runs of one configuration: one browser on one target and one query, in file order.
#[derive(Debug, Clone)]
pub struct Configuration<'a> {
    /// `firefox · cases=smoke2&maxTokens=2`, as the charts name it too.
    pub name: String,
    pub runs: Vec<FinishedRun<'a>>,
}

/// The browser, its target where it is not local (`chromium @ webdriver:http://…`) and the
/// query of a result record; under `serve` (none recorded) the browser from the user agent and
/// the run id less its timestamp (`tier-121-lean-…-full`).
pub fn configuration_name(line: &Line, summary: &PageSummary) -> String {
    let agent = &summary.environment.user_agent;
    let browser = match &line.browser {
        Some(info) => info.name.name(),
        None if agent.contains("Firefox/") => "firefox",
        None if agent.contains("Chrome/") => "chromium",
        None => "browser?",
    };
    let query = match &line.query {
        Some(query) => query.clone(),
        None => {
            let id = summary.run_id.as_str();
            match id.rsplit_once('-') {
                Some((stem, stamp)) if stamp.chars().all(|c| c.is_ascii_digit()) => stem.into(),
                _ => id.into(),
            }
        }
    };
    let query = if query.is_empty() {
        "(default)".to_owned()
    } else {
        query
    };
    match line.target() {
        Some(target) if target != crate::target::LOCAL => format!("{browser} @ {target} · {query}"),
        _ => format!("{browser} · {query}"),
    }
}

/// Every finished run of the files grouped by configuration, in order of first appearance.
pub fn configurations(files: &[ResultsFile]) -> Vec<Configuration<'_>> {
    let mut groups: Vec<Configuration<'_>> = Vec::new();
    for line in files.iter().flat_map(|f| f.finished()) {
        let Record::Result {
            summary,
            process_memory,
        } = &line.record
        else {
            continue;
        };
        let Some(summary) = summary.benchmark() else {
            continue;
        };
        let run = FinishedRun {
            summary,
            memory: process_memory.measured.as_ref(),
        };
        let name = configuration_name(line, summary);
        match groups.iter_mut().find(|g| g.name == name) {
            Some(group) => group.runs.push(run),
            None => groups.push(Configuration {
                name,
                runs: vec![run],
            }),
        }
    }
    groups
}
