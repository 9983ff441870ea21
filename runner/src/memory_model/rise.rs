//! The rise above the idle browser (`docs/benchmark-protocol.md`, "The rise above the idle
//! browser"): per phase, PSS at its peak and at its end less PSS at the end of `baseline` (the
//! browser with the page open, before any model is fetched), in all and per process type, split
//! into named parts that are each measured, and what is left: the unexplained part, with its
//! share of the rise and whether it meets the target (at most 10 % of the rise or 20 MiB,
//! whichever is larger). The report and `export` read it from here.
//!
//! The parts, each as its reading less its reading at `baseline`:
//! - GPU bytes of every realm's device, where the adapter is software (its buffers are memory
//!   of a browser process); on a real GPU they are device memory, outside PSS
//!   ([`Part::OutsidePss`]).
//! - The WebAssembly heaps per realm ([`REALMS`]), by `page_gpu`'s rules for which realm's
//!   report counts.
//! - The JS heaps (`usedJSHeapSize` of the page and the workers alive), where the browser
//!   offers it (Chromium); Firefox has none ([`Part::NotAvailable`]).
//! - Shared memory: the rise of `Pss_Shmem` over all process types, less what of it may be
//!   GPU bytes already counted ([`Rise::shmem_held_as_gpu`]).
//!
//! - Where the run took Firefox's own memory reports (`--memory-reports`), at a phase's end
//!   only: the rise of their JS, compiled WebAssembly code, heap-unclassified, gfx and other
//!   explicit parts per process type ([`ReportRise`]). Their WebAssembly memories are the
//!   same bytes as the page's WASM heaps: the page's count, Firefox's is shown beside them.
//!
//! Model bytes the page holds in JS under `loader=bytes` are not a part: the record gives the
//! files' sizes but not when the fetched buffers are collected (the page drops them once
//! `InferenceSession.create` returns), so which bytes are alive at a reading is not known.

use std::collections::BTreeMap;

use ocr_bench_core::phase::Phase;
use ocr_bench_core::record::{MemorySample, PageSummary, RealmMemory};

use super::given_back::{phase_memory, type_end_pss, PageReadings};
use super::page_gpu;
use crate::gpu_placement::{gpu_placement, GpuPlacement};
use crate::memory::firefox_report::{PhaseReport, ReportParts, AT_END};
use crate::memory::MINIMIZE_PHASE;
use crate::memory::{Extent, PhaseMemory, ProcessMemory};
use crate::process_type::ProcessType;

/// The target on the unexplained part: at most this share of the rise, or
/// [`TARGET_FLOOR_BYTES`], whichever is larger.
pub const TARGET_SHARE: f64 = 0.10;
pub const TARGET_FLOOR_BYTES: i64 = 20 << 20;

/// The realms whose WebAssembly heaps are parts of the rise.
pub const REALMS: [&str; 3] = ["page", "vision-worker", "decoder-worker"];

/// One named part of a rise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The reading less its reading at `baseline`, in bytes.
    Measured(i64),
    /// GPU bytes on a real GPU: device memory, not in PSS. Takes nothing from the rise.
    OutsidePss,
    /// The browser offers no such figure (Firefox's JS heap). Takes nothing from the rise:
    /// what it holds stays in the unexplained part.
    NotAvailable,
    /// No reading: no page sample closes the phase, no adapter says where the GPU bytes
    /// live, or the record predates the figure. Without it there is no unexplained part.
    Unknown,
}

impl Part {
    /// The bytes the part takes out of the rise; `None` where it is unknown.
    pub fn bytes(self) -> Option<i64> {
        match self {
            Part::Measured(bytes) => Some(bytes),
            Part::OutsidePss | Part::NotAvailable => Some(0),
            Part::Unknown => None,
        }
    }
}

