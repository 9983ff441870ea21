//! The tables printed after a run or a sweep: accuracy, case times and peak process memory
//! per phase.

use std::fmt::Write;

use ocr_bench_core::latency::LatencyStats;
use ocr_bench_core::record::{CompletionFloor, FloorOrigin, PageSummary};

use crate::memory::ProcessMemory;
use crate::other_page::OtherFigures;
use crate::process_type::ProcessType;
use crate::record::{Posted, ProcessMemoryAnswer};
use crate::units::{mib, mib_or_dash, ratio_or_dash};

const TYPES: [ProcessType; 5] = [
    ProcessType::Browser,
    ProcessType::Gpu,
    ProcessType::Renderer,
    ProcessType::Utility,
    ProcessType::Other,
];

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// nCER as a number, or "n/a" where accuracy does not apply (the decoder-only scope).
fn ncer(summary: &PageSummary) -> String {
    summary
        .ncer
        .map_or_else(|| "n/a".to_owned(), |v| format!("{v:.4}"))
}

fn exact(summary: &PageSummary) -> String {
    summary
        .exact
        .map_or_else(|| "n/a".to_owned(), |e| format!("{e}/{}", summary.cases))
}

/// Milliseconds with the precision a GPU step needs (12.70, 0.50), or "-".
fn fine_ms(value: Option<f64>) -> String {
    value.map_or_else(
        || "-".to_owned(),
        |v| {
            if v < 10.0 {
                format!("{v:.2}")
            } else {
                format!("{v:.1}")
            }
        },
    )
}

fn p50(stats: &Option<LatencyStats>) -> Option<f64> {
    stats.as_ref().map(|s| s.p50_ms)
}

/// The decode probe's lines: per-token latency, its split, first token, and the completion verdict.
fn probe_lines(out: &mut String, summary: &PageSummary) {
    let probe = &summary.decode_probe;
    let token = probe.token_latency.as_ref();
    let _ = writeln!(
        out,
        "per token p50 {} ms  p90 {} ms  max {} ms  (p50 submit {} / sync {} / choose {} ms)  first token p50 {} ms  {} tokens/s",
        fine_ms(token.map(|s| s.p50_ms)),
        fine_ms(token.map(|s| s.p90_ms)),
        fine_ms(token.map(|s| s.max_ms)),
        fine_ms(p50(&probe.submit)),
        fine_ms(p50(&probe.sync)),
        fine_ms(p50(&probe.choose)),
        fine_ms(p50(&probe.time_to_first_token)),
        probe
            .tokens_per_second
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.1}")),
    );
    // The check uses the floor of the realm that decoded: the decoder worker's with realm=worker.
    let (realm, floor) = match &summary.completion.decoder_worker {
        Some(floor) => (" of the decoder worker", Some(floor)),
        None => ("", summary.completion.page.as_ref()),
    };
    let _ = writeln!(
        out,
        "completion floor{realm} {} ms (dispatch + readback; empty queue {} ms; poll={}{}): {}",
        fine_ms(floor.and_then(|p| p50(&p.dispatch_readback))),
        fine_ms(floor.and_then(|p| p50(&p.empty_queue))),
        summary.poll.mode,
        floor.map(floor_origin).unwrap_or_default(),
        summary.completion.check.verdict,
    );
    // Each realm's probe ran in the `probe` phase; an older record's ran inside its loading
    // phases and has no time, so the line is left out.
    let completion = &summary.completion;
    let probes: Vec<String> = [
        ("page", &completion.page),
        ("vision worker", &completion.worker),
        ("decoder worker", &completion.decoder_worker),
    ]
    .into_iter()
    .filter_map(|(realm, floor)| {
        let floor = floor.as_ref()?;
        let ms = floor.rounds.probe_ms?;
        Some(match reused_at(floor) {
            Some(at) => format!("{realm} reused (measured {at} in {:.1} s)", ms / 1000.0),
            None => format!("{realm} {:.1} s", ms / 1000.0),
        })
    })
    .collect();
    if !probes.is_empty() {
        let _ = writeln!(
            out,
            "completion-floor probes, in the probe phase (outside every model phase): {}",
            probes.join(", ")
        );
    }
}

/// When a reused floor was measured; `None` for a floor this run measured.
fn reused_at(floor: &CompletionFloor) -> Option<&str> {
    let source = floor.rounds.source.as_ref()?;
    (source.origin == FloorOrigin::Reused).then(|| source.measured_at.as_deref().unwrap_or("?"))
}

/// `; measured` or `; reused from the probe cache`, after the floor's poll; nothing for a
/// record older than the cache.
fn floor_origin(floor: &CompletionFloor) -> String {
    match (&floor.rounds.source, reused_at(floor)) {
        (None, _) => String::new(),
        (Some(_), None) => "; measured".to_owned(),
        (Some(_), Some(at)) => format!("; reused from the probe cache, measured {at}"),
    }
}

