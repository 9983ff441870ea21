//! `ocr-bench table --against SEED.jsonl FILE...`: one row per results file (one combination,
//! its rounds), every figure the median over the file's finished runs, set against the seed's
//! loop: per-token p50, its submit and sync p50, ms per decode step, nCER, whether every
//! round read the seed's tokens, and the ratio seed/this; then the fastest combinations.

use std::fmt::Write;
use std::path::PathBuf;

use ocr_bench_core::config::PARAMETER_NAMES;
use ocr_bench_core::record::DispatchMedians;
use ocr_bench_core::stats::median;
use ocr_bench_core::Config;

use crate::browser::ExtraOptions;
use crate::other_page::OtherFigures;
use crate::table::{csv, html, markdown, Cell, Column, Format, Table as TableModel, Unit};
use crate::units::ratio;

pub use super::combination::{load_combination, parse_combination, Combination, FirstToken, Round};

/// The nCER difference from the seed's loop that still counts as its accuracy.
pub const DEFAULT_NCER_TOLERANCE: f64 = 0.005;

/// Whether every round of a combination read the reference's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tokens {
    Same,
    /// Another page's figures without token ids, on either side.
    NoTokenIds,
    /// Cases (of the union of both sides' case ids) that some round read otherwise, or lacks.
    Differ {
        cases: usize,
        of: usize,
    },
}

/// Every round's tokens against the reference round's, case by case.
pub fn tokens_against(reference: &Round, rounds: &[Round]) -> Tokens {
    if !reference.has_token_ids() || rounds.iter().any(|r| !r.has_token_ids()) {
        return Tokens::NoTokenIds;
    }
    let mut ids: Vec<&str> = reference.cases.iter().map(|(id, _)| id.as_str()).collect();
    for round in rounds {
        for (id, _) in &round.cases {
            if !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
    }
    let tokens_of = |round: &'_ Round, id: &str| {
        round
            .cases
            .iter()
            .find(|(c, _)| c == id)
            .map(|(_, t)| t.clone())
    };
    let differing = ids
        .iter()
        .filter(|id| {
            let wanted = tokens_of(reference, id);
            wanted.is_none() || rounds.iter().any(|r| tokens_of(r, id) != wanted)
        })
        .count();
    if differing == 0 {
        Tokens::Same
    } else {
        Tokens::Differ {
            cases: differing,
            of: ids.len(),
        }
    }
}

/// One combination's row: medians over its rounds, against the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub file: PathBuf,
    /// The parameters that differ between the table's combinations, `name=value&…`.
    pub label: String,
    /// The user's own switches or prefs its browser started with; the label says them too.
    pub extra: ExtraOptions,
    pub is_reference: bool,
    pub rounds: usize,
    pub token_p50_ms: Option<f64>,
    pub submit_p50_ms: Option<f64>,
    pub sync_p50_ms: Option<f64>,
    pub ms_per_step: Option<f64>,
    pub ncer: Option<f64>,
    pub tokens: Tokens,
    /// The reference's per-token p50 over this one's.
    pub speedup: Option<f64>,
    pub completion_bound_rounds: usize,
    /// Rounds whose `verify=wasm` failed: such a row is never the fastest of anything.
    pub failed_verification_rounds: usize,
    /// Another page's figures (its first round's), said in a line under the table.
    pub another_page: Option<String>,
    /// Medians over the rounds of each round's first-token figures.
    pub first_token: FirstToken,
    /// The reference's time to first token p50 over this one's, and the same for the case.
    pub ttft_speedup: Option<f64>,
    pub case_speedup: Option<f64>,
    /// Medians over the rounds of each round's dispatch medians.
    pub dispatches: DispatchMedians,
    /// The reference's dispatches per step over this one's.
    pub step_dispatch_ratio: Option<f64>,
}

/// The table: the reference first unless the list names it elsewhere.
#[derive(Debug, Clone)]
pub struct Table {
    pub rows: Vec<Row>,
    /// The parameters every combination shares that are not at their default.
    pub common: String,
    pub browsers: Vec<String>,
    pub ncer_tolerance: f64,
}