/// The rise at one moment of a phase (its peak or its end).
#[derive(Debug, Clone, PartialEq)]
pub struct Rise {
    /// PSS of all the browser's processes less `baseline`'s end.
    pub pss: i64,
    /// The same per process type (a type absent from a reading held nothing there).
    pub pss_by_type: BTreeMap<ProcessType, i64>,
    pub gpu: Part,
    /// Per realm, in the order of [`REALMS`].
    pub wasm: Vec<(&'static str, Part)>,
    pub js_heap: Part,
    /// The rise of `Pss_Shmem` less [`Rise::shmem_held_as_gpu`].
    pub shmem: Part,
    /// The rise of `Pss_Shmem` per process type.
    pub shmem_by_type: BTreeMap<ProcessType, i64>,
    /// What of the shared memory's rise is left out as possibly GPU bytes: on a software
    /// adapter, the smaller of the GPU part and the shared memory's rise in the process type
    /// that runs the adapter ([`adapter_process`]); 0 on a real GPU.
    pub shmem_held_as_gpu: i64,
    /// The process type that runs the adapter ([`adapter_process`]).
    pub adapter_process: ProcessType,
    /// Firefox's own report parts, at a phase's end where the run took its reports.
    pub report: Option<ReportRise>,
}

/// The rise of Firefox's own report parts at a phase's end over those at `baseline`'s end,
/// per process type: the report taken as the page entered the next phase (or at the end,
/// after the page posted its result) less the one taken as it entered the phase after
/// `baseline`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportRise {
    pub js: BTreeMap<ProcessType, i64>,
    pub wasm_code: BTreeMap<ProcessType, i64>,
    pub heap_unclassified: BTreeMap<ProcessType, i64>,
    pub gfx: BTreeMap<ProcessType, i64>,
    pub other: BTreeMap<ProcessType, i64>,
    /// Shown beside the page's WASM heaps, never taken from the rise: the same memory.
    pub wasm_memory: BTreeMap<ProcessType, i64>,
    /// What of the adapter process's heap-unclassified and gfx rise may be the GPU bytes
    /// counted already (a software adapter allocates its buffers on the heap): the smaller
    /// of that rise and the GPU bytes not already left out of shared memory.
    pub held_as_gpu: i64,
}

/// The sum over the process types.
pub fn total(by_type: &BTreeMap<ProcessType, i64>) -> i64 {
    by_type.values().sum()
}

impl ReportRise {
    /// The parts taken from the rise, in the order the report shows them.
    pub fn parts(&self) -> [&BTreeMap<ProcessType, i64>; 5] {
        [
            &self.js,
            &self.wasm_code,
            &self.heap_unclassified,
            &self.gfx,
            &self.other,
        ]
    }

    /// The bytes the report's parts take out of the rise.
    pub fn taken(&self) -> i64 {
        self.parts().iter().map(|p| total(p)).sum::<i64>() - self.held_as_gpu
    }

    /// One report less another, per process type and part.
    fn between(
        at: &BTreeMap<ProcessType, ReportParts>,
        base: &BTreeMap<ProcessType, ReportParts>,
    ) -> Self {
        let kinds: std::collections::BTreeSet<ProcessType> =
            at.keys().chain(base.keys()).copied().collect();
        let rise = |f: fn(&ReportParts) -> u64| -> BTreeMap<ProcessType, i64> {
            kinds
                .iter()
                .map(|k| {
                    let of = |m: &BTreeMap<ProcessType, ReportParts>| m.get(k).map_or(0, f) as i64;
                    (*k, of(at) - of(base))
                })
                .collect()
        };
        ReportRise {
            js: rise(|p| p.js),
            wasm_code: rise(|p| p.wasm_code),
            heap_unclassified: rise(|p| p.heap_unclassified),
            gfx: rise(|p| p.gfx),
            other: rise(|p| p.rest),
            wasm_memory: rise(|p| p.wasm_memory),
            held_as_gpu: 0,
        }
    }
}

/// The report of each phase's end (by [`ReportRise`]'s rule) and `baseline`'s, from a run's
/// reports; `None` where the run took none or either report is missing.
fn report_rises(memory: &ProcessMemory) -> BTreeMap<String, ReportRise> {
    let reports = &memory.beside.reports;
    let by_type = |at: &str| {
        reports
            .iter()
            .find(|r: &&PhaseReport| r.at_phase == at)
            .and_then(|r| r.by_type.as_ref())
    };
    // The report that closes each phase: the next phase's entry, or the end. The runner's
    // minimize after the end report is no phase of the page's: release closes at the end.
    let names: Vec<&str> = memory
        .phases
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| *name != MINIMIZE_PHASE)
        .collect();
    let closing = |i: usize| names.get(i + 1).copied().unwrap_or(AT_END);
    let Some(base_index) = names.iter().position(|n| *n == Phase::Baseline.as_str()) else {
        return BTreeMap::new();
    };
    let Some(base) = by_type(closing(base_index)) else {
        return BTreeMap::new();
    };
    names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let at = by_type(closing(i))?;
            Some(((*name).to_owned(), ReportRise::between(at, base)))
        })
        .collect()
}

