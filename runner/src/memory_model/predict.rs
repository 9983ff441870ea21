//! The memory a configuration is expected to take, per phase, before any browser starts: from
//! the floor's parts (`floor`: weights, one KV cache, the largest activation) and a few
//! constants for onnxruntime-web's habits. Each figure is a linear function of those parts.
//!
//! The constants were fitted on the nine runs of one NVIDIA H200 results file (Firefox ESR
//! 153, `cases=smoke2&maxTokens=16&realm=worker`, decoders baseline, fixed-kv-fused and
//! nbits-int4, each with release=sessions, device and realm) and checked on seven others of the
//! same machine (the decoder-combination runs over `cases=hayai13` with realm=page: the seed's
//! loop, poll=kick, and the fastest path with capture=on; the pool=1 runs of the fastest path on
//! hayai13 and synth200 and of the seed's loop on hayai13). Least squares over the fitted phases
//! (vision-load, vision-encode, decoder-load, decoder-run), in MiB:
//! - GPU bytes, a phase that runs a graph: weights + KV cache + 6.1 x largest activation
//!   (the buffer cache keeps activations of every size up to the largest, each rounded up;
//!   the fit's intercept came out at -0.2 MiB and is left out).
//! - GPU bytes, a phase that only holds sessions: 1.23 x weights (the session's
//!   upload staging and small buffers).
//! - onnxruntime's WebAssembly heap of a realm holding a session: 13.2 MiB + 2.92 x its
//!   embedded weights (the model is copied into the heap, which grows in steps); the core's
//!   heap is 1.8 MiB, 3.1 MiB once the page has read and encoded the cases.
//! - driver VRAM (every process of the browser): 39.1 MiB + 1.236 x the predicted GPU bytes.
//! - PSS rise over the idle browser (baseline): 107.5 MiB + 6.35 x the weights alive; on a
//!   software adapter the predicted GPU bytes on top, since its buffers are process memory
//!   (not fitted: the H200's are outside PSS). Checked on eight software runs here (Firefox
//!   ESR 153 on lavapipe, `cases=smoke1&maxTokens=4&realm=worker&release=realm`, tiers 121
//!   and 242 × baseline, fixed-kv, fixed-kv-fused, nbits-int4): decoder-run's PSS rise was
//!   21-43 % under without the GPU bytes, -12 % to +14 % with them; vision-encode's -9 % to
//!   +9 % with them; the phases that only load miss either way (docs/benchmark-protocol.md).
//!
//! The release phase's peak is what the run held going into it: decoder-run's prediction (but
//! for the decoder workers' GPU bytes where release steps come first, `from_floor`). A pool of
//! K decoder realms counts each realm's device, heaps and copy of the weights (`from_floor`);
//! what each release step gives back is `release_steps`'.
//!
//! Error (predicted / measured - 1) per phase on the seven check runs, against the issue's
//! targets of 15 % (GPU bytes, heaps, VRAM) and 25 % (PSS rise):
//! - WebAssembly heaps: -17 % to +7 %; outside only the decoder's heap with capture=on.
//! - GPU bytes: vision-encode -10 %; decoder-run and release -1 % to 0 % without capture,
//!   -28 % with capture=on (its recorded replays keep buffers the floor does not count);
//!   vision-load +23 %, decoder-load +20 % without capture and -53 % with it: a phase that
//!   only loads is the weakest figure.
//! - driver VRAM: decoder-run and release -8 % to +2 % without capture, -26 % to -16 % with
//!   it; the vision phases -28 % to +3 %; decoder-load -52 % to -12 %.
//! - PSS rise: -63 % to +29 %, far under from vision-encode on: the page's images and
//!   results grow with the cases (hayai13 and synth200 against the fit's smoke2), which the
//!   manifest does not know.
//!
//! On the fit runs themselves: heaps from -6 % to +7 %, GPU bytes from -14 % to +23 %, VRAM
//! from -14 % to +62 % (vision-load's VRAM moves by 24 MiB between runs of one
//! configuration), the PSS rise from -29 % to +48 %.

use std::collections::BTreeMap;

use ocr_bench_core::config::{Realm, Release};
use ocr_bench_core::manifest::{Family, Manifest};
use ocr_bench_core::Config;