/// The peak GPU bytes of each realm's device, for the realms the run had.
fn gpu_line(summary: &PageSummary) -> Option<String> {
    let gpu = summary.gpu_memory.as_ref()?;
    let peak =
        |bytes: &Option<ocr_bench_core::record::GpuBytes>| bytes.as_ref().map(|g| g.peak_bytes);
    let decoder_workers = match summary.pool.as_ref().filter(|p| p.realms > 1) {
        Some(pool) if gpu.decoder_worker.is_some() => format!("decoder workers ({})", pool.realms),
        _ => "decoder worker".to_owned(),
    };
    let realms: Vec<String> = [
        ("page".to_owned(), peak(&gpu.page)),
        ("vision worker".to_owned(), peak(&gpu.worker)),
        (
            decoder_workers,
            crate::memory_model::pool_realms::decoder_workers_peak_bytes(summary),
        ),
    ]
    .into_iter()
    .filter_map(|(realm, bytes)| Some(format!("{realm} {}", mib(bytes?, 0))))
    .collect();
    (!realms.is_empty()).then(|| format!("peak GPU MiB per device: {}", realms.join(", ")))
}

/// `verify=wasm`'s verdict in one line, or `None` for a run that did not verify.
pub fn verification_line(summary: &PageSummary) -> Option<String> {
    let v = summary.verification.as_ref()?;
    let worst = v.worst.as_ref().map_or_else(String::new, |w| {
        let difference = w
            .max_abs_logit_diff
            .map_or_else(|| "not a number".to_owned(), |d| format!("{d:.3e}"));
        let step = w
            .first_diverging_step
            .map_or_else(String::new, |s| format!(", tokens diverged at step {s}"));
        format!("; worst case {}: max |Δlogit| {difference}{step}", w.id)
    });
    let verdict = if v.passed {
        "verified"
    } else {
        "VERIFICATION FAILED: these figures are not a result of this configuration"
    };
    Some(format!(
        "{verdict} ({}): {}/{} cases agree (tokens equal, max |Δlogit| ≤ {}){worst}",
        v.method, v.agreeing, v.total, v.tolerance.max_abs_logit_diff
    ))
}

/// The largest total of a field over every phase.
fn overall_peak(
    memory: &ProcessMemory,
    field: fn(&crate::memory::Extent) -> Option<u64>,
) -> Option<u64> {
    memory
        .phases
        .iter()
        .filter_map(|(_, p)| field(&p.total))
        .max()
}

/// measured / floor, or "-" where either is missing or the floor is zero.
fn over_floor(measured: Option<u64>, floor: u64) -> String {
    ratio_or_dash(measured.map(|b| b as f64), Some(floor as f64), 2)
}

/// Each phase's floor and what the run held over it: PSS, the GPU bytes of every realm's
/// device (`page_gpu`), driver VRAM.
fn floor_lines(out: &mut String, summary: &PageSummary, memory: &ProcessMemory, driver_read: bool) {
    let Some(floor) = &memory.beside.floor else {
        return;
    };
    if !floor.available {
        let reason = floor.reason.as_deref().unwrap_or("not computed");
        let _ = writeln!(out, "floor: {reason}");
        return;
    }
    let gpu = crate::memory_model::page_gpu::gpu_bytes_by_phase(
        &crate::memory_model::pool_realms::samples_of_every_realm(summary),
    );
    let _ = writeln!(
        out,
        "measured / floor per phase (floor: weights + one KV cache + the largest activation):"
    );
    let _ = writeln!(
        out,
        "  {:<16} {:>9} {:>8} {:>8} {:>11}",
        "phase", "floor MiB", "PSS", "GPU", "driver VRAM"
    );
    for (name, phase) in &memory.phases {
        let Some(f) = floor.phase(name) else {
            continue;
        };
        let vram = if driver_read {
            over_floor(phase.total.peak_driver_gpu, f.bytes)
        } else {
            "n/a".to_owned()
        };
        let _ = writeln!(
            out,
            "  {:<16} {:>9} {:>8} {:>8} {:>11}",
            name,
            mib(f.bytes, 0),
            over_floor(phase.total.peak_pss, f.bytes),
            over_floor(gpu.get(name.as_str()).copied(), f.bytes),
            vram,
        );
    }
}

/// predicted / measured - 1 as a signed percentage, or "-" where either is missing.
fn error(predicted: Option<u64>, measured: Option<u64>) -> String {
    match (predicted, measured) {
        (Some(p), Some(m)) if m > 0 => {
            let percent = (p as f64 / m as f64 - 1.0) * 100.0;
            // An error that rounds to zero reads 0%, not -0%.
            if percent.abs() < 0.5 {
                "0%".to_owned()
            } else {
                format!("{percent:+.0}%")
            }
        }
        _ => "-".to_owned(),
    }
}

