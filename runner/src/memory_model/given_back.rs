//! What each step of the release phase gave back (`docs/benchmark-protocol.md`, "Release"):
//! per process type and in all, PSS at the end of `decoder-run` less PSS at the step, in bytes
//! and as a share of the rise (`decoder-run`'s end less `baseline`'s); the same for driver
//! VRAM where NVML read it, and for the page's parts from its samples: the GPU bytes live in
//! every realm and the WebAssembly heaps per realm. The report and `export` read it from here.

use std::collections::BTreeMap;

use ocr_bench_core::phase::Phase;
use ocr_bench_core::record::{MemorySample, RealmMemory, WasmHeap};

use crate::memory::{Extent, PhaseMemory, ProcessMemory, StepMemory, MINIMIZED};
use crate::process_type::ProcessType;

/// What one figure gave back by a step: held at `decoder-run`'s end less held at the step
/// (negative where it grew), and that as a share of the rise above `baseline` (`None` where
/// the figure did not rise, or a reading is missing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Returned {
    pub bytes: i64,
    pub share_of_rise: Option<f64>,
}

impl Returned {
    /// From the three readings of a figure: at `baseline`, at `decoder-run`'s end, at the step.
    pub fn of(baseline: Option<u64>, run_end: u64, at_step: u64) -> Self {
        let bytes = run_end as i64 - at_step as i64;
        let rise = baseline.map(|b| run_end as i64 - b as i64);
        Self {
            bytes,
            share_of_rise: rise.filter(|r| *r > 0).map(|r| bytes as f64 / r as f64),
        }
    }
}

/// The WebAssembly heaps' realms a step reports on.
pub const HEAP_REALMS: [&str; 2] = ["page", "decoder-worker"];

/// One release step's returns.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReturn {
    /// `sessions`, `device`, `realm` or `all` (`ocr_bench_core::phase::RELEASE_STEPS`).
    pub step: String,
    /// PSS of all the browser's processes; `None` without PSS at the step or at the run's end.
    pub pss: Option<Returned>,
    pub pss_by_type: BTreeMap<ProcessType, Returned>,
    /// Driver VRAM of the browser's processes, where NVML read it.
    pub driver_vram: Option<Returned>,
    /// The GPU bytes live in the page's device and the decoder worker's, from the page's
    /// samples; `None` without the step's page sample.
    pub gpu: Option<Returned>,
    /// The WebAssembly heaps per realm ([`HEAP_REALMS`]), from the page's samples.
    pub wasm_heaps: BTreeMap<&'static str, Returned>,
}

/// Each release step of a run, in the order taken; empty for a run without step readings.
pub fn given_back(memory: &ProcessMemory, samples: &[MemorySample]) -> Vec<StepReturn> {
    let end_of = |phase: Phase| phase_memory(memory, phase.as_str());
    let (Some(baseline), Some(run)) = (end_of(Phase::Baseline), end_of(Phase::DecoderRun)) else {
        return Vec::new();
    };
    let page = PageReadings::of(samples);
    memory
        .beside
        .steps
        .iter()
        .filter(|s| s.phase == Phase::Release.as_str() || s.step == MINIMIZED)
        .map(|step| step_return(step, baseline, run, &page))
        .collect()
}

/// A phase's process memory, by name.
pub(crate) fn phase_memory<'a>(memory: &'a ProcessMemory, phase: &str) -> Option<&'a PhaseMemory> {
    memory
        .phases
        .iter()
        .find(|(name, _)| name == phase)
        .map(|(_, p)| p)
}

/// A process type's PSS at the end of a reading whose total is `total`: a type absent from a
/// reading that has PSS held nothing there (its processes had not started, or had exited).
pub(crate) fn type_end_pss(
    extents: &BTreeMap<ProcessType, Extent>,
    total: Option<u64>,
    kind: &ProcessType,
) -> Option<u64> {
    total.map(|_| extents.get(kind).and_then(|e| e.end_pss).unwrap_or(0))
}