use super::floor;
use crate::gpu_placement::GpuPlacement;
pub use crate::memory_expected::{PhasePrediction, Prediction, RealmHeaps};
use crate::units::{in_mib, MIB};

/// GPU bytes per byte of the largest activation, in a phase that runs a graph.
pub const ACTIVATION_FACTOR: f64 = 6.1;
/// GPU bytes per byte of weights, in a phase that only holds sessions.
pub const HELD_WEIGHTS_FACTOR: f64 = 1.23;
/// onnxruntime's heap: a fixed part and bytes per byte of embedded weights.
pub const ORT_HEAP_FIXED_MIB: f64 = 13.2;
pub const ORT_HEAP_PER_WEIGHT: f64 = 2.92;
/// The core's heap before and after the page has read and encoded the cases.
pub const CORE_HEAP_MIB: f64 = 1.8;
pub const CORE_HEAP_WITH_CASES_MIB: f64 = 3.1;
/// Driver VRAM: a fixed part and bytes per predicted GPU byte.
pub const VRAM_FIXED_MIB: f64 = 39.1;
pub const VRAM_PER_GPU_BYTE: f64 = 1.236;
/// PSS rise: a fixed part and bytes per byte of weights alive.
pub const PSS_FIXED_MIB: f64 = 107.5;
pub const PSS_PER_WEIGHT: f64 = 6.35;

/// The tolerances the prediction is held to (the targets), as fractions.
pub const GPU_WASM_VRAM_TOLERANCE: f64 = 0.15;
pub const PSS_RISE_TOLERANCE: f64 = 0.25;

fn bytes(mib: f64) -> u64 {
    (mib.max(0.0) * MIB).round() as u64
}

fn ort_heap(weights: u64) -> u64 {
    bytes(ORT_HEAP_FIXED_MIB + ORT_HEAP_PER_WEIGHT * in_mib(weights))
}

fn gpu_bytes(f: &floor::PhaseFloor) -> u64 {
    if f.activation_bytes > 0 {
        f.weights_bytes + f.kv_cache_bytes + bytes(ACTIVATION_FACTOR * in_mib(f.activation_bytes))
    } else {
        bytes(HELD_WEIGHTS_FACTOR * in_mib(f.weights_bytes))
    }
}

/// The prediction a run records before its page loads anything (`processMemory.prediction`):
/// every phase's figures from the floor the runner computed for it and its query; `None`
/// where there is no floor.
pub fn for_run(
    floor: &floor::FloorAnswer,
    query: &str,
    placement: GpuPlacement,
) -> Option<BTreeMap<String, PhasePrediction>> {
    if !floor.available {
        return None;
    }
    let config = ocr_bench_core::parse_query(query).ok()?;
    Some(from_floor(&floor.phases, &config, placement))
}

/// Every phase's prediction for a run of `config` on `manifest`.
pub fn predict(
    manifest: &Manifest,
    config: &Config,
    placement: GpuPlacement,
) -> Result<BTreeMap<String, PhasePrediction>, String> {
    if manifest.family != Family::Prefix {
        return Err(format!(
            "its family is {}, and the memory model's factors were fitted on runs of the \
             built-in prefix decoder only; run it and read the measured peaks instead",
            manifest.family.as_str()
        ));
    }
    Ok(from_floor(
        &floor::floor(manifest, config)?,
        config,
        placement,
    ))
}