/// Whether the driver's VRAM was read in the run: otherwise its column reads `n/a`.
fn driver_was_read(memory: &ProcessMemory) -> bool {
    memory
        .beside
        .driver_gpu_memory
        .as_ref()
        .is_some_and(|d| d.available || d.samples > 0)
}

/// Each phase's prediction (`memory_model::predict`, as the run recorded it, or from its
/// configuration and recorded floor in a record written before it did) beside the measurement, with the error per figure; empty where the run
/// recorded no floor.
pub fn prediction_text(summary: &PageSummary, memory: &ProcessMemory) -> String {
    let mut out = String::new();
    prediction_lines(&mut out, summary, memory, driver_was_read(memory));
    out
}

fn prediction_lines(
    out: &mut String,
    summary: &PageSummary,
    memory: &ProcessMemory,
    driver_read: bool,
) {
    let Some(floor) = memory.beside.floor.as_ref().filter(|f| f.available) else {
        return;
    };
    // The prediction the run recorded before loading; older records, from their floor.
    let predicted = memory.beside.prediction.clone().unwrap_or_else(|| {
        crate::memory_model::predict::from_floor(
            &floor.phases,
            &summary.config,
            crate::gpu_placement::gpu_placement(summary),
        )
    });
    let samples = crate::memory_model::pool_realms::samples_of_every_realm(summary);
    let gpu = crate::memory_model::page_gpu::gpu_bytes_by_phase(&samples);
    let wasm = crate::memory_model::page_gpu::wasm_bytes_by_phase(&samples);
    let idle_pss = memory
        .phases
        .iter()
        .find(|(name, _)| name == "baseline")
        .and_then(|(_, p)| p.total.peak_pss);
    let _ = writeln!(
        out,
        "predicted / measured per phase, MiB, and the error (docs/benchmark-protocol.md, \
         \"Predicted memory\"):"
    );
    let _ = writeln!(
        out,
        "  {:<16} {:>17} {:>17} {:>17} {:>17}",
        "phase", "GPU", "wasm heaps", "driver VRAM", "PSS rise"
    );
    let cell = |p: Option<u64>, m: Option<u64>| {
        format!(
            "{}/{} {}",
            mib_or_dash(p, 0),
            mib_or_dash(m, 0),
            error(p, m)
        )
    };
    for (name, phase) in &memory.phases {
        let Some(p) = predicted.get(name) else {
            continue;
        };
        let vram = if driver_read {
            cell(p.driver_vram_bytes, phase.total.peak_driver_gpu)
        } else {
            "n/a".to_owned()
        };
        let pss_rise = phase
            .total
            .peak_pss
            .zip(idle_pss)
            .map(|(peak, idle)| peak.saturating_sub(idle));
        let _ = writeln!(
            out,
            "  {:<16} {:>17} {:>17} {:>17} {:>17}",
            name,
            cell(Some(p.gpu_bytes), gpu.get(name.as_str()).copied()),
            cell(Some(p.wasm.total()), wasm.get(name.as_str()).copied()),
            vram,
            cell(p.pss_rise_bytes, pss_rise),
        );
    }
}

/// The report of one run of the benchmark page.
pub fn run_table(
    browser: &str,
    query: &str,
    summary: &PageSummary,
    process_memory: &ProcessMemoryAnswer,
    wall_seconds: f64,
) -> String {
    let mut out = String::new();
    let config = if query.is_empty() {
        "default configuration".to_owned()
    } else {
        query.to_owned()
    };
    let _ = writeln!(
        out,
        "{browser} · {config} · {} in {wall_seconds:.1} s",
        summary.cases_name
    );
    let _ = writeln!(
        out,
        "cases {}  nCER {}  exact {}  median {} ms  peak {} ms  mean {} ms/token",
        summary.cases,
        ncer(summary),
        exact(summary),
        ms(summary.median_ms),
        ms(summary.peak_case_ms),
        ms(summary.ms_per_token),
    );
    if let Some(line) = verification_line(summary) {
        let _ = writeln!(out, "{line}");
    }
    probe_lines(&mut out, summary);
    if let Some(line) = gpu_line(summary) {
        let _ = writeln!(out, "{line}");
    }
    let Some(memory) = &process_memory.measured else {
        let reason = process_memory.reason.as_deref().unwrap_or("not measured");
        let _ = writeln!(out, "process memory: {reason}");
        return out;
    };
    let _ = writeln!(
        out,
        "peak process memory per phase, MiB (RSS; PSS and the driver's VRAM total last):"
    );
    let _ = writeln!(
        out,
        "  {:<16} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6} | {:>8} {:>8} {:>11}",
        "phase",
        "samples",
        "browser",
        "gpu",
        "renderer",
        "utility",
        "other",
        "RSS",
        "PSS",
        "driver VRAM"
    );
    let driver_read = driver_was_read(memory);
    for (name, phase) in &memory.phases {
        let by_type = |t: ProcessType| phase.by_type.get(&t).map(|e| e.peak_rss);
        let vram = if driver_read {
            mib_or_dash(phase.total.peak_driver_gpu, 0)
        } else {
            "n/a".to_owned()
        };
        let _ = writeln!(
            out,
            "  {:<16} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6} | {:>8} {:>8} {:>11}",
            name,
            phase.samples,
            mib_or_dash(by_type(TYPES[0]), 0),
            mib_or_dash(by_type(TYPES[1]), 0),
            mib_or_dash(by_type(TYPES[2]), 0),
            mib_or_dash(by_type(TYPES[3]), 0),
            mib_or_dash(by_type(TYPES[4]), 0),
            mib(phase.total.peak_rss, 0),
            mib_or_dash(phase.total.peak_pss, 0),
            vram,
        );
    }
    if let Some(reason) = memory
        .beside
        .driver_gpu_memory
        .as_ref()
        .and_then(|d| d.reason.as_deref())
    {
        let _ = writeln!(out, "driver VRAM: {reason}");
    }
    floor_lines(&mut out, summary, memory, driver_read);
    prediction_lines(&mut out, summary, memory, driver_read);
    let s = &memory.sampler;
    let _ = writeln!(
        out,
        "sampler: RSS {:.1} Hz, PSS {:.1} Hz ({:.1} ms CPU per pass), {:.1}% of one core in all",
        s.achieved_hz,
        s.pss_hz,
        s.mean_pss_pass_cpu_ms,
        s.cpu_share_of_one_core * 100.0,
    );
    out
}