impl Rise {
    /// The parts in the order the report shows them.
    pub fn parts(&self) -> impl Iterator<Item = Part> + '_ {
        std::iter::once(self.gpu)
            .chain(self.wasm.iter().map(|(_, part)| *part))
            .chain([self.js_heap, self.shmem])
            .chain(self.report.as_ref().map(|r| Part::Measured(r.taken())))
    }

    /// The WebAssembly heaps of every realm; `Unknown` where any realm's is.
    pub fn wasm_total(&self) -> Part {
        self.wasm
            .iter()
            .try_fold(0, |sum, (_, part)| Some(sum + part.bytes()?))
            .map_or(Part::Unknown, Part::Measured)
    }

    /// The rise less its parts; `None` where a part is unknown.
    pub fn unexplained(&self) -> Option<i64> {
        self.parts()
            .try_fold(self.pss, |rest, part| Some(rest - part.bytes()?))
    }

    /// The unexplained part per process type, each part taken from the type that holds it:
    /// the GPU bytes from the process that runs the adapter, the heaps from the renderer (the
    /// page and its workers run in its content process), shared memory from each type's own.
    /// It adds up to [`Rise::unexplained`] at a phase's end, where every type is read in one
    /// pass; at the peak each type's peak is its own moment. `None` where a part is unknown.
    pub fn unexplained_by_type(&self) -> Option<BTreeMap<ProcessType, i64>> {
        let mut rest = self.pss_by_type.clone();
        let mut take = |kind: ProcessType, bytes: i64| *rest.entry(kind).or_insert(0) -= bytes;
        take(self.adapter_process, self.gpu.bytes()?);
        for part in self
            .wasm
            .iter()
            .map(|(_, part)| *part)
            .chain([self.js_heap])
        {
            take(ProcessType::Renderer, part.bytes()?);
        }
        self.shmem.bytes()?;
        for (kind, bytes) in &self.shmem_by_type {
            take(*kind, *bytes);
        }
        take(self.adapter_process, -self.shmem_held_as_gpu);
        if let Some(report) = &self.report {
            for part in report.parts() {
                for (kind, bytes) in part {
                    take(*kind, *bytes);
                }
            }
            take(self.adapter_process, -report.held_as_gpu);
        }
        Some(rest)
    }

    /// The unexplained part as a share of the rise; `None` without a rise.
    pub fn unexplained_share(&self) -> Option<f64> {
        let unexplained = self.unexplained()?;
        (self.pss > 0).then(|| unexplained as f64 / self.pss as f64)
    }

    /// Whether the unexplained part, either way (parts over the rise are as wrong as parts
    /// under it), is within the target.
    pub fn meets_target(&self) -> Option<bool> {
        Some(self.unexplained()?.abs() <= target_bytes(self.pss))
    }
}

/// The unexplained bytes a rise may leave: 10 % of it or 20 MiB, whichever is larger.
pub fn target_bytes(rise: i64) -> i64 {
    ((rise.max(0) as f64 * TARGET_SHARE) as i64).max(TARGET_FLOOR_BYTES)
}

/// One phase's rise at its peak and at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRise {
    pub phase: Phase,
    pub peak: Rise,
    pub end: Rise,
}

/// The process type that runs a software adapter, whose shared memory may hold its buffers:
/// the GPU process where the browser has one (Chromium), else the parent (Firefox on Linux
/// runs WebGPU in its parent process).
pub fn adapter_process(phase: &PhaseMemory) -> ProcessType {
    if phase.by_type.contains_key(&ProcessType::Gpu) {
        ProcessType::Gpu
    } else {
        ProcessType::Browser
    }
}

/// Peak or end of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    Peak,
    End,
}

/// Every phase after `baseline` with PSS, in the order of a run; empty where `baseline` has
/// no PSS (records older than its sampling).
pub fn rises(memory: &ProcessMemory, summary: &PageSummary) -> Vec<PhaseRise> {
    rises_with(
        memory,
        &super::pool_realms::samples_of_every_realm(summary),
        gpu_placement(summary),
    )
}

