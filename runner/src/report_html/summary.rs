//! The markdown `report` prints: per configuration, its cases, nCER, per-token p50, peak
//! PSS per phase and peak GPU bytes per realm; then per phase where its memory went (PSS,
//! GPU bytes, WASM heaps, the rest, driver VRAM) with the floor beside it; then the rise
//! above the idle browser split into its parts (`rise_table.rs`); then what each release
//! step gave back (`release_table.rs`); then the configuration with the least device
//! memory at the best accuracy (`least_memory.rs`).

use std::fmt::Write;

use ocr_bench_core::record::PageSummary;
use ocr_bench_core::stats::median;

use super::configuration::{configurations, Configuration};
use super::decomposition::{self, Decomposition, PhaseShare};
use super::document::Document;
use super::ResultsFile;
use crate::record::Record;
use crate::table::{Cell, Column, Table, Unit};
use crate::units::ratio;

fn max(values: impl Iterator<Item = u64>) -> Option<u64> {
    values.max()
}

/// The phase names of every run, in order of first appearance.
fn phase_names(groups: &[Configuration<'_>]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for run in groups.iter().flat_map(|g| &g.runs) {
        for (name, _) in run.memory.map(|m| m.phases.as_slice()).unwrap_or_default() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// The markdown summary of the files' finished runs.
pub fn markdown(files: &[ResultsFile]) -> String {
    document(files).markdown()
}

/// The summary's prose and tables, for markdown and HTML alike.
pub fn document(files: &[ResultsFile]) -> Document {
    let groups = configurations(files);
    let mut out = Document::default();
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let runs: usize = groups.iter().map(|g| g.runs.len()).sum();
    let _ = writeln!(
        out,
        "# webgpu-ocr-bench report\n\n{runs} finished run(s) in {} configuration(s) from {}.\n",
        groups.len(),
        names.join(", ")
    );
    let mut table = Table::new(vec![
        Column::text("configuration"),
        Column::figure("runs", Unit::Count, 0),
        Column::figure("cases", Unit::Count, 0),
        Column::figure("nCER", Unit::None, 4),
        Column::figure("per-token p50 ms", Unit::Ms, 2),
        Column::figure("peak GPU MiB, page", Unit::Mib, 0),
        Column::figure("peak GPU MiB, vision worker", Unit::Mib, 0),
        Column::figure("peak GPU MiB, decoder worker", Unit::Mib, 0),
    ]);
    for group in &groups {
        let summaries = || group.runs.iter().map(|r| r.summary);
        let cases = summaries().map(|s| s.cases).max().unwrap_or(0);
        let ncers: Vec<f64> = summaries().filter_map(|s| s.ncer).collect();
        let ncer = if ncers.is_empty() {
            Cell::NotApplicable("no run has an nCER (no reference text)".into())
        } else {
            Cell::Figure(ncers.iter().sum::<f64>() / ncers.len() as f64)
        };
        let token = Cell::figure_or(
            median(summaries().map(|s| s.decode_probe.token_latency.as_ref().map(|t| t.p50_ms))),
            "no run timed its tokens",
        );
        let gpu = |realm: fn(&PageSummary) -> Option<u64>| {
            Cell::bytes_or(
                max(summaries().filter_map(realm)),
                "no run has this realm's device",
            )
        };
        table.push(vec![
            Cell::text(&group.name),
            Cell::Figure(group.runs.len() as f64),
            Cell::Figure(cases as f64),
            ncer,
            token,
            gpu(|s| s.gpu_memory.as_ref()?.page.as_ref().map(|g| g.peak_bytes)),
            gpu(|s| s.gpu_memory.as_ref()?.worker.as_ref().map(|g| g.peak_bytes)),
            // Every decoder worker of a pool, summed.
            gpu(crate::memory_model::pool_realms::decoder_workers_peak_bytes),
        ]);
    }
    out.table(table);
    failed_verifications(&mut out, &groups);
    let phases = phase_names(&groups);
    if !phases.is_empty() {
        let _ = writeln!(out, "\nPeak PSS per phase, MiB (all the browser's processes; the highest over a configuration's runs; - where the phase had no PSS sample):\n");
        let mut columns = vec![Column::text("configuration")];
        columns.extend(phases.iter().map(|p| Column::figure(p, Unit::Mib, 0)));
        let mut table = Table::new(columns);
        for group in &groups {
            let mut row = vec![Cell::text(&group.name)];
            row.extend(phases.iter().map(|phase| {
                let peak = max(group.runs.iter().filter_map(|run| {
                    let memory = run.memory?;
                    let (_, p) = memory.phases.iter().find(|(name, _)| name == phase)?;
                    p.total.peak_pss
                }));
                Cell::bytes_or(peak, "no PSS sample in the phase")
            }));
            table.push(row);
        }
        out.table(table);
    }
    decomposition_tables(&mut out, &groups);
    super::rise_table::rise_tables(&mut out, &groups);
    super::release_table::given_back_table(&mut out, &groups);
    super::least_memory::least_memory_section(&mut out, &groups);
    prediction_tables(&mut out, &groups);
    other_pages_table(&mut out, files);
    let _ = writeln!(
        out,
        "\n(nCER: the mean over the runs; per-token p50: the median of the runs' p50s; peak GPU: the largest over the runs, from the page's wrapped GPU devices.)"
    );
    out
}

/// Per configuration (its last run with a recorded floor), each phase's predicted memory
/// beside the measured, with the error (`docs/benchmark-protocol.md`, "Predicted memory").
fn prediction_tables(out: &mut Document, groups: &[Configuration<'_>]) {
    let mut heading = false;
    for group in groups {
        let text = group.runs.iter().rev().find_map(|run| {
            let text = crate::report::prediction_text(run.summary, run.memory?);
            (!text.is_empty()).then_some(text)
        });
        let Some(text) = text else {
            continue;
        };
        if !heading {
            let _ = writeln!(out, "\nPredicted and measured memory per phase (each configuration's last run with a floor):");
            heading = true;
        }
        let _ = write!(out, "\n{}\n\n```text\n{text}```\n", group.name);
    }
}

/// The results other pages posted (kept as posted): what their figures say, and what they
/// lack against this page's summary.
fn other_pages_table(out: &mut Document, files: &[ResultsFile]) {
    let mut table = Table::new(vec![
        Column::text("file"),
        Column::text("page"),
        Column::text("runId"),
        Column::figure("cases", Unit::Count, 0),
        Column::figure("nCER", Unit::None, 4),
        Column::figure("median case ms", Unit::Ms, 1),
        Column::figure("ms per decode step", Unit::Ms, 1),
        Column::text("case p50 ms: vision / prefill / decode / total"),
        Column::figure("peak RSS MiB", Unit::Mib, 0),
        Column::text("it has no"),
    ]);
    for (file, line, figures) in files.iter().flat_map(|file| {
        file.other_pages()
            .map(move |(line, figures)| (file, line, figures))
    }) {
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        let Record::Result { process_memory, .. } = &line.record else {
            unreachable!("other_pages yields result records")
        };
        let peak_rss = process_memory
            .measured
            .as_ref()
            .and_then(|m| max(m.phases.iter().map(|(_, p)| p.total.peak_rss)));
        table.push(vec![
            Cell::text(&file.name),
            Cell::text(line.page.as_deref().unwrap_or("-")),
            Cell::text(figures.run_id.as_deref().unwrap_or("-")),
            Cell::Figure(figures.cases.len() as f64),
            figures.ncer.map_or_else(
                || Cell::NotApplicable("the page posted no nCER".into()),
                Cell::Figure,
            ),
            Cell::figure_or(figures.median_case_ms, "the page posted no case times"),
            Cell::figure_or(figures.ms_per_token(), "the page posted no decode steps"),
            Cell::text(format!(
                "{} / {} / {} / {}",
                ms(figures.case_p50(|c| c.vision_ms)),
                ms(figures.case_p50(|c| c.prefill_ms)),
                ms(figures.case_p50(|c| c.decode_ms)),
                ms(figures.case_p50(|c| c.total_ms)),
            )),
            Cell::bytes_or(peak_rss, "no RSS sample"),
            Cell::text(figures.lacks().join(", ")),
        ]);
    }
    if table.rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nOther pages' results, kept as posted (their own figures; what this page's summary has and they do not is under \"it has no\"):\n");
    out.table(table);
}

/// The configurations with runs whose `verify=wasm` failed: their figures are in the table,
/// but they are not results of the configuration.
fn failed_verifications(out: &mut Document, groups: &[Configuration<'_>]) {
    let failed: Vec<String> = groups
        .iter()
        .filter_map(|group| {
            let count = group
                .runs
                .iter()
                .filter(|run| run.summary.verification_failed())
                .count();
            (count > 0).then(|| format!("{} ({count} of {} runs)", group.name, group.runs.len()))
        })
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "\nVERIFICATION FAILED (verify=wasm: a case left the WASM reference), their figures not a result of the configuration: {}",
            failed.join(", ")
        );
    }
}

/// measured / floor, missing where either is or the floor is zero.
fn over_floor(measured: Option<u64>, floor: Option<u64>) -> Cell {
    let bytes = |b: Option<u64>| b.map(|b| b as f64);
    Cell::figure_or(
        ratio(bytes(measured), bytes(floor)),
        "no figure or no floor",
    )
}

/// The run of a configuration whose decomposition a phase's row shows: the one with the
/// highest PSS in the phase (the first where none has PSS), so the row's parts are of one
/// run and add up.
pub fn run_for_phase<'d>(
    runs: &'d [Decomposition],
    phase: &str,
) -> Option<(&'d Decomposition, &'d PhaseShare)> {
    let mut best: Option<(&Decomposition, &PhaseShare)> = None;
    for run in runs {
        let Some(share) = run.phase(phase) else {
            continue;
        };
        if best.is_none_or(|(_, b)| share.pss > b.pss) {
            best = Some((run, share));
        }
    }
    best
}