/// The report of one run of another page that posted per-case results: its cases, what its
/// figures say and what they lack, and the process memory's peak.
fn other_page_table(
    browser: &str,
    query: &str,
    figures: &OtherFigures,
    process_memory: &ProcessMemoryAnswer,
    wall_seconds: f64,
) -> String {
    let mut out = String::new();
    let query = if query.is_empty() { "no query" } else { query };
    let _ = writeln!(out, "{browser} · {query} · in {wall_seconds:.1} s");
    let _ = writeln!(
        out,
        "case     tokens  vision ms  prefill ms  decode ms  total ms  text"
    );
    for case in &figures.cases {
        let _ = writeln!(
            out,
            "{:<8} {:>6} {:>10} {:>11} {:>10} {:>9}  {}",
            case.id,
            case.tokens
                .map_or_else(|| "-".to_owned(), |t| t.to_string()),
            ms(case.vision_ms),
            ms(case.prefill_ms),
            ms(case.decode_ms),
            ms(case.total_ms),
            case.actual.as_deref().unwrap_or("-"),
        );
    }
    let _ = writeln!(out, "{}", figures.describe());
    match &process_memory.measured {
        Some(memory) => {
            let peak = overall_peak(memory, |e| Some(e.peak_rss));
            let _ = writeln!(
                out,
                "peak process memory: RSS {} MiB (per phase in the result record's processMemory)",
                mib_or_dash(peak, 0)
            );
        }
        None => {
            let reason = process_memory.reason.as_deref().unwrap_or("not measured");
            let _ = writeln!(out, "process memory: {reason}");
        }
    }
    out
}

/// What a run prints: the table for the benchmark page's summary, another page's cases where
/// it posted them, else the JSON it posted with the process memory added.
pub fn run_report(
    browser: &str,
    query: &str,
    summary: &Posted,
    process_memory: &ProcessMemoryAnswer,
    wall_seconds: f64,
) -> String {
    match summary {
        Posted::Benchmark(summary) => {
            run_table(browser, query, summary, process_memory, wall_seconds)
        }
        Posted::Other(posted) if !OtherFigures::read(posted).cases.is_empty() => {
            let figures = OtherFigures::read(posted);
            other_page_table(browser, query, &figures, process_memory, wall_seconds)
        }
        Posted::Other(figures) => {
            let mut shown = figures.clone();
            if let Some(object) = shown.as_object_mut() {
                let memory = serde_json::to_value(process_memory).unwrap_or_default();
                object.insert("processMemory".into(), memory);
            }
            serde_json::to_string_pretty(&shown).unwrap_or_default() + "\n"
        }
    }
}

/// One row of the sweep table.
pub struct SweepRow {
    pub browser: String,
    pub query: String,
    pub outcome: String,
    pub summary: Option<PageSummary>,
    pub process_memory: Option<ProcessMemoryAnswer>,
}

