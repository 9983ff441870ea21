//! The report's answer to "which configuration needs the least device memory and still reads
//! as well": among the configurations that read the same cases, those whose nCER is within
//! [`ACCURACY_TOLERANCE`] of the best, the one whose peak GPU bytes (every realm's device, in
//! its heaviest phase) are the smallest, with that phase's floor beside them.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::configuration::Configuration;
use super::document::Document;
use crate::memory_model::page_gpu::gpu_bytes_by_phase;
use crate::table::{Cell, Column, Table, Unit};
use crate::units::ratio;

/// How far above the best nCER of a case set a configuration still reads "as well": the
/// tolerance the decode paths are held to against the seed's loop.
pub const ACCURACY_TOLERANCE: f64 = 0.005;

/// One configuration's figures: mean nCER, its heaviest phase's GPU bytes (the largest over
/// its runs) and that phase's floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub name: &'a str,
    pub ncer: f64,
    pub phase: &'static str,
    pub gpu_bytes: u64,
    pub floor_bytes: Option<u64>,
}

fn candidate<'a>(group: &'a Configuration<'_>) -> Option<Candidate<'a>> {
    let ncers: Vec<f64> = group.runs.iter().filter_map(|r| r.summary.ncer).collect();
    if ncers.is_empty() {
        return None;
    }
    let ncer = ncers.iter().sum::<f64>() / ncers.len() as f64;
    let (run, phase, gpu_bytes) = group
        .runs
        .iter()
        .flat_map(|run| {
            gpu_bytes_by_phase(&crate::memory_model::pool_realms::samples_of_every_realm(
                run.summary,
            ))
            .into_iter()
            .map(move |(phase, bytes)| (run, phase, bytes))
        })
        .max_by_key(|(_, _, bytes)| *bytes)?;
    let floor_bytes = run
        .memory
        .and_then(|m| m.beside.floor.as_ref())
        .filter(|f| f.available)
        .and_then(|f| f.phases.get(phase))
        .map(|f| f.bytes);
    Some(Candidate {
        name: &group.name,
        ncer,
        phase,
        gpu_bytes,
        floor_bytes,
    })
}

/// Per case set (the `cases` of the runs' configuration), the configuration with the least
/// peak GPU bytes among those within [`ACCURACY_TOLERANCE`] of the set's best nCER, and how
/// many it was chosen from.
pub fn least_device_memory<'a>(
    groups: &'a [Configuration<'_>],
) -> BTreeMap<String, (Candidate<'a>, usize)> {
    let mut by_set: BTreeMap<String, Vec<Candidate<'a>>> = BTreeMap::new();
    for group in groups {
        let Some(run) = group.runs.first() else {
            continue;
        };
        if let Some(candidate) = candidate(group) {
            by_set
                .entry(run.summary.config.cases.clone())
                .or_default()
                .push(candidate);
        }
    }
    by_set
        .into_iter()
        .filter_map(|(set, candidates)| {
            let best = candidates
                .iter()
                .map(|c| c.ncer)
                .fold(f64::INFINITY, f64::min);
            let eligible: Vec<&Candidate<'a>> = candidates
                .iter()
                .filter(|c| c.ncer <= best + ACCURACY_TOLERANCE)
                .collect();
            let count = eligible.len();
            let least = eligible.into_iter().min_by_key(|c| c.gpu_bytes)?.clone();
            Some((set, (least, count)))
        })
        .collect()
}

/// Writes the section where some case set was read by two configurations or more.
pub fn least_memory_section(out: &mut Document, groups: &[Configuration<'_>]) {
    let chosen: Vec<(String, (Candidate<'_>, usize))> = least_device_memory(groups)
        .into_iter()
        .filter(|(_, (_, count))| *count > 1)
        .collect();
    if chosen.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## The least device memory at the best accuracy\n\n\
         Per case set: of the configurations whose nCER is within {ACCURACY_TOLERANCE} of the \
         set's best, the one whose peak GPU bytes (every realm's device, in its heaviest \
         phase; the largest over its runs) are the smallest, against that phase's floor.\n"
    );
    let mut table = Table::new(vec![
        Column::text("cases"),
        Column::text("configuration"),
        Column::figure("of", Unit::Count, 0),
        Column::figure("nCER", Unit::None, 4),
        Column::text("phase"),
        Column::figure("GPU MiB", Unit::Mib, 1),
        Column::figure("floor MiB", Unit::Mib, 1),
        Column::figure("GPU / floor", Unit::Ratio, 2).with_unit_in_cells(),
    ]);
    for (set, (least, count)) in chosen {
        let floor = least.floor_bytes.map(|b| b as f64);
        table.push(vec![
            Cell::text(set),
            Cell::text(least.name),
            Cell::Figure(count as f64),
            Cell::Figure(least.ncer),
            Cell::text(least.phase.to_string()),
            Cell::Figure(least.gpu_bytes as f64),
            Cell::figure_or(floor, "no floor recorded"),
            Cell::figure_or(
                ratio(Some(least.gpu_bytes as f64), floor),
                "no floor recorded",
            ),
        ]);
    }
    out.table(table);
}
