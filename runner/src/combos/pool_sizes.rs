//! `ocr-bench pool-table FILE...`: one row per pool size (`pool=K`), each file the rounds of
//! one K over the same set, every figure the median over the file's finished runs, set against
//! the first file (K=1 as `bench/pool-sizes` orders them): the whole set's time, the aggregate
//! decode rate, the per-token p50 under contention, whether every case read the first file's
//! tokens and the nCER, and what the realms cost (GPU bytes and WASM heaps of every realm, the
//! process PSS and the driver's VRAM at their decoder-run peak).

use std::path::{Path, PathBuf};

use ocr_bench_core::record::PageSummary;
use ocr_bench_core::stats::median;

use super::table::{load_combination, tokens_against, Round, Tokens};
use super::InputError;
use crate::memory_model::page_gpu::heap_bytes;
use crate::memory_model::pool_realms;
use crate::runs::{self, Run};
use crate::table::{csv, html, markdown, Cell, Column, Format, Table, Unit};
use crate::units::ratio;

/// The phase a set is read in: its duration is the whole set's time for every K alike (the
/// page's own `pool.wallMs`, from the first case taken to the last read, exists only above 1).
const READ_PHASE: &str = "decoder-run";

/// One finished run of a pool size.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolRound {
    /// The decoder-run phase's duration as the runner timed it.
    pub set_ms: Option<f64>,
    /// Decode steps of every run (warm-up included: they were read in the same time).
    pub decode_steps: usize,
    pub token_p50_ms: Option<f64>,
    /// GPU bytes at their peak, summed over the realms that decode.
    pub gpu_peak_bytes: Option<u64>,
    /// WASM heaps (onnxruntime-web and, in the page, the core), summed over the realms.
    pub wasm_bytes: Option<u64>,
    pub pss_peak_bytes: Option<u64>,
    /// The driver's VRAM for the browser at the decoder-run peak, where it was read.
    pub vram_peak_bytes: Option<u64>,
    /// Runs each realm read (one entry with `pool=1`).
    pub cases_per_realm: Vec<u32>,
}

/// One pool size: its K, its rounds and the rounds as the decode table reads them (tokens).
#[derive(Debug, Clone)]
pub struct PoolSize {
    pub file: PathBuf,
    pub realms: u32,
    pub query: String,
    pub rounds: Vec<PoolRound>,
    pub token_rounds: Vec<Round>,
}

impl PoolRound {
    fn of(run: &Run, summary: &PageSummary) -> Self {
        let memory = run
            .result()
            .and_then(|(_, answer)| answer.measured.as_ref());
        let phase = memory.and_then(|m| {
            m.phases
                .iter()
                .find(|(name, _)| name == READ_PHASE)
                .map(|(_, p)| p)
        });
        let driver_read = memory
            .and_then(|m| m.beside.driver_gpu_memory.as_ref())
            .is_some_and(|d| d.available);
        let runs = || summary.warmup_results.iter().chain(&summary.results);
        // The realms' own reports: the pool's with K above 1; with one realm, the decoder
        // worker's device or the page's (which then also holds a resident vision session).
        let (gpu_peak_bytes, wasm_bytes, cases_per_realm) = match &summary.pool {
            Some(pool) => {
                let reports = pool_realms::realm_reports(pool);
                (
                    reports.as_deref().and_then(pool_realms::gpu_peak_bytes),
                    reports.as_deref().map(pool_realms::wasm_bytes),
                    pool.cases_per_realm.clone(),
                )
            }
            None => {
                let gpu = summary
                    .gpu_memory
                    .as_ref()
                    .and_then(|g| g.decoder_worker.as_ref().or(g.page.as_ref()));
                // The last page sample of the phase holds the decoder realm's heaps.
                let heaps = summary.memory_samples.iter().rev().find_map(|sample| {
                    match &sample.decoder_worker {
                        Some(worker) => Some(heap_bytes(&worker.wasm_heaps)),
                        None => sample.wasm_heaps.as_deref().map(heap_bytes),
                    }
                });
                (
                    gpu.map(|g| g.peak_bytes),
                    heaps,
                    vec![runs().count() as u32],
                )
            }
        };
        Self {
            set_ms: phase.map(|p| p.duration_ms),
            decode_steps: runs().map(|r| r.decode_steps).sum(),
            token_p50_ms: summary
                .decode_probe
                .token_latency
                .as_ref()
                .map(|s| s.p50_ms),
            gpu_peak_bytes,
            wasm_bytes,
            pss_peak_bytes: phase.and_then(|p| p.total.peak_pss),
            vram_peak_bytes: phase
                .and_then(|p| p.total.peak_driver_gpu)
                .filter(|_| driver_read),
            cases_per_realm,
        }
    }

    /// Decode steps per second over the whole set's time.
    pub fn steps_per_second(&self) -> Option<f64> {
        self.set_ms
            .filter(|ms| *ms > 0.0)
            .map(|ms| self.decode_steps as f64 * 1000.0 / ms)
    }
}

/// Reads one pool size's rounds; every run of the file must be one configuration.
pub fn load_pool_size(file: &Path) -> Result<PoolSize, InputError> {
    let combination = load_combination(file)?;
    let runs = runs::read_runs(file).map_err(InputError)?;
    let rounds: Vec<PoolRound> = runs
        .iter()
        .filter_map(|run| run.summary().map(|s| PoolRound::of(run, s)))
        .collect();
    let realms = combination.config.as_ref().map_or(1, |c| c.pool);
    Ok(PoolSize {
        file: file.to_owned(),
        realms,
        query: combination.query,
        rounds,
        token_rounds: combination.rounds,
    })
}

