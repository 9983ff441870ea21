//! The `processMemory` answer of `/benchmark-result`, as typed structs: `runner/README.md`
//! lists its fields. The server adds `available` itself.

use std::collections::BTreeMap;
use std::time::Duration;

use std::borrow::Cow;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::driver_gpu::DriverGpuMemory;
use super::stats::{Extent, Measured};
use super::step::StepMemory;
use crate::memory_expected::{FloorAnswer, PhasePrediction};
use crate::process_type::ProcessType;

/// How the sampler reads memory, carried in every answer.
const SOURCE: &str = "RSS from /proc/PID/statm every tick; PSS from /proc/PID/smaps_rollup on a second thread, within 5% of one core";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMemory {
    pub sampler: SamplerFigures,
    pub interval_ms: f64,
    /// Phases in the order they began, serialized as one object keyed by phase name.
    #[serde(serialize_with = "ordered_map", deserialize_with = "ordered_entries")]
    pub phases: Vec<(String, PhaseMemory)>,
    /// What the runner adds beside its own samples, boxed: a result's answer travels by value
    /// through the run's outcome.
    #[serde(flatten)]
    pub beside: Box<Beside>,
}

/// `driverGpuMemory` and `floor`, each absent in files written before it was recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Beside {
    /// Whether the driver's per-process VRAM was read, and if not why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_gpu_memory: Option<DriverGpuMemory>,
    /// The bytes the model cannot do without, per phase; absent where the runner was not
    /// told the run's manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<FloorAnswer>,
    /// Each phase's memory as predicted from the floor before the page loaded anything
    /// (`memory_model::predict::for_run`); absent without a floor and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<BTreeMap<String, PhasePrediction>>,
    /// The steps the page marked within a phase (the release phase's, `docs/benchmark-protocol.md`,
    /// "Release"), each with its readings; absent where none was marked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepMemory>,
    /// Firefox's own memory reports per phase under `--memory-reports`; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<super::firefox_report::PhaseReport>,
}

/// What the sampler itself achieved and cost over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplerFigures {
    pub source: Cow<'static, str>,
    pub ticks: u64,
    pub achieved_hz: f64,
    pub rss_cpu_share_of_one_core: f64,
    pub pss_passes: u64,
    pub pss_hz: f64,
    pub mean_pss_pass_cpu_ms: f64,
    pub mean_pss_pass_wall_ms: f64,
    pub pss_cpu_share_of_one_core: f64,
    pub cpu_share_of_one_core: f64,
    pub max_processes: usize,
}

/// One phase: its sample counts, how long it lasted, and peak and end memory per process
/// type, in all, and per label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseMemory {
    pub samples: u64,
    pub pss_samples: u64,
    /// Driver VRAM samples (NVML) that counted towards the phase; absent when none did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub driver_gpu_samples: u64,
    pub duration_ms: f64,
    pub by_type: BTreeMap<ProcessType, Extent>,
    pub total: Extent,
    pub peak_rss_bytes_by_label: BTreeMap<String, u64>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

fn ordered_map<S: Serializer>(
    phases: &[(String, PhaseMemory)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(phases.iter().map(|(name, phase)| (name, phase)))
}

/// The phases object read back in file order (a map type would sort the names).
fn ordered_entries<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, PhaseMemory)>, D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<(String, PhaseMemory)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object of phases keyed by phase name")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut phases = Vec::new();
            while let Some(entry) = map.next_entry()? {
                phases.push(entry);
            }
            Ok(phases)
        }
    }
    deserializer.deserialize_map(Entries)
}

