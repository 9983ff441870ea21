//! `ocr-bench export`: one flat row per run of a results file, for a notebook. The columns
//! are fixed (the same names in one order for every file, whatever its runs hold), a cell a
//! run lacks is empty, and a column empty in every run is left out unless all are asked for;
//! `runner/README.md` ("Exporting runs") says what each holds.

use std::collections::BTreeMap;

use ocr_bench_core::config::{ParameterKind, PARAMETER_NAMES};
use ocr_bench_core::latency::LatencyStats;
use ocr_bench_core::phase::{Phase, RELEASE_STEPS};
use ocr_bench_core::record::{FloorOrigin, GpuBytes, PageSummary};
use ocr_bench_core::{parse_query, Config};
use serde_json::{Map, Value};

use crate::gpu_placement::{gpu_placement, GpuPlacement};
use crate::memory::ProcessMemory;
use crate::memory_model::given_back::given_back;
use crate::memory_model::pool_realms::{decoder_workers_peak_bytes, samples_of_every_realm};
use crate::memory_model::rise::{rises, total, Part, ReportRise, REALMS};
use crate::memory_model::{page_gpu, STARTUP_PHASE};
use crate::process_type::ProcessType;
use crate::runs::Run;

/// 2^53: every whole number below it is exact as an `f64`.
const WHOLE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// One cell of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Empty,
    Text(String),
    Number(f64),
    Bool(bool),
}

impl Cell {
    /// As a CSV field: empty, the text, the number as Rust writes it, `true`/`false`.
    pub fn csv(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Text(text) => text.clone(),
            Cell::Number(number) => number.to_string(),
            Cell::Bool(flag) => flag.to_string(),
        }
    }

    /// As a JSON value: null, a string, a number (whole numbers without a fraction, as in
    /// the CSV), a boolean.
    pub fn json(&self) -> Value {
        match self {
            Cell::Empty => Value::Null,
            Cell::Text(text) => Value::String(text.clone()),
            Cell::Number(number) if number.fract() == 0.0 && number.abs() < WHOLE_LIMIT => {
                Value::from(*number as i64)
            }
            Cell::Number(number) => serde_json::Number::from_f64(*number)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Cell::Bool(flag) => Value::Bool(*flag),
        }
    }
}

fn text(value: Option<impl Into<String>>) -> Cell {
    value.map_or(Cell::Empty, |v| Cell::Text(v.into()))
}

/// Non-finite numbers are no figure: empty.
fn number(value: Option<impl Into<f64>>) -> Cell {
    match value.map(Into::into) {
        Some(v) if v.is_finite() => Cell::Number(v),
        _ => Cell::Empty,
    }
}

/// Counts and bytes (exact as JSON numbers up to 2^53, 8 PiB).
fn count(value: Option<impl TryInto<u64>>) -> Cell {
    number(value.and_then(|v| v.try_into().ok()).map(|v: u64| v as f64))
}

fn flag(value: Option<bool>) -> Cell {
    value.map_or(Cell::Empty, Cell::Bool)
}

/// The phases of the per-phase columns: the sampler's `startup`, then the page's marks.
pub fn phases() -> Vec<&'static str> {
    std::iter::once(STARTUP_PHASE)
        .chain(Phase::ALL.map(Phase::as_str))
        .collect()
}

/// The figures of a run's latency statistics given their own columns.
const LATENCIES: [&str; 5] = [
    "tokenLatency",
    "timeToFirstToken",
    "submit",
    "sync",
    "choose",
];

/// The `sessionMs` entries given their own columns.
const SESSIONS: [&str; 3] = ["vision", "decoder", "decoderStep"];

/// What a row is made of; every part is optional, so the empty `Facts` gives every column.
#[derive(Default)]
struct Facts<'a> {
    run: Option<&'a Run>,
    summary: Option<&'a PageSummary>,
    memory: Option<&'a ProcessMemory>,
    config: Option<Config>,
}

impl<'a> Facts<'a> {
    fn of(run: &'a Run) -> Self {
        let summary = run.summary();
        let config = summary
            .map(|s| s.config.clone())
            .or_else(|| run.start().map(|(_, body)| body.config.clone()))
            .or_else(|| run.query().and_then(|q| parse_query(q).ok()));
        Facts {
            run: Some(run),
            summary,
            memory: run
                .result()
                .and_then(|(_, answer)| answer.measured.as_ref()),
            config,
        }
    }

