//! What a run's memory is expected to be, as its record carries it beside what was
//! measured: the floor of each phase (`processMemory.floor`) and the prediction
//! (`processMemory.prediction`). Plain data, below the sampler that carries it and the memory
//! model that computes it (`memory_model::floor`, `memory_model::predict`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The phase before the page's first mark: the browser starting and loading the page. It is the
/// sampler's own, not an `ocr_bench_core::phase::Phase`: the page never marks it (the server
/// refuses it as a mark), and a run's per-phase figures name it beside the page's phases.
pub const STARTUP_PHASE: &str = "startup";

/// One phase's floor and what it is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseFloor {
    pub bytes: u64,
    pub weights_bytes: u64,
    pub kv_cache_bytes: u64,
    pub activation_bytes: u64,
    /// The sessions alive in the phase: `vision`, `decoder`.
    pub sessions: Vec<String>,
}

/// `processMemory.floor`: the floor of every phase the run's schedule has, or why none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FloorAnswer {
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The manifest file it was computed from, under the served root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// By phase name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phases: BTreeMap<String, PhaseFloor>,
}

impl FloorAnswer {
    pub fn unavailable(reason: String) -> Self {
        Self {
            available: false,
            reason: Some(reason),
            manifest: None,
            phases: BTreeMap::new(),
        }
    }

    pub fn phase(&self, name: &str) -> Option<&PhaseFloor> {
        self.phases.get(name)
    }
}

/// Every phase's prediction, by phase name.
pub type Prediction = BTreeMap<String, PhasePrediction>;

/// The WebAssembly heaps of each realm, bytes; `None` for a realm the phase does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RealmHeaps {
    pub page: u64,
    pub vision_worker: Option<u64>,
    pub decoder_worker: Option<u64>,
}

impl RealmHeaps {
    pub fn total(&self) -> u64 {
        self.page + self.vision_worker.unwrap_or(0) + self.decoder_worker.unwrap_or(0)
    }
}

/// One phase's expected figures, bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhasePrediction {
    pub floor: PhaseFloor,
    pub gpu_bytes: u64,
    pub wasm: RealmHeaps,
    /// `None` in a phase without a session (the driver's figure there is the browser's own).
    pub driver_vram_bytes: Option<u64>,
    pub pss_rise_bytes: Option<u64>,
}
