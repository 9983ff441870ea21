//! The page's own GPU bytes per phase, from the memory samples it posts with its summary.
//!
//! The page samples at the end of its phases (`www/main.js`, `www/schedules.js`), each sample
//! named for the moment it is taken, and its `windowPeakBytes` is the page device's peak since
//! the sample before: the peak of the phase the sample closes. The vision worker's report rides
//! along until the worker is terminated; after that it is the stale report of a worker that is
//! gone, and does not count.

use std::collections::BTreeMap;

use ocr_bench_core::record::MemorySample;

/// The phase a sample closes, and whether the vision worker is still alive at it; `None` for
/// a label the page does not write.
fn phase_of(label: &str) -> Option<(&'static str, bool)> {
    Some(match label {
        "baseline" => ("baseline", false),
        "vision-session-ready" => ("vision-load", false),
        "vision-worker-session-ready" => ("vision-load", true),
        "all-vision-embeddings-ready" => ("vision-encode", true),
        "vision-worker-terminated" => ("vision-release", true),
        "decoder-session-ready" => ("decoder-load", false),
        "released" => ("release", false),
        _ if label.starts_with("after-case-") => ("decoder-run", false),
        _ => return None,
    })
}

/// The peak GPU bytes of the page's device (and the live bytes of the worker's, while it
/// lives) per phase; phases without a sample that carries GPU bytes are absent.
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
            .map(|gpu| gpu.window_peak_bytes.unwrap_or(gpu.live_bytes));
        let worker = sample
            .worker
            .as_ref()
            .filter(|_| worker_alive)
            .and_then(|w| w.gpu.as_ref())
            .map(|gpu| gpu.live_bytes);
        if page.is_none() && worker.is_none() {
            continue;
        }
        let bytes = page.unwrap_or(0) + worker.unwrap_or(0);
        let peak = by_phase.entry(phase).or_insert(0);
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
}