/// [`rises`] from the page's samples and where its GPU bytes live.
pub fn rises_with(
    memory: &ProcessMemory,
    samples: &[MemorySample],
    placement: GpuPlacement,
) -> Vec<PhaseRise> {
    let Some(baseline) = phase_memory(memory, Phase::Baseline.as_str()) else {
        return Vec::new();
    };
    if baseline.total.end_pss.is_none() {
        return Vec::new();
    }
    let page = PageReadings::of(samples);
    let gpu_peaks = page_gpu::gpu_bytes_by_phase(samples);
    let reports = report_rises(memory);
    Phase::ALL
        .into_iter()
        .filter(|phase| *phase != Phase::Baseline)
        .filter_map(|phase| {
            let measured = phase_memory(memory, phase.as_str())?;
            let closing: Vec<&MemorySample> = samples
                .iter()
                .filter(|s| page_gpu::phase_of(&s.label).is_some_and(|(p, _)| p == phase))
                .collect();
            let at = |moment| {
                let readings = PageParts::of(&closing, phase, moment, page.baseline);
                let gpu_peak = gpu_peaks
                    .get(phase.as_str())
                    .map(|b| *b as i64 - gpu_peaks.get("baseline").map_or(0, |b| *b as i64));
                rise_at(baseline, measured, moment, &readings, placement, gpu_peak)
            };
            let mut end = at(Moment::End)?;
            end.report = reports.get(phase.as_str()).cloned().map(|mut report| {
                report.held_as_gpu = report_held_as_gpu(&end, &report);
                report
            });
            Some(PhaseRise {
                phase,
                peak: at(Moment::Peak)?,
                end,
            })
        })
        .collect()
}

/// What of the adapter process's heap-unclassified and gfx rise may be GPU bytes: on a
/// software adapter, the smaller of that rise and the GPU bytes not already left out of
/// shared memory; 0 on a real GPU.
fn report_held_as_gpu(rise: &Rise, report: &ReportRise) -> i64 {
    let Part::Measured(gpu) = rise.gpu else {
        return 0;
    };
    let host = |m: &BTreeMap<ProcessType, i64>| m.get(&rise.adapter_process).copied().unwrap_or(0);
    let on_heap = host(&report.heap_unclassified) + host(&report.gfx);
    on_heap.max(0).min((gpu - rise.shmem_held_as_gpu).max(0))
}

/// The page's parts at a moment of a phase, each less its reading at `baseline`; `None`
/// where no sample closes the phase.
struct PageParts {
    /// Live GPU bytes at the phase's end (its peak comes from `page_gpu`'s window peaks).
    gpu_live: Option<i64>,
    wasm: Option<[i64; 3]>,
    js_heap: Option<Option<i64>>,
}

impl PageParts {
    fn of(
        samples: &[&MemorySample],
        phase: Phase,
        moment: Moment,
        baseline: Option<&MemorySample>,
    ) -> Self {
        let base = |f: &dyn Fn(&MemorySample) -> u64| baseline.map_or(0, f) as i64;
        let last = samples.last();
        let wasm = match moment {
            // A heap only grows while its realm lives: the largest reading is the peak.
            Moment::Peak => samples
                .iter()
                .map(|s| heaps(s, phase, moment))
                .reduce(|a, b| [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])]),
            Moment::End => last.map(|s| heaps(s, phase, moment)),
        };
        let baseline_heaps = baseline.map_or([0; 3], |s| heaps(s, Phase::Baseline, Moment::End));
        let js = |s: &MemorySample| js_heap(s, phase, moment);
        let js_reading = match moment {
            Moment::Peak => samples.iter().map(|s| js(s)).reduce(|a, b| a.max(b)),
            Moment::End => last.map(|s| js(s)),
        };
        let baseline_js = baseline.and_then(|s| js_heap(s, Phase::Baseline, Moment::End));
        Self {
            gpu_live: last
                .map(|s| gpu_live(s, phase) as i64 - base(&|b| gpu_live(b, Phase::Baseline))),
            wasm: wasm.map(|w| [0, 1, 2].map(|i| w[i] as i64 - baseline_heaps[i] as i64)),
            js_heap: js_reading
                .map(|reading| Some(reading? as i64 - baseline_js.unwrap_or(0) as i64)),
        }
    }
}

/// Whether a realm's report in a sample counts: at the peak by `page_gpu`'s rules; at the
/// end only while the realm still stands (the vision worker is gone at
/// `vision-worker-terminated`, the decoder worker at `released` and wherever the page says it
/// holds none).
fn realms_counted(sample: &MemorySample, phase: Phase, moment: Moment) -> (bool, bool) {
    let vision = page_gpu::phase_of(&sample.label).is_some_and(|(_, alive)| alive)
        && !(moment == Moment::End && sample.label == "vision-worker-terminated");
    let decoder = page_gpu::decoder_worker_bytes(sample, phase).is_some()
        && !(moment == Moment::End
            && (phase == Phase::Release || sample.decoder_workers == Some(0)));
    (vision, decoder)
}