    fn latency(&self, name: &str) -> Option<&'a LatencyStats> {
        let probe = &self.summary?.decode_probe;
        match name {
            "tokenLatency" => probe.token_latency.as_ref(),
            "timeToFirstToken" => probe.time_to_first_token.as_ref(),
            "submit" => probe.submit.as_ref(),
            "sync" => probe.sync.as_ref(),
            "choose" => probe.choose.as_ref(),
            _ => None,
        }
    }

    /// The message of the run: the closing record's, else the page's error.
    fn message(&self) -> Option<String> {
        let run = self.run?;
        run.end()
            .and_then(|end| end.message.clone())
            .or_else(|| run.errors().last().map(|(_, body)| body.message()))
    }
}

/// Appends the cells of one group of columns.
struct Row(Vec<(String, Cell)>);

impl Row {
    fn push(&mut self, name: impl Into<String>, cell: Cell) {
        self.0.push((name.into(), cell));
    }
}

fn run_cells(row: &mut Row, f: &Facts<'_>) {
    let run = f.run;
    let end = run.and_then(Run::end);
    row.push("runId", text(run.and_then(|r| r.run_id.clone())));
    row.push("line", count(run.map(Run::first_line)));
    row.push("time", text(run.map(|r| r.first().time.clone())));
    row.push("outcome", text(end.map(|e| e.outcome.clone())));
    row.push("message", text(f.message()));
    let error = run.and_then(|r| r.errors().last());
    row.push(
        "errorPhase",
        text(error.and_then(|(p, b)| b.phase.as_deref().or(p))),
    );
    row.push("finished", flag(run.map(|r| r.result().is_some())));
    row.push(
        "anotherPage",
        flag(
            run.and_then(Run::result)
                .map(|(p, _)| p.benchmark().is_none()),
        ),
    );
    row.push("refused", count(run.map(|r| r.refused().count())));
    row.push("wallSeconds", number(end.map(|e| e.wall_seconds)));
    row.push("stop.killed", count(end.map(|e| e.stop.killed)));
    row.push("stop.left", count(end.map(|e| e.stop.left.len())));
}

fn target_cells(row: &mut Row, f: &Facts<'_>) {
    let run = f.run;
    let browser = run.and_then(Run::browser);
    let start = run.and_then(Run::start);
    let environment = f.summary.map(|s| &s.environment);
    let adapter = start
        .map(|(_, body)| &body.adapter)
        .or(environment.map(|e| &e.adapter));
    let adapter_text = |key: &str| text(adapter.and_then(|a| a.get(key)?.as_str()));
    row.push("target", text(run.and_then(Run::target)));
    row.push("browser.name", text(browser.map(|b| b.name.name())));
    row.push("browser.version", text(browser.map(|b| b.version.clone())));
    row.push(
        "browser.extra",
        text(
            browser
                .map(|b| b.extra.describe())
                .filter(|e| !e.is_empty()),
        ),
    );
    row.push("page", text(run.and_then(Run::page)));
    row.push("query", text(run.and_then(Run::query)));
    row.push(
        "userAgent",
        text(
            start
                .map(|(_, b)| &b.user_agent)
                .or(environment.map(|e| &e.user_agent))
                .cloned(),
        ),
    );
    row.push(
        "ortVersion",
        text(
            start
                .map(|(_, b)| &b.ort_version)
                .or(environment.map(|e| &e.ort_version))
                .cloned(),
        ),
    );
    for key in ["vendor", "architecture", "device", "description"] {
        row.push(format!("adapter.{key}"), adapter_text(key));
    }
    row.push(
        "adapter.software",
        flag(adapter.and_then(|a| a.get("software")?.as_bool())),
    );
    let placement = f.summary.map(gpu_placement).and_then(|p| match p {
        GpuPlacement::Software => Some("software"),
        GpuPlacement::Device => Some("device"),
        GpuPlacement::Unknown => None,
    });
    row.push("gpuPlacement", text(placement));
    let route = run
        .and_then(Run::end)
        .and_then(|end| end.gpu_route.as_ref());
    row.push("gpuRoute.asked", text(route.map(|r| r.asked.to_string())));
    row.push("gpuRoute.route", text(route.map(|r| r.route.to_string())));
    row.push(
        "gpuRoute.adapter",
        text(route.and_then(|r| r.adapter).map(|a| a.to_string())),
    );
    row.push("gpuRoute.flags", text(route.map(|r| r.flags.join(" "))));
    let machine = start.map(|(machine, _)| machine);
    for key in ["cpuModel", "os", "arch"] {
        row.push(
            format!("machine.{key}"),
            text(machine.and_then(|m| m.get(key)?.as_str())),
        );
    }
    for key in ["cores", "memoryBytes"] {
        row.push(
            format!("machine.{key}"),
            count(machine.and_then(|m| m.get(key)?.as_u64())),
        );
    }
}