/// The table of a sweep, one row per combination.
pub fn sweep_table(rows: &[SweepRow]) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|r| r.query.len())
        .max()
        .unwrap_or(0)
        .max(13);
    let _ = writeln!(
        out,
        "{:<9} {:<width$} {:>8} {:>6} {:>9} {:>9} {:>12} {:>9} {:>9}",
        "browser",
        "configuration",
        "nCER",
        "exact",
        "median ms",
        "peak ms",
        "token p50 ms",
        "peak RSS",
        "peak PSS"
    );
    for row in rows {
        let query = if row.query.is_empty() {
            "(default)"
        } else {
            &row.query
        };
        let Some(summary) = &row.summary else {
            let _ = writeln!(out, "{:<9} {:<width$} {}", row.browser, query, row.outcome);
            continue;
        };
        // A run that left its WASM reference has no figures worth a column.
        if summary.verification_failed() {
            let _ = writeln!(
                out,
                "{:<9} {:<width$} {}",
                row.browser,
                query,
                verification_line(summary).unwrap_or_default()
            );
            continue;
        }
        let memory = row
            .process_memory
            .as_ref()
            .and_then(|m| m.measured.as_ref());
        let peak = |field: fn(&crate::memory::Extent) -> Option<u64>| {
            memory.and_then(|m| overall_peak(m, field))
        };
        // A completion-bound token time is the browser's timer: marked, never bare.
        let token = fine_ms(p50(&summary.decode_probe.token_latency));
        let _ = writeln!(
            out,
            "{:<9} {:<width$} {:>8} {:>6} {:>9} {:>9} {:>12} {:>9} {:>9}",
            row.browser,
            query,
            ncer(summary),
            exact(summary),
            ms(summary.median_ms),
            ms(summary.peak_case_ms),
            if summary.completion_bound {
                format!("{token} (bound)")
            } else {
                token
            },
            mib_or_dash(peak(|e| Some(e.peak_rss)), 0),
            mib_or_dash(peak(|e| e.peak_pss), 0),
        );
    }
    let _ = writeln!(out, "(memory in MiB: the largest total over all phases; per-phase figures are in the results file)");
    if rows
        .iter()
        .any(|r| r.summary.as_ref().is_some_and(|s| s.completion_bound))
    {
        let _ = writeln!(out, "(bound: completion-bound, the token time is the browser's GPU-completion timer, not the model; run with poll=kick)");
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::{self, Record};
    use ocr_bench_core::latency::{CompletionCheck, LatencyStats};

    /// The summary and process memory of the committed results file (Firefox, smoke2).
    fn legacy() -> (PageSummary, ProcessMemoryAnswer) {
        let lines = record::parse_lines(record::tests::LEGACY);
        lines
            .map(|line| line.unwrap().1.record)
            .find_map(|r| match r {
                Record::Result {
                    summary: Posted::Benchmark(summary),
                    process_memory,
                } => Some((*summary, process_memory)),
                _ => None,
            })
            .unwrap()
    }

    fn stats(p50_ms: f64, p90_ms: f64, max_ms: f64) -> Option<LatencyStats> {
        Some(LatencyStats {
            count: 3,
            min_ms: p50_ms,
            p50_ms,
            p90_ms,
            max_ms,
            mean_ms: p50_ms,
        })
    }

    #[test]
    fn run_table_shows_accuracy_times_and_phases_in_order() {
        let (mut summary, memory) = legacy();
        (summary.ncer, summary.exact) = (Some(0.125), Some(1));
        (summary.median_ms, summary.peak_case_ms) = (Some(1500.4), Some(2100.0));
        let text = run_table("firefox", "cases=smoke2", &summary, &memory, 12.3);
        assert!(
            text.contains("nCER 0.1250") && text.contains("exact 1/2"),
            "{text}"
        );
        assert!(
            text.contains("median 1500 ms") && text.contains("peak 2100 ms"),
            "{text}"
        );
        assert!(
            text.starts_with("firefox · cases=smoke2 · smoke2 in 12.3 s"),
            "{text}"
        );
        let startup = text.find("  startup").unwrap();
        let baseline = text.find("  baseline").unwrap();
        let run = text.find("  decoder-run").unwrap();
        assert!(startup < baseline && baseline < run, "{text}");
        assert!(text.contains("RSS 40.0 Hz"), "{text}");
    }

    #[test]
    fn the_driver_vram_column_is_n_a_unless_the_driver_was_read() {
        let (summary, mut answer) = legacy();
        let memory = answer.measured.as_mut().unwrap();
        memory.beside.driver_gpu_memory = Some(crate::memory::DriverGpuMemory {
            available: false,
            reason: Some("NVML: a libloading error occurred".into()),
            source: None,
            devices: None,
            samples: 0,
            pids_outside_tree: None,
            peak_bytes_outside_tree: None,
        });
        let text = run_table("firefox", "", &summary, &answer, 1.0);
        let row = text
            .lines()
            .find(|l| l.starts_with("  decoder-run"))
            .unwrap();
        assert!(row.ends_with(" n/a"), "{text}");
        assert!(
            text.contains("driver VRAM: NVML: a libloading error occurred"),
            "{text}"
        );
        let memory = answer.measured.as_mut().unwrap();
        memory.beside.driver_gpu_memory = Some(crate::memory::DriverGpuMemory {
            available: true,
            reason: None,
            source: None,
            devices: Some(1),
            samples: 9,
            pids_outside_tree: None,
            peak_bytes_outside_tree: None,
        });
        let run = memory.phases.iter_mut().find(|(n, _)| n == "decoder-run");
        run.unwrap().1.total.peak_driver_gpu = Some(300 << 20);
        let text = run_table("firefox", "", &summary, &answer, 1.0);
        let row = text
            .lines()
            .find(|l| l.starts_with("  decoder-run"))
            .unwrap();
        assert!(row.ends_with(" 300"), "{text}");
        // A phase without a driver sample shows "-", not zero.
        let row = text.lines().find(|l| l.starts_with("  startup")).unwrap();
        assert!(row.ends_with(" -"), "{text}");
    }

    /// `tests/data/pool/2.jsonl`: Firefox on lavapipe, `realm=worker&pool=2`, two workers of
    /// 202 MiB of buffers and 87 MiB of heaps each.
    #[test]
    fn a_pools_prediction_and_measurement_count_both_workers() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pool/2.jsonl");
        let runs = crate::runs::read_runs(&file).unwrap();
        let summary = runs[0].summary().unwrap();
        let memory = runs[0].result().unwrap().1.measured.as_ref().unwrap();
        let text = prediction_text(summary, memory);
        let row = text
            .lines()
            .find(|l| l.starts_with("  decoder-run"))
            .unwrap();
        // Predicted / measured GPU bytes and heaps, every realm in both.
        assert!(row.contains(" 401/404 -1% "), "{text}");
        assert!(row.contains(" 177/177 0% "), "{text}");
        let gpu = gpu_line(summary).unwrap();
        assert!(gpu.contains("decoder workers (2) 404"), "{gpu}");
    }

    #[test]
    fn the_floor_table_gives_measured_over_floor_per_phase() {
        let (summary, mut answer) = legacy();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let floor = crate::memory_model::floor::for_run(&root, "www/index.html", "cases=smoke2");
        let decoder_run = floor.phase("decoder-run").unwrap().bytes;
        let memory = answer.measured.as_mut().unwrap();
        memory.beside.floor = Some(floor);
        let pss = memory
            .phases
            .iter()
            .find(|(n, _)| n == "decoder-run")
            .and_then(|(_, p)| p.total.peak_pss)
            .unwrap();
        let text = run_table("firefox", "", &summary, &answer, 1.0);
        let row = text
            .lines()
            .skip_while(|l| !l.starts_with("measured / floor"))
            .find(|l| l.starts_with("  decoder-run"))
            .unwrap_or_else(|| panic!("{text}"));
        let expected = format!("{:.2}x", pss as f64 / decoder_run as f64);
        assert!(row.contains(&expected), "{row} vs {expected}");
        // No driver in the committed run: n/a, not a ratio.
        assert!(row.ends_with(" n/a"), "{row}");
        // The baseline's floor is zero: no ratio.
        let baseline = text
            .lines()
            .skip_while(|l| !l.starts_with("measured / floor"))
            .find(|l| l.starts_with("  baseline"))
            .unwrap();
        assert!(baseline.contains("        0        -"), "{baseline}");
        let memory = answer.measured.as_mut().unwrap();
        memory.beside.floor = Some(crate::memory_model::floor::FloorAnswer::unavailable(
            "the manifest m.json has no floor figures".into(),
        ));
        let text = run_table("firefox", "", &summary, &answer, 1.0);
        assert!(
            text.contains("floor: the manifest m.json has no floor figures"),
            "{text}"
        );
    }

    #[test]
    fn a_recorded_run_gets_its_prediction_beside_the_measurement() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/h200-default-hayai13.jsonl");
        let runs = crate::runs::read_runs(&file).unwrap();
        let run = &runs[0];
        let text = run_table(
            "firefox",
            run.query().unwrap(),
            run.summary().unwrap(),
            run.result().unwrap().1,
            1.0,
        );
        let row = |phase: &str| {
            text.lines()
                .skip_while(|l| !l.starts_with("predicted / measured"))
                .find(|l| l.split_whitespace().next() == Some(phase))
                .unwrap_or_else(|| panic!("no {phase} row: {text}"))
                .to_owned()
        };
        // decoder-run: GPU 201 MiB predicted against 203 measured, driver VRAM 288 against 291.
        let run_row = row("decoder-run");
        assert!(run_row.contains("201/203 -1%"), "{run_row}");
        assert!(run_row.contains("288/291 -1%"), "{run_row}");
        // A phase without a session has no predicted VRAM or PSS rise.
        assert!(row("probe").contains("-/"), "{text}");
    }

    #[test]
    fn a_floor_says_whether_it_was_measured_or_reused_from_the_probe_cache() {
        use ocr_bench_core::record::FloorSource;
        let (mut summary, memory) = legacy();
        let floor = summary.completion.page.as_mut().expect("the page's floor");
        floor.rounds.probe_ms = Some(4726.1);
        floor.rounds.source = Some(FloorSource {
            origin: FloorOrigin::Measured,
            key: None,
            measured_at: None,
            measured_run_id: None,
        });
        let text = run_table("firefox", "", &summary, &memory, 32.0);
        assert!(text.contains("poll=none; measured): "), "{text}");
        assert!(
            text.contains("in the probe phase (outside every model phase): page 4.7 s"),
            "{text}"
        );

        let floor = summary.completion.page.as_mut().unwrap();
        floor.rounds.source = Some(FloorSource {
            origin: FloorOrigin::Reused,
            key: None,
            measured_at: Some("2026-12-06T03:50:00.000Z".to_owned()),
            measured_run_id: Some("an-earlier-run".to_owned()),
        });
        let text = run_table("firefox", "", &summary, &memory, 32.0);
        assert!(
            text.contains(
                "poll=none; reused from the probe cache, measured 2026-12-06T03:50:00.000Z): "
            ),
            "{text}"
        );
        assert!(
            text.contains("page reused (measured 2026-12-06T03:50:00.000Z in 4.7 s)"),
            "{text}"
        );
    }

    #[test]
    fn the_decode_probe_and_a_completion_bound_run_are_said_in_words() {
        let (mut summary, memory) = legacy();
        let probe = &mut summary.decode_probe;
        probe.token_latency = stats(100.1, 100.3, 200.2);
        probe.submit = stats(14.9, 15.0, 15.0);
        probe.sync = stats(85.2, 86.0, 86.0);
        probe.choose = stats(0.04, 0.05, 0.05);
        probe.time_to_first_token = stats(295.0, 300.0, 300.0);
        probe.tokens_per_second = Some(9.99);
        summary.completion.check = CompletionCheck {
            floor_ms: 100.1,
            waits: 238,
            at_multiples: 230,
            bound: true,
            verdict: "completion-bound: 230 of 238 GPU waits ...".into(),
        };
        summary.completion_bound = true;
        let text = run_table("firefox", "", &summary, &memory, 32.0);
        assert!(
            text.contains("per token p50 100.1 ms  p90 100.3 ms  max 200.2 ms"),
            "{text}"
        );
        assert!(
            text.contains("(p50 submit 14.9 / sync 85.2 / choose 0.04 ms)"),
            "{text}"
        );
        assert!(
            text.contains("first token p50 295.0 ms  10.0 tokens/s"),
            "{text}"
        );
        assert!(text.contains("completion floor 100.1 ms (dispatch + readback; empty queue 100.1 ms; poll=none): completion-bound"), "{text}");
        // The legacy record's probes ran inside its loading phases, untimed: no probe line.
        assert!(!text.contains("completion-floor probes"), "{text}");
        let rows = [SweepRow {
            browser: "firefox".into(),
            query: String::new(),
            outcome: "result".into(),
            summary: Some(summary),
            process_memory: Some(memory),
        }];
        let table = sweep_table(&rows);
        assert!(table.contains("100.1 (bound)"), "{table}");
        assert!(table.contains("run with poll=kick"), "{table}");
    }

    #[test]
    fn each_realms_probe_time_is_shown_where_the_record_has_it() {
        let (mut summary, memory) = legacy();
        let page = summary.completion.page.clone().unwrap();
        let mut probed = page.clone();
        probed.rounds.probe_ms = Some(2345.0);
        summary.completion.page = Some(probed.clone());
        summary.completion.worker = Some(page);
        summary.completion.decoder_worker = Some(probed);
        let text = run_table("firefox", "", &summary, &memory, 32.0);
        assert!(
            text.contains("completion-floor probes, in the probe phase (outside every model phase): page 2.3 s, decoder worker 2.3 s\n"),
            "{text}"
        );
    }

    #[test]
    fn a_decoder_worker_run_shows_its_floor_and_its_devices_peak() {
        let (mut summary, memory) = legacy();
        let device = |peak: u64| -> ocr_bench_core::record::GpuBytes {
            serde_json::from_value(serde_json::json!({
                "liveBytes": 0, "peakBytes": peak, "liveByKind": {}, "created": 1,
                "destroyed": 1, "collected": 0, "deviceDestroyed": true, "measuredBy": "test",
            }))
            .unwrap()
        };
        summary.gpu_memory = Some(ocr_bench_core::record::GpuMemorySummary {
            measured_by: "test".into(),
            page: Some(device(3 << 20)),
            worker: None,
            decoder_worker: Some(device(212 << 20)),
            leak_check: serde_json::from_value(serde_json::json!({
                "afterCases": [], "grows": false, "grownBytes": 0, "repeatGrownBytes": 0,
                "verdict": "no growth",
            }))
            .unwrap(),
        });
        // The decoder worker's floor, unlike the page's: the check used it.
        let mut floor = summary.completion.page.clone().unwrap();
        floor.dispatch_readback = stats(0.75, 0.8, 0.9);
        floor.empty_queue = stats(0.25, 0.3, 0.3);
        summary.completion.decoder_worker = Some(floor);
        let text = run_table("firefox", "realm=worker", &summary, &memory, 1.0);
        assert!(
            text.contains("completion floor of the decoder worker 0.75 ms (dispatch + readback; empty queue 0.25 ms;"),
            "{text}"
        );
        assert!(
            text.contains("peak GPU MiB per device: page 3, decoder worker 212\n"),
            "{text}"
        );
    }

    /// The legacy run verified against a reference that agrees, or that chose another token
    /// at step 1 of the second case.
    pub(crate) fn verified(diverging: bool) -> PageSummary {
        use ocr_bench_core::verification::{verification, VerificationInput, VerifyCaseInput};
        let (mut summary, _) = legacy();
        let cases = summary
            .results
            .iter()
            .map(|r| {
                let mut reference = r.token_ids.clone();
                if diverging && r.id == "2" {
                    reference[1] += 1;
                }
                VerifyCaseInput {
                    id: r.id.clone(),
                    repeat: r.repeat,
                    token_ids: r.token_ids.clone(),
                    reference_token_ids: reference,
                    step_max_abs_diff: vec![2e-4, 1e-3],
                }
            })
            .collect();
        let input = VerificationInput {
            method: "wasm".into(),
            vision_requires: Vec::new(),
            decoder_requires: Vec::new(),
            wall_ms: 1.0,
            cases,
        };
        summary.verification =
            Some(verification(input, &summary.results, &summary.config).unwrap());
        summary
    }

    #[test]
    fn a_verified_run_says_so_and_a_failed_one_is_not_shown_as_a_result() {
        let memory = legacy().1;
        let text = run_table("firefox", "verify=wasm", &verified(false), &memory, 1.0);
        assert!(
            text.contains("verified (wasm): 2/2 cases agree (tokens equal, max |Δlogit| ≤ 0.05)")
                && text.contains(": max |Δlogit| 1.000e-3"),
            "{text}"
        );
        let failed = verified(true);
        let text = run_table("firefox", "verify=wasm", &failed, &memory, 1.0);
        assert!(
            text.contains("VERIFICATION FAILED")
                && text.contains("1/2 cases agree")
                && text.contains("worst case 2: max |Δlogit| 1.000e-3, tokens diverged at step 1"),
            "{text}"
        );
        let rows = [SweepRow {
            browser: "firefox".into(),
            query: "verify=wasm".into(),
            outcome: "result".into(),
            summary: Some(failed),
            process_memory: Some(memory),
        }];
        let table = sweep_table(&rows);
        let row = table.lines().nth(1).unwrap();
        assert!(row.contains("VERIFICATION FAILED"), "{table}");
        let figures = ncer(rows[0].summary.as_ref().unwrap());
        assert!(!row.contains(&figures), "no figures: {row}");
    }

    #[test]
    fn decoder_scope_and_serve_mode_read_not_applicable() {
        let (mut summary, _) = legacy();
        (summary.ncer, summary.exact) = (None, None);
        let text = run_table(
            "firefox",
            "scope=decoder",
            &summary,
            &ProcessMemoryAnswer::not_sampled(),
            1.0,
        );
        assert!(
            text.contains("nCER n/a") && text.contains("exact n/a"),
            "{text}"
        );
        assert!(
            text.contains("process memory: the browser was not started by ocr-bench"),
            "{text}"
        );
    }

    #[test]
    fn another_pages_figures_print_as_json_with_the_memory() {
        let figures = Posted::Other(serde_json::json!({ "preprocessMs": 1.5 }));
        let text = run_report("x", "", &figures, &ProcessMemoryAnswer::not_sampled(), 1.0);
        let shown: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(shown["preprocessMs"], 1.5);
        assert_eq!(shown["processMemory"]["available"], false);
    }

    #[test]
    fn sweep_table_has_a_row_per_combination() {
        let (summary, memory) = legacy();
        let peak_rss = memory
            .measured
            .as_ref()
            .and_then(|m| overall_peak(m, |e| Some(e.peak_rss)));
        let rows = vec![
            SweepRow {
                browser: "firefox".into(),
                query: String::new(),
                outcome: "result".into(),
                summary: Some(summary),
                process_memory: Some(memory),
            },
            SweepRow {
                browser: "chromium".into(),
                query: "tier=242".into(),
                outcome: "error: needs shader-f16".into(),
                summary: None,
                process_memory: None,
            },
        ];
        let text = sweep_table(&rows);
        assert!(text.contains("(default)"), "{text}");
        assert!(
            text.contains(&format!(" {} ", mib_or_dash(peak_rss, 0))),
            "{text}"
        );
        assert!(
            text.contains("tier=242") && text.contains("error: needs shader-f16"),
            "{text}"
        );
    }
}
