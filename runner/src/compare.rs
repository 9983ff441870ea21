//! `ocr-bench compare A.jsonl B.jsonl`: the token ids of two finished runs, case by case.
//!
//! From each results file it takes one run that has a `result` record (the last one, or the
//! one `--run-a`/`--run-b` names), collects that run's `progress` records (one per finished
//! case; the `result` record's `summary.results` when the run has none) and compares the
//! cases' `tokenIds` by case id. Reading the file is `read.rs`'s job; the timing and memory
//! deltas and their spread are `deltas.rs`'s.

pub mod deltas;
mod read;
#[cfg(test)]
mod tests;

pub use read::{load_run, parse_run};

use std::collections::BTreeSet;
use std::fmt::{self, Write};
use std::path::PathBuf;

use ocr_bench_core::record::PageSummary;
use ocr_bench_core::Config;

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
    /// Where the browser ran (`local`; `None` under `serve`).
    pub target: Option<String>,
    /// The canonical query string ("" for the default configuration).
    pub query: String,
    /// The summary's configuration (null when another page posted the result).
    pub config: Option<Config>,
    /// In the order the run finished them.
    pub cases: Vec<Case>,
    /// The summary's timing figures.
    pub timing: Timing,
    /// The timing and memory figures set side by side, with their run-to-run spread.
    pub measured: deltas::Measured,
    /// `verify=wasm`'s verdict in one line (`report`'s words), `None` for a run that did not
    /// verify.
    pub verification: Option<String>,
    /// Another page's figures, when another page posted the result (kept as posted).
    pub another_page: Option<crate::other_page::OtherFigures>,
}

/// A run's timing figures as its summary gives them (`None` where the summary has none, or
/// another page posted the result).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    pub token_p50_ms: Option<f64>,
    pub ms_per_token: Option<f64>,
    pub median_case_ms: Option<f64>,
    pub first_token_p50_ms: Option<f64>,
    pub completion_bound: Option<bool>,
}

impl Timing {
    fn from_summary(summary: &PageSummary) -> Self {
        let probe = &summary.decode_probe;
        Self {
            token_p50_ms: probe.token_latency.as_ref().map(|s| s.p50_ms),
            ms_per_token: summary.ms_per_token,
            median_case_ms: summary.median_ms,
            first_token_p50_ms: probe.time_to_first_token.as_ref().map(|s| s.p50_ms),
            completion_bound: Some(summary.completion_bound),
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
            if let Some(verification) = &run.verification {
                let _ = writeln!(out, "{side} {verification}");
            }
            if let Some(figures) = &run.another_page {
                let _ = writeln!(out, "{side} is {}", figures.describe());
            }
        }
        self.render_texts(&mut out);
        out
    }

    /// Where a side has no token ids (another page's figures), its cases can only be set side
    /// by side by their text: how many shared cases read the same.
    fn render_texts(&self, out: &mut String) {
        let without = [("A", &self.a), ("B", &self.b)]
            .into_iter()
            .filter(|(_, run)| {
                run.another_page
                    .as_ref()
                    .is_some_and(|f| !f.has_token_ids())
            })
            .map(|(side, _)| side)
            .collect::<Vec<_>>();
        if without.is_empty() {
            return;
        }
        let same = self
            .cases
            .iter()
            .filter(|c| c.actual_a == c.actual_b)
            .count();
        let have = if without.len() > 1 { "have" } else { "has" };
        let _ = writeln!(
            out,
            "{} {have} no token ids, so the token columns say nothing of them: by text, {same} of {} shared cases read the same",
            without.join(" and "),
            self.cases.len()
        );
    }

    /// One line per timing and memory figure both runs have: A, B, B/A, B−A and whether the
    /// difference is beyond the run-to-run spread.
    fn render_timing(&self, out: &mut String) {
        let (a, b) = (&self.a.timing, &self.b.timing);
        deltas::render(out, &self.a.measured, &self.b.measured);
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

/// `FILE run RUNID: BROWSER VERSION [on TARGET] · QUERY · key=value …`, the target said where
/// it is not the local machine.
fn describe(run: &Run) -> String {
    let mut browser = match &run.browser {
        Some((name, version)) => format!("{name} ({version})"),
        None => "browser unknown".to_owned(),
    };
    if let Some(target) = run.target.as_deref().filter(|t| *t != crate::target::LOCAL) {
        browser.push_str(&format!(" on {target}"));
    }
    let query = if run.query.is_empty() {
        "default configuration".to_owned()
    } else {
        run.query.clone()
    };
    let config = match &run.config {
        Some(config) if config.to_query().is_empty() => "config: the defaults".to_owned(),
        Some(config) => format!("config: {}", config.to_query()),
        None => "no config".to_owned(),
    };
    format!(
        "{} run {}: {browser} · {query} · {config}",
        run.file.display(),
        run.run_id
    )
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