/// One table per phase, a row per configuration: where the phase's memory went.
fn decomposition_tables(out: &mut Document, groups: &[Configuration<'_>]) {
    let decomposed: Vec<(&str, Vec<Decomposition>)> = groups
        .iter()
        .map(|g| {
            let runs = g.runs.iter().filter_map(decomposition::decompose).collect();
            (g.name.as_str(), runs)
        })
        .collect();
    let mut phases: Vec<&str> = Vec::new();
    for share in decomposed
        .iter()
        .flat_map(|(_, runs)| runs.iter().flat_map(|r| &r.phases))
    {
        if !phases.contains(&share.phase.as_str()) {
            phases.push(&share.phase);
        }
    }
    if phases.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Where the memory went, per phase\n\n\
         MiB, of the run of each configuration with the highest PSS in the phase. PSS: the peak over \
         the phase of all the browser's processes. GPU: the bytes of every realm's WebGPU device \
         (the page's and the decoder worker's window peaks, the vision worker's live bytes while it \
         lives). WASM: every realm's WebAssembly heaps (onnxruntime's and the core's) at the \
         phase's end. Rest = PSS − GPU − WASM where the adapter is software (SwiftShader, \
         llvmpipe/lavapipe or a fallback adapter, by the record's `environment` adapters): its \
         buffers are process memory, inside PSS; on a real GPU they are device memory, outside \
         PSS, and rest = PSS − WASM. PSS and GPU are peaks and the heaps a reading, so a rest \
         below zero means they overlap. Driver VRAM: NVML's, n/a where it was not read. Floor: \
         weights + one KV cache + the largest activation.\n"
    );
    let mut without_pss = Vec::new();
    for phase in phases {
        let rows: Vec<_> = decomposed
            .iter()
            .filter_map(|(name, runs)| Some((name, run_for_phase(runs, phase)?)))
            .collect();
        // A phase shorter than a PSS pass (Firefox's `baseline`) has nothing to split.
        if rows.iter().all(|(_, (_, share))| share.pss.is_none()) {
            without_pss.push(phase);
            continue;
        }
        let _ = writeln!(out, "### {phase}\n");
        let mut table = Table::new(vec![
            Column::text("configuration"),
            Column::figure("PSS", Unit::Mib, 1),
            Column::figure("GPU", Unit::Mib, 1),
            Column::figure("WASM", Unit::Mib, 1),
            Column::figure("rest", Unit::Mib, 1),
            Column::text("GPU in PSS"),
            Column::figure("driver VRAM", Unit::Mib, 1),
            Column::figure("floor", Unit::Mib, 1),
            Column::figure("PSS/floor", Unit::Ratio, 1).with_unit_in_cells(),
            Column::figure("GPU/floor", Unit::Ratio, 1).with_unit_in_cells(),
        ]);
        for (name, (run, share)) in rows {
            let vram = if run.driver_read {
                Cell::bytes_or(share.driver_vram, "no VRAM sample in the phase")
            } else {
                Cell::NotApplicable("the driver was not read".into())
            };
            table.push(vec![
                Cell::text(*name),
                Cell::bytes_or(share.pss, "no PSS sample in the phase"),
                Cell::bytes_or(share.gpu, "no GPU bytes recorded"),
                Cell::bytes_or(share.wasm, "no heap reading"),
                Cell::bytes_or(share.rest(run.placement), "PSS, GPU or WASM unknown"),
                Cell::text(run.placement.describe()),
                vram,
                Cell::bytes_or(share.floor, "no floor recorded"),
                over_floor(share.pss, share.floor),
                over_floor(share.gpu, share.floor),
            ]);
        }
        out.table(table);
        let _ = writeln!(out);
    }
    if !without_pss.is_empty() {
        let _ = writeln!(
            out,
            "(No run has a PSS sample in {}: left out.)",
            without_pss.join(", ")
        );
    }
}

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn runs_of_two_targets_are_two_configurations_named_by_their_target() {
        let local = include_str!("../../tests/data/smoke2.jsonl");
        let remote: String = local
            .lines()
            .map(|line| {
                let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
                record["target"] = "webdriver:http://127.0.0.1:9515".into();
                format!("{record}\n")
            })
            .collect();
        let files = [
            ResultsFile::parse(local, std::path::Path::new("local.jsonl")).unwrap(),
            ResultsFile::parse(&remote, std::path::Path::new("remote.jsonl")).unwrap(),
        ];
        let names: Vec<String> = configurations(&files).into_iter().map(|c| c.name).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(!names[0].contains('@'), "{names:?}");
        assert!(
            names[1].contains(" @ webdriver:http://127.0.0.1:9515 · "),
            "{names:?}"
        );
    }
}