fn step_return(
    step: &StepMemory,
    baseline: &PhaseMemory,
    run: &PhaseMemory,
    page: &PageReadings<'_>,
) -> StepReturn {
    let returned = |baseline: Option<u64>, run_end: Option<u64>, at_step: Option<u64>| {
        Some(Returned::of(baseline, run_end?, at_step?))
    };
    let pss_by_type = run
        .by_type
        .keys()
        .filter_map(|kind| {
            let at_step = step.figures.total.pss_bytes.map(|_| {
                step.figures
                    .by_type
                    .get(kind)
                    .and_then(|r| r.pss_bytes)
                    .unwrap_or(0)
            });
            let figure = returned(
                type_end_pss(&baseline.by_type, baseline.total.end_pss, kind),
                run.by_type[kind].end_pss,
                at_step,
            )?;
            Some((*kind, figure))
        })
        .collect();
    let label = match step.step.as_str() {
        // The page let go of everything before the minimize: its last sample stands.
        "all" | MINIMIZED => "released".to_owned(),
        name => format!("released-{name}"),
    };
    let page_at_step = page.labelled(&label);
    let page_figures = page.run_end.zip(page_at_step);
    StepReturn {
        step: step.step.clone(),
        pss: returned(
            baseline.total.end_pss,
            run.total.end_pss,
            step.figures.total.pss_bytes,
        ),
        pss_by_type,
        driver_vram: returned(
            baseline.total.end_driver_gpu,
            run.total.end_driver_gpu,
            step.figures.total.driver_gpu_bytes,
        ),
        gpu: page_figures.map(|(run_end, at_step)| {
            Returned::of(
                page.baseline.map(gpu_live),
                gpu_live(run_end),
                gpu_live(at_step),
            )
        }),
        wasm_heaps: page_figures
            .map(|(run_end, at_step)| {
                HEAP_REALMS
                    .iter()
                    .map(|realm| {
                        let baseline = page.baseline.map(|s| heaps(s, realm));
                        let figure =
                            Returned::of(baseline, heaps(run_end, realm), heaps(at_step, realm));
                        (*realm, figure)
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The page's samples a step's returns read: `baseline`, the last case's (`decoder-run`'s
/// end) and the steps'.
pub(crate) struct PageReadings<'a> {
    samples: &'a [MemorySample],
    pub(crate) baseline: Option<&'a MemorySample>,
    run_end: Option<&'a MemorySample>,
}

impl<'a> PageReadings<'a> {
    pub(crate) fn of(samples: &'a [MemorySample]) -> Self {
        Self {
            samples,
            baseline: samples.iter().find(|s| s.label == "baseline"),
            run_end: samples
                .iter()
                .rev()
                .find(|s| s.label.starts_with("after-case-")),
        }
    }

    fn labelled(&self, label: &str) -> Option<&'a MemorySample> {
        self.samples.iter().find(|s| s.label == label)
    }
}

/// The decoder worker's report where its realm still stands (a sample after `release=realm`'s
/// step carries the report of a worker that is gone: it holds nothing).
fn decoder_worker(sample: &MemorySample) -> Option<&RealmMemory> {
    sample
        .decoder_worker
        .as_ref()
        .filter(|_| sample.decoder_workers != Some(0))
}

/// GPU bytes live in the page's device and the decoder worker's at a sample.
fn gpu_live(sample: &MemorySample) -> u64 {
    let page = sample
        .gpu
        .as_ref()
        .and_then(Option::as_ref)
        .map_or(0, |g| g.live_bytes);
    let worker = decoder_worker(sample)
        .and_then(|w| w.gpu.as_ref())
        .map_or(0, |g| g.live_bytes);
    page + worker
}

fn heaps(sample: &MemorySample, realm: &str) -> u64 {
    let sum = |heaps: &[WasmHeap]| heaps.iter().map(|h| h.bytes).sum();
    match realm {
        "page" => sample.wasm_heaps.as_deref().map_or(0, sum),
        _ => decoder_worker(sample).map_or(0, |w| sum(&w.wasm_heaps)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const MIB: u64 = 1 << 20;

    /// PSS in MiB per type, as a phase's end or a step's reading.
    fn extent(browser: u64, renderer: u64) -> Value {
        json!({ "peakRssBytes": 0, "endRssBytes": 0, "peakProcesses": 1,
                "peakPssBytes": (browser + renderer) * MIB, "endPssBytes": (browser + renderer) * MIB })
    }

    fn phase(browser: u64, renderer: u64) -> Value {
        let one = |mib: u64| {
            json!({ "peakRssBytes": 0, "endRssBytes": 0, "peakProcesses": 1,
                                     "peakPssBytes": mib * MIB, "endPssBytes": mib * MIB })
        };
        json!({ "samples": 1, "pssSamples": 1, "durationMs": 1.0,
                "byType": { "browser": one(browser), "renderer": one(renderer) },
                "total": extent(browser, renderer), "peakRssBytesByLabel": {} })
    }

    fn step(name: &str, browser: u64, renderer: u64) -> Value {
        let one = |mib: u64| json!({ "rssBytes": 0, "pssBytes": mib * MIB });
        json!({ "phase": "release", "step": name, "atMs": 0.0,
                "byType": { "browser": one(browser), "renderer": one(renderer) },
                "total": one(browser + renderer) })
    }

    /// Baseline 60 + 40 MiB, decoder-run's end 100 + 200 (a rise of 200), then the steps.
    fn memory(steps: Vec<Value>) -> ProcessMemory {
        serde_json::from_value(json!({
            "sampler": super::super::test_sampler(),
            "intervalMs": 25.0,
            "phases": { "baseline": phase(60, 40), "decoder-run": phase(100, 200), "release": phase(100, 200) },
            "steps": steps,
        }))
        .unwrap()
    }

    /// A page sample with the page's live GPU bytes and heap, and the decoder worker's (MiB).
    fn sample(
        label: &str,
        gpu: u64,
        heap: u64,
        worker: Option<(u64, u64)>,
        workers: u32,
    ) -> MemorySample {
        let bytes = |live: u64| {
            json!({ "liveBytes": live * MIB, "peakBytes": live * MIB, "liveByKind": {},
                                         "created": 1, "destroyed": 0, "collected": 0,
                                         "deviceDestroyed": false, "measuredBy": "test" })
        };
        let heaps =
            |mib: u64| json!([{ "label": "onnxruntime", "bytes": mib * MIB, "shared": false }]);
        let mut value = json!({ "label": label, "atMs": 0.0, "sampleMs": 0.0, "gpu": bytes(gpu),
                                "wasmHeaps": heaps(heap), "decoderWorkers": workers });
        if let Some((gpu, heap)) = worker {
            value["decoderWorker"] = json!({ "gpu": bytes(gpu), "wasmHeaps": heaps(heap) });
        }
        serde_json::from_value(value).unwrap()
    }

    fn share(figure: Option<Returned>) -> (i64, Option<f64>) {
        let figure = figure.expect("a figure");
        (figure.bytes / MIB as i64, figure.share_of_rise)
    }

    #[test]
    fn each_step_returns_the_run_end_less_the_step_as_a_share_of_the_rise() {
        let memory = memory(vec![step("sessions", 100, 150), step("all", 70, 50)]);
        let returns = given_back(&memory, &[]);
        let steps: Vec<&str> = returns.iter().map(|r| r.step.as_str()).collect();
        assert_eq!(steps, ["sessions", "all"]);
        // 300 - 250 of a rise of 200; the renderer's 50 of its 160; the browser's nothing of 40.
        assert_eq!(share(returns[0].pss), (50, Some(0.25)));
        assert_eq!(
            share(returns[0].pss_by_type.get(&ProcessType::Renderer).copied()),
            (50, Some(50.0 / 160.0))
        );
        assert_eq!(
            share(returns[0].pss_by_type.get(&ProcessType::Browser).copied()),
            (0, Some(0.0))
        );
        // 300 - 120 = 180 of 200; the browser's 30 of 40, the renderer's 150 of 160.
        assert_eq!(share(returns[1].pss), (180, Some(0.9)));
        assert_eq!(
            share(returns[1].pss_by_type.get(&ProcessType::Browser).copied()),
            (30, Some(0.75))
        );
        // No driver readings and no page samples: those figures are absent, not zero.
        assert_eq!(returns[1].driver_vram, None);
        assert_eq!(returns[1].gpu, None);
        assert!(returns[1].wasm_heaps.is_empty());
    }

    #[test]
    fn a_step_that_holds_more_than_the_run_returns_a_negative_figure_and_no_share_without_a_rise() {
        // The step holds 310 MiB against decoder-run's 300.
        let returns = given_back(&memory(vec![step("device", 110, 200)]), &[]);
        assert_eq!(share(returns[0].pss), (-10, Some(-0.05)));
        assert_eq!(Returned::of(Some(300), 300, 250).share_of_rise, None);
        assert_eq!(Returned::of(None, 300, 250).bytes, 50);
    }

    #[test]
    fn the_pages_parts_come_from_its_samples_and_a_terminated_worker_holds_nothing() {
        let samples = [
            sample("baseline", 0, 1, None, 0),
            sample("after-case-a", 8, 11, Some((40, 20)), 1),
            sample("after-case-b", 10, 11, Some((50, 21)), 1),
            sample("released-sessions", 10, 11, Some((30, 21)), 1),
            // The worker's last report rides along after it was terminated: it counts as 0.
            sample("released-realm", 0, 11, Some((0, 21)), 0),
        ];
        let memory = memory(vec![step("sessions", 100, 190), step("realm", 90, 100)]);
        let returns = given_back(&memory, &samples);
        // GPU: 60 at the last case, 40 after the sessions, 0 after the realm; baseline 0.
        assert_eq!(share(returns[0].gpu), (20, Some(20.0 / 60.0)));
        assert_eq!(share(returns[1].gpu), (60, Some(1.0)));
        // Heaps: the page's stay (10 MiB of rise, none returned); the worker's 21 go with it.
        assert_eq!(
            share(returns[1].wasm_heaps.get("page").copied()),
            (0, Some(0.0))
        );
        assert_eq!(
            share(returns[1].wasm_heaps.get("decoder-worker").copied()),
            (21, Some(1.0))
        );
        assert_eq!(
            share(returns[0].wasm_heaps.get("decoder-worker").copied()),
            (0, Some(0.0))
        );
    }

    #[test]
    fn firefoxs_minimize_after_the_run_is_a_step_with_the_pages_last_sample() {
        let mut minimized = step(MINIMIZED, 65, 45);
        minimized["phase"] = json!(crate::memory::MINIMIZE_PHASE);
        let memory = memory(vec![step("all", 70, 50), minimized]);
        let samples = [
            sample("baseline", 0, 1, None, 0),
            sample("after-case-a", 10, 11, None, 0),
            sample("released", 0, 11, None, 0),
        ];
        let returns = given_back(&memory, &samples);
        let steps: Vec<&str> = returns.iter().map(|r| r.step.as_str()).collect();
        assert_eq!(steps, ["all", MINIMIZED]);
        // 300 - 110 of a rise of 200; the page's parts as at `released`.
        assert_eq!(share(returns[1].pss), (190, Some(0.95)));
        assert_eq!(share(returns[1].gpu), share(returns[0].gpu));
    }

    #[test]
    fn a_run_without_steps_or_without_a_baseline_returns_nothing() {
        assert!(given_back(&memory(Vec::new()), &[]).is_empty());
        let mut memory = memory(vec![step("all", 70, 50)]);
        memory.phases.retain(|(name, _)| name != "baseline");
        assert!(given_back(&memory, &[]).is_empty());
    }
}