/// The WebAssembly heaps of each of [`REALMS`] in a sample.
fn heaps(sample: &MemorySample, phase: Phase, moment: Moment) -> [u64; 3] {
    let (vision, decoder) = realms_counted(sample, phase, moment);
    let realm = |counted: bool, report: Option<&RealmMemory>| {
        report
            .filter(|_| counted)
            .map_or(0, |r| page_gpu::heap_bytes(&r.wasm_heaps))
    };
    [
        sample.wasm_heaps.as_deref().map_or(0, page_gpu::heap_bytes),
        realm(vision, sample.worker.as_ref()),
        realm(decoder, sample.decoder_worker.as_ref()),
    ]
}

/// The live GPU bytes of the realms that stand at a sample (the end of its phase).
fn gpu_live(sample: &MemorySample, phase: Phase) -> u64 {
    let (vision, decoder) = realms_counted(sample, phase, Moment::End);
    let page = sample.gpu.as_ref().and_then(Option::as_ref);
    let worker = sample.worker.as_ref().filter(|_| vision);
    let decoder_worker = sample.decoder_worker.as_ref().filter(|_| decoder);
    page.map_or(0, |g| g.live_bytes)
        + [worker, decoder_worker]
            .into_iter()
            .flatten()
            .filter_map(|r| r.gpu.as_ref())
            .map(|g| g.live_bytes)
            .sum::<u64>()
}

/// `usedJSHeapSize` of the page and the workers counted; `None` where the page has none (a
/// browser without `performance.memory`).
fn js_heap(sample: &MemorySample, phase: Phase, moment: Moment) -> Option<u64> {
    let page = sample.used_js_heap_size?;
    let (vision, decoder) = realms_counted(sample, phase, moment);
    let workers = [
        sample.worker.as_ref().filter(|_| vision),
        sample.decoder_worker.as_ref().filter(|_| decoder),
    ];
    Some(
        page + workers
            .into_iter()
            .flatten()
            .filter_map(|r| r.used_js_heap_size)
            .sum::<u64>(),
    )
}