/// Each first-token figure's median over the rounds.
fn first_token(rounds: &[Round]) -> FirstToken {
    let over = |figure: fn(&FirstToken) -> Option<f64>| {
        median(rounds.iter().map(|r| figure(&r.first_token)))
    };
    FirstToken {
        ttft_p50_ms: over(|f| f.ttft_p50_ms),
        vision_p50_ms: over(|f| f.vision_p50_ms),
        prefill_p50_ms: over(|f| f.prefill_p50_ms),
        case_p50_ms: over(|f| f.case_p50_ms),
        first_case_ttft_ms: over(|f| f.first_case_ttft_ms),
        first_case_ms: over(|f| f.first_case_ms),
    }
}

/// Each dispatch figure's median over the rounds that counted dispatches.
fn dispatches(rounds: &[Round]) -> DispatchMedians {
    let over = |figure: fn(&DispatchMedians) -> Option<f64>| {
        median(
            rounds
                .iter()
                .map(|r| r.dispatches.as_ref().and_then(figure)),
        )
    };
    DispatchMedians {
        vision_p50: over(|d| d.vision_p50),
        prefill_p50: over(|d| d.prefill_p50),
        step_p50: over(|d| d.step_p50),
    }
}

/// A parameter's value in a combination (`None` where neither the summary nor the query gives
/// a configuration).
fn value(combination: &Combination, name: &str) -> Option<String> {
    combination.config.as_ref().and_then(|c| c.get(name).ok())
}

/// The labels (the parameters and browser that vary, in the core's order) and the common part.
fn labels(combinations: &[&Combination]) -> (Vec<String>, String) {
    let defaults = Config::default();
    let varies = |values: &[Option<String>]| values.iter().any(|v| *v != values[0]);
    let mut labels = vec![Vec::new(); combinations.len()];
    let mut common = Vec::new();
    let browsers: Vec<Option<String>> = combinations.iter().map(|c| c.browser.clone()).collect();
    if varies(&browsers) {
        for (label, browser) in labels.iter_mut().zip(&browsers) {
            label.push(format!(
                "browser={}",
                browser.as_deref().unwrap_or("unknown")
            ));
        }
    }
    for name in PARAMETER_NAMES {
        let values: Vec<Option<String>> = combinations.iter().map(|c| value(c, name)).collect();
        if varies(&values) {
            for (label, value) in labels.iter_mut().zip(&values) {
                label.push(format!("{name}={}", value.as_deref().unwrap_or("?")));
            }
        } else if let Some(v) = &values[0] {
            if defaults.get(name).ok().as_ref() != Some(v) {
                common.push(format!("{name}={v}"));
            }
        }
    }
    let labels = labels
        .into_iter()
        .zip(combinations)
        .map(|(label, c)| match (label.is_empty(), c.config.is_some()) {
            // Another page's: its page and query say what it ran.
            (_, false) => match (&c.page, c.query.is_empty()) {
                (Some(page), true) => page.clone(),
                (Some(page), false) => format!("{page}?{}", c.query),
                (None, _) => c.query.clone(),
            },
            (false, true) => label.join("&"),
            (true, true) => "(the common query)".to_owned(),
        })
        .collect();
    (labels, common.join("&"))
}

/// A row's label with the user's own switches or prefs its browser started with, on every
/// row that had any: such a figure (Dawn's validation off, say) is a diagnosis, never a
/// plain one.
fn marked(label: String, extra: &ExtraOptions) -> String {
    if extra.is_empty() {
        label
    } else {
        format!("{label} [started with {}]", extra.describe())
    }
}