fn config_cells(row: &mut Row, f: &Facts<'_>) {
    for name in PARAMETER_NAMES {
        let value = f.config.as_ref().and_then(|c| c.get(name).ok());
        // Whole and decimal parameters are numbers; choices (tier `121` too) and names text.
        let cell = match Config::kind(name) {
            Ok(ParameterKind::Integer | ParameterKind::Decimal) => {
                number(value.and_then(|v| v.parse::<f64>().ok()))
            }
            _ => text(value),
        };
        row.push(format!("config.{name}"), cell);
    }
}

fn capability_cells(row: &mut Row, f: &Facts<'_>) {
    let capability = f.summary.map(|s| &s.capability);
    let numbers = capability.map(|c| &c.shape).map(|c| {
        [
            c.layers,
            c.hidden_size,
            c.intermediate_size,
            c.attention_heads,
            c.kv_heads,
            c.vocabulary,
            c.max_tokens,
        ]
    });
    for (index, name) in [
        "layers",
        "hiddenSize",
        "intermediateSize",
        "attentionHeads",
        "kvHeads",
        "vocabulary",
        "maxTokens",
    ]
    .iter()
    .enumerate()
    {
        row.push(
            format!("capability.{name}"),
            count(numbers.map(|n| n[index])),
        );
    }
    row.push(
        "capability.vision",
        text(capability.map(|c| c.vision.clone())),
    );
    row.push(
        "capability.decoder",
        text(capability.map(|c| c.decoder.clone())),
    );
}

fn accuracy_cells(row: &mut Row, f: &Facts<'_>) {
    let s = f.summary;
    row.push("cases", count(s.map(|s| s.cases)));
    row.push("casesReported", count(f.run.map(|r| r.progress().len())));
    row.push("accuracyApplicable", flag(s.map(|s| s.accuracy_applicable)));
    row.push("ncer", number(s.and_then(|s| s.ncer)));
    row.push("distance", count(s.and_then(|s| s.distance)));
    row.push("characters", count(s.and_then(|s| s.characters)));
    row.push("exact", count(s.and_then(|s| s.exact)));
    row.push("trailingExtras", count(s.and_then(|s| s.trailing_extras)));
    let verification = s.and_then(|s| s.verification.as_ref());
    row.push(
        "verification.method",
        text(verification.map(|v| v.method.clone())),
    );
    row.push("verification.passed", flag(verification.map(|v| v.passed)));
    row.push(
        "verification.agreeing",
        count(verification.map(|v| v.agreeing)),
    );
    row.push("verification.total", count(verification.map(|v| v.total)));
}

fn latency_cells(row: &mut Row, f: &Facts<'_>) {
    let s = f.summary;
    row.push("medianCaseMs", number(s.and_then(|s| s.median_ms)));
    row.push("meanCaseMs", number(s.and_then(|s| s.mean_ms)));
    row.push("peakCaseMs", number(s.and_then(|s| s.peak_case_ms)));
    row.push("msPerToken", number(s.and_then(|s| s.ms_per_token)));
    row.push(
        "tokensPerSecond",
        number(s.and_then(|s| s.decode_probe.tokens_per_second)),
    );
    for name in LATENCIES {
        let stats = f.latency(name);
        row.push(format!("{name}.count"), count(stats.map(|l| l.count)));
        row.push(format!("{name}.p50Ms"), number(stats.map(|l| l.p50_ms)));
        row.push(format!("{name}.p90Ms"), number(stats.map(|l| l.p90_ms)));
    }
    row.push("repeats", count(s.map(|s| s.repeats.count)));
    row.push("pageWallMs", number(s.map(|s| s.wall_ms)));
    for name in SESSIONS {
        let ms = s.and_then(|s| s.session_ms.get(name).copied());
        row.push(format!("sessionMs.{name}"), number(ms));
    }
    let check = s.map(|s| &s.completion.check);
    row.push("completion.floorMs", number(check.map(|c| c.floor_ms)));
    row.push("completion.floorSource", text(floor_source(s)));
    row.push("completion.bound", flag(check.map(|c| c.bound)));
    row.push("completion.waits", count(check.map(|c| c.waits)));
    row.push(
        "completion.atMultiples",
        count(check.map(|c| c.at_multiples)),
    );
}