fn median_bytes(values: impl Iterator<Item = Option<u64>>) -> Option<f64> {
    median(values.map(|v| v.map(|b| b as f64)))
}

/// What the table's figures are, said above it.
const CAPTION: &str = "Whole set = the decoder-run phase as the runner timed it (every case \
     read, the samples between cases included); steps/s = decode steps of every run over it; \
     per-token p50 = the decode probe's, each realm's tokens waiting on the others; GPU bytes \
     and WASM heaps summed over the realms that decode; PSS and VRAM = the browser's peak in \
     decoder-run (VRAM where the driver was read). Medians over the rounds.";

/// The table, the first size the reference of the ratios and the tokens; the best whole-set
/// time its note. `None` without sizes.
pub fn table(sizes: &[PoolSize]) -> Option<Table> {
    let reference = sizes.first()?;
    let set_ms = |s: &PoolSize| median(s.rounds.iter().map(|r| r.set_ms));
    let gpu = |s: &PoolSize| median_bytes(s.rounds.iter().map(|r| r.gpu_peak_bytes));
    let pss = |s: &PoolSize| median_bytes(s.rounds.iter().map(|r| r.pss_peak_bytes));
    let reference_set = set_ms(reference);
    let ms = |name: &str, places| Column::figure(name, Unit::Ms, places).with_unit_in_cells();
    let mib = |name: &str| Column::figure(name, Unit::Mib, 0).with_unit_in_cells();
    let mut table = Table::new(vec![
        Column::figure("pool", Unit::Count, 0),
        Column::figure("rounds", Unit::Count, 0),
        ms("whole set", 1),
        Column::figure("set K=1/this", Unit::Ratio, 2).with_unit_in_cells(),
        Column::figure("steps/s", Unit::None, 2),
        ms("per-token p50", 1),
        Column::text("tokens as the first"),
        Column::figure("nCER", Unit::None, 4),
        Column::text("runs per realm"),
        mib("GPU bytes, all realms"),
        mib("WASM heaps, all realms"),
        mib("PSS peak"),
        mib("VRAM peak"),
    ]);
    let reference_tokens = reference.token_rounds.first();
    for size in sizes {
        let tokens = match reference_tokens {
            Some(first) => match tokens_against(first, &size.token_rounds) {
                Tokens::Same => Cell::text("yes"),
                Tokens::NoTokenIds => Cell::text("no token ids"),
                Tokens::Differ { cases, of } => Cell::text(format!("{cases} of {of} cases differ")),
            },
            None => Cell::Missing("the first file has no round".into()),
        };
        let per_realm = size
            .rounds
            .first()
            .map(|r| {
                r.cases_per_realm
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        let this_set = set_ms(size);
        table.push(vec![
            Cell::Figure(size.realms.into()),
            Cell::Figure(size.rounds.len() as f64),
            Cell::figure_or(this_set, "no decoder-run phase timed"),
            Cell::figure_or(
                ratio(reference_set, this_set),
                "a whole-set time is missing",
            ),
            Cell::figure_or(
                median(size.rounds.iter().map(PoolRound::steps_per_second)),
                "no decoder-run phase timed",
            ),
            Cell::figure_or(
                median(size.rounds.iter().map(|r| r.token_p50_ms)),
                "no decode probe",
            ),
            tokens,
            Cell::figure_or(
                median(size.token_rounds.iter().map(|r| r.ncer)),
                "no round has an nCER (no reference text)",
            ),
            Cell::Text(per_realm),
            Cell::figure_or(gpu(size), "no realm reported its device"),
            Cell::figure_or(
                median_bytes(size.rounds.iter().map(|r| r.wasm_bytes)),
                "no realm reported its heaps",
            ),
            Cell::figure_or(pss(size), "no PSS sample in decoder-run"),
            Cell::figure_or(
                median_bytes(size.rounds.iter().map(|r| r.vram_peak_bytes)),
                "the driver was not read",
            ),
        ]);
    }
    let best = sizes
        .iter()
        .filter_map(|s| set_ms(s).map(|t| (s, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((size, time)) = best {
        // Written by the table's own columns, so the note reads as the rows do.
        let shown = |column: &str, value: Option<f64>| {
            let column = table.columns.iter().find(|c| c.name == column);
            column.map_or_else(String::new, |c| Cell::figure_or(value, "").shown(c))
        };
        let note = format!(
            "Best whole-set time: pool={} at {} ({} the first row's), GPU bytes {} and PSS {} against the first row's {} and {}.",
            size.realms,
            shown("whole set", Some(time)),
            shown("set K=1/this", ratio(reference_set, Some(time))),
            shown("GPU bytes, all realms", gpu(size)),
            shown("PSS peak", pss(size)),
            shown("GPU bytes, all realms", gpu(reference)),
            shown("PSS peak", pss(reference)),
        );
        table.note(note);
    }
    Some(table)
}

/// The table in `format`: markdown and HTML with what its figures are said above it, CSV its
/// rows only; nothing without sizes.
pub fn render(sizes: &[PoolSize], format: Format) -> String {
    let Some(table) = table(sizes) else {
        return String::new();
    };
    match format {
        Format::Markdown => format!("{CAPTION}\n\n{}", markdown::render(&table)),
        Format::Html => format!("<p>{}</p>\n{}", html::escape(CAPTION), html::render(&table)),
        Format::Csv => csv::render(&table),
    }
}

#[cfg(test)]
mod tests;