/// Every phase's prediction from the floors of a run of `config` (as a run records them in
/// `processMemory.floor`): each session's weights are those of the phase that loads it. On a
/// software adapter (`placement`) the GPU bytes are process memory: the PSS rise holds them
/// too.
///
/// `pool=K` (`docs/benchmark-protocol.md`, "A pool of decoder realms"): with `realm=worker`
/// each of the K workers has a device, an onnxruntime-web heap and a core heap of its own, so
/// each adds one decoder's GPU bytes (its weights, KV cache and buffer cache), heaps and share
/// of the process (its copy of the weights); what they share is the browser, the page and the
/// driver's fixed part. With `realm=page` the K sessions share the page's one device, heap
/// and buffer cache: each adds its weights and KV cache on the device and its weights in the
/// heap and the process.
pub fn from_floor(
    floors: &BTreeMap<String, floor::PhaseFloor>,
    config: &Config,
    placement: GpuPlacement,
) -> BTreeMap<String, PhasePrediction> {
    let gpu_in_pss = placement == GpuPlacement::Software;
    let vision_weights = floors.get("vision-load").map_or(0, |f| f.weights_bytes);
    let decoder_weights = decoder_weights(|name| floors.get(name));
    let in_worker = config.realm == Realm::Worker;
    // The decoder realms beside the one the floor counts.
    let more_realms = u64::from(config.pool.max(1) - 1);
    let mut out = BTreeMap::new();
    for (name, f) in floors {
        let vision_alive = f.sessions.iter().any(|s| s == "vision");
        let decoder_alive = f.sessions.iter().any(|s| s == "decoder");
        // The page's core reads the cases' images from vision-encode (or decoder-run) on.
        let before_cases = matches!(name.as_str(), "baseline" | "probe" | "vision-load")
            || (name == "decoder-load" && vision_alive);
        let cases_read = !before_cases;
        let core = bytes(if cases_read {
            CORE_HEAP_WITH_CASES_MIB
        } else {
            CORE_HEAP_MIB
        });
        let decoder_heap = decoder_alive.then(|| ort_heap(decoder_weights));
        // What each decoder realm beyond the first adds: on the device, in the heaps and in
        // the weights the process holds.
        let (more_gpu, more_heap, more_weights) = if decoder_alive {
            let runs_graph = f.activation_bytes > 0;
            let gpu = match (in_worker, runs_graph) {
                (true, true) => {
                    decoder_weights
                        + f.kv_cache_bytes
                        + bytes(ACTIVATION_FACTOR * in_mib(f.activation_bytes))
                }
                (false, true) => decoder_weights + f.kv_cache_bytes,
                (_, false) => bytes(HELD_WEIGHTS_FACTOR * in_mib(decoder_weights)),
            };
            let heap = if in_worker {
                ort_heap(decoder_weights) + bytes(CORE_HEAP_MIB)
            } else {
                bytes(ORT_HEAP_PER_WEIGHT * in_mib(decoder_weights))
            };
            (
                more_realms * gpu,
                more_realms * heap,
                more_realms * decoder_weights,
            )
        } else {
            (0, 0, 0)
        };
        let wasm = RealmHeaps {
            page: core
                + if in_worker {
                    0
                } else {
                    decoder_heap.map_or(0, |heap| heap + more_heap)
                },
            // The vision session runs in its worker, as in every recorded run.
            vision_worker: vision_alive.then(|| ort_heap(vision_weights)),
            decoder_worker: decoder_heap
                .filter(|_| in_worker)
                .map(|heap| heap + bytes(CORE_HEAP_MIB) + more_heap),
        };
        let gpu = gpu_bytes(f) + more_gpu;
        let alive = !f.sessions.is_empty();
        out.insert(
            name.clone(),
            PhasePrediction {
                floor: f.clone(),
                gpu_bytes: gpu,
                wasm,
                driver_vram_bytes: alive.then(|| driver_vram(gpu)),
                pss_rise_bytes: alive.then(|| {
                    bytes(PSS_FIXED_MIB + PSS_PER_WEIGHT * in_mib(f.weights_bytes + more_weights))
                        + if gpu_in_pss { gpu } else { 0 }
                }),
            },
        );
    }
    if let Some(run) = out.get("decoder-run").cloned() {
        if let Some(release) = out.get_mut("release") {
            // Release's peak is what the run held going into it; but the decoder workers'
            // GPU bytes in `release` are each one's window after its answer to the step
            // before, and with steps the first step has let go of every session's buffers.
            let steps_in_workers = in_worker && config.release != Release::All;
            release.gpu_bytes = if steps_in_workers {
                run.gpu_bytes - decoder_workers_gpu(floors, &run, decoder_weights)
            } else {
                run.gpu_bytes
            };
            release.driver_vram_bytes = run.driver_vram_bytes;
            release.pss_rise_bytes = run.pss_rise_bytes;
            release.wasm = run.wasm;
        }
    }
    out
}

