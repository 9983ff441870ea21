//! One combination as `table` reads it: a results file's finished runs (its rounds), each with
//! the figures the table sets side by side, and the configuration they ran.

use std::path::{Path, PathBuf};

use ocr_bench_core::build_summary::token_latencies;
use ocr_bench_core::latency::latency_stats;
use ocr_bench_core::record::{CaseResult, DispatchMedians, PageSummary};
use ocr_bench_core::{parse_query, Config};

use super::InputError;
use crate::other_page::{OtherCase, OtherFigures};
use crate::record::{self, Record};
use crate::runs::{self, Run};

/// One finished run of a combination.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub run_id: String,
    pub token_p50_ms: Option<f64>,
    pub submit_p50_ms: Option<f64>,
    pub sync_p50_ms: Option<f64>,
    pub ms_per_step: Option<f64>,
    pub ncer: Option<f64>,
    pub completion_bound: bool,
    /// `verify=wasm` found a case that left the WASM reference: not a result of the combination.
    pub verification_failed: bool,
    /// Case id and token ids, in the run's order.
    pub cases: Vec<(String, Vec<i64>)>,
    /// Another page's figures, kept as posted (`None` for this page's summary).
    pub another_page: Option<OtherFigures>,
    /// Time to first token, vision, prefill and the whole case over the steady cases, and
    /// the first case apart (it compiles the pipelines).
    pub first_token: FirstToken,
    /// The compute dispatches per vision encode, prefill and decode step, medians over the
    /// steady cases as the core's `pipelineCompilation.steady` gives them (`None` in records
    /// older than the count, and for another page).
    pub dispatches: Option<DispatchMedians>,
}

/// The figures a user feels: p50 over the steady cases of the time to first token (vision +
/// prefill + the first choice, as the page defines it), its vision and prefill parts and the
/// whole case; and the first case, which pays for compiling every pipeline, apart. First and
/// steady split as the core's `pipelineCompilation` splits them: the first run made (a warm-up
/// run where `warmup` made any) and every run after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FirstToken {
    pub ttft_p50_ms: Option<f64>,
    pub vision_p50_ms: Option<f64>,
    pub prefill_p50_ms: Option<f64>,
    pub case_p50_ms: Option<f64>,
    pub first_case_ttft_ms: Option<f64>,
    pub first_case_ms: Option<f64>,
}

impl FirstToken {
    fn of(summary: &PageSummary) -> Self {
        let ordered: Vec<&CaseResult> = summary
            .warmup_results
            .iter()
            .chain(&summary.results)
            .collect();
        let (first, steady) = match ordered.split_first() {
            Some((first, steady)) => (Some(*first), steady),
            None => (None, &[][..]),
        };
        let p50 = |figure: fn(&CaseResult) -> f64| {
            let values: Vec<f64> = steady.iter().map(|c| figure(c)).collect();
            latency_stats(&values).map(|s| s.p50_ms)
        };
        Self {
            ttft_p50_ms: p50(|c| c.time_to_first_token_ms),
            vision_p50_ms: p50(|c| c.vision_ms),
            prefill_p50_ms: p50(|c| c.prefill_ms),
            case_p50_ms: p50(|c| c.total_ms),
            first_case_ttft_ms: first.map(|c| c.time_to_first_token_ms),
            first_case_ms: first.map(|c| c.total_ms),
        }
    }

    /// The same figures from another page's cases, split the same way (the first case apart);
    /// a figure the page did not post stays absent.
    fn of_other(figures: &OtherFigures) -> Self {
        let (first, steady) = match figures.cases.split_first() {
            Some((first, steady)) => (Some(first), steady),
            None => (None, &[][..]),
        };
        let p50 = |figure: fn(&OtherCase) -> Option<f64>| {
            let values: Option<Vec<f64>> = steady.iter().map(figure).collect();
            values.and_then(|v| latency_stats(&v)).map(|s| s.p50_ms)
        };
        Self {
            ttft_p50_ms: p50(|c| c.time_to_first_token_ms),
            vision_p50_ms: p50(|c| c.vision_ms),
            prefill_p50_ms: p50(|c| c.prefill_ms),
            case_p50_ms: p50(|c| c.total_ms),
            first_case_ttft_ms: first.and_then(|c| c.time_to_first_token_ms),
            first_case_ms: first.and_then(|c| c.total_ms),
        }
    }
}

/// A record made before the probe named its steps per readback stored, for `sync` above 1,
/// per-token figures of a step's own submit, wait and choice, where a batch's one wait sits
/// on its last step (a p50 of 4.85 ms for steps of 5.7 s, measured); its per-token p50 is
/// recomputed here with the core's `token_latencies`, each batch's time shared by its
/// steps, the batch size taken from the configuration. Newer records are already so.
fn batched_token_p50(summary: &PageSummary) -> Option<f64> {
    let older = summary
        .results
        .iter()
        .any(|case| case.decode_probe.steps_per_readback.is_none());
    if summary.config.sync <= 1 || !older {
        return None;
    }
    let latencies: Vec<f64> = summary
        .results
        .iter()
        .flat_map(|case| {
            let mut probe = case.decode_probe.clone();
            probe.steps_per_readback = Some(summary.config.sync);
            token_latencies(&probe)
        })
        .collect();
    latency_stats(&latencies).map(|s| s.p50_ms)
}