/// Whether the floor the check used (the decoding realm's) was `measured` or `reused` from
/// the probe cache; empty for a record older than the cache.
fn floor_source(summary: Option<&PageSummary>) -> Option<&'static str> {
    let completion = &summary?.completion;
    let floor = completion
        .decoder_worker
        .as_ref()
        .or(completion.page.as_ref())?;
    Some(match floor.rounds.source.as_ref()?.origin {
        FloorOrigin::Measured => "measured",
        FloorOrigin::Reused => "reused",
    })
}

fn gpu_cells(row: &mut Row, f: &Facts<'_>) {
    let gpu = f.summary.and_then(|s| s.gpu_memory.as_ref());
    let peak = |bytes: Option<&GpuBytes>| bytes.map(|b| b.peak_bytes);
    let realms: [(&str, Option<u64>); 3] = [
        ("page", peak(gpu.and_then(|g| g.page.as_ref()))),
        ("worker", peak(gpu.and_then(|g| g.worker.as_ref()))),
        // Every decoder worker of a pool.
        (
            "decoderWorker",
            f.summary.and_then(decoder_workers_peak_bytes),
        ),
    ];
    for (realm, bytes) in realms {
        row.push(format!("gpu.{realm}.peakBytes"), count(bytes));
    }
    row.push(
        "gpu.leakVerdict",
        text(gpu.map(|g| g.leak_check.verdict.clone())),
    );
}

fn phase_cells(row: &mut Row, f: &Facts<'_>) {
    let samples = f.summary.map(samples_of_every_realm).unwrap_or_default();
    let gpu = page_gpu::gpu_bytes_by_phase(&samples);
    let wasm = page_gpu::wasm_bytes_by_phase(&samples);
    let memory = f.memory;
    let floor = memory
        .and_then(|m| m.beside.floor.as_ref())
        .filter(|floor| floor.available);
    // Driver VRAM only where NVML was read: a zero otherwise means nothing.
    let driver_read = memory
        .and_then(|m| m.beside.driver_gpu_memory.as_ref())
        .is_some_and(|d| d.available);
    row.push(
        "process.available",
        flag(f.run.and_then(Run::result).map(|(_, a)| a.available)),
    );
    for phase in phases() {
        let measured = memory
            .and_then(|m| m.phases.iter().find(|(name, _)| name == phase))
            .map(|(_, p)| p);
        let cells = [
            ("durationMs", number(measured.map(|p| p.duration_ms))),
            ("peakRssBytes", count(measured.map(|p| p.total.peak_rss))),
            (
                "peakPssBytes",
                count(measured.and_then(|p| p.total.peak_pss)),
            ),
            // The end of the phase beside its peak: `release` ending below its peak is what
            // was given back.
            ("endPssBytes", count(measured.and_then(|p| p.total.end_pss))),
            (
                "peakPssShmemBytes",
                count(measured.and_then(|p| p.total.peak_pss_shmem)),
            ),
            (
                "peakDriverGpuBytes",
                count(
                    measured
                        .and_then(|p| p.total.peak_driver_gpu)
                        .filter(|_| driver_read),
                ),
            ),
            ("gpuBytes", count(gpu.get(phase).copied())),
            ("wasmBytes", count(wasm.get(phase).copied())),
            (
                "floorBytes",
                count(floor.and_then(|f| f.phase(phase)).map(|p| p.bytes)),
            ),
        ];
        for (name, cell) in cells {
            row.push(format!("phase.{phase}.{name}"), cell);
        }
    }
}

/// What each release step gave back in all (`memory_model::given_back`): PSS in bytes and as
/// a share of the rise, and the driver VRAM's share; empty for a step the run did not take.
fn release_cells(row: &mut Row, f: &Facts<'_>) {
    let returns = match (f.memory, f.summary) {
        (Some(memory), Some(summary)) => given_back(memory, &samples_of_every_realm(summary)),
        _ => Vec::new(),
    };
    for step in RELEASE_STEPS {
        let taken = returns.iter().find(|r| r.step == step);
        let pss = taken.and_then(|r| r.pss);
        let cells = [
            ("pssReturnedBytes", number(pss.map(|p| p.bytes as f64))),
            (
                "pssReturnedShare",
                number(pss.and_then(|p| p.share_of_rise)),
            ),
            (
                "driverGpuReturnedShare",
                number(
                    taken
                        .and_then(|r| r.driver_vram)
                        .and_then(|v| v.share_of_rise),
                ),
            ),
        ];
        for (name, cell) in cells {
            row.push(format!("release.{step}.{name}"), cell);
        }
    }
}