impl ProcessMemory {
    pub(super) fn from_measured(
        m: &Measured,
        interval: Duration,
        driver_gpu_memory: DriverGpuMemory,
    ) -> Self {
        let elapsed = match (m.started, m.last_tick) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let per_second = |count: u64| {
            if elapsed > 0.0 {
                count.saturating_sub(1) as f64 / elapsed
            } else {
                0.0
            }
        };
        let share = |cpu: Duration| {
            if elapsed > 0.0 {
                cpu.as_secs_f64() / elapsed
            } else {
                0.0
            }
        };
        let mean_ms = |total: Duration| {
            if m.pss_passes > 0 {
                total.as_secs_f64() * 1e3 / m.pss_passes as f64
            } else {
                0.0
            }
        };
        let phases = m
            .phases
            .iter()
            .map(|(name, stats)| {
                let phase = PhaseMemory {
                    samples: stats.samples,
                    pss_samples: stats.pss_samples,
                    driver_gpu_samples: stats.driver_gpu_samples,
                    duration_ms: (stats.last_ms - stats.first_ms).max(0.0),
                    by_type: stats.by_type.clone(),
                    total: stats.total.clone(),
                    peak_rss_bytes_by_label: stats.peak_rss_by_label.clone(),
                };
                (name.clone(), phase)
            })
            .collect();
        ProcessMemory {
            sampler: SamplerFigures {
                source: Cow::Borrowed(SOURCE),
                ticks: m.ticks,
                achieved_hz: per_second(m.ticks),
                rss_cpu_share_of_one_core: share(m.rss_cpu),
                pss_passes: m.pss_passes,
                pss_hz: per_second(m.pss_passes),
                mean_pss_pass_cpu_ms: mean_ms(m.pss_cpu),
                mean_pss_pass_wall_ms: mean_ms(m.pss_wall),
                pss_cpu_share_of_one_core: share(m.pss_cpu),
                cpu_share_of_one_core: share(m.rss_cpu + m.pss_cpu),
                max_processes: m.max_processes,
            },
            interval_ms: interval.as_secs_f64() * 1e3,
            phases,
            beside: Box::new(Beside {
                driver_gpu_memory: Some(driver_gpu_memory),
                floor: None,
                prediction: None,
                steps: m.steps.clone(),
                reports: Vec::new(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::stats::{record_driver_gpu, record_pss, record_rss, Tracked};
    use super::*;
    use crate::memory::STARTUP_PHASE;
    use crate::process_type::Classified;

    fn process(kind: ProcessType, label: &str, mib: u64) -> Tracked {
        Tracked {
            class: Classified {
                kind,
                label: label.to_owned(),
            },
            rss: mib << 20,
        }
    }

    /// The JSON text exactly as the runner wrote it before these structs (field names, their
    /// order, and the PSS fields left out of a phase that had no PSS pass), with the driver's
    /// VRAM added last where a driver sample counted.
    #[test]
    fn one_snapshot_serializes_to_the_recorded_shape() {
        let t0 = Instant::now();
        let mut m = Measured {
            started: Some(t0),
            last_tick: Some(t0 + Duration::from_secs(2)),
            ticks: 81,
            rss_cpu: Duration::from_millis(20),
            pss_passes: 3,
            pss_cpu: Duration::from_millis(30),
            pss_wall: Duration::from_millis(90),
            max_processes: 3,
            ..Default::default()
        };
        let startup = [
            process(ProcessType::Browser, "browser", 100),
            process(ProcessType::Renderer, "tab", 40),
        ];
        record_rss(m.phase(STARTUP_PHASE, 0.0), startup.iter());
        let load = [
            process(ProcessType::Browser, "browser", 120),
            process(ProcessType::Renderer, "tab", 300),
            process(ProcessType::Utility, "utility:socket", 8),
        ];
        record_rss(m.phase("model-load", 500.0), load.iter());
        let pss = BTreeMap::from([
            (ProcessType::Browser, 90 << 20),
            (ProcessType::Renderer, 280 << 20),
            (ProcessType::Utility, 5 << 20),
        ]);
        record_pss(m.phase("model-load", 600.0), &pss);
        // The utility process exits: its type ends the phase at zero.
        record_rss(m.phase("model-load", 1250.5), load[..2].iter());
        let pss = BTreeMap::from([
            (ProcessType::Browser, 95 << 20),
            (ProcessType::Renderer, 250 << 20),
        ]);
        record_pss(m.phase("model-load", 1300.0), &pss);
        // The driver's VRAM: only the GPU process holds any; the others count at zero.
        let vram = BTreeMap::from([(ProcessType::Browser, 0), (ProcessType::Renderer, 64 << 20)]);
        record_driver_gpu(m.phase("model-load", 1310.0), &vram);

        let driver = DriverGpuMemory {
            available: true,
            reason: None,
            source: Some(super::super::driver_gpu::SOURCE.to_owned()),
            devices: Some(1),
            samples: 1,
            pids_outside_tree: None,
            peak_bytes_outside_tree: None,
        };
        let answer = ProcessMemory::from_measured(&m, Duration::from_millis(25), driver);
        let text = serde_json::to_string(&answer).unwrap();
        let expected = concat!(
            r#"{"sampler":{"source":"RSS from /proc/PID/statm every tick; PSS from /proc/PID/smaps_rollup on a second thread, within 5% of one core","#,
            r#""ticks":81,"achievedHz":40.0,"rssCpuShareOfOneCore":0.01,"pssPasses":3,"pssHz":1.0,"#,
            r#""meanPssPassCpuMs":10.0,"meanPssPassWallMs":30.0,"pssCpuShareOfOneCore":0.015,"#,
            r#""cpuShareOfOneCore":0.025,"maxProcesses":3},"intervalMs":25.0,"phases":{"#,
            r#""startup":{"samples":1,"pssSamples":0,"durationMs":0.0,"byType":{"#,
            r#""browser":{"peakRssBytes":104857600,"endRssBytes":104857600,"peakProcesses":1},"#,
            r#""renderer":{"peakRssBytes":41943040,"endRssBytes":41943040,"peakProcesses":1}},"#,
            r#""total":{"peakRssBytes":146800640,"endRssBytes":146800640,"peakProcesses":2},"#,
            r#""peakRssBytesByLabel":{"browser":104857600,"tab":41943040}},"#,
            r#""model-load":{"samples":2,"pssSamples":2,"driverGpuSamples":1,"durationMs":810.0,"byType":{"#,
            r#""browser":{"peakRssBytes":125829120,"endRssBytes":125829120,"peakProcesses":1,"peakPssBytes":99614720,"endPssBytes":99614720,"peakDriverGpuBytes":0,"endDriverGpuBytes":0},"#,
            r#""renderer":{"peakRssBytes":314572800,"endRssBytes":314572800,"peakProcesses":1,"peakPssBytes":293601280,"endPssBytes":262144000,"peakDriverGpuBytes":67108864,"endDriverGpuBytes":67108864},"#,
            r#""utility":{"peakRssBytes":8388608,"endRssBytes":0,"peakProcesses":1,"peakPssBytes":5242880,"endPssBytes":0}},"#,
            r#""total":{"peakRssBytes":448790528,"endRssBytes":440401920,"peakProcesses":3,"peakPssBytes":393216000,"endPssBytes":361758720,"peakDriverGpuBytes":67108864,"endDriverGpuBytes":67108864},"#,
            r#""peakRssBytesByLabel":{"browser":125829120,"tab":314572800,"utility:socket":8388608}}},"#,
            r#""driverGpuMemory":{"available":true,"source":"NVML running_compute_processes and running_graphics_processes of every device, matched by pid","devices":1,"samples":1}}"#,
        );
        assert_eq!(text, expected);
        // The server inserts `available` into the Value form, which must keep the same order.
        let value = serde_json::to_value(&answer).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), expected);
    }
}
