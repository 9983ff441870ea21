//! What each release step is expected to give back (`docs/benchmark-protocol.md`, "Release"
//! and "Predicted memory"): from `decoder-run`'s prediction (`predict`), what is still held
//! after each step a run of the configuration takes, and what that gives back. The rules come
//! from the `release=realm` runs on the H200 (`docs/measurements-browser.md`, "On a real GPU:
//! what each release step gives back"):
//! - `sessions`: every GPU buffer of every session goes (100 % there), and the driver's VRAM
//!   falls to its fixed part; the WebAssembly heaps never shrink and the process keeps what
//!   it allocated (PSS gave back -2 % to 0 %), but for a software adapter's buffers, which
//!   are process memory.
//! - `device`: nothing more (the same within 2 MiB).
//! - `realm`: the decoder workers end, and with them their heaps and their share of the
//!   process (each realm's copy of the weights; 86-89 % of the rise came back).
//! - `all`: everything at once; with `realm=page` the page's heaps and process stay.

use ocr_bench_core::config::{Realm, Release};
use ocr_bench_core::Config;

use super::predict::{decoder_weights, Prediction, RealmHeaps, PSS_PER_WEIGHT, VRAM_FIXED_MIB};
use crate::units::{mib, MIB};

/// What is held after one release step, bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct StepHeld {
    /// `sessions`, `device`, `realm` or `all`.
    pub step: &'static str,
    pub gpu_bytes: u64,
    pub wasm: RealmHeaps,
    pub driver_vram_bytes: u64,
    pub pss_rise_bytes: u64,
}

/// What one step gives back against `decoder-run`: its prediction less what the step holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepGiven {
    pub gpu_bytes: u64,
    pub wasm_bytes: u64,
    pub driver_vram_bytes: u64,
    pub pss_bytes: u64,
}

/// The steps a run of `release` takes, in order (every mode ends with `all`).
pub fn steps(release: Release) -> &'static [&'static str] {
    match release {
        Release::All => &["all"],
        Release::Sessions => &["sessions", "all"],
        Release::Device => &["sessions", "device", "all"],
        Release::Realm => &["sessions", "device", "realm", "all"],
    }
}

/// What each step of a run of `config` holds; empty without a `decoder-run` prediction.
/// `gpu_in_pss`: a software adapter's buffers, which the PSS rise holds.
pub fn held(prediction: &Prediction, config: &Config, gpu_in_pss: bool) -> Vec<StepHeld> {
    let Some(run) = prediction.get("decoder-run") else {
        return Vec::new();
    };
    let run_pss = run.pss_rise_bytes.unwrap_or(0);
    let without_buffers = run_pss - if gpu_in_pss { run.gpu_bytes } else { 0 };
    let in_worker = config.realm == Realm::Worker;
    // The decoder workers' share of the process: each one's copy of the decoder's weights.
    let weights = decoder_weights(|name| prediction.get(name).map(|p| &p.floor));
    let realms = u64::from(config.pool.max(1));
    let workers_share = (PSS_PER_WEIGHT * (realms * weights) as f64).round() as u64;
    steps(config.release)
        .iter()
        .map(|step| {
            let realm_ended = in_worker && matches!(*step, "realm" | "all");
            StepHeld {
                step,
                gpu_bytes: 0,
                wasm: RealmHeaps {
                    decoder_worker: run.wasm.decoder_worker.filter(|_| !realm_ended),
                    ..run.wasm.clone()
                },
                driver_vram_bytes: (VRAM_FIXED_MIB * MIB).round() as u64,
                pss_rise_bytes: without_buffers
                    - if realm_ended {
                        workers_share.min(without_buffers)
                    } else {
                        0
                    },
            }
        })
        .collect()
}

/// What a step gives back against `decoder-run`'s prediction.
pub fn given(prediction: &Prediction, step: &StepHeld) -> Option<StepGiven> {
    let run = prediction.get("decoder-run")?;
    Some(StepGiven {
        gpu_bytes: run.gpu_bytes.saturating_sub(step.gpu_bytes),
        wasm_bytes: run.wasm.total().saturating_sub(step.wasm.total()),
        driver_vram_bytes: run
            .driver_vram_bytes?
            .saturating_sub(step.driver_vram_bytes),
        pss_bytes: run.pss_rise_bytes?.saturating_sub(step.pss_rise_bytes),
    })
}