/// The decoder session's weights: those of the phase that loads it, less the vision
/// session's where that phase holds it too; from each phase's floor.
pub(super) fn decoder_weights<'a>(floor: impl Fn(&str) -> Option<&'a floor::PhaseFloor>) -> u64 {
    let vision_weights = floor("vision-load").map_or(0, |f| f.weights_bytes);
    floor("decoder-load").map_or(0, |f| {
        let with_vision = f.sessions.iter().any(|s| s == "vision");
        f.weights_bytes - if with_vision { vision_weights } else { 0 }
    })
}

/// Driver VRAM for the GPU bytes of every realm: the browser's fixed part once.
fn driver_vram(gpu: u64) -> u64 {
    bytes(VRAM_FIXED_MIB + VRAM_PER_GPU_BYTE * in_mib(gpu))
}

/// The part of `decoder-run`'s GPU bytes on the decoder workers' devices: all of them but the
/// vision session's where it stays alive beside the decoder (the resident schedule's page).
fn decoder_workers_gpu(
    floors: &BTreeMap<String, floor::PhaseFloor>,
    run: &PhasePrediction,
    decoder_weights: u64,
) -> u64 {
    let vision_alive = floors
        .get("decoder-run")
        .is_some_and(|f| f.sessions.iter().any(|s| s == "vision"));
    let vision_weights = run.floor.weights_bytes.saturating_sub(decoder_weights);
    run.gpu_bytes - if vision_alive { vision_weights } else { 0 }
}

/// The largest single buffer a run of `config` asks for: the largest initializer or
/// activation of its graphs, with the tensor's name.
pub fn largest_buffer(manifest: &Manifest, config: &Config) -> Result<(u64, String), String> {
    let mut graphs = vec![
        &manifest
            .decoder_entry(config)
            .map_err(|e| e.to_string())?
            .graph,
    ];
    if let Some(vision) = manifest.vision_entry(config).map_err(|e| e.to_string())? {
        graphs.push(&vision.graph);
    }
    let mut largest = (0, String::new());
    for graph in graphs {
        let activation = &graph.largest_activation;
        if activation.bytes > largest.0 {
            largest = (activation.bytes, activation.tensor.clone());
        }
        if let Some(init) = &graph.largest_initializer {
            if init.bytes > largest.0 {
                largest = (init.bytes, init.tensor.clone());
            }
        }
    }
    Ok(largest)
}

/// An adapter's buffer limits, from a recorded run (`summary.environment.adapter.limits`).
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterLimits {
    pub max_buffer_size: u64,
    pub max_storage_buffer_binding_size: u64,
}

/// The adapter limits of the first result in a results file's text.
pub fn adapter_limits(results: &str) -> Result<AdapterLimits, String> {
    for line in results.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let limits = &record["summary"]["environment"]["adapter"]["limits"];
        if let (Some(buffer), Some(binding)) = (
            limits["maxBufferSize"].as_u64(),
            limits["maxStorageBufferBindingSize"].as_u64(),
        ) {
            return Ok(AdapterLimits {
                max_buffer_size: buffer,
                max_storage_buffer_binding_size: binding,
            });
        }
    }
    Err(
        "no result in it records summary.environment.adapter.limits (maxBufferSize and \
         maxStorageBufferBindingSize); allowed: a results file of ocr-bench run or sweep"
            .to_owned(),
    )
}

/// Where the GPU bytes of the first result's adapter live, in a results file's text: a
/// software adapter's in process memory, a GPU's in device memory; `Unknown` where no result
/// says.
pub fn recorded_placement(results: &str) -> GpuPlacement {
    results
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|record| {
            crate::gpu_placement::adapter_is_software(&record["summary"]["environment"]["adapter"])
        })
        .map_or(GpuPlacement::Unknown, |software| {
            if software {
                GpuPlacement::Software
            } else {
                GpuPlacement::Device
            }
        })
}

/// What exceeds the adapter's limits: the largest buffer against each limit; empty when it fits.
pub fn over_limits(largest: u64, limits: &AdapterLimits) -> Vec<String> {
    let mut over = Vec::new();
    if largest > limits.max_buffer_size {
        over.push(format!("maxBufferSize {}", limits.max_buffer_size));
    }
    if largest > limits.max_storage_buffer_binding_size {
        over.push(format!(
            "maxStorageBufferBindingSize {}",
            limits.max_storage_buffer_binding_size
        ));
    }
    over
}

