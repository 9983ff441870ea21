//! The report's "The rise above the idle browser" tables: per phase, per configuration, the
//! rise at the phase's peak and at its end, its named parts and what is unexplained
//! (`memory_model::rise`), of the last run of each configuration with a `baseline` PSS.

use std::fmt::Write;

use super::configuration::Configuration;
use super::document::Document;
use crate::memory_model::rise::{rises, total, Part, PhaseRise, ReportRise, Rise, REALMS};
use crate::process_type::ProcessType;
use crate::table::{Align, Cell, Column, Table, Unit};
use crate::units::mib;

fn part(part: Part) -> String {
    match part {
        Part::Measured(bytes) => mib(bytes, 1),
        Part::OutsidePss => "0 (outside PSS)".to_owned(),
        Part::NotAvailable => "n/a".to_owned(),
        Part::Unknown => "-".to_owned(),
    }
}

fn type_name(kind: &ProcessType) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// `browser 1.0, renderer 2.0`, leaving out the types whose figure rounds to 0.0.
fn by_type(figures: &std::collections::BTreeMap<ProcessType, i64>) -> String {
    let parts: Vec<String> = figures
        .iter()
        .map(|(kind, bytes)| (type_name(kind), mib(*bytes, 1)))
        .filter(|(_, bytes)| bytes != "0.0")
        .map(|(kind, bytes)| format!("{kind} {bytes}"))
        .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Firefox's own report parts taken from the rise, and its WebAssembly memories beside them;
/// `-` without reports (and at the peak: a report is one moment).
fn report(report: Option<&ReportRise>) -> String {
    let Some(report) = report else {
        return "-".to_owned();
    };
    let names = ["JS", "wasm code", "heap-unclassified", "gfx", "other"];
    let parts: Vec<String> = names
        .iter()
        .zip(report.parts())
        .map(|(name, part)| format!("{name} {}", mib(total(part), 1)))
        .collect();
    let held = if report.held_as_gpu > 0 {
        format!(" (less {} as GPU)", mib(report.held_as_gpu, 1))
    } else {
        String::new()
    };
    format!(
        "{}: {}{held}; wasm memory {} (the WASM heaps')",
        mib(report.taken(), 1),
        parts.join(", "),
        mib(total(&report.wasm_memory), 1)
    )
}

fn row(name: &str, at: &str, rise: &Rise) -> Vec<Cell> {
    let shared = match rise.shmem {
        Part::Measured(_) if rise.shmem_held_as_gpu > 0 => format!(
            "{} (less {} as GPU; {})",
            part(rise.shmem),
            mib(rise.shmem_held_as_gpu, 1),
            by_type(&rise.shmem_by_type)
        ),
        Part::Measured(_) if by_type(&rise.shmem_by_type) == "-" => part(rise.shmem),
        Part::Measured(_) => format!("{} ({})", part(rise.shmem), by_type(&rise.shmem_by_type)),
        other => part(other),
    };
    // Per type at the end only: there every type is read in one pass and the types add up.
    let unexplained = match (rise.unexplained(), rise.unexplained_by_type()) {
        (Some(bytes), Some(types)) if at == "end" => {
            format!("{} ({})", mib(bytes, 1), by_type(&types))
        }
        (Some(bytes), _) => mib(bytes, 1),
        (None, _) => "-".to_owned(),
    };
    let share = rise.unexplained_share().map_or_else(
        || "-".to_owned(),
        |s| format!("{:.0} %", (s * 100.0).round() + 0.0),
    );
    let target = match rise.meets_target() {
        Some(true) => "met",
        Some(false) => "MISSED",
        None => "-",
    };
    let mut row = vec![
        Cell::text(name),
        Cell::text(at),
        Cell::Figure(rise.pss as f64),
        Cell::text(by_type(&rise.pss_by_type)),
        Cell::text(part(rise.gpu)),
    ];
    row.extend(rise.wasm.iter().map(|(_, p)| Cell::text(part(*p))));
    row.extend([
        Cell::text(part(rise.js_heap)),
        Cell::text(shared),
        Cell::text(unexplained),
        Cell::text(share),
        Cell::text(target),
        Cell::text(report(rise.report.as_ref())),
    ]);
    row
}

/// Writes the tables where some configuration's run has a `baseline` PSS.
pub(super) fn rise_tables(out: &mut Document, groups: &[Configuration<'_>]) {
    let runs: Vec<(&str, Vec<PhaseRise>)> = groups
        .iter()
        .filter_map(|group| {
            let phases = group.runs.iter().rev().find_map(|run| {
                let phases = rises(run.memory?, run.summary);
                (!phases.is_empty()).then_some(phases)
            })?;
            Some((group.name.as_str(), phases))
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## The rise above the idle browser, per phase\n\n\
         MiB above the end of `baseline` (the browser with the page open, before any model is \
         fetched), of the last run of each configuration with a `baseline` PSS; a row at the \
         phase's peak and one at its end. Rise: PSS of all the browser's processes, then per \
         process type. GPU: the bytes of every realm's device where the adapter is software \
         (process memory); on a real GPU they are outside PSS. WASM: the WebAssembly heaps of \
         the page, the vision worker and the decoder worker. JS: `usedJSHeapSize` of the page \
         and its workers, n/a where the browser offers none (Firefox). Shared: the rise of \
         `Pss_Shmem` (per process type in brackets), less what may be GPU bytes counted \
         already. Unexplained: the rise less the parts (at the end, per process type in \
         brackets: the GPU bytes taken from the process that runs the adapter, the heaps from \
         the renderer, where the page and its workers run), and its share of the rise; the target \
         is at most 10 % of the rise or 20 MiB, whichever is larger. At the peak, PSS and GPU \
         are peaks and the heaps the largest reading: parts not taken at one moment. Firefox's \
         report, at the end of a run with `--memory-reports`: the rise of the parts of \
         Firefox's own memory reports (the report as the page entered the next phase less the \
         one as it entered the phase after `baseline`), taken from the rise per process type: \
         JS, compiled WebAssembly code, heap-unclassified, gfx and the other explicit \
         allocations, less what of the adapter process's heap-unclassified and gfx may be GPU \
         bytes; its WebAssembly memories are the WASM heaps' bytes, shown, not taken twice.\n"
    );
    let mut phases = Vec::new();
    for (_, run) in &runs {
        for phase in run {
            if !phases.contains(&phase.phase) {
                phases.push(phase.phase);
            }
        }
    }
    phases.sort();
    for phase in phases {
        let _ = writeln!(out, "### {}\n", phase.as_str());
        // Parts that may be outside PSS or not available say so in words: text cells.
        let part_column = |name: String| Column::text(name).aligned(Align::Right);
        let mut columns = vec![
            Column::text("configuration"),
            Column::text("at"),
            Column::figure("rise", Unit::Mib, 1),
            Column::text("rise per type"),
            part_column("GPU".into()),
        ];
        columns.extend(
            REALMS
                .iter()
                .map(|realm| part_column(format!("WASM {realm}"))),
        );
        columns.extend([
            part_column("JS".into()),
            Column::text("shared"),
            part_column("unexplained".into()),
            part_column("share".into()),
            Column::text("target"),
            Column::text("Firefox's report"),
        ]);
        let mut table = Table::new(columns);
        for (name, run) in &runs {
            if let Some(rise) = run.iter().find(|r| r.phase == phase) {
                table.push(row(name, "peak", &rise.peak));
                table.push(row(name, "end", &rise.end));
            }
        }
        out.table(table);
        let _ = writeln!(out);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{markdown, ResultsFile};

    /// The rows of the rise table for `phase` in the markdown of a committed record.
    fn rows(text: &str, phase: &str) -> Vec<String> {
        let file = ResultsFile::parse(text, Path::new("r.jsonl")).unwrap();
        let report = markdown(&[file]);
        report
            .lines()
            .skip_while(|l| !l.starts_with("## The rise above the idle browser"))
            .skip_while(|l| *l != format!("### {phase}"))
            .skip(1)
            .take_while(|l| !l.starts_with("###") && !l.starts_with("##"))
            .filter(|l| l.contains("| peak |") || l.contains("| end |"))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_software_run_splits_its_rise_and_names_what_is_unexplained() {
        // Firefox on a software adapter, realm=worker: at decoder-run's end 434.1 MiB above
        // baseline, of which 202.2 are GPU bytes, 1.3 + 87.1 heaps, 0.2 shared memory (less
        // 0.1 of the parent's as GPU bytes); 143.3 (33 %) unexplained, over the target: 35.2
        // in the parent beside its GPU bytes, 107.2 in the content process beside its heaps.
        let rows = rows(include_str!("../../tests/data/pool/1.jsonl"), "decoder-run");
        assert_eq!(rows.len(), 2, "{rows:?}");
        let end = &rows[1];
        assert!(
            end.contains("| end | 434.1 | browser 237.4, renderer 195.8, utility 0.9 | 202.2 | 1.3 | 0.0 | 87.1 | n/a | 0.2 (less 0.1 as GPU; browser 0.1, renderer 0.2) | 143.3 (browser 35.2, renderer 107.2, utility 0.9) | 33 % | MISSED |"),
            "{end}"
        );
    }

    #[test]
    fn firefoxs_own_reports_name_parts_of_the_rise_at_a_phases_end() {
        // `run --browser firefox --memory-reports 'cases=smoke1&maxTokens=2'` here: at
        // decoder-run's end 475.7 MiB above baseline; 161.3 were unexplained without Firefox's
        // report. Its parts take 161.7 more: wasm code 72.6 and heap-unclassified 289.6 in the
        // main, of which 202.1 are left out as the software adapter's GPU bytes; its 52.2 of
        // wasm memory stay the page's WASM heaps. -0.4 are left.
        let rows = rows(
            include_str!("../../tests/data/firefox-memory-reports-smoke1.jsonl"),
            "decoder-run",
        );
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(
            rows[0].ends_with("| - |"),
            "a report is no peak: {}",
            rows[0]
        );
        assert!(
            rows[1].contains("| -0.4 (browser 9.6, renderer -10.7, utility 0.7) | 0 % | met | 161.7: JS 6.7, wasm code 72.6, heap-unclassified 289.6, gfx -1.0, other -4.0 (less 202.1 as GPU); wasm memory 52.2 (the WASM heaps') |"),
            "{}",
            rows[1]
        );
    }

    #[test]
    fn on_a_real_gpu_the_gpu_bytes_are_named_outside_pss() {
        let rows = rows(
            include_str!("../../tests/data/h200-default-hayai13.jsonl"),
            "decoder-run",
        );
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(
            rows[1].contains("| end | 594.3 | browser 255.8, renderer 337.6, utility 0.9 | 0 (outside PSS) | 87.8 | 0.0 | 0.0 | n/a | 52.0 (renderer 52.0) | 454.5 (browser 255.8, renderer 197.9, utility 0.9) | 76 % | MISSED |"),
            "{}",
            rows[1]
        );
    }
}
