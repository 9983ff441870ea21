//! Driver VRAM per process, through NVML: what the NVIDIA driver says each process of the
//! browser's tree holds on every GPU, whatever the page's own accounting says.
//!
//! `nvml-wrapper` loads `libnvidia-ml.so` at run time, so the runner starts and samples as
//! before on a machine without the NVIDIA driver: [`DriverGpu::open`] then says why in the
//! library's own words, and the record carries that reason once.

use std::collections::{HashMap, HashSet};

use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::Nvml;
use serde::{Deserialize, Serialize};

/// How the driver's figures are read, carried in every answer that has them.
pub const SOURCE: &str =
    "NVML running_compute_processes and running_graphics_processes of every device, matched by pid";

/// Per-process GPU memory as some driver reports it: pid to bytes, summed over devices.
pub trait GpuProcessMemory: Send {
    /// Every process the driver knows on any device, with its bytes; `Err` in the driver's
    /// words when it cannot answer.
    fn bytes_by_pid(&mut self) -> Result<HashMap<u32, u64>, String>;

    /// How many devices it reads.
    fn devices(&self) -> u32;
}

/// NVML, once initialised.
pub struct NvmlProcesses {
    nvml: Nvml,
    devices: u32,
}

impl NvmlProcesses {
    pub fn init() -> Result<Self, NvmlError> {
        let nvml = Nvml::init()?;
        let devices = nvml.device_count()?;
        Ok(Self { nvml, devices })
    }
}

/// A process that has both a compute and a graphics context on one device is listed in
/// both lists with the same figure, its memory on that device (nvidia-smi shows it once, as
/// "C+G"): per device the larger entry counts, across devices they add up.
fn merge_device(into: &mut HashMap<u32, u64>, compute: &[ProcessInfo], graphics: &[ProcessInfo]) {
    let mut on_device: HashMap<u32, u64> = HashMap::new();
    for process in compute.iter().chain(graphics) {
        // Under WDDM the driver gives no figure; a process without one holds nothing we know.
        let bytes = match process.used_gpu_memory {
            UsedGpuMemory::Used(bytes) => bytes,
            UsedGpuMemory::Unavailable => 0,
        };
        let entry = on_device.entry(process.pid).or_default();
        *entry = (*entry).max(bytes);
    }
    for (pid, bytes) in on_device {
        *into.entry(pid).or_default() += bytes;
    }
}

impl GpuProcessMemory for NvmlProcesses {
    fn bytes_by_pid(&mut self) -> Result<HashMap<u32, u64>, String> {
        let mut by_pid = HashMap::new();
        for index in 0..self.devices {
            let device = self
                .nvml
                .device_by_index(index)
                .map_err(|e| format!("device {index}: {e}"))?;
            let compute = device
                .running_compute_processes()
                .map_err(|e| format!("device {index}: running compute processes: {e}"))?;
            let graphics = device
                .running_graphics_processes()
                .map_err(|e| format!("device {index}: running graphics processes: {e}"))?;
            merge_device(&mut by_pid, &compute, &graphics);
        }
        Ok(by_pid)
    }

    fn devices(&self) -> u32 {
        self.devices
    }
}

/// The driver source of one run: readable, or why not (the first failure ends it).
pub enum DriverGpu {
    Reading {
        source: Box<dyn GpuProcessMemory>,
        samples: u64,
        outside: Outside,
    },
    Unavailable {
        reason: String,
        samples: u64,
    },
}

/// Said where NVML's library cannot be loaded or its driver is not running: the ordinary
/// case on a machine without an NVIDIA GPU, where the library's own words (a libloading error
/// naming `libnvidia-ml.so.1`) only alarm.
pub const NO_NVIDIA_DRIVER: &str = "no NVIDIA driver: no VRAM figures";

/// Why NVML gives no figures: no driver in plain words, any other failure in NVML's.
fn unavailable_reason(error: &NvmlError) -> String {
    match error {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound | NvmlError::DriverNotLoaded => {
            NO_NVIDIA_DRIVER.to_owned()
        }
        other => format!("NVML: {other}"),
    }
}

impl DriverGpu {
    /// NVML if it loads and initialises, else why not ([`unavailable_reason`]).
    pub fn open() -> Self {
        match NvmlProcesses::init() {
            Ok(nvml) => Self::from_source(Box::new(nvml)),
            Err(e) => Self::Unavailable {
                reason: unavailable_reason(&e),
                samples: 0,
            },
        }
    }

    pub fn from_source(source: Box<dyn GpuProcessMemory>) -> Self {
        Self::Reading {
            source,
            samples: 0,
            outside: Outside::default(),
        }
    }

    /// The driver bytes of each of `pids` (those it does not list hold none), or `None` once
    /// the driver is unavailable. A failure is kept as the reason and ends the sampling: a
    /// driver that failed once is not asked again on every tick.
    pub fn sample(&mut self, pids: &HashSet<u32>) -> Option<HashMap<u32, u64>> {
        let Self::Reading {
            source,
            samples,
            outside,
        } = self
        else {
            return None;
        };
        match source.bytes_by_pid() {
            Ok(mut by_pid) => {
                *samples += 1;
                outside.note(&by_pid, pids);
                by_pid.retain(|pid, _| pids.contains(pid));
                Some(by_pid)
            }
            Err(e) => {
                let reason = if *samples == 0 {
                    format!("NVML: {e}")
                } else {
                    format!("NVML failed after {samples} samples: {e}")
                };
                *self = Self::Unavailable {
                    reason,
                    samples: *samples,
                };
                None
            }
        }
    }