/// The rise above `baseline` at each phase's end (`memory_model::rise`): PSS, its named parts
/// and what is unexplained. A part on a real GPU's device memory is 0; one the browser does not
/// offer, or that was not read, is empty.
fn rise_cells(row: &mut Row, f: &Facts<'_>) {
    let measured = match (f.memory, f.summary) {
        (Some(memory), Some(summary)) => rises(memory, summary),
        _ => Vec::new(),
    };
    let bytes = |part: Option<Part>| {
        number(part.and_then(|p| match p {
            Part::Measured(bytes) => Some(bytes as f64),
            Part::OutsidePss => Some(0.0),
            Part::NotAvailable | Part::Unknown => None,
        }))
    };
    for phase in Phase::ALL.into_iter().filter(|p| *p != Phase::Baseline) {
        let end = measured.iter().find(|r| r.phase == phase).map(|r| &r.end);
        let realm = |name: &str| {
            end.and_then(|e| e.wasm.iter().find(|(r, _)| *r == name))
                .map(|(_, p)| *p)
        };
        let cells = [
            ("pssBytes", number(end.map(|e| e.pss as f64))),
            ("gpuBytes", bytes(end.map(|e| e.gpu))),
            ("wasmPageBytes", bytes(realm(REALMS[0]))),
            ("wasmVisionWorkerBytes", bytes(realm(REALMS[1]))),
            ("wasmDecoderWorkerBytes", bytes(realm(REALMS[2]))),
            ("jsHeapBytes", bytes(end.map(|e| e.js_heap))),
            ("shmemBytes", bytes(end.map(|e| e.shmem))),
            (
                "unexplainedBytes",
                number(end.and_then(|e| e.unexplained()).map(|b| b as f64)),
            ),
            (
                "unexplainedShare",
                number(end.and_then(|e| e.unexplained_share())),
            ),
        ];
        for (name, cell) in cells {
            row.push(format!("rise.{}.{name}", phase.as_str()), cell);
        }
        // Firefox's own report parts (`--memory-reports`), summed over the process types.
        let report = end.and_then(|e| e.report.as_ref());
        let part = |pick: fn(&ReportRise) -> &BTreeMap<ProcessType, i64>| {
            number(report.map(|r| total(pick(r)) as f64))
        };
        let report_cells = [
            ("reportJsBytes", part(|r| &r.js)),
            ("reportWasmCodeBytes", part(|r| &r.wasm_code)),
            (
                "reportHeapUnclassifiedBytes",
                part(|r| &r.heap_unclassified),
            ),
            ("reportGfxBytes", part(|r| &r.gfx)),
            ("reportOtherBytes", part(|r| &r.other)),
            (
                "reportHeldAsGpuBytes",
                number(report.map(|r| r.held_as_gpu as f64)),
            ),
        ];
        for (name, cell) in report_cells {
            row.push(format!("rise.{}.{name}", phase.as_str()), cell);
        }
    }
}

fn cells(facts: &Facts<'_>) -> Vec<(String, Cell)> {
    let mut row = Row(Vec::new());
    for group in [
        run_cells,
        target_cells,
        config_cells,
        capability_cells,
        accuracy_cells,
        latency_cells,
        gpu_cells,
        phase_cells,
        release_cells,
        rise_cells,
    ] {
        group(&mut row, facts);
    }
    row.0
}

/// Every column's name, in the order of every row.
pub fn columns() -> Vec<String> {
    cells(&Facts::default())
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// One run's cells, in the order of [`columns`].
pub fn row(run: &Run) -> Vec<Cell> {
    cells(&Facts::of(run))
        .into_iter()
        .map(|(_, cell)| cell)
        .collect()
}

/// The items whose `keep` is true.
fn kept<T>(items: Vec<T>, keep: &[bool]) -> Vec<T> {
    items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, &keep)| keep.then_some(item))
        .collect()
}