/// Builds the table; the reference is the `against` combination.
pub fn table(against: &Combination, others: &[Combination], ncer_tolerance: f64) -> Table {
    let mut combinations: Vec<&Combination> = others.iter().collect();
    let reference_index = match combinations.iter().position(|c| c.file == against.file) {
        Some(index) => index,
        None => {
            combinations.insert(0, against);
            0
        }
    };
    let reference_round = &against.rounds[0];
    let reference_p50 = median(against.rounds.iter().map(|r| r.token_p50_ms));
    let reference_first = first_token(&against.rounds);
    let reference_dispatches = dispatches(&against.rounds);
    let (labels, common) = labels(&combinations);
    let rows = combinations
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(index, (c, label))| {
            let token_p50_ms = median(c.rounds.iter().map(|r| r.token_p50_ms));
            let first = first_token(&c.rounds);
            let counted = dispatches(&c.rounds);
            Row {
                step_dispatch_ratio: ratio(reference_dispatches.step_p50, counted.step_p50),
                dispatches: counted,
                ttft_speedup: ratio(reference_first.ttft_p50_ms, first.ttft_p50_ms),
                case_speedup: ratio(reference_first.case_p50_ms, first.case_p50_ms),
                first_token: first,
                file: c.file.clone(),
                label: marked(label, &c.extra),
                extra: c.extra.clone(),
                is_reference: index == reference_index,
                rounds: c.rounds.len(),
                token_p50_ms,
                submit_p50_ms: median(c.rounds.iter().map(|r| r.submit_p50_ms)),
                sync_p50_ms: median(c.rounds.iter().map(|r| r.sync_p50_ms)),
                ms_per_step: median(c.rounds.iter().map(|r| r.ms_per_step)),
                ncer: median(c.rounds.iter().map(|r| r.ncer)),
                tokens: tokens_against(reference_round, &c.rounds),
                speedup: ratio(reference_p50, token_p50_ms),
                completion_bound_rounds: c.rounds.iter().filter(|r| r.completion_bound).count(),
                failed_verification_rounds: c
                    .rounds
                    .iter()
                    .filter(|r| r.verification_failed)
                    .count(),
                another_page: c.rounds[0]
                    .another_page
                    .as_ref()
                    .map(OtherFigures::describe),
            }
        })
        .collect();
    let mut browsers: Vec<String> = Vec::new();
    for c in &combinations {
        let name = match (&c.browser, &c.browser_version) {
            (Some(name), Some(version)) => format!("{name} ({version})"),
            (Some(name), None) => name.clone(),
            (None, _) => "a browser of its own (serve)".to_owned(),
        };
        let name = match c.target.as_deref().filter(|t| *t != crate::target::LOCAL) {
            Some(target) => format!("{name} on {target}"),
            None => name,
        };
        if !browsers.contains(&name) {
            browsers.push(name);
        }
    }
    Table {
        rows,
        common,
        browsers,
        ncer_tolerance,
    }
}

impl Table {
    pub fn reference(&self) -> &Row {
        self.rows
            .iter()
            .find(|r| r.is_reference)
            .unwrap_or(&self.rows[0])
    }

    fn fastest(&self, keep: impl Fn(&Row) -> bool) -> Option<&Row> {
        self.rows
            .iter()
            .filter(|r| keep(r))
            .filter(|r| r.token_p50_ms.is_some() && r.failed_verification_rounds == 0)
            .min_by(|a, b| {
                a.token_p50_ms
                    .unwrap_or(f64::MAX)
                    .total_cmp(&b.token_p50_ms.unwrap_or(f64::MAX))
            })
    }

    /// The fastest per-token p50 among the combinations that read the seed's tokens in
    /// every round.
    pub fn fastest_with_the_seeds_tokens(&self) -> Option<&Row> {
        self.fastest(|r| r.tokens == Tokens::Same)
    }

    /// The fastest per-token p50 among the combinations whose nCER is within the tolerance of
    /// the seed's.
    pub fn fastest_within_ncer(&self) -> Option<&Row> {
        let seed = self.reference().ncer;
        self.fastest(|r| match (seed, r.ncer) {
            (Some(seed), Some(this)) => (this - seed).abs() <= self.ncer_tolerance + 1e-12,
            _ => false,
        })
    }

    /// The table in markdown, as `table` prints it by default.
    pub fn render(&self) -> String {
        self.render_as(Format::Markdown)
    }

    /// The tables in `format`: markdown and HTML with the lines above and under them, CSV the
    /// three tables side by side (a row per combination, its data only).
    pub fn render_as(&self, format: Format) -> String {
        let [decode, first_token, dispatches] = self.tables();
        let intro = self.intro();
        match format {
            Format::Csv => csv::render(&TableModel::beside(&[decode, first_token, dispatches])),
            Format::Markdown => {
                let mut out = intro.join("\n");
                out.push_str("\n\n");
                out.push_str(&markdown::render(&decode));
                out.push('\n');
                out.push_str(FIRST_TOKEN_CAPTION);
                out.push_str(":\n\n");
                out.push_str(&markdown::render(&first_token));
                out.push('\n');
                out.push_str(DISPATCHES_CAPTION);
                out.push_str(":\n\n");
                out.push_str(&markdown::render(&dispatches));
                out
            }
            Format::Html => {
                let paragraph = |text: &str| format!("<p>{}</p>\n", html::escape(text));
                let mut out: String = intro.iter().map(|line| paragraph(line)).collect();
                out.push_str(&html::render(&decode));
                out.push_str(&paragraph(FIRST_TOKEN_CAPTION));
                out.push_str(&html::render(&first_token));
                out.push_str(&paragraph(DISPATCHES_CAPTION));
                out.push_str(&html::render(&dispatches));
                out
            }
        }
    }

