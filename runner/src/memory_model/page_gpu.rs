//! The GPU bytes per phase of every realm that holds a device, from the memory samples the
//! page posts with its summary.
//!
//! The page samples at the end of its phases (`www/main.js`, `www/schedules.js`), each sample
//! named for the moment it is taken, and its `windowPeakBytes` is the page device's peak since
//! the sample before: the peak of the phase the sample closes. The vision worker's report rides
//! along until the worker is terminated; after that it is the stale report of a worker that is
//! gone, and does not count. The decoder worker (`realm=worker`) counts from `decoder-load` to
//! `release`: its `windowPeakBytes` is its device's peak since its answer before (each answer
//! opens a new window, so a warm-up decode's peak is in no sample; the timed cases decode the
//! same shapes).

use std::collections::BTreeMap;

use ocr_bench_core::phase::Phase;
use ocr_bench_core::record::{GpuBytes, MemorySample, WasmHeap};

/// The phase a sample closes, and whether the vision worker is still alive at it; `None` for
/// a label the page does not write.
pub(crate) fn phase_of(label: &str) -> Option<(Phase, bool)> {
    Some(match label {
        "baseline" => (Phase::Baseline, false),
        "vision-session-ready" => (Phase::VisionLoad, false),
        "vision-worker-session-ready" => (Phase::VisionLoad, true),
        "all-vision-embeddings-ready" => (Phase::VisionEncode, true),
        "vision-worker-terminated" => (Phase::VisionRelease, true),
        "decoder-session-ready" => (Phase::DecoderLoad, false),
        "released" => (Phase::Release, false),
        _ if label.starts_with("after-case-") => (Phase::DecoderRun, false),
        _ => return None,
    })
}

/// A device's peak over the window its report closes, or its live bytes where the report
/// has no window.
fn window_peak(gpu: &GpuBytes) -> u64 {
    gpu.window_peak_bytes.unwrap_or(gpu.live_bytes)
}

/// The decoder worker's bytes in a sample of `phase`, where they count.
pub(crate) fn decoder_worker_bytes(sample: &MemorySample, phase: Phase) -> Option<u64> {
    let gpu = sample.decoder_worker.as_ref()?.gpu.as_ref()?;
    match phase {
        Phase::DecoderLoad | Phase::DecoderRun => Some(window_peak(gpu)),
        // `released` holds the report the worker sent when it closed, after destroying its
        // device: its window peak is what it held going into release (in a Firefox smoke1
        // run, all 202 MiB it held after the last case, against a floor of 25 MiB). A report whose device still stands is an older answer, not the
        // close's: its bytes went with the terminated worker, and would repeat decoder-run's.
        Phase::Release if gpu.device_destroyed => Some(window_peak(gpu)),
        _ => None,
    }
}

/// The peak GPU bytes of the page's device, plus the live bytes of the vision worker's (while
/// it lives) and the decoder worker's peak (from `decoder-load` to `release`), per phase;
/// phases without a sample that carries GPU bytes are absent.
pub fn gpu_bytes_by_phase(samples: &[MemorySample]) -> BTreeMap<&'static str, u64> {
    let mut by_phase = BTreeMap::new();
    for sample in samples {
        let Some((phase, worker_alive)) = phase_of(&sample.label) else {
            continue;
        };
        let page = sample
            .gpu
            .as_ref()
            .and_then(Option::as_ref)
            .map(window_peak);
        let worker = sample
            .worker
            .as_ref()
            .filter(|_| worker_alive)
            .and_then(|w| w.gpu.as_ref())
            .map(|gpu| gpu.live_bytes);
        let decoder_worker = decoder_worker_bytes(sample, phase);
        if page.is_none() && worker.is_none() && decoder_worker.is_none() {
            continue;
        }
        let bytes = page.unwrap_or(0) + worker.unwrap_or(0) + decoder_worker.unwrap_or(0);
        let peak = by_phase.entry(phase.as_str()).or_insert(0);
        *peak = (*peak).max(bytes);
    }
    by_phase
}

/// The bytes of a realm's WebAssembly heaps.
pub(crate) fn heap_bytes(heaps: &[WasmHeap]) -> u64 {
    heaps.iter().map(|heap| heap.bytes).sum()
}