/// The rise at one moment; `None` where the phase has no PSS.
fn rise_at(
    baseline: &PhaseMemory,
    measured: &PhaseMemory,
    moment: Moment,
    page: &PageParts,
    placement: GpuPlacement,
    gpu_peak: Option<i64>,
) -> Option<Rise> {
    let total = &measured.total;
    let at_moment = match moment {
        Moment::Peak => total.peak_pss,
        Moment::End => total.end_pss,
    };
    let pss = at_moment? as i64 - baseline.total.end_pss? as i64;
    let kinds: Vec<ProcessType> = baseline
        .by_type
        .keys()
        .chain(measured.by_type.keys())
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let type_at = |kind: &ProcessType| -> i64 {
        let at = match moment {
            Moment::Peak => measured
                .by_type
                .get(kind)
                .and_then(|e| e.peak_pss)
                .unwrap_or(0),
            Moment::End => type_end_pss(&measured.by_type, total.end_pss, kind).unwrap_or(0),
        };
        at as i64
            - type_end_pss(&baseline.by_type, baseline.total.end_pss, kind).unwrap_or(0) as i64
    };
    let pss_by_type = kinds.iter().map(|k| (*k, type_at(k))).collect();
    // Shared memory: absent in records older than its reading.
    let shmem_of = |extent: Option<&Extent>, moment| {
        extent.and_then(|e| match moment {
            Moment::Peak => e.peak_pss_shmem,
            Moment::End => e.end_pss_shmem,
        })
    };
    let shmem_total = shmem_of(Some(total), moment)
        .zip(shmem_of(Some(&baseline.total), Moment::End))
        .map(|(at, base)| at as i64 - base as i64);
    let shmem_by_type: BTreeMap<ProcessType, i64> = match shmem_total {
        Some(_) => kinds
            .iter()
            .map(|kind| {
                let at = shmem_of(measured.by_type.get(kind), moment).unwrap_or(0) as i64;
                let base = shmem_of(baseline.by_type.get(kind), Moment::End).unwrap_or(0) as i64;
                (*kind, at - base)
            })
            .collect(),
        None => BTreeMap::new(),
    };
    let gpu = match placement {
        GpuPlacement::Device => Part::OutsidePss,
        GpuPlacement::Unknown => Part::Unknown,
        GpuPlacement::Software => {
            let bytes = match moment {
                // The window peaks of the phase (`page_gpu`).
                Moment::Peak => gpu_peak,
                Moment::End => page.gpu_live,
            };
            bytes.map_or(Part::Unknown, Part::Measured)
        }
    };
    let host = adapter_process(measured);
    let shmem_held_as_gpu = match gpu {
        Part::Measured(gpu) => {
            let host = shmem_by_type.get(&host).copied().unwrap_or(0);
            host.max(0).min(gpu.max(0))
        }
        _ => 0,
    };
    let measured_or_unknown = |bytes: Option<i64>| bytes.map_or(Part::Unknown, Part::Measured);
    Some(Rise {
        pss,
        pss_by_type,
        gpu,
        wasm: REALMS
            .iter()
            .enumerate()
            .map(|(i, realm)| (*realm, measured_or_unknown(page.wasm.map(|w| w[i]))))
            .collect(),
        js_heap: match page.js_heap {
            None => Part::Unknown,
            Some(None) => Part::NotAvailable,
            Some(Some(bytes)) => Part::Measured(bytes),
        },
        shmem: measured_or_unknown(shmem_total.map(|s| s - shmem_held_as_gpu)),
        shmem_by_type,
        shmem_held_as_gpu,
        adapter_process: host,
        report: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const MIB: i64 = 1 << 20;

    /// An extent in MiB: (peak PSS, end PSS, peak shmem, end shmem).
    fn extent(pss: (u64, u64), shmem: (u64, u64)) -> Value {
        let m = |v: u64| v << 20;
        json!({ "peakRssBytes": 0, "endRssBytes": 0, "peakProcesses": 1,
                "peakPssBytes": m(pss.0), "endPssBytes": m(pss.1),
                "peakPssShmemBytes": m(shmem.0), "endPssShmemBytes": m(shmem.1) })
    }

    /// A phase of two process types: `host` (where a software adapter runs) and the renderer.
    fn phase(host: &str, hosted: (u64, u64, u64), renderer: (u64, u64, u64)) -> Value {
        let (hp, he, hs) = hosted;
        let (rp, re, rs) = renderer;
        json!({ "samples": 1, "pssSamples": 1, "durationMs": 1.0,
                "byType": { host: extent((hp, he), (hs, hs)), "renderer": extent((rp, re), (rs, rs)) },
                "total": extent((hp + rp, he + re), (hs + rs, hs + rs)), "peakRssBytesByLabel": {} })
    }

    /// `baseline` 100 + 200 MiB with 1 MiB of shared memory in the renderer, then `run`.
    fn memory(host: &str, run: Value) -> ProcessMemory {
        serde_json::from_value(json!({
            "sampler": super::super::test_sampler(),
            "intervalMs": 25.0,
            "phases": { "baseline": phase(host, (100, 100, 0), (200, 200, 1)),
                        "decoder-run": run.clone(), "release": run },
        }))
        .unwrap()
    }

    /// A page sample: the decoder worker's (live GPU, window peak GPU, heap) and the page's
    /// heap, in MiB; `js` the page's and the worker's `usedJSHeapSize` where the browser has it.
    fn sample(
        label: &str,
        worker: Option<(u64, u64, u64)>,
        page_heap: u64,
        js: Option<(u64, u64)>,
    ) -> MemorySample {
        let m = |v: u64| v << 20;
        let mut value = json!({ "label": label, "atMs": 0.0, "sampleMs": 0.0,
            "wasmHeaps": [{ "label": "core", "bytes": m(page_heap), "shared": false }] });
        if let Some((page, _)) = js {
            value["usedJSHeapSize"] = json!(m(page));
        }
        if let Some((live, peak, heap)) = worker {
            value["decoderWorker"] = json!({
                "gpu": { "liveBytes": m(live), "peakBytes": m(peak), "liveByKind": {}, "created": 1,
                         "destroyed": 0, "collected": 0, "deviceDestroyed": label == "released",
                         "measuredBy": "test", "windowPeakBytes": m(peak) },
                "wasmHeaps": [{ "label": "onnxruntime", "bytes": m(heap), "shared": true }] });
            if let Some((_, worker_js)) = js {
                value["decoderWorker"]["usedJSHeapSize"] = json!(m(worker_js));
            }
        }
        serde_json::from_value(value).unwrap()
    }

    fn samples(js: bool) -> Vec<MemorySample> {
        let js = |page, worker| js.then_some((page, worker));
        vec![
            sample("baseline", None, 2, js(10, 0)),
            sample("after-case-1", Some((150, 180, 90)), 3, js(14, 6)),
            // The close's report: its device destroyed, the worker gone at the phase's end.
            sample("released", Some((0, 150, 90)), 3, js(12, 0)),
        ]
    }

    fn mib(part: Part) -> Option<i64> {
        part.bytes().map(|b| b / MIB)
    }

    #[test]
    fn on_a_software_adapter_the_rise_splits_into_gpu_bytes_heaps_and_shared_memory() {
        // decoder-run: the parent (the adapter's process) peaks at 300 and ends at 280 with 30
        // MiB of shared memory; the renderer peaks at 330, ends at 320 with 11.
        let memory = memory("browser", phase("browser", (300, 280, 30), (330, 320, 11)));
        let rises = rises_with(&memory, &samples(false), GpuPlacement::Software);
        let run = &rises[0];
        assert_eq!(run.phase, Phase::DecoderRun);
        let end = &run.end;
        assert_eq!(end.pss / MIB, 300);
        assert_eq!(end.pss_by_type[&ProcessType::Browser] / MIB, 180);
        assert_eq!(end.pss_by_type[&ProcessType::Renderer] / MIB, 120);
        assert_eq!(mib(end.gpu), Some(150));
        // Heaps less their baseline: the page's core grew by 1, the worker's 90 are new.
        let heaps: Vec<Option<i64>> = end.wasm.iter().map(|(_, p)| mib(*p)).collect();
        assert_eq!(heaps, [Some(1), Some(0), Some(90)]);
        assert_eq!(end.js_heap, Part::NotAvailable);
        // Shared memory rose by 40 (30 in the parent, 10 in the renderer); the parent's 30 may
        // be GPU bytes already counted, so only 10 count.
        assert_eq!(end.shmem_by_type[&ProcessType::Browser] / MIB, 30);
        assert_eq!(end.shmem_held_as_gpu / MIB, 30);
        assert_eq!(mib(end.shmem), Some(10));
        // 300 - 150 - 1 - 90 - 10 = 49: over 30 (10 %) and over 20 MiB.
        assert_eq!(end.unexplained().map(|b| b / MIB), Some(49));
        assert!((end.unexplained_share().unwrap() - 49.0 / 300.0).abs() < 1e-9);
        assert_eq!(end.meets_target(), Some(false));
        // Per type: the parent's 180 less 150 GPU bytes and its 30 of shared memory, given
        // back as GPU bytes: 30; the renderer's 120 less 91 of heaps and 10 shared: 19.
        let by_type = end.unexplained_by_type().unwrap();
        assert_eq!(by_type[&ProcessType::Browser] / MIB, 30);
        assert_eq!(by_type[&ProcessType::Renderer] / MIB, 19);
        assert_eq!(by_type.values().sum::<i64>(), end.unexplained().unwrap());
        // At the peak: PSS 330 (630 - 300), GPU the window peak 180.
        assert_eq!(run.peak.pss / MIB, 330);
        assert_eq!(mib(run.peak.gpu), Some(180));
        assert_eq!(
            run.peak.unexplained().map(|b| b / MIB),
            Some(330 - 180 - 1 - 90 - 10)
        );
    }

    #[test]
    fn at_the_end_of_release_the_closed_workers_parts_are_gone_but_count_at_its_peak() {
        let memory = memory("browser", phase("browser", (300, 280, 30), (330, 320, 11)));
        let rises = rises_with(&memory, &samples(false), GpuPlacement::Software);
        let release = rises.iter().find(|r| r.phase == Phase::Release).unwrap();
        assert_eq!(mib(release.end.gpu), Some(0));
        assert_eq!(mib(release.end.wasm[2].1), Some(0));
        assert_eq!(mib(release.peak.gpu), Some(150));
        assert_eq!(mib(release.peak.wasm[2].1), Some(90));
    }

    #[test]
    fn on_a_real_gpu_the_gpu_bytes_are_outside_pss_and_chromiums_js_heap_is_a_part() {
        // Chromium: a GPU process, whose shared memory counts in full on a real GPU.
        let memory = memory("gpu", phase("gpu", (150, 150, 30), (330, 320, 11)));
        let rises = rises_with(&memory, &samples(true), GpuPlacement::Device);
        let end = &rises[0].end;
        assert_eq!(end.gpu, Part::OutsidePss);
        assert_eq!(end.gpu.bytes(), Some(0));
        // usedJSHeapSize: 14 + 6 against 10 at baseline.
        assert_eq!(mib(end.js_heap), Some(10));
        assert_eq!(end.shmem_held_as_gpu, 0);
        assert_eq!(mib(end.shmem), Some(40));
        assert_eq!(end.pss_by_type[&ProcessType::Gpu] / MIB, 50);
        assert_eq!(end.shmem_by_type[&ProcessType::Gpu] / MIB, 30);
        // 170 - 0 - 1 - 90 - 10 - 40 = 29: over 20 MiB and over 10 % of 170.
        assert_eq!(end.unexplained().map(|b| b / MIB), Some(29));
        let by_type = end.unexplained_by_type().unwrap();
        assert_eq!(by_type[&ProcessType::Gpu] / MIB, 20);
        assert_eq!(by_type.values().sum::<i64>(), end.unexplained().unwrap());
        assert_eq!(end.meets_target(), Some(false));
    }

    #[test]
    fn without_a_reading_there_is_no_unexplained_part_and_without_a_baseline_pss_no_rise() {
        let memory_ = memory("browser", phase("browser", (300, 280, 30), (330, 320, 11)));
        // No page sample closes decoder-run: its heaps are unknown.
        let only_baseline = &samples(false)[..1];
        let rises = rises_with(&memory_, only_baseline, GpuPlacement::Software);
        assert_eq!(rises[0].end.wasm[0].1, Part::Unknown);
        assert_eq!(rises[0].end.unexplained(), None);
        // An adapter that says nothing leaves the GPU part unknown.
        let rises = rises_with(&memory_, &samples(false), GpuPlacement::Unknown);
        assert_eq!(rises[0].end.unexplained(), None);
        let mut old = memory_.clone();
        for (_, phase) in &mut old.phases {
            phase.total.end_pss = None;
        }
        assert!(rises_with(&old, &samples(false), GpuPlacement::Software).is_empty());
    }

    /// Firefox's report parts in MiB: (heap-unclassified, JS, wasm code, wasm memory).
    fn report_parts(parts: (u64, u64, u64, u64)) -> Value {
        let m = |v: u64| v << 20;
        let (unclassified, js, code, wasm) = parts;
        json!({ "processes": 1, "explicit": m(unclassified + js + code + wasm + 7),
                "heapUnclassified": m(unclassified), "wasmMemory": m(wasm), "wasmCode": m(code),
                "js": m(js), "gfx": 0, "rest": m(7) })
    }

    #[test]
    fn firefoxs_report_names_parts_of_the_rise_without_counting_wasm_heaps_or_gpu_bytes_twice() {
        let mut memory = memory("browser", phase("browser", (300, 280, 30), (330, 320, 11)));
        // The report closing `baseline` is taken as the page enters decoder-run, the one
        // closing decoder-run as it enters release; none at the end.
        memory.beside.reports = serde_json::from_value(json!([
            { "atPhase": "decoder-run", "byType": {
                "browser": report_parts((10, 50, 0, 0)), "renderer": report_parts((5, 20, 2, 2)) } },
            { "atPhase": "release", "byType": {
                "browser": report_parts((50, 50, 0, 0)), "renderer": report_parts((7, 25, 12, 92)) } },
            { "atPhase": "end", "reason": "Firefox wrote no memory report within 15 s of the request" },
        ]))
        .unwrap();
        let rises = rises_with(&memory, &samples(false), GpuPlacement::Software);
        let end = &rises[0].end;
        let report = end.report.as_ref().expect("decoder-run's report");
        // The parent's heap-unclassified rose by 40: of the 150 GPU bytes, 30 are left out of
        // shared memory already, so all 40 may be the adapter's buffers.
        assert_eq!(report.heap_unclassified[&ProcessType::Browser] / MIB, 40);
        assert_eq!(report.held_as_gpu / MIB, 40);
        // The renderer: JS 5, wasm code 10, heap-unclassified 2; its 90 of wasm memory are
        // the page's WASM heaps, not taken again.
        assert_eq!(total(&report.wasm_memory) / MIB, 90);
        assert_eq!(report.taken() / MIB, 17);
        // Without the report 49 were unexplained (browser 30, renderer 19).
        assert_eq!(end.unexplained().map(|b| b / MIB), Some(32));
        let by_type = end.unexplained_by_type().unwrap();
        assert_eq!(by_type[&ProcessType::Browser] / MIB, 30);
        assert_eq!(by_type[&ProcessType::Renderer] / MIB, 2);
        // A report is one moment: none at the peak; release's end has no report to close it.
        assert_eq!(rises[0].peak.report, None);
        assert_eq!(rises[1].end.report, None);
        // As without reports: 300 less the page's 1 of heap and 40 of shared memory.
        assert_eq!(
            rises[1].end.unexplained().map(|b| b / MIB),
            Some(300 - 1 - 40)
        );
    }

    #[test]
    fn the_target_is_a_tenth_of_the_rise_or_twenty_mib_whichever_is_larger() {
        assert_eq!(target_bytes(100 * MIB), 20 * MIB);
        assert_eq!(target_bytes(400 * MIB), 40 * MIB);
        assert_eq!(target_bytes(-5), 20 * MIB);
    }
}
