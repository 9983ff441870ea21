//! The pure models of a run's memory, beside the sampler that measures it (`memory`): the
//! floor of each phase from the manifest (`floor`), the GPU bytes and WebAssembly heaps of
//! every realm per phase from the page's memory samples (`page_gpu`), with every decoder realm of
//! a pool counted (`pool_realms`), what each release
//! step gave back (`given_back`), the rise above the idle browser split into its parts
//! (`rise`), and the memory a configuration is expected to take (`predict`) and what each
//! release step is expected to give back (`release_steps`). They read files
//! and records, never `/proc` or the driver.

pub mod floor;
pub mod given_back;
pub mod page_gpu;
pub mod pool_realms;
pub mod predict;
pub mod release_steps;
pub mod rise;

pub use crate::memory_expected::STARTUP_PHASE;

/// The sampler figures of a hand-made `processMemory` in the models' tests: one tick, no cost.
#[cfg(test)]
fn test_sampler() -> serde_json::Value {
    serde_json::json!({ "source": "test", "ticks": 1, "achievedHz": 1.0,
        "rssCpuShareOfOneCore": 0.0, "pssPasses": 1, "pssHz": 1.0,
        "meanPssPassCpuMs": 0.0, "meanPssPassWallMs": 0.0,
        "pssCpuShareOfOneCore": 0.0, "cpuShareOfOneCore": 0.0, "maxProcesses": 2 })
}