/// The WebAssembly heaps of every realm per phase, by the same rules as the GPU bytes: the
/// page's always, the vision worker's while it lives, the decoder worker's from
/// `decoder-load` to `release` (in `release` only from the report it sent when it closed).
/// Each is a reading at the sample, not a window peak: a heap only grows while its realm
/// lives, so the reading at a phase's end is the phase's largest. Phases without a sample
/// that carries a heap are absent.
pub fn wasm_bytes_by_phase(samples: &[MemorySample]) -> BTreeMap<&'static str, u64> {
    let mut by_phase = BTreeMap::new();
    for sample in samples {
        let Some((phase, worker_alive)) = phase_of(&sample.label) else {
            continue;
        };
        let page = sample.wasm_heaps.as_deref().map(heap_bytes);
        let worker = sample
            .worker
            .as_ref()
            .filter(|_| worker_alive)
            .map(|w| heap_bytes(&w.wasm_heaps));
        // The decoder worker's heaps count where its GPU bytes do.
        let decoder_worker = sample
            .decoder_worker
            .as_ref()
            .filter(|_| decoder_worker_bytes(sample, phase).is_some())
            .map(|w| heap_bytes(&w.wasm_heaps));
        if page.is_none() && worker.is_none() && decoder_worker.is_none() {
            continue;
        }
        let bytes = page.unwrap_or(0) + worker.unwrap_or(0) + decoder_worker.unwrap_or(0);
        let peak = by_phase.entry(phase.as_str()).or_insert(0);
        *peak = (*peak).max(bytes);
    }
    by_phase
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample(label: &str, page: Option<(u64, u64)>, worker_live: Option<u64>) -> MemorySample {
        let gpu = |live: u64, peak: Option<u64>| {
            json!({ "liveBytes": live, "peakBytes": live, "liveByKind": {}, "created": 1,
                    "destroyed": 0, "collected": 0, "deviceDestroyed": false,
                    "measuredBy": "test", "windowPeakBytes": peak })
        };
        let mut value = json!({ "label": label, "atMs": 0.0, "sampleMs": 0.0 });
        if let Some((live, peak)) = page {
            value["gpu"] = gpu(live, Some(peak));
        }
        if let Some(live) = worker_live {
            value["worker"] = json!({ "gpu": gpu(live, None), "wasmHeaps": [] });
        }
        serde_json::from_value(value).unwrap()
    }

    /// A sample with the decoder worker's report: (live, window peak, device destroyed).
    fn with_decoder_worker(mut sample: MemorySample, gpu: (u64, u64, bool)) -> MemorySample {
        let (live, peak, destroyed) = gpu;
        sample.decoder_worker = Some(
            serde_json::from_value(json!({
                "gpu": { "liveBytes": live, "peakBytes": peak, "liveByKind": {}, "created": 1,
                         "destroyed": 0, "collected": 0, "deviceDestroyed": destroyed,
                         "measuredBy": "test", "windowPeakBytes": peak },
                "wasmHeaps": [],
            }))
            .unwrap(),
        );
        sample
    }

    #[test]
    fn the_decoder_workers_peak_counts_from_its_load_to_its_close() {
        let samples = [
            sample("baseline", Some((0, 0)), None),
            with_decoder_worker(
                sample("decoder-session-ready", Some((3, 4)), None),
                (30, 35, false),
            ),
            with_decoder_worker(sample("after-case-1", Some((3, 3)), None), (40, 70, false)),
            with_decoder_worker(sample("after-case-2", Some((3, 3)), None), (40, 60, false)),
            // The close's report: the device is gone, its window held the weights.
            with_decoder_worker(sample("released", Some((0, 3)), None), (0, 30, true)),
        ];
        assert_eq!(
            gpu_bytes_by_phase(&samples),
            BTreeMap::from([
                ("baseline", 0),
                ("decoder-load", 4 + 35),
                ("decoder-run", 3 + 70),
                ("release", 3 + 30),
            ])
        );
    }

    #[test]
    fn a_decoder_worker_report_from_before_its_close_does_not_count_in_release() {
        let samples = [
            with_decoder_worker(sample("after-case-1", None, None), (40, 70, false)),
            with_decoder_worker(sample("released", Some((0, 3)), None), (40, 70, false)),
        ];
        let by_phase = gpu_bytes_by_phase(&samples);
        assert_eq!(by_phase["decoder-run"], 70);
        assert_eq!(by_phase["release"], 3);
    }

    #[test]
    fn the_decoder_worker_alone_gives_a_phase_its_bytes() {
        // realm=worker with the decoder scope: the page may have made no device at all.
        let samples = [with_decoder_worker(
            sample("decoder-session-ready", None, None),
            (30, 35, false),
        )];
        assert_eq!(
            gpu_bytes_by_phase(&samples),
            BTreeMap::from([("decoder-load", 35)])
        );
    }

    #[test]
    fn each_sample_closes_its_phase_and_a_terminated_workers_report_stops_counting() {
        let samples = [
            sample("baseline", None, None),
            sample("vision-worker-session-ready", None, Some(12)),
            sample("all-vision-embeddings-ready", None, Some(15)),
            sample("vision-worker-terminated", None, Some(0)),
            sample("decoder-session-ready", Some((40, 45)), Some(15)),
            sample("after-case-1", Some((50, 90)), Some(15)),
            sample("after-case-2-repeat-1", Some((50, 70)), Some(15)),
            sample("released", Some((1, 50)), None),
            sample("a-label-of-another-page", Some((999, 999)), None),
        ];
        let by_phase = gpu_bytes_by_phase(&samples);
        assert_eq!(
            by_phase,
            BTreeMap::from([
                ("vision-load", 12),
                ("vision-encode", 15),
                ("vision-release", 0),
                ("decoder-load", 45),
                ("decoder-run", 90),
                ("release", 50),
            ])
        );
    }

    /// The summary of a real Firefox run of smoke1 with realm=worker.
    fn realm_worker_run() -> Box<ocr_bench_core::record::PageSummary> {
        let text = include_str!("../../tests/data/realm-worker-smoke1.jsonl");
        crate::record::parse_lines(text)
            .find_map(|line| match line.unwrap().1.record {
                crate::record::Record::Result {
                    summary: crate::record::Posted::Benchmark(summary),
                    ..
                } => Some(summary),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn a_real_realm_worker_run_counts_its_decoder_worker() {
        // Firefox, smoke1, realm=worker: the page made no device; the vision worker's
        // report stops counting once it is terminated, the decoder worker's counts from its
        // load to its close (then 0 live, its window the 211996976 bytes it held).
        let summary = realm_worker_run();
        let by_phase = gpu_bytes_by_phase(&summary.memory_samples);
        assert_eq!(by_phase["decoder-load"], 26580448);
        assert_eq!(by_phase["decoder-run"], 212055504);
        assert_eq!(by_phase["release"], 211996976);
        assert_eq!(by_phase["vision-release"], 0);
    }

    #[test]
    fn the_wasm_heaps_count_in_the_realms_and_phases_the_gpu_bytes_do() {
        // Firefox, smoke1, realm=worker: the page's core heap always; the vision worker's
        // onnxruntime heap until it is terminated (its report stays in the later samples);
        // the decoder worker's core and onnxruntime heaps from its load to its close.
        let summary = realm_worker_run();
        let heaps = |label: &str, realm: fn(&MemorySample) -> Option<&Vec<WasmHeap>>| {
            let sample = summary
                .memory_samples
                .iter()
                .find(|s| s.label == label)
                .unwrap();
            realm(sample).map_or(0, |h| heap_bytes(h))
        };
        fn page(s: &MemorySample) -> Option<&Vec<WasmHeap>> {
            s.wasm_heaps.as_ref()
        }
        fn vision(s: &MemorySample) -> Option<&Vec<WasmHeap>> {
            s.worker.as_ref().map(|w| &w.wasm_heaps)
        }
        fn decoder(s: &MemorySample) -> Option<&Vec<WasmHeap>> {
            s.decoder_worker.as_ref().map(|w| &w.wasm_heaps)
        }
        let by_phase = wasm_bytes_by_phase(&summary.memory_samples);
        let encode = "all-vision-embeddings-ready";
        assert!(heaps(encode, vision) > 0);
        assert_eq!(
            by_phase["vision-encode"],
            heaps(encode, page) + heaps(encode, vision)
        );
        let run = "after-case-1";
        assert!(heaps(run, vision) > 0 && heaps(run, decoder) > 0);
        assert_eq!(
            by_phase["decoder-run"],
            heaps(run, page) + heaps(run, decoder)
        );
        assert_eq!(
            by_phase["release"],
            heaps("released", page) + heaps("released", decoder)
        );
        assert_eq!(by_phase["baseline"], heaps("baseline", page));
    }
}