impl Round {
    fn from_summary(summary: &PageSummary) -> Self {
        let probe = &summary.decode_probe;
        Self {
            run_id: summary.run_id.clone(),
            token_p50_ms: batched_token_p50(summary)
                .or_else(|| probe.token_latency.as_ref().map(|s| s.p50_ms)),
            submit_p50_ms: probe.submit.as_ref().map(|s| s.p50_ms),
            sync_p50_ms: probe.sync.as_ref().map(|s| s.p50_ms),
            ms_per_step: summary.ms_per_token,
            ncer: summary.ncer,
            completion_bound: summary.completion_bound,
            verification_failed: summary.verification_failed(),
            cases: summary
                .results
                .iter()
                .map(|c| (c.id.clone(), c.token_ids.clone()))
                .collect(),
            another_page: None,
            first_token: FirstToken::of(summary),
            dispatches: summary
                .pipeline_compilation
                .as_ref()
                .and_then(|p| p.steady.as_ref())
                .and_then(|s| s.dispatches.clone()),
        }
    }

    /// Another page's result: its nCER, decode time per token, per-token p50 and first-token
    /// figures where it has them; submit and sync are this page's decode probe's alone.
    fn from_other(figures: OtherFigures) -> Self {
        Self {
            run_id: figures.run_id.clone().unwrap_or_default(),
            token_p50_ms: figures.token_p50_ms,
            submit_p50_ms: None,
            sync_p50_ms: None,
            ms_per_step: figures.ms_per_token(),
            ncer: figures.ncer,
            completion_bound: false,
            verification_failed: false,
            cases: figures
                .cases
                .iter()
                .map(|c| (c.id.clone(), c.token_ids.clone().unwrap_or_default()))
                .collect(),
            first_token: FirstToken::of_other(&figures),
            another_page: Some(figures),
            dispatches: None,
        }
    }

    /// Whether its cases' token ids can be set against another round's.
    pub(super) fn has_token_ids(&self) -> bool {
        self.another_page
            .as_ref()
            .is_none_or(OtherFigures::has_token_ids)
    }
}

/// Every finished run of one results file: one configuration in one browser.
#[derive(Debug, Clone)]
pub struct Combination {
    pub file: PathBuf,
    /// `firefox`, `chromium`; `None` for a page served by `serve`.
    pub browser: Option<String>,
    pub browser_version: Option<String>,
    /// Where the browser ran (`local`; `None` under `serve`).
    pub target: Option<String>,
    /// The query the runner sent.
    pub query: String,
    /// The summary's configuration (the query's, parsed, when the summary has none; `None`
    /// for another page's figures).
    pub config: Option<Config>,
    /// The page the runner opened, where the records name it.
    pub page: Option<String>,
    pub rounds: Vec<Round>,
}

/// A browser's name in a message, with its target where that is not the local machine.
fn on_target(browser: Option<&str>, target: Option<&str>) -> String {
    let browser = browser.unwrap_or("an unknown browser");
    match target.filter(|t| *t != crate::target::LOCAL) {
        Some(target) => format!("{browser} on {target}"),
        None => browser.to_owned(),
    }
}

/// Reads a combination from JSONL text; `file` names it in messages.
pub fn parse_combination(text: &str, file: &Path) -> Result<Combination, InputError> {
    let records = record::parse_records(text)
        .map_err(|bad| InputError(format!("{}:{}: {}", file.display(), bad.line, bad.message)))?;
    for warning in records.warnings(file) {
        eprintln!("ocr-bench: {warning}");
    }
    let runs = runs::group(records.lines);
    let mut combination: Option<Combination> = None;
    // A round per finished run, in file order.
    for (number, line) in runs.iter().filter_map(Run::result_entry) {
        let Record::Result { summary, .. } = &line.record else {
            continue;
        };
        let browser = line.browser.as_ref().map(|b| b.name.name().to_owned());
        let target = line.target().map(str::to_owned);
        let query = line.query.clone().unwrap_or_default();
        let (round, config) = match (summary.benchmark(), summary.other()) {
            (Some(summary), _) => (
                Round::from_summary(summary),
                Some(summary.config.clone()).or_else(|| parse_query(&query).ok()),
            ),
            (None, Some(figures)) => (Round::from_other(figures), None),
            (None, None) => continue,
        };
        match &mut combination {
            None => {
                combination = Some(Combination {
                    file: file.to_owned(),
                    browser,
                    browser_version: line.browser.as_ref().map(|b| b.version.clone()),
                    target,
                    config,
                    page: line.page.clone(),
                    query,
                    rounds: vec![round],
                });
            }
            Some(first)
                if first.browser != browser || first.query != query || first.target != target =>
            {
                return Err(InputError(format!(
                    "{}:{number}: a run of {} {query:?} after runs of {} {:?}; a file holds one combination's rounds (give each combination its own file)",
                    file.display(),
                    on_target(browser.as_deref(), target.as_deref()),
                    on_target(first.browser.as_deref(), first.target.as_deref()),
                    first.query,
                )));
            }
            Some(first) => first.rounds.push(round),
        }
    }
    combination.ok_or_else(|| {
        InputError(format!(
            "{} has no finished run (no result record)",
            file.display()
        ))
    })
}

/// Reads a combination from a results file.
pub fn load_combination(file: &Path) -> Result<Combination, InputError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| InputError(format!("reading {}: {e}", file.display())))?;
    parse_combination(&text, file)
}