    /// The `driverGpuMemory` answer.
    pub fn answer(&self) -> DriverGpuMemory {
        match self {
            Self::Reading {
                source,
                samples,
                outside,
            } => DriverGpuMemory {
                available: true,
                reason: None,
                source: Some(SOURCE.to_owned()),
                devices: Some(source.devices()),
                samples: *samples,
                pids_outside_tree: Some(outside.pids.len()),
                peak_bytes_outside_tree: Some(outside.peak_bytes),
            },
            Self::Unavailable { reason, samples } => DriverGpuMemory {
                available: false,
                reason: Some(reason.clone()),
                source: None,
                devices: None,
                samples: *samples,
                pids_outside_tree: None,
                peak_bytes_outside_tree: None,
            },
        }
    }
}

/// What the driver listed beyond the browser's tree: other programs on a shared GPU, or the
/// browser itself when the driver's pids are of another pid namespace than ours (a container),
/// so that a run whose driver figures are all zero says which of the two it was.
#[derive(Default)]
pub struct Outside {
    pids: HashSet<u32>,
    peak_bytes: u64,
}

impl Outside {
    fn note(&mut self, by_pid: &HashMap<u32, u64>, tree: &HashSet<u32>) {
        let mut bytes = 0;
        for (pid, held) in by_pid.iter().filter(|(pid, _)| !tree.contains(pid)) {
            self.pids.insert(*pid);
            bytes += held;
        }
        self.peak_bytes = self.peak_bytes.max(bytes);
    }
}

/// `processMemory.driverGpuMemory`: whether the driver's per-process VRAM was read, and if
/// not, why (once per run; the phases then carry no driver figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverGpuMemory {
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<u32>,
    pub samples: u64,
    /// How many other pids the driver listed during the run, and the most bytes they held
    /// together in one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_outside_tree: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_bytes_outside_tree: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver that answers from a script: each call the next answer.
    struct Scripted(Vec<Result<HashMap<u32, u64>, String>>);

    impl GpuProcessMemory for Scripted {
        fn bytes_by_pid(&mut self) -> Result<HashMap<u32, u64>, String> {
            self.0.remove(0)
        }
        fn devices(&self) -> u32 {
            1
        }
    }

    fn info(pid: u32, bytes: u64) -> ProcessInfo {
        ProcessInfo {
            pid,
            used_gpu_memory: UsedGpuMemory::Used(bytes),
            gpu_instance_id: None,
            compute_instance_id: None,
        }
    }

    /// NVML really is loaded (or not): without a driver it must fail cleanly, in plain words
    /// when the library or driver is missing. Where a driver exists it must list devices.
    #[test]
    fn nvml_opens_or_says_why() {
        let mut driver = DriverGpu::open();
        let answer = driver.answer();
        match NvmlProcesses::init() {
            Err(e) => {
                assert!(!answer.available);
                let reason = answer.reason.expect("a reason");
                assert_eq!(reason, unavailable_reason(&e));
                assert!(driver.sample(&HashSet::from([1])).is_none());
                let json = serde_json::to_string(&driver.answer()).unwrap();
                assert!(
                    json.starts_with(r#"{"available":false,"reason":""#),
                    "{json}"
                );
            }
            Ok(_) => {
                assert!(answer.available && answer.devices.is_some(), "{answer:?}");
                let own = HashSet::from([std::process::id()]);
                let sampled = driver
                    .sample(&own)
                    .expect("a driver that initialised answers");
                assert!(sampled.keys().all(|pid| own.contains(pid)), "{sampled:?}");
                println!("NVML: {answer:?}, this process holds {sampled:?}");
            }
        }
    }

    #[test]
    fn a_missing_library_or_driver_reads_as_no_nvidia_driver() {
        for missing in [NvmlError::LibraryNotFound, NvmlError::DriverNotLoaded] {
            assert_eq!(unavailable_reason(&missing), NO_NVIDIA_DRIVER);
        }
        // Any other failure keeps NVML's words: they name what went wrong.
        assert_eq!(
            unavailable_reason(&NvmlError::GpuLost),
            format!("NVML: {}", NvmlError::GpuLost)
        );
    }

    #[test]
    fn a_process_in_both_lists_counts_once_per_device_and_devices_add_up() {
        let mut by_pid = HashMap::new();
        merge_device(&mut by_pid, &[info(7, 100), info(8, 5)], &[info(7, 100)]);
        merge_device(&mut by_pid, &[], &[info(7, 30)]);
        assert_eq!(by_pid, HashMap::from([(7, 130), (8, 5)]));
    }

    #[test]
    fn only_the_trees_pids_are_kept_and_a_failure_ends_sampling_with_its_reason() {
        let script = Scripted(vec![
            Ok(HashMap::from([(1, 10), (2, 20)])),
            Err("GPU is lost".to_owned()),
        ]);
        let mut driver = DriverGpu::from_source(Box::new(script));
        let tree = HashSet::from([2, 3]);
        assert_eq!(driver.sample(&tree), Some(HashMap::from([(2, 20)])));
        let answer = driver.answer();
        assert!(answer.available);
        assert_eq!(answer.pids_outside_tree, Some(1));
        assert_eq!(answer.peak_bytes_outside_tree, Some(10));
        assert_eq!(driver.sample(&tree), None);
        // Not asked again: the script has no third answer.
        assert_eq!(driver.sample(&tree), None);
        let answer = driver.answer();
        assert!(!answer.available);
        assert_eq!(
            answer.reason.as_deref(),
            Some("NVML failed after 1 samples: GPU is lost")
        );
        assert_eq!(answer.samples, 1);
    }
}
