//! The report's "Given back" table: per configuration, what each release step returned
//! (`memory_model::given_back`), of the last run that took the steps.

use std::fmt::Write;

use super::configuration::Configuration;
use super::document::Document;
use crate::memory_model::given_back::{given_back, Returned, StepReturn, HEAP_REALMS};
use crate::table::{Align, Cell, Column, Table};
use crate::units::mib;

/// `MiB (share %)`, or `-`.
fn returned(figure: Option<Returned>) -> String {
    let Some(figure) = figure else {
        return "-".to_owned();
    };
    let bytes = mib(figure.bytes, 1);
    match figure.share_of_rise {
        // `+ 0.0` turns the -0 of a share that rounds to zero from below into 0.
        Some(share) => format!("{bytes} ({:.0} %)", (share * 100.0).round() + 0.0),
        None => bytes,
    }
}

/// Writes the table where some configuration's run has step readings.
pub(super) fn given_back_table(out: &mut Document, groups: &[Configuration<'_>]) {
    let rows: Vec<(&str, Vec<StepReturn>)> = groups
        .iter()
        .filter_map(|group| {
            let steps = group.runs.iter().rev().find_map(|run| {
                let steps = given_back(
                    run.memory?,
                    &crate::memory_model::pool_realms::samples_of_every_realm(run.summary),
                );
                (!steps.is_empty()).then_some(steps)
            })?;
            Some((group.name.as_str(), steps))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Given back, per release step\n\n\
         MiB that `decoder-run` held at its end and the step no longer held, and (in brackets) \
         that as a share of the rise above `baseline`; of the last run of each configuration \
         that took the steps (`release=sessions|device|realm`; every run ends with `all`; with \
         `--memory-reports`, `minimized`: after Firefox then minimized its memory, as under \
         memory pressure). PSS: \
         all the browser's processes, then per process type. Driver VRAM: NVML's, `-` where it \
         was not read. GPU: the bytes live in the page's device and the decoder worker's. \
         WASM: the WebAssembly heaps of the page and of the decoder worker.\n"
    );
    let returned_column = |name: String| Column::text(name).aligned(Align::Right);
    let mut table = Table::new(vec![
        Column::text("configuration"),
        Column::text("step"),
        returned_column("PSS".into()),
        Column::text("PSS per type"),
        returned_column("driver VRAM".into()),
        returned_column("GPU".into()),
        returned_column(format!("WASM {}", HEAP_REALMS[0])),
        returned_column(format!("WASM {}", HEAP_REALMS[1])),
    ]);
    for (name, steps) in rows {
        for step in steps {
            let by_type: Vec<String> = step
                .pss_by_type
                .iter()
                .map(|(kind, figure)| {
                    format!(
                        "{} {}",
                        serde_json::to_value(kind)
                            .unwrap_or_default()
                            .as_str()
                            .unwrap_or("?"),
                        returned(Some(*figure))
                    )
                })
                .collect();
            table.push(vec![
                Cell::text(name),
                Cell::text(step.step.to_string()),
                Cell::text(returned(step.pss)),
                Cell::text(by_type.join(", ")),
                Cell::text(returned(step.driver_vram)),
                Cell::text(returned(step.gpu)),
                Cell::text(returned(step.wasm_heaps.get(HEAP_REALMS[0]).copied())),
                Cell::text(returned(step.wasm_heaps.get(HEAP_REALMS[1]).copied())),
            ]);
        }
    }
    out.table(table);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{json, Value};

    use super::super::{markdown, ResultsFile};

    const TWO_CONFIGS: &str = include_str!("../../tests/data/two-configs.jsonl");

    #[test]
    fn a_configuration_with_step_readings_gets_a_row_per_step() {
        // The first run's decoder-run ended at 1041973248 bytes of PSS; its step `all` holds
        // 100 MiB less. Its baseline has no PSS (an older record): no share.
        let lines: Vec<String> = TWO_CONFIGS
            .lines()
            .enumerate()
            .map(|(index, line)| {
                let mut record: Value = serde_json::from_str(line).unwrap();
                let first_result = record["kind"] == "result"
                    && !TWO_CONFIGS
                        .lines()
                        .take(index)
                        .any(|l| l.contains("\"kind\":\"result\""));
                if first_result {
                    record["processMemory"]["steps"] = json!([{ "phase": "release", "step": "all",
                        "atMs": 0.0, "byType": {},
                        "total": { "rssBytes": 1, "pssBytes": 1041973248u64 - (100 << 20) } }]);
                }
                record.to_string()
            })
            .collect();
        let file = ResultsFile::parse(&lines.join("\n"), Path::new("r.jsonl")).unwrap();
        let text = markdown(&[file]);
        assert!(text.contains("## Given back, per release step"), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("| all |")).collect();
        assert_eq!(rows.len(), 1, "{text}");
        // PSS from the step; no driver; the page's `released` sample: its 202.2 MiB of GPU
        // bytes all gone, the page's heaps all kept, no decoder worker.
        assert!(
            rows[0].starts_with("| firefox · cases=smoke2&maxTokens=2 | all | 100.0 | browser ")
                && rows[0].ends_with("| - | 202.2 (100 %) | 0.0 (0 %) | 0.0 |"),
            "{}",
            rows[0]
        );
    }
}