    /// What the figures are against, and what every combination shares.
    fn intro(&self) -> Vec<String> {
        let reference = self.reference();
        let mut lines = vec![format!(
            "Against the seed's loop, {} ({}); in {}; every figure the median over a combination's rounds, in ms.",
            reference.label,
            reference.file.display(),
            self.browsers.join(", ")
        )];
        if !self.common.is_empty() {
            lines.push(format!("Common to every combination: {}", self.common));
        }
        lines
    }

    /// The decode table, the first-token table and the dispatch table, a row per combination
    /// in each; the verdicts are the last one's notes.
    pub fn tables(&self) -> [TableModel; 3] {
        [
            self.decode_table(),
            self.first_token_table(),
            self.dispatch_table(),
        ]
    }

    fn decode_table(&self) -> TableModel {
        let ms = |name: &str| Column::figure(name, Unit::Ms, 2);
        let mut table = TableModel::new(vec![
            Column::text("combination"),
            Column::figure("rounds", Unit::Count, 0),
            ms("per-token p50"),
            ms("submit p50"),
            ms("sync p50"),
            ms("ms/step"),
            Column::figure("nCER", Unit::None, 4),
            Column::text("seed's tokens"),
            Column::figure("seed/this", Unit::Ratio, 2),
        ]);
        for row in &self.rows {
            let mut name = self.name(row);
            if row.failed_verification_rounds > 0 {
                let _ = write!(
                    name,
                    " (VERIFICATION FAILED in {} of {} rounds)",
                    row.failed_verification_rounds, row.rounds
                );
            }
            table.push(vec![
                Cell::Text(name),
                Cell::Figure(row.rounds as f64),
                Cell::figure_or(row.token_p50_ms, NOT_TIMED),
                Cell::figure_or(row.submit_p50_ms, NOT_TIMED),
                Cell::figure_or(row.sync_p50_ms, NOT_TIMED),
                Cell::figure_or(row.ms_per_step, NOT_TIMED),
                row.ncer.map_or_else(
                    || Cell::NotApplicable("no round has an nCER".into()),
                    Cell::Figure,
                ),
                Cell::text(tokens(&row.tokens)),
                Cell::figure_or(row.speedup, NO_RATIO),
            ]);
        }
        table
    }

    fn first_token_table(&self) -> TableModel {
        let ms = |name: &str| Column::figure(name, Unit::Ms, 2);
        let ratio = |name: &str| Column::figure(name, Unit::Ratio, 2);
        let mut table = TableModel::new(vec![
            Column::text("combination"),
            ms("first token"),
            ms("vision"),
            ms("prefill"),
            ms("case"),
            ms("first case: first token"),
            ms("first case"),
            ratio("first token seed/this"),
            ratio("case seed/this"),
        ]);
        for row in &self.rows {
            let f = &row.first_token;
            table.push(vec![
                Cell::text(&row.label),
                Cell::figure_or(f.ttft_p50_ms, NOT_TIMED),
                Cell::figure_or(f.vision_p50_ms, NOT_TIMED),
                Cell::figure_or(f.prefill_p50_ms, NOT_TIMED),
                Cell::figure_or(f.case_p50_ms, NOT_TIMED),
                Cell::figure_or(f.first_case_ttft_ms, NOT_TIMED),
                Cell::figure_or(f.first_case_ms, NOT_TIMED),
                Cell::figure_or(row.ttft_speedup, NO_RATIO),
                Cell::figure_or(row.case_speedup, NO_RATIO),
            ]);
        }
        table
    }