/// The steps' table for one configuration: held after each step and given back, in MiB.
pub fn render(prediction: &Prediction, config: &Config, gpu_in_pss: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let held = held(prediction, config, gpu_in_pss);
    if held.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "expected after each release step (release={}), MiB held / given back since decoder-run:",
        config.release
    );
    let _ = writeln!(
        out,
        "  {:<15} {:>13} {:>13} {:>13} {:>13}",
        "step", "GPU", "wasm heaps", "driver VRAM", "PSS rise"
    );
    for step in &held {
        let Some(given) = given(prediction, step) else {
            continue;
        };
        let cell = |held: u64, given: u64| format!("{}/{}", mib(held, 1), mib(given, 1));
        let _ = writeln!(
            out,
            "  {:<15} {:>13} {:>13} {:>13} {:>13}",
            step.step,
            cell(step.gpu_bytes, given.gpu_bytes),
            cell(step.wasm.total(), given.wasm_bytes),
            cell(step.driver_vram_bytes, given.driver_vram_bytes),
            cell(step.pss_rise_bytes, given.pss_bytes),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_placement::{gpu_placement, GpuPlacement};
    use crate::memory_model::given_back::{given_back, Returned};
    use crate::memory_model::predict::{predict, GPU_WASM_VRAM_TOLERANCE, PSS_RISE_TOLERANCE};
    use crate::memory_model::rise::TARGET_FLOOR_BYTES;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .unwrap()
    }

    /// A committed run's `all` step: what the prediction says it gives back and what its
    /// readings say it gave back (`given_back`).
    fn predicted_and_measured(
        file: &str,
    ) -> (StepGiven, crate::memory_model::given_back::StepReturn) {
        let runs = crate::runs::read_runs(&root().join("runner/tests/data").join(file)).unwrap();
        let run = &runs[0];
        let summary = run.summary().unwrap();
        let config = ocr_bench_core::parse_query(run.query().unwrap()).unwrap();
        let (_, manifest) =
            crate::model_manifest::read(&root(), "www/index.html", &config.manifest).unwrap();
        let placement = gpu_placement(summary);
        let prediction = predict(&manifest, &config, placement).unwrap();
        let steps = held(&prediction, &config, placement == GpuPlacement::Software);
        assert_eq!(steps.len(), 1, "release=all takes one step");
        let predicted = given(&prediction, &steps[0]).unwrap();
        let memory = run.result().unwrap().1.measured.as_ref().unwrap();
        let measured = given_back(memory, &summary.memory_samples).remove(0);
        assert_eq!(measured.step, "all");
        (predicted, measured)
    }

    fn error(predicted: u64, measured: Option<Returned>) -> f64 {
        predicted as f64 / measured.unwrap().bytes as f64 - 1.0
    }

    /// `tests/data/h200-default-hayai13.jsonl`: the default configuration (realm=page) on an
    /// NVIDIA H200, Firefox ESR 153, release=all.
    #[test]
    fn on_a_real_gpu_the_page_gives_back_its_buffers_and_vram_but_not_its_process_memory() {
        let (predicted, measured) = predicted_and_measured("h200-default-hayai13.jsonl");
        let seen = format!("{predicted:?}\n{measured:?}");
        assert!(
            error(predicted.gpu_bytes, measured.gpu).abs() <= GPU_WASM_VRAM_TOLERANCE,
            "{seen}"
        );
        assert!(
            error(predicted.driver_vram_bytes, measured.driver_vram).abs()
                <= GPU_WASM_VRAM_TOLERANCE,
            "{seen}"
        );
        // The page cannot end itself: its heaps and process stay (measured -5.7 MiB of PSS).
        assert_eq!((predicted.wasm_bytes, predicted.pss_bytes), (0, 0));
        assert!(
            measured.pss.unwrap().bytes.abs() <= TARGET_FLOOR_BYTES,
            "{seen}"
        );
        assert!(measured.wasm_heaps.values().all(|r| r.bytes == 0), "{seen}");
    }

    /// `tests/data/firefox-memory-reports-smoke1.jsonl`: realm=page on lavapipe, whose buffers
    /// are the parent's memory, release=all.
    #[test]
    fn on_a_software_adapter_the_buffers_given_back_are_process_memory() {
        let (predicted, measured) = predicted_and_measured("firefox-memory-reports-smoke1.jsonl");
        let seen = format!("{predicted:?}\n{measured:?}");
        assert!(
            error(predicted.gpu_bytes, measured.gpu).abs() <= GPU_WASM_VRAM_TOLERANCE,
            "{seen}"
        );
        // The PSS given back is the buffers (measured 199 MiB), not the page's heap.
        assert_eq!(predicted.pss_bytes, predicted.gpu_bytes);
        assert!(
            error(predicted.pss_bytes, measured.pss).abs() <= PSS_RISE_TOLERANCE,
            "{seen}"
        );
    }

    #[test]
    fn each_release_mode_takes_its_steps_and_ends_with_all() {
        assert_eq!(steps(Release::All), ["all"]);
        assert_eq!(
            steps(Release::Realm),
            ["sessions", "device", "realm", "all"]
        );
        for release in [Release::Sessions, Release::Device, Release::Realm] {
            assert_eq!(steps(release).first(), Some(&"sessions"));
            assert_eq!(steps(release).last(), Some(&"all"));
        }
    }
}
