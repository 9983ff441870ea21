//! The figures of one step within a phase (the release phase's `sessions`, `device`, `realm`,
//! `all`): one reading of RSS, PSS, its shared part and driver VRAM per process type and in
//! all, taken when the page marks the step, after it let go of something and waited.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats::Tracked;
use crate::process_type::ProcessType;

/// One reading of one process type (or of all of them); PSS and its shared part where the
/// pass read them, driver VRAM where NVML did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepReading {
    pub rss_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_shmem_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_gpu_bytes: Option<u64>,
}

/// A step's readings per process type and in all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepFigures {
    pub by_type: BTreeMap<ProcessType, StepReading>,
    pub total: StepReading,
}

impl StepFigures {
    /// The readings of one moment: RSS of the tracked processes, and the PSS pass and driver
    /// sample taken right after (a type one of them lacks reads 0 there).
    pub(super) fn gather(
        tracked: &[Tracked],
        pss: BTreeMap<ProcessType, u64>,
        shmem: Option<BTreeMap<ProcessType, u64>>,
        driver_gpu: Option<BTreeMap<ProcessType, u64>>,
    ) -> Self {
        let mut by_type: BTreeMap<ProcessType, StepReading> = BTreeMap::new();
        for process in tracked {
            by_type.entry(process.class.kind).or_default().rss_bytes += process.rss;
        }
        let kinds: Vec<ProcessType> = by_type
            .keys()
            .chain(pss.keys())
            .chain(driver_gpu.iter().flat_map(BTreeMap::keys))
            .copied()
            .collect();
        let read = |map: &BTreeMap<ProcessType, u64>, kind: ProcessType| {
            map.get(&kind).copied().unwrap_or(0)
        };
        for kind in kinds {
            let reading = by_type.entry(kind).or_default();
            reading.pss_bytes = Some(read(&pss, kind));
            reading.pss_shmem_bytes = shmem.as_ref().map(|m| read(m, kind));
            reading.driver_gpu_bytes = driver_gpu.as_ref().map(|m| read(m, kind));
        }
        let total = StepReading {
            rss_bytes: by_type.values().map(|r| r.rss_bytes).sum(),
            pss_bytes: Some(pss.values().sum()),
            pss_shmem_bytes: shmem.as_ref().map(|m| m.values().sum()),
            driver_gpu_bytes: driver_gpu.as_ref().map(|m| m.values().sum()),
        };
        Self { by_type, total }
    }
}

/// One step as `processMemory.steps` holds it: the phase it fell in, its name, when (ms
/// since the sampler started), and its readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepMemory {
    pub phase: String,
    pub step: String,
    pub at_ms: f64,
    #[serde(flatten)]
    pub figures: StepFigures,
}

impl StepMemory {
    pub(super) fn new(phase: &str, step: &str, at_ms: f64, figures: StepFigures) -> Self {
        Self {
            phase: phase.to_owned(),
            step: step.to_owned(),
            at_ms,
            figures,
        }
    }
}