/// The rows of some runs under the columns they are written with.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Every run's row under [`columns`]; unless `all_columns`, a column empty in every row is
    /// left out (a plain run leaves more than half of them empty: pools, profiles, reports).
    pub fn of(runs: &[Run], all_columns: bool) -> Self {
        let mut table = Self {
            columns: columns(),
            rows: runs.iter().map(row).collect(),
        };
        if !all_columns {
            table.drop_empty_columns();
        }
        table
    }

    fn drop_empty_columns(&mut self) {
        let keep: Vec<bool> = (0..self.columns.len())
            .map(|c| self.rows.iter().any(|row| row[c] != Cell::Empty))
            .collect();
        self.columns = kept(std::mem::take(&mut self.columns), &keep);
        self.rows = std::mem::take(&mut self.rows)
            .into_iter()
            .map(|row| kept(row, &keep))
            .collect();
    }

    /// One row as a JSON object, its keys in the order of the table's columns.
    pub fn json_row(&self, row: &[Cell]) -> Value {
        let object: Map<String, Value> = self
            .columns
            .iter()
            .zip(row)
            .map(|(name, cell)| (name.clone(), cell.json()))
            .collect();
        Value::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs;

    const TWO_CONFIGS: &str = include_str!("../tests/data/two-configs.jsonl");

    fn two_configs() -> Vec<Run> {
        runs::group(crate::record::parse_records(TWO_CONFIGS).unwrap().lines)
    }

    #[test]
    fn every_run_has_every_column_in_one_order() {
        let names = columns();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a column named twice");
        for run in two_configs() {
            let named: Vec<String> = cells(&Facts::of(&run))
                .into_iter()
                .map(|(n, _)| n)
                .collect();
            assert_eq!(named, names);
        }
        assert!(names.contains(&"phase.decoder-run.peakPssBytes".to_owned()));
        assert!(names.contains(&"rise.decoder-run.unexplainedBytes".to_owned()));
        assert_eq!(
            names.iter().filter(|n| n.starts_with("config.")).count(),
            PARAMETER_NAMES.len()
        );
    }

    #[test]
    fn columns_empty_in_every_run_are_left_out_unless_all_are_asked_for() {
        let runs = two_configs();
        let all = Table::of(&runs, true);
        assert_eq!(all.columns, columns());
        let lean = Table::of(&runs, false);
        assert!(lean.columns.len() < all.columns.len());
        // What is kept is what some run holds, in the same order, and every cell of it.
        for (c, name) in all.columns.iter().enumerate() {
            let held = all.rows.iter().any(|row| row[c] != Cell::Empty);
            let at = lean.columns.iter().position(|n| n == name);
            assert_eq!(at.is_some(), held, "{name}");
            if let Some(at) = at {
                for (lean_row, all_row) in lean.rows.iter().zip(&all.rows) {
                    assert_eq!(lean_row[at], all_row[c], "{name}");
                }
            }
        }
        assert!(lean.columns.contains(&"runId".to_owned()));
        // No runs: no column holds anything.
        assert!(Table::of(&[], false).columns.is_empty());
        assert_eq!(Table::of(&[], true).columns, columns());
    }

    #[test]
    fn the_floor_source_is_the_decoding_realms_and_empty_before_the_probe_cache() {
        use ocr_bench_core::record::FloorSource;
        let run = two_configs().into_iter().next().unwrap();
        let mut summary = Facts::of(&run).summary.cloned().expect("a result");
        assert_eq!(
            floor_source(Some(&summary)),
            None,
            "recorded before the cache"
        );
        let source = |origin| {
            Some(FloorSource {
                origin,
                key: None,
                measured_at: None,
                measured_run_id: None,
            })
        };
        let page = summary.completion.page.as_mut().expect("the page's floor");
        page.rounds.source = source(FloorOrigin::Reused);
        assert_eq!(floor_source(Some(&summary)), Some("reused"));
        // realm=worker: the check used the decoder worker's floor, so its source is the one.
        let mut worker = summary.completion.page.clone().unwrap();
        worker.rounds.source = source(FloorOrigin::Measured);
        summary.completion.decoder_worker = Some(worker);
        assert_eq!(floor_source(Some(&summary)), Some("measured"));
    }

    #[test]
    fn a_cell_is_written_the_same_way_in_csv_and_json() {
        assert_eq!(Cell::Number(2.5).csv(), "2.5");
        assert_eq!(Cell::Number(2.5).json(), serde_json::json!(2.5));
        assert_eq!(Cell::Number(3.0).csv(), "3");
        assert_eq!(Cell::Number(3.0).json().to_string(), "3");
        assert_eq!(Cell::Empty.csv(), "");
        assert_eq!(Cell::Empty.json(), Value::Null);
        assert_eq!(Cell::Bool(true).csv(), "true");
        assert_eq!(number(Some(f64::NAN)), Cell::Empty);
    }
}