    fn dispatch_table(&self) -> TableModel {
        let count = |name: &str| Column::figure(name, Unit::Count, 0);
        let mut table = TableModel::new(vec![
            Column::text("combination"),
            count("dispatches / step"),
            count("dispatches / prefill"),
            count("dispatches / vision"),
            Column::figure("dispatches / step seed/this", Unit::Ratio, 2),
        ]);
        let uncounted = "the records hold no count (older records, another page)";
        for row in &self.rows {
            let d = &row.dispatches;
            table.push(vec![
                Cell::Text(self.name(row)),
                Cell::figure_or(d.step_p50, uncounted),
                Cell::figure_or(d.prefill_p50, uncounted),
                Cell::figure_or(d.vision_p50, uncounted),
                Cell::figure_or(row.step_dispatch_ratio, NO_RATIO),
            ]);
        }
        table.notes = self.verdicts();
        table
    }

    /// A row's label, the reference's said to be the seed's loop.
    fn name(&self, row: &Row) -> String {
        if row.is_reference {
            format!("{} (the seed's loop)", row.label)
        } else {
            row.label.clone()
        }
    }

    /// The fastest combinations, other pages' figures, and the rows whose figures are not the
    /// model's (completion-bound) or not a result (failed verification).
    fn verdicts(&self) -> Vec<String> {
        let mut lines = Vec::new();
        lines.push(match self.fastest_with_the_seeds_tokens() {
            Some(row) => format!("fastest with the seed's tokens: {}", verdict(row)),
            None => "fastest with the seed's tokens: none has a per-token p50".to_owned(),
        });
        let within = format!(
            "fastest with nCER within {} of the seed's loop",
            self.ncer_tolerance
        );
        lines.push(match self.fastest_within_ncer() {
            Some(row) => format!("{within}: {}", verdict(row)),
            None => format!("{within}: none (no nCER to compare)"),
        });
        for row in &self.rows {
            if let Some(figures) = &row.another_page {
                lines.push(format!("{} ({}): {figures}", row.label, row.file.display()));
            }
        }
        let diagnosed: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| !r.extra.is_empty())
            .map(|r| r.label.as_str())
            .collect();
        if !diagnosed.is_empty() {
            lines.push(format!(
                "started with switches or prefs of the user's own, a diagnosis and not what a user's browser runs: {}",
                diagnosed.join(", ")
            ));
        }
        let bound: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.completion_bound_rounds > 0)
            .map(|r| {
                format!(
                    "{} ({} of {} rounds)",
                    r.label, r.completion_bound_rounds, r.rounds
                )
            })
            .collect();
        if !bound.is_empty() {
            lines.push(format!(
                "completion-bound, its token times the browser's GPU-completion timer and not the model: {}",
                bound.join(", ")
            ));
        }
        let failed: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.failed_verification_rounds > 0)
            .map(|r| format!("{} ({})", r.label, r.file.display()))
            .collect();
        if !failed.is_empty() {
            lines.push(format!(
                "VERIFICATION FAILED (verify=wasm: a case left the WASM reference), its figures not a result and never the fastest: {}",
                failed.join(", ")
            ));
        }
        lines
    }
}

/// What the first-token table holds: what a user waits for, the first case apart.
const FIRST_TOKEN_CAPTION: &str = "First token and whole case in ms, p50 over the steady cases \
     (every run after the first; the first is a warm-up run where warmup=N made any); first \
     token = vision + prefill + the first choice; the first case, which compiles the pipelines, \
     apart";

/// What the dispatch table holds: how many GPU dispatches a case costs.
const DISPATCHES_CAPTION: &str = "GPU compute dispatches onnxruntime-web encoded, counted on \
     every case in the realm that ran it (graph-capture replays included); the median over the \
     steady cases, as above; per step, each case's median over its steps; - where the records \
     hold no count (older records, another page)";

/// Why a time is missing: no round timed it.
const NOT_TIMED: &str = "no round timed it";
/// Why a ratio is missing: a figure of either side is.
const NO_RATIO: &str = "a figure of this combination or of the seed's loop is missing";

/// A figure (ms or a ratio) to two places, `-` where there is none.
fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

fn tokens(tokens: &Tokens) -> String {
    match tokens {
        Tokens::Same => "yes".to_owned(),
        Tokens::NoTokenIds => "n/a (no token ids)".to_owned(),
        Tokens::Differ { cases, of } => format!("no ({cases} of {of} cases differ)"),
    }
}

fn verdict(row: &Row) -> String {
    format!(
        "{}: per-token p50 {} ms, {}× the seed's loop ({})",
        row.label,
        figure(row.token_p50_ms),
        figure(row.speedup),
        row.file.display()
    )
}
