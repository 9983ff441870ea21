//! What the sampler has measured so far: per phase, per process type, the peak and the end of
//! RSS and PSS, and the sampler's own cost.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::process_type::{Classified, ProcessType};

/// Peak and end of one process type (or of all of them) within one phase, as it appears in
/// `processMemory`: the PSS fields only once a PSS pass has counted towards the phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extent {
    #[serde(rename = "peakRssBytes")]
    pub peak_rss: u64,
    #[serde(rename = "endRssBytes")]
    pub end_rss: u64,
    #[serde(rename = "peakProcesses")]
    pub peak_processes: usize,
    #[serde(rename = "peakPssBytes", skip_serializing_if = "Option::is_none")]
    pub peak_pss: Option<u64>,
    #[serde(rename = "endPssBytes", skip_serializing_if = "Option::is_none")]
    pub end_pss: Option<u64>,
    /// The part of PSS in shared memory (`Pss_Shmem`), where the kernel reports it; absent in
    /// files written before it was recorded.
    #[serde(
        rename = "peakPssShmemBytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub peak_pss_shmem: Option<u64>,
    #[serde(
        rename = "endPssShmemBytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub end_pss_shmem: Option<u64>,
    /// The driver's VRAM of the processes (NVML), once a driver sample counted.
    #[serde(
        rename = "peakDriverGpuBytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub peak_driver_gpu: Option<u64>,
    #[serde(
        rename = "endDriverGpuBytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub end_driver_gpu: Option<u64>,
}

impl Extent {
    fn add_rss(&mut self, rss: u64, processes: usize) {
        self.peak_rss = self.peak_rss.max(rss);
        self.end_rss = rss;
        self.peak_processes = self.peak_processes.max(processes);
    }

    /// Sets peak and end together, so that a phase has either both PSS fields or neither.
    fn add_pss(&mut self, pss: u64) {
        self.peak_pss = Some(self.peak_pss.unwrap_or(0).max(pss));
        self.end_pss = Some(pss);
    }

    fn add_pss_shmem(&mut self, bytes: u64) {
        self.peak_pss_shmem = Some(self.peak_pss_shmem.unwrap_or(0).max(bytes));
        self.end_pss_shmem = Some(bytes);
    }

    fn add_driver_gpu(&mut self, bytes: u64) {
        self.peak_driver_gpu = Some(self.peak_driver_gpu.unwrap_or(0).max(bytes));
        self.end_driver_gpu = Some(bytes);
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct PhaseStats {
    pub samples: u64,
    pub pss_samples: u64,
    pub driver_gpu_samples: u64,
    pub first_ms: f64,
    pub last_ms: f64,
    pub by_type: BTreeMap<ProcessType, Extent>,
    pub total: Extent,
    /// Peak RSS summed over the processes of each label (`utility:network.mojom.NetworkService`,
    /// `tab`, …).
    pub peak_rss_by_label: BTreeMap<String, u64>,
}

/// One process as the RSS thread knows it.
pub(super) struct Tracked {
    pub class: Classified,
    pub rss: u64,
}

/// What the sampler has measured so far, phase by phase in the order the phases began.
#[derive(Default)]
pub(super) struct Measured {
    pub phases: Vec<(String, PhaseStats)>,
    pub ticks: u64,
    pub rss_cpu: Duration,
    pub pss_passes: u64,
    pub pss_cpu: Duration,
    pub pss_wall: Duration,
    pub started: Option<Instant>,
    pub last_tick: Option<Instant>,
    pub max_processes: usize,
    /// The steps marked within phases, in order ([`super::Sampler::step`]).
    pub steps: Vec<super::StepMemory>,
}

impl Measured {
    /// The entry of `phase`, created (last, keeping the order phases began in) if new.
    pub fn phase(&mut self, phase: &str, at_ms: f64) -> &mut PhaseStats {
        let index = match self.phases.iter().position(|(name, _)| name == phase) {
            Some(index) => index,
            None => {
                self.phases.push((
                    phase.to_owned(),
                    PhaseStats {
                        first_ms: at_ms,
                        ..Default::default()
                    },
                ));
                self.phases.len() - 1
            }
        };
        let stats = &mut self.phases[index].1;
        stats.last_ms = stats.last_ms.max(at_ms);
        stats
    }
}

/// Counts one RSS sample of every tracked process towards `stats`.
pub(super) fn record_rss<'a>(
    stats: &mut PhaseStats,
    tracked: impl IntoIterator<Item = &'a Tracked>,
) {
    stats.samples += 1;
    let mut by_type: BTreeMap<ProcessType, (u64, usize)> = BTreeMap::new();
    let mut by_label: BTreeMap<&str, u64> = BTreeMap::new();
    for process in tracked {
        let entry = by_type.entry(process.class.kind).or_default();
        entry.0 += process.rss;
        entry.1 += 1;
        *by_label.entry(process.class.label.as_str()).or_default() += process.rss;
    }
    for (label, rss) in by_label {
        let peak = stats.peak_rss_by_label.entry(label.to_owned()).or_default();
        *peak = (*peak).max(rss);
    }
    // A type that had processes earlier in the phase and has none now ends at zero.
    for (kind, extent) in stats.by_type.iter_mut() {
        if !by_type.contains_key(kind) {
            extent.add_rss(0, 0);
        }
    }
    let (mut total, mut processes) = (0, 0);
    for (kind, (rss, count)) in &by_type {
        stats
            .by_type
            .entry(*kind)
            .or_default()
            .add_rss(*rss, *count);
        total += rss;
        processes += count;
    }
    stats.total.add_rss(total, processes);
}

/// Counts one PSS pass, summed per process type, towards `stats`.
pub(super) fn record_pss(stats: &mut PhaseStats, by_type: &BTreeMap<ProcessType, u64>) {
    stats.pss_samples += 1;
    record_figure(stats, by_type, Extent::add_pss, |e| e.peak_pss.is_some());
}

/// Counts the shared-memory part of one PSS pass (recorded right after [`record_pss`] of the
/// same pass), summed per process type.
pub(super) fn record_pss_shmem(stats: &mut PhaseStats, by_type: &BTreeMap<ProcessType, u64>) {
    record_figure(stats, by_type, Extent::add_pss_shmem, |e| {
        e.peak_pss_shmem.is_some()
    });
}

/// Counts one driver VRAM sample, summed per process type, towards `stats`: attributed like
/// PSS.
pub(super) fn record_driver_gpu(stats: &mut PhaseStats, by_type: &BTreeMap<ProcessType, u64>) {
    stats.driver_gpu_samples += 1;
    record_figure(stats, by_type, Extent::add_driver_gpu, |e| {
        e.peak_driver_gpu.is_some()
    });
}

/// One sample of a figure read per process type (PSS, its shared part, driver VRAM): each
/// type's value, zero for a type that had the figure earlier in the phase and is absent now
/// (its processes exited), and the sum.
fn record_figure(
    stats: &mut PhaseStats,
    by_type: &BTreeMap<ProcessType, u64>,
    add: fn(&mut Extent, u64),
    seen: fn(&Extent) -> bool,
) {
    for (kind, bytes) in by_type {
        add(stats.by_type.entry(*kind).or_default(), *bytes);
    }
    for (kind, extent) in stats.by_type.iter_mut() {
        if !by_type.contains_key(kind) && seen(extent) {
            add(extent, 0);
        }
    }
    add(&mut stats.total, by_type.values().sum());
}
