//! The decoder realms of a pool (`pool=K`, `docs/benchmark-protocol.md`, "A pool of decoder
//! realms") counted in every figure the page's samples give: the GPU bytes and WebAssembly
//! heaps that `page_gpu`, `rise` and `given_back` read, and `pool-table`'s sums.
//!
//! With `realm=worker` each realm is a worker with its own device, onnxruntime-web heap and
//! core heap, but the page's samples carry one `decoderWorker` report: realm 0's. What the
//! record holds of the others is their last report before the release
//! (`summary.pool.realmMemory`). So a sample counts every realm as follows:
//! - in `decoder-run` (`after-case-*`): realm 0's report as sampled, plus each other realm's last
//!   report (its live bytes, its device's peak as its window's peak, its heaps);
//! - elsewhere (`decoder-session-ready`, the release steps' samples): each other realm as realm
//!   0 reads, since every realm loads the same session and takes the same release step
//!   (`www/decoder-pool.js`) and no other report of theirs is recorded.
//!
//! With `realm=page` the K sessions share the page's one device and heap, whose sample already
//! counts them all.

use std::borrow::Cow;

use ocr_bench_core::config::Realm;
use ocr_bench_core::phase::Phase;
use ocr_bench_core::record::{GpuBytes, MemorySample, PageSummary, PoolRun, RealmMemory};

use super::page_gpu;

/// Each realm's last report of a pool (`pool.realmMemory`), by realm index; `None` where one
/// is not a realm's report.
pub fn realm_reports(pool: &PoolRun) -> Option<Vec<RealmMemory>> {
    pool.realm_memory
        .iter()
        .map(|report| serde_json::from_value(report.clone()).ok())
        .collect()
}

/// The realms' GPU bytes at their peak, summed; `None` where a realm has no device reading.
pub fn gpu_peak_bytes(reports: &[RealmMemory]) -> Option<u64> {
    reports
        .iter()
        .map(|r| r.gpu.as_ref().map(|g| g.peak_bytes))
        .sum()
}

/// The realms' WebAssembly heaps, summed.
pub fn wasm_bytes(reports: &[RealmMemory]) -> u64 {
    reports
        .iter()
        .map(|r| page_gpu::heap_bytes(&r.wasm_heaps))
        .sum()
}

/// The peak GPU bytes of the decoder workers' devices: every realm's of a `realm=worker` pool
/// summed, the one worker's otherwise; `None` without a decoder worker.
pub fn decoder_workers_peak_bytes(summary: &PageSummary) -> Option<u64> {
    match worker_pool(summary) {
        Some(pool) => realm_reports(pool).as_deref().and_then(gpu_peak_bytes),
        None => summary
            .gpu_memory
            .as_ref()?
            .decoder_worker
            .as_ref()
            .map(|g| g.peak_bytes),
    }
}

/// The pool of a run with more than one decoder worker.
fn worker_pool(summary: &PageSummary) -> Option<&PoolRun> {
    summary
        .pool
        .as_ref()
        .filter(|pool| pool.realms > 1 && summary.config.realm == Realm::Worker)
}

/// The page's samples with every decoder realm of a `realm=worker` pool in their
/// `decoderWorker` report (by the rules above); the samples as recorded otherwise.
pub fn samples_of_every_realm(summary: &PageSummary) -> Cow<'_, [MemorySample]> {
    let samples = &summary.memory_samples;
    let others = worker_pool(summary)
        .and_then(realm_reports)
        .map(|reports| reports.into_iter().skip(1).collect::<Vec<_>>());
    match others {
        Some(others) if !others.is_empty() => Cow::Owned(
            samples
                .iter()
                .map(|sample| with_other_realms(sample, &others))
                .collect(),
        ),
        _ => Cow::Borrowed(samples),
    }
}

fn with_other_realms(sample: &MemorySample, others: &[RealmMemory]) -> MemorySample {
    let mut sample = sample.clone();
    let Some(own) = sample.decoder_worker.clone() else {
        return sample;
    };
    let in_run = page_gpu::phase_of(&sample.label).is_some_and(|(p, _)| p == Phase::DecoderRun);
    let worker = sample.decoder_worker.as_mut().expect("cloned above");
    for other in others {
        if in_run {
            let peak = other.gpu.as_ref().map_or(0, |g| g.peak_bytes);
            add_realm(worker, other, peak);
        } else {
            let window = own
                .gpu
                .as_ref()
                .map_or(0, |g| g.window_peak_bytes.unwrap_or(g.live_bytes));
            add_realm(worker, &own, window);
        }
    }
    sample
}

/// Adds one realm's report to the sum of realms: its heaps, JS heap and GPU bytes, its window
/// peak given (a realm's own, or its device's peak where it has no window in the sample).
fn add_realm(sum: &mut RealmMemory, realm: &RealmMemory, window_peak: u64) {
    sum.wasm_heaps.extend(realm.wasm_heaps.iter().cloned());
    sum.used_js_heap_size = sum
        .used_js_heap_size
        .zip(realm.used_js_heap_size)
        .map(|(a, b)| a + b);
    sum.total_js_heap_size = sum
        .total_js_heap_size
        .zip(realm.total_js_heap_size)
        .map(|(a, b)| a + b);
    if let (Some(sum), Some(gpu)) = (sum.gpu.as_mut(), realm.gpu.as_ref()) {
        add_gpu(sum, gpu, window_peak);
    }
}

