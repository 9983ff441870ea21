//! Where each phase's memory went in one run: peak PSS of all the browser's processes, the
//! GPU bytes of every realm's device, the WebAssembly heaps of every realm, the rest, driver
//! VRAM where NVML read it, and the floor beside them.
//!
//! GPU bytes and heaps per phase are `memory_model::page_gpu`'s (the realms' rules live there).

use ocr_bench_core::phase::Phase;

use super::finished_run::FinishedRun;

use crate::gpu_placement::{gpu_placement, GpuPlacement};

use crate::memory_model::page_gpu;

/// One phase of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseShare {
    pub phase: String,
    /// Peak PSS of all the browser's processes; `None` where the phase had no PSS sample.
    pub pss: Option<u64>,
    /// The GPU bytes of every realm (`page_gpu::gpu_bytes_by_phase`).
    pub gpu: Option<u64>,
    /// The WebAssembly heaps of every realm: onnxruntime's and the core's.
    pub wasm: Option<u64>,
    /// Driver VRAM of the browser's processes; `None` where NVML did not read it.
    pub driver_vram: Option<u64>,
    /// The floor: weights + one KV cache + the largest activation.
    pub floor: Option<u64>,
}

impl PhaseShare {
    /// What PSS holds besides the heaps (and besides the GPU bytes where they are inside it):
    /// PSS − GPU − WASM on a software adapter, PSS − WASM on a real GPU, `None` where the
    /// adapter is unknown or PSS is missing. Negative where the figures, taken at different
    /// moments of the phase (PSS and GPU are peaks, the heaps a reading at its end), overlap.
    pub fn rest(&self, placement: GpuPlacement) -> Option<i64> {
        let pss = self.pss? as i64;
        let wasm = self.wasm.unwrap_or(0) as i64;
        match placement {
            GpuPlacement::Software => Some(pss - self.gpu.unwrap_or(0) as i64 - wasm),
            GpuPlacement::Device => Some(pss - wasm),
            GpuPlacement::Unknown => None,
        }
    }
}

/// A run's phases, in the order they began, less `startup` (before the page's first mark:
/// no page sample and no floor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decomposition {
    pub placement: GpuPlacement,
    /// Whether driver VRAM was read in this run.
    pub driver_read: bool,
    pub phases: Vec<PhaseShare>,
}

impl Decomposition {
    pub fn phase(&self, name: &str) -> Option<&PhaseShare> {
        self.phases.iter().find(|p| p.phase == name)
    }
}

/// The decomposition of one finished run; `None` without the runner's process memory.
pub fn decompose(run: &FinishedRun<'_>) -> Option<Decomposition> {
    let memory = run.memory?;
    let samples = crate::memory_model::pool_realms::samples_of_every_realm(run.summary);
    let gpu = page_gpu::gpu_bytes_by_phase(&samples);
    let wasm = page_gpu::wasm_bytes_by_phase(&samples);
    let floor = memory.beside.floor.as_ref().filter(|f| f.available);
    let driver_read = memory
        .beside
        .driver_gpu_memory
        .as_ref()
        .is_some_and(|d| d.available);
    let phases = memory
        .phases
        .iter()
        // The page's phases; the sampler's own `startup` comes before the page loads anything.
        .filter(|(name, _)| name.parse::<Phase>().is_ok())
        .map(|(name, phase)| PhaseShare {
            phase: name.clone(),
            pss: phase.total.peak_pss,
            gpu: gpu.get(name.as_str()).copied(),
            wasm: wasm.get(name.as_str()).copied(),
            driver_vram: phase.total.peak_driver_gpu.filter(|_| driver_read),
            floor: floor.and_then(|f| f.phase(name)).map(|f| f.bytes),
        })
        .collect();
    Some(Decomposition {
        placement: gpu_placement(run.summary),
        driver_read,
        phases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_is_pss_less_what_it_holds_of_the_gpu_and_the_heaps() {
        let share = PhaseShare {
            phase: "decoder-run".into(),
            pss: Some(1000),
            gpu: Some(300),
            wasm: Some(100),
            driver_vram: None,
            floor: Some(50),
        };
        assert_eq!(share.rest(GpuPlacement::Software), Some(600));
        // On a real GPU the buffers are not in PSS.
        assert_eq!(share.rest(GpuPlacement::Device), Some(900));
        assert_eq!(share.rest(GpuPlacement::Unknown), None);
        let no_pss = PhaseShare { pss: None, ..share };
        assert_eq!(no_pss.rest(GpuPlacement::Software), None);
    }
}