/// The prediction's table for one configuration.
pub fn render(predictions: &BTreeMap<String, PhasePrediction>) -> String {
    use std::fmt::Write;
    let m = |b: u64| crate::units::mib(b, 1);
    let o = |b: Option<u64>| b.map_or("-".to_owned(), m);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<15} {:>9} {:>8} {:>9} {:>11} {:>12} {:>11} {:>9}",
        "phase",
        "floor MiB",
        "GPU",
        "wasm page",
        "wasm vision",
        "wasm decoder",
        "driver VRAM",
        "PSS rise"
    );
    // In the order the phases run.
    let mut in_order: Vec<_> = predictions.iter().collect();
    in_order.sort_by_key(|(name, _)| {
        ocr_bench_core::phase::Phase::ALL
            .iter()
            .position(|phase| phase.as_str() == name.as_str())
    });
    for (name, p) in in_order {
        let _ = writeln!(
            out,
            "  {:<15} {:>9} {:>8} {:>9} {:>11} {:>12} {:>11} {:>9}",
            name,
            m(p.floor.bytes),
            m(p.gpu_bytes),
            m(p.wasm.page),
            o(p.wasm.vision_worker),
            o(p.wasm.decoder_worker),
            o(p.driver_vram_bytes),
            o(p.pss_rise_bytes),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    const MIB: u64 = 1 << 20;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .unwrap()
    }

    /// The committed manifest with round figures: vision 10 MiB of weights and a 1 MiB
    /// activation, the baseline decoder 20 MiB and a 4 MiB activation.
    fn round_manifest() -> Manifest {
        let text = std::fs::read_to_string(root().join("models/manifest.json")).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut set = |role: &str, name: &str, weights: u64, activation: u64| {
            let graph = &mut value[role][name];
            graph["bytes"]["embedded"] = (weights * MIB).into();
            graph["largestActivation"]["bytes"] = (activation * MIB).into();
        };
        set("vision", "121", 10, 1);
        set("decoder", "baseline", 20, 4);
        Manifest::parse(&value.to_string()).unwrap()
    }

    fn config(query: &str) -> Config {
        ocr_bench_core::parse_query(query).unwrap()
    }

    fn mib_of(bytes: u64) -> f64 {
        bytes as f64 / MIB as f64
    }

    #[test]
    fn each_figure_is_the_stated_linear_function_of_the_floor_parts() {
        let predictions = predict(
            &round_manifest(),
            &config("cases=smoke2&maxTokens=2"),
            GpuPlacement::Device,
        )
        .unwrap();
        let close = |bytes: u64, mib: f64| (mib_of(bytes) - mib).abs() < 0.01;
        let load = &predictions["vision-load"];
        assert!(close(load.gpu_bytes, 1.23 * 10.0), "{load:?}");
        assert!(close(load.wasm.vision_worker.unwrap(), 13.2 + 2.92 * 10.0));
        assert_eq!(load.wasm.decoder_worker, None);
        let encode = &predictions["vision-encode"];
        assert!(close(encode.gpu_bytes, 10.0 + 6.1 * 1.0), "{encode:?}");
        assert!(close(
            encode.driver_vram_bytes.unwrap(),
            39.1 + 1.236 * 16.1
        ));
        let run = &predictions["decoder-run"];
        let kv = mib_of(run.floor.kv_cache_bytes);
        assert!(close(run.gpu_bytes, 20.0 + kv + 6.1 * 4.0), "{run:?}");
        assert!(close(run.pss_rise_bytes.unwrap(), 107.5 + 6.35 * 20.0));
        // realm=page: onnxruntime's heap is the page's, beside the core's with the cases read.
        assert!(close(run.wasm.page, 3.1 + 13.2 + 2.92 * 20.0), "{run:?}");
        // Release holds what decoder-run held; a phase without a session has no driver figure.
        assert_eq!(predictions["release"].gpu_bytes, run.gpu_bytes);
        assert_eq!(predictions["release"].pss_rise_bytes, run.pss_rise_bytes);
        assert_eq!(predictions["probe"].driver_vram_bytes, None);
        assert_eq!(predictions["baseline"].gpu_bytes, 0);
    }

    #[test]
    fn realm_worker_moves_the_decoders_heap_into_its_worker() {
        let manifest = round_manifest();
        let page = predict(&manifest, &config("maxTokens=2"), GpuPlacement::Device).unwrap();
        let worker = predict(
            &manifest,
            &config("maxTokens=2&realm=worker"),
            GpuPlacement::Device,
        )
        .unwrap();
        let (page, worker) = (&page["decoder-run"], &worker["decoder-run"]);
        assert_eq!(worker.gpu_bytes, page.gpu_bytes);
        assert_eq!(worker.wasm.page, 3_250_586);
        // The worker carries a core heap of its own.
        assert_eq!(
            worker.wasm.decoder_worker.unwrap() + worker.wasm.page,
            page.wasm.page + (1.8 * MIB as f64).round() as u64
        );
    }

    #[test]
    fn each_decoder_realm_of_a_pool_adds_its_own_device_and_heaps_but_a_page_pool_one_cache() {
        let manifest = round_manifest();
        let at_run = |query: &str| {
            predict(&manifest, &config(query), GpuPlacement::Device).unwrap()["decoder-run"].clone()
        };
        let one = at_run("maxTokens=2&realm=worker");
        let three = at_run("maxTokens=2&realm=worker&pool=3");
        assert_eq!(three.gpu_bytes, 3 * one.gpu_bytes);
        let workers = |p: &PhasePrediction| p.wasm.decoder_worker.unwrap();
        assert_eq!(workers(&three), 3 * workers(&one));
        assert_eq!(three.wasm.page, one.wasm.page);
        // The page's K sessions: their weights and KV caches, one buffer cache, one heap.
        let page_one = at_run("maxTokens=2");
        let page_three = at_run("maxTokens=2&pool=3");
        let kv = page_one.floor.kv_cache_bytes;
        assert_eq!(
            page_three.gpu_bytes,
            page_one.gpu_bytes + 2 * (20 * MIB + kv)
        );
        let close = |bytes: u64, mib: f64| (mib_of(bytes) - mib).abs() < 0.01;
        assert!(close(
            page_three.wasm.page - page_one.wasm.page,
            2.0 * 2.92 * 20.0
        ));
        // Both hold three copies of the weights in the process.
        for p in [&three, &page_three] {
            assert!(
                close(p.pss_rise_bytes.unwrap(), 107.5 + 6.35 * 60.0),
                "{p:?}"
            );
        }
    }

    #[test]
    fn with_release_steps_the_workers_devices_hold_nothing_in_release() {
        let manifest = round_manifest();
        let release = |query: &str| {
            predict(&manifest, &config(query), GpuPlacement::Device).unwrap()["release"].gpu_bytes
        };
        let held = release("maxTokens=2&realm=worker&pool=2");
        assert!(held > 0);
        assert_eq!(
            release("maxTokens=2&realm=worker&pool=2&release=sessions"),
            0
        );
        // The page's device is read at the first step, before it lets go.
        assert_eq!(
            release("maxTokens=2&release=sessions"),
            release("maxTokens=2")
        );
    }

    /// `tests/data/pool/{1,2}.jsonl`: Firefox ESR 153 on lavapipe,
    /// `cases=smoke2&maxTokens=4&realm=worker` with pool=1 and pool=2.
    #[test]
    fn a_recorded_pool_of_two_workers_is_predicted_with_both_realms() {
        for k in [1, 2] {
            let file = root().join(format!("runner/tests/data/pool/{k}.jsonl"));
            let runs = crate::runs::read_runs(&file).unwrap();
            let run = &runs[0];
            let config = config(run.query().unwrap());
            assert_eq!(config.pool, k);
            let (_, manifest) =
                crate::model_manifest::read(&root(), "www/index.html", &config.manifest).unwrap();
            let summary = run.summary().unwrap();
            let predicted =
                &predict(&manifest, &config, GpuPlacement::Software).unwrap()["decoder-run"];
            let samples = super::super::pool_realms::samples_of_every_realm(summary);
            let gpu = super::super::page_gpu::gpu_bytes_by_phase(&samples)["decoder-run"];
            let wasm = super::super::page_gpu::wasm_bytes_by_phase(&samples)["decoder-run"];
            let error = |p: u64, m: u64| p as f64 / m as f64 - 1.0;
            let seen = format!("pool={k}: {predicted:?}, measured GPU {gpu}, wasm {wasm}");
            assert!(
                error(predicted.gpu_bytes, gpu).abs() <= GPU_WASM_VRAM_TOLERANCE,
                "{seen}"
            );
            assert!(
                error(predicted.wasm.total(), wasm).abs() <= GPU_WASM_VRAM_TOLERANCE,
                "{seen}"
            );
        }
    }

    #[test]
    fn the_largest_buffer_is_checked_against_the_adapters_limits() {
        let manifest = round_manifest();
        let (largest, _) = largest_buffer(&manifest, &config("")).unwrap();
        assert!(largest >= 4 * MIB, "{largest}");
        let roomy = AdapterLimits {
            max_buffer_size: 1 << 30,
            max_storage_buffer_binding_size: 1 << 30,
        };
        assert!(over_limits(largest, &roomy).is_empty());
        let tight = AdapterLimits {
            max_buffer_size: 1 << 30,
            max_storage_buffer_binding_size: MIB,
        };
        assert_eq!(
            over_limits(largest, &tight),
            [format!("maxStorageBufferBindingSize {MIB}")]
        );
        let recorded =
            std::fs::read_to_string(root().join("runner/tests/data/h200-default-hayai13.jsonl"))
                .unwrap();
        assert_eq!(adapter_limits(&recorded).unwrap(), roomy);
        let refused = adapter_limits("{\"kind\":\"start\"}\n").unwrap_err();
        assert!(refused.contains("maxBufferSize"), "{refused}");
    }

    /// `tests/data/firefox-memory-reports-smoke1.jsonl`: Firefox ESR 153 on lavapipe, a
    /// software adapter whose buffers are the parent's memory, `cases=smoke1&maxTokens=2`.
    #[test]
    fn on_a_software_adapter_the_gpu_bytes_are_in_the_predicted_pss_rise() {
        let file = root().join("runner/tests/data/firefox-memory-reports-smoke1.jsonl");
        let runs = crate::runs::read_runs(&file).unwrap();
        let run = &runs[0];
        let config = config(run.query().unwrap());
        let (_, manifest) =
            crate::model_manifest::read(&root(), "www/index.html", &config.manifest).unwrap();
        let summary = run.summary().unwrap();
        assert_eq!(
            crate::gpu_placement::gpu_placement(summary),
            GpuPlacement::Software
        );
        let software = predict(&manifest, &config, GpuPlacement::Software).unwrap();
        let device = predict(&manifest, &config, GpuPlacement::Device).unwrap();
        let memory = run.result().unwrap().1.measured.as_ref().unwrap();
        let phase = |name: &str| &memory.phases.iter().find(|(n, _)| n == name).unwrap().1;
        let idle_pss = phase("baseline").total.peak_pss.unwrap();
        for name in ["vision-encode", "decoder-run"] {
            let (s, d) = (&software[name], &device[name]);
            assert_eq!(
                s.pss_rise_bytes.unwrap(),
                d.pss_rise_bytes.unwrap() + s.gpu_bytes,
                "{name}"
            );
            let measured = (phase(name).total.peak_pss.unwrap() - idle_pss) as f64;
            let error = |p: &PhasePrediction| p.pss_rise_bytes.unwrap() as f64 / measured - 1.0;
            assert!(
                error(s).abs() <= PSS_RISE_TOLERANCE,
                "{name}: {:.3}",
                error(s)
            );
            // Without them the rise at decoder-run comes out far under (-45 %).
            if name == "decoder-run" {
                assert!(error(d) < -PSS_RISE_TOLERANCE, "{name}: {:.3}", error(d));
            }
        }
        // Nothing alive, nothing added.
        assert_eq!(software["baseline"].pss_rise_bytes, None);
    }

    /// `tests/data/h200-default-hayai13.jsonl`: one run on an NVIDIA H200, Firefox ESR 153,
    /// bundle of commit 78f667c, 2026-12-04, `./run --gpu-route auto --timeout 120` with the
    /// default query (cases=hayai13, realm=page, the baseline decoder). It is one of the check
    /// runs, not one the constants were fitted on.
    #[test]
    fn the_prediction_of_a_recorded_h200_run_is_within_tolerance_where_the_docs_say_so() {
        let file = root().join("runner/tests/data/h200-default-hayai13.jsonl");
        let runs = crate::runs::read_runs(&file).unwrap();
        let run = &runs[0];
        let query = run.query().unwrap();
        let config = config(query);
        let (_, manifest) =
            crate::model_manifest::read(&root(), "www/index.html", &config.manifest).unwrap();
        let predicted = predict(&manifest, &config, GpuPlacement::Device).unwrap();
        let summary = run.summary().unwrap();
        let memory = run.result().unwrap().1.measured.as_ref().unwrap();
        let gpu = super::super::page_gpu::gpu_bytes_by_phase(&summary.memory_samples);
        let wasm = super::super::page_gpu::wasm_bytes_by_phase(&summary.memory_samples);
        let phase = |name: &str| &memory.phases.iter().find(|(n, _)| n == name).unwrap().1;
        let idle_pss = phase("baseline").total.peak_pss.unwrap();
        let error = |predicted: u64, measured: u64| predicted as f64 / measured as f64 - 1.0;
        let mut errors = std::collections::BTreeMap::new();
        for name in [
            "vision-load",
            "vision-encode",
            "decoder-load",
            "decoder-run",
            "release",
        ] {
            let (p, measured) = (&predicted[name], &phase(name).total);
            let pss_rise = measured.peak_pss.unwrap() - idle_pss;
            let vram = measured.peak_driver_gpu.unwrap();
            errors.insert((name, "GPU"), error(p.gpu_bytes, gpu[name]));
            errors.insert((name, "wasm"), error(p.wasm.total(), wasm[name]));
            errors.insert((name, "VRAM"), error(p.driver_vram_bytes.unwrap(), vram));
            errors.insert(
                (name, "PSS rise"),
                error(p.pss_rise_bytes.unwrap(), pss_rise),
            );
        }
        let seen = format!("{errors:.3?}");
        let error_of = |name: &'static str, figure: &'static str| errors[&(name, figure)];
        // Within the targets: the WebAssembly heaps in every phase; GPU bytes and VRAM where a
        // graph runs and in release; the PSS rise while the sessions load.
        let within = [
            (
                "wasm",
                &[
                    "vision-load",
                    "vision-encode",
                    "decoder-load",
                    "decoder-run",
                    "release",
                ][..],
            ),
            ("GPU", &["vision-encode", "decoder-run", "release"][..]),
            (
                "VRAM",
                &["vision-load", "vision-encode", "decoder-run", "release"][..],
            ),
        ];
        for (figure, phases) in within {
            for name in phases {
                let e = error_of(name, figure);
                assert!(
                    e.abs() <= GPU_WASM_VRAM_TOLERANCE,
                    "{name} {figure}\n{seen}"
                );
            }
        }
        for name in ["vision-load", "decoder-load"] {
            assert!(
                error_of(name, "PSS rise").abs() <= PSS_RISE_TOLERANCE,
                "{name}\n{seen}"
            );
        }
        // The misses the docs name: GPU bytes of a phase that only loads come out over (the
        // staging a load leaves is not proportional to the weights); the PSS rise once the page
        // has read hayai13's cases comes out far under (it grows with the cases, which the
        // manifest does not know).
        for name in ["vision-load", "decoder-load"] {
            let e = error_of(name, "GPU");
            assert!(e > GPU_WASM_VRAM_TOLERANCE && e < 0.25, "{name}\n{seen}");
        }
        for name in ["vision-encode", "decoder-run", "release"] {
            assert!(
                error_of(name, "PSS rise") < -PSS_RISE_TOLERANCE,
                "{name}\n{seen}"
            );
        }
        // Driver VRAM while the decoder loads comes out just under the target.
        assert!(error_of("decoder-load", "VRAM") < 0.0, "{seen}");
    }
}