fn add_gpu(sum: &mut GpuBytes, gpu: &GpuBytes, window_peak: u64) {
    sum.window_peak_bytes = Some(sum.window_peak_bytes.unwrap_or(sum.live_bytes) + window_peak);
    sum.live_bytes += gpu.live_bytes;
    sum.peak_bytes += gpu.peak_bytes;
    for (kind, bytes) in &gpu.live_by_kind {
        *sum.live_by_kind.entry(kind.clone()).or_insert(0) += bytes;
    }
    sum.created += gpu.created;
    sum.destroyed += gpu.destroyed;
    sum.collected += gpu.collected;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_model::rise::rises;

    /// `tests/data/pool/<K>.jsonl`: Firefox ESR 153 on lavapipe,
    /// `cases=smoke2&maxTokens=4&realm=worker` with `pool=1` and `pool=2`.
    fn pool_run(k: u32) -> crate::runs::Run {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/data/pool/{k}.jsonl"));
        crate::runs::read_runs(&file).unwrap().remove(0)
    }

    #[test]
    fn realms_sum_only_when_every_realm_reported() {
        let realm = |bytes: u64| {
            serde_json::json!({ "gpu": null, "wasmHeaps": [
                { "label": "onnxruntime", "bytes": bytes, "shared": true },
                { "label": "core", "bytes": 1, "shared": false }] })
        };
        let pool = |reports: Vec<serde_json::Value>| PoolRun {
            realms: reports.len() as u32,
            wall_ms: 1.0,
            decode_steps: 1,
            steps_per_second: None,
            cases_per_realm: vec![1; reports.len()],
            realm_memory: reports,
        };
        let reports = realm_reports(&pool(vec![realm(10), realm(20)])).unwrap();
        assert_eq!(wasm_bytes(&reports), 32);
        // No device reading in a realm: no sum of GPU bytes.
        assert_eq!(gpu_peak_bytes(&reports), None);
        let silent = serde_json::json!({ "gpu": null });
        assert_eq!(realm_reports(&pool(vec![realm(10), silent])), None);
    }

    #[test]
    fn a_pools_phases_count_every_realm_as_pool_table_does() {
        let run = pool_run(2);
        let summary = run.summary().unwrap();
        let reports = realm_reports(summary.pool.as_ref().unwrap()).unwrap();
        assert_eq!(reports.len(), 2);
        let samples = samples_of_every_realm(summary);
        let gpu = page_gpu::gpu_bytes_by_phase(&samples);
        let wasm = page_gpu::wasm_bytes_by_phase(&samples);
        // decoder-run: pool-table's sum of the realms' peaks (two devices of 212055504 bytes).
        assert_eq!(gpu["decoder-run"], gpu_peak_bytes(&reports).unwrap());
        assert_eq!(gpu["decoder-run"], 2 * 212_055_504);
        let page_heap = |label: &str| {
            let sample = samples.iter().find(|s| s.label == label).unwrap();
            page_gpu::heap_bytes(sample.wasm_heaps.as_deref().unwrap())
        };
        assert_eq!(
            wasm["decoder-run"],
            page_heap("after-case-1") + wasm_bytes(&reports)
        );
        // The load and the close: each realm as realm 0 read.
        assert_eq!(gpu["decoder-load"], 2 * 26_580_448);
        assert_eq!(gpu["release"], 2 * 211_996_976);
        assert_eq!(decoder_workers_peak_bytes(summary), Some(2 * 212_055_504));
        // The samples as recorded count realm 0 alone.
        let one = page_gpu::gpu_bytes_by_phase(&summary.memory_samples);
        assert_eq!(one["decoder-run"], 212_055_504);
    }

    #[test]
    fn counting_the_second_realm_takes_its_bytes_out_of_the_unexplained_rise() {
        let run = pool_run(2);
        let summary = run.summary().unwrap();
        let memory = run.result().unwrap().1.measured.as_ref().unwrap();
        let counted = rises(memory, summary);
        let one_realm = super::super::rise::rises_with(
            memory,
            &summary.memory_samples,
            crate::gpu_placement::gpu_placement(summary),
        );
        let at_run = |rises: &[super::super::rise::PhaseRise]| {
            rises
                .iter()
                .find(|r| r.phase == Phase::DecoderRun)
                .unwrap()
                .peak
                .clone()
        };
        let (counted, one_realm) = (at_run(&counted), at_run(&one_realm));
        // The software adapter's buffers are process memory: realm 1's device peak and its
        // heaps leave the unexplained part (548 MiB, 62 % of the rise, with realm 0 alone).
        let realm_1 = &realm_reports(summary.pool.as_ref().unwrap()).unwrap()[1];
        let realm_1_bytes =
            realm_1.gpu.as_ref().unwrap().peak_bytes + page_gpu::heap_bytes(&realm_1.wasm_heaps);
        assert_eq!(
            one_realm.unexplained().unwrap() - counted.unexplained().unwrap(),
            realm_1_bytes as i64
        );
        assert!(one_realm.unexplained_share().unwrap() > 0.6);
        assert!(counted.unexplained_share().unwrap() < 0.3);
    }

    #[test]
    fn a_single_realm_and_a_page_pool_keep_their_samples_as_recorded() {
        let run = pool_run(1);
        let summary = run.summary().unwrap();
        assert!(matches!(samples_of_every_realm(summary), Cow::Borrowed(_)));
        let mut page_pool = summary.clone();
        page_pool.config.realm = Realm::Page;
        page_pool.pool = pool_run(2).summary().unwrap().pool.clone();
        assert!(matches!(
            samples_of_every_realm(&page_pool),
            Cow::Borrowed(_)
        ));
    }
}
