//! Samples the memory of the browser's whole process tree from `/proc`, many times a second,
//! and attributes every sample to the phase the page marked last.
//!
//! The runner makes itself a child subreaper (see [`crate::procfs::become_subreaper`]), so
//! every process the browser starts stays in the runner's tree even when its parent exits
//! (Firefox re-launches itself, Chromium's crash handler double-forks). The tree is therefore
//! the descendants of this process that carry the run's browser tag
//! ([`crate::browser_processes`]): a sweep's other jobs run browsers of their own in the same
//! tree, and each run's figures are its own browser's.
//!
//! Every tick reads RSS from `/proc/PID/statm` (one short read per process). PSS comes from
//! `/proc/PID/smaps_rollup`, which walks every page table of the process and so costs far more;
//! it is read as often as keeps its own cost under `PSS_DUTY` (5%) of one core.
//!
//! A third thread asks the NVIDIA driver (NVML, `driver_gpu`) for the VRAM of the same
//! processes every tick, so a slow driver call never delays an RSS tick; where NVML is absent
//! the thread ends at once and the answer says why.
//!
//! This file holds the sampling threads; `stats` what they accumulate, `snapshot` the answer
//! built from it.

mod driver_gpu;
pub mod firefox_report;
mod firefox_report_dump;
mod snapshot;
mod stats;
mod step;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::memory_expected::{FloorAnswer, Prediction};

pub use driver_gpu::{DriverGpu, DriverGpuMemory, GpuProcessMemory, NvmlProcesses};
use firefox_report_dump::Ask;
pub use snapshot::{Beside, PhaseMemory, ProcessMemory, SamplerFigures};
pub use stats::Extent;
use stats::{record_driver_gpu, record_pss, record_pss_shmem, record_rss, Measured, Tracked};
pub use step::{StepFigures, StepMemory};

use crate::browser_processes::{BrowserProcesses, BrowserTag};
use crate::process_type::{classify, Classified, ProcessType};
use crate::procfs::{page_size, read_cmdline, read_rollup, read_rss, thread_cpu_time};

pub use crate::memory_expected::STARTUP_PHASE;

/// The share of one core that PSS reading may take: the gap after a PSS pass is stretched to
/// keep within it (except right after a mark). Measured with `examples/sampler_cost.rs`: a
/// PSS pass over Chromium holding 1.9 GiB cost 35 ms of CPU, 255 times an RSS tick, so PSS at
/// the RSS rate would take more than a whole core.
const PSS_DUTY: f64 = 0.05;

/// How long the runner waits for Firefox's memory report after asking: a report of the
/// browser with the models loaded took a few seconds here; past this the report's reason says
/// so and the run goes on.
pub const MEMORY_REPORT_LIMIT: Duration = Duration::from_secs(15);

/// The sampler's phase after the run's end report while Firefox minimizes its memory
/// ([`Sampler::minimize_and_report`]): none of the page's phases, so that theirs stay as the
/// page left them.
pub const MINIMIZE_PHASE: &str = "minimize";
/// The reading, and the report, taken once Firefox minimized its memory.
pub const MINIMIZED: &str = "minimized";

/// How often the process tree is walked again for new processes, in ticks. Processes come
/// and go a handful of times per run; a new one is missed for at most this many ticks.
const REDISCOVER_EVERY_TICKS: u64 = 4;

struct Shared {
    phase: Mutex<String>,
    /// The browser's main process, once launched (0 before).
    browser_pid: AtomicU32,
    /// The processes the RSS thread found last, for the PSS thread and for marks.
    processes: Mutex<Vec<(u32, Classified)>>,
    measured: Mutex<Measured>,
    driver_gpu: Mutex<DriverGpu>,
    /// The run's floor and the prediction made from it, set before the browser starts.
    floor: Mutex<Option<(FloorAnswer, Option<Prediction>)>>,
    /// Under `--memory-reports`: Firefox's TMPDIR and the reports taken so far.
    memory_reports: Mutex<Option<(std::path::PathBuf, Vec<firefox_report::PhaseReport>)>>,
    stop: AtomicBool,
    started: Instant,
}

impl Shared {
    fn current_phase(&self) -> String {
        self.phase.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn measured(&self) -> std::sync::MutexGuard<'_, Measured> {
        self.measured.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn driver_gpu(&self) -> std::sync::MutexGuard<'_, DriverGpu> {
        self.driver_gpu.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One driver VRAM sample of `processes`: the bytes per process type, `None` once the
    /// driver is unavailable. It counts towards `phase`, or with `None` towards the phase
    /// current once the driver has answered, so that a reading the driver loop takes after a
    /// mark never counts towards the phase the mark ended.
    fn sample_driver_gpu(
        &self,
        processes: &[(u32, Classified)],
        phase: Option<&str>,
    ) -> Option<BTreeMap<ProcessType, u64>> {
        let pids: HashSet<u32> = processes.iter().map(|(pid, _)| *pid).collect();
        let by_pid = self.driver_gpu().sample(&pids)?;
        let current;
        let phase = match phase {
            Some(phase) => phase,
            None => {
                current = self.current_phase();
                current.as_str()
            }
        };
        // Every type present counts, at zero where the driver lists none of its processes.
        let mut by_type: BTreeMap<ProcessType, u64> = BTreeMap::new();
        for (pid, class) in processes {
            *by_type.entry(class.kind).or_default() += by_pid.get(pid).copied().unwrap_or(0);
        }
        let at_ms = ms_since(self.started, Instant::now());
        record_driver_gpu(self.measured().phase(phase, at_ms), &by_type);
        Some(by_type)
    }

    /// One PSS pass over `processes`, counted towards `phase`: the CPU it took, and PSS and its
    /// shared part per process type.
    fn pss_pass(&self, processes: &[(u32, Classified)], phase: &str) -> PssPass {
        let cpu_before = thread_cpu_time();
        let wall_before = Instant::now();
        let mut pss: BTreeMap<ProcessType, u64> = BTreeMap::new();
        let mut shmem: BTreeMap<ProcessType, u64> = BTreeMap::new();
        let mut shmem_known = true;
        for (pid, class) in processes {
            // A process that exited during the pass simply holds nothing any more.
            if let Some(rollup) = read_rollup(*pid) {
                *pss.entry(class.kind).or_default() += rollup.pss;
                match rollup.pss_shmem {
                    Some(bytes) => *shmem.entry(class.kind).or_default() += bytes,
                    None => shmem_known = false,
                }
            }
        }
        let cpu = thread_cpu_time().saturating_sub(cpu_before);
        let done = Instant::now();
        let mut m = self.measured();
        let stats = m.phase(phase, ms_since(self.started, done));
        record_pss(stats, &pss);
        if shmem_known {
            record_pss_shmem(stats, &shmem);
        }
        m.pss_passes += 1;
        m.pss_cpu += cpu;
        m.pss_wall += done.duration_since(wall_before);
        PssPass {
            cpu,
            pss,
            shmem: shmem_known.then_some(shmem),
        }
    }
}

/// What one PSS pass read: its CPU, and per process type PSS and (where the kernel reports
/// it) its shared part.
struct PssPass {
    cpu: Duration,
    pss: BTreeMap<ProcessType, u64>,
    shmem: Option<BTreeMap<ProcessType, u64>>,
}

/// A running sampler: one thread reads RSS every tick, another PSS as often as its budget
/// allows, so a slow PSS pass never delays an RSS tick. Dropping it stops both.
pub struct Sampler {
    shared: Arc<Shared>,
    interval: Duration,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Sampler {
    /// Starts sampling every descendant of this process that carries `tag`, every
    /// `interval`. It starts before the browser so that the startup is measured too;
    /// [`Sampler::set_browser_pid`] then names the browser's main process. Driver VRAM comes
    /// from NVML where it loads.
    pub fn start(interval: Duration, tag: BrowserTag) -> Self {
        Self::start_with_driver(interval, tag, DriverGpu::open())
    }

    /// [`Sampler::start`] with the driver VRAM read from `driver_gpu`.
    pub fn start_with_driver(interval: Duration, tag: BrowserTag, driver_gpu: DriverGpu) -> Self {
        let started = Instant::now();
        let shared = Arc::new(Shared {
            phase: Mutex::new(STARTUP_PHASE.to_owned()),
            browser_pid: AtomicU32::new(0),
            processes: Mutex::new(Vec::new()),
            measured: Mutex::new(Measured {
                started: Some(started),
                ..Default::default()
            }),
            driver_gpu: Mutex::new(driver_gpu),
            floor: Mutex::new(None),
            memory_reports: Mutex::new(None),
            stop: AtomicBool::new(false),
            started,
        });
        let rss_shared = Arc::clone(&shared);
        let pss_shared = Arc::clone(&shared);
        let driver_shared = Arc::clone(&shared);
        let threads = vec![
            std::thread::Builder::new()
                .name("rss-sampler".into())
                .spawn(move || rss_loop(&rss_shared, interval, tag))
                .expect("spawning the RSS sampler thread"),
            std::thread::Builder::new()
                .name("pss-sampler".into())
                .spawn(move || pss_loop(&pss_shared, interval))
                .expect("spawning the PSS sampler thread"),
            std::thread::Builder::new()
                .name("driver-gpu-sampler".into())
                .spawn(move || driver_gpu_loop(&driver_shared, interval))
                .expect("spawning the driver VRAM sampler thread"),
        ];
        Self {
            shared,
            interval,
            threads: Mutex::new(threads),
        }
    }

    pub fn set_browser_pid(&self, pid: u32) {
        self.shared.browser_pid.store(pid, Ordering::Relaxed);
    }

    /// Switches the phase that new samples count towards, and samples RSS at once: the page
    /// waits for the mark's answer, so this sample falls inside the new phase however short
    /// it is (baseline lasted under one 25 ms tick in Firefox and had no sample otherwise).
    pub fn mark(&self, phase: &str) {
        {
            let mut current = self.shared.phase.lock().unwrap_or_else(|e| e.into_inner());
            phase.clone_into(&mut current);
        }
        self.sample_now(phase);
    }

    /// A step within the current phase (the release phase's `sessions`, `device`, …): RSS, PSS
    /// with its shared part and driver VRAM taken at once, counted towards the phase as a
    /// mark's samples are, and kept as the step's own figures per process type.
    pub fn step(&self, step: &str) {
        let phase = self.current_phase();
        let at_ms = ms_since(self.shared.started, Instant::now());
        let Some(taken) = self.sample_now(&phase) else {
            return;
        };
        self.shared
            .measured()
            .steps
            .push(StepMemory::new(&phase, step, at_ms, taken));
    }

    /// RSS, driver VRAM and PSS of every tracked process now, counted towards `phase`; `None`
    /// while no process is tracked.
    fn sample_now(&self, phase: &str) -> Option<StepFigures> {
        let processes = self
            .shared
            .processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let page = page_size();
        let tracked: Vec<Tracked> = processes
            .iter()
            .filter_map(|(pid, class)| {
                read_rss(*pid, page).map(|rss| Tracked {
                    class: class.clone(),
                    rss,
                })
            })
            .collect();
        if tracked.is_empty() {
            return None;
        }
        let at_ms = ms_since(self.shared.started, Instant::now());
        record_rss(self.shared.measured().phase(phase, at_ms), tracked.iter());
        // The driver too, so a phase shorter than a tick has its VRAM; and PSS, so that a
        // phase shorter than a PSS pass (the idle browser's `baseline`, tens of milliseconds,
        // against 170 ms for a pass with the models loaded) has PSS to rise from.
        let driver_gpu = self.shared.sample_driver_gpu(&processes, Some(phase));
        let pss = self.shared.pss_pass(&processes, phase);
        Some(StepFigures::gather(
            &tracked, pss.pss, pss.shmem, driver_gpu,
        ))
    }

    pub fn current_phase(&self) -> String {
        self.shared.current_phase()
    }

    /// The run's floor per phase and the memory predicted from it, carried in every answer
    /// from now on, so the record holds the prediction beside what was measured.
    pub fn set_floor(&self, floor: FloorAnswer, prediction: Option<Prediction>) {
        *self.shared.floor.lock().unwrap_or_else(|e| e.into_inner()) = Some((floor, prediction));
    }

    /// Takes Firefox's memory reports from now on, asking through the FIFO in `dir`
    /// (`--memory-reports`).
    pub fn enable_memory_reports(&self, dir: std::path::PathBuf) {
        *self.memory_reports() = Some((dir, Vec::new()));
    }

    /// Whether [`Sampler::take_memory_report`] asks Firefox for anything.
    pub fn takes_memory_reports(&self) -> bool {
        self.memory_reports().is_some()
    }

    /// Asks Firefox for its memory report, waits for it (at most
    /// [`MEMORY_REPORT_LIMIT`]; blocking) and keeps its parts, or why there are none, as taken
    /// at `at_phase`. Nothing without [`Sampler::enable_memory_reports`].
    pub fn take_memory_report(&self, at_phase: &str) {
        self.report(at_phase, Ask::Report);
    }

    /// Once the page posted its result (after release and the end report): Firefox minimizes
    /// every process's memory, the way it does under memory pressure, and reports; then one
    /// reading as the step [`MINIMIZED`] of the phase [`MINIMIZE_PHASE`], so that what the
    /// browser gives back when pushed is measured apart from what release gave back by
    /// itself (the release phase's end stays before it). Nothing without
    /// [`Sampler::enable_memory_reports`].
    pub fn minimize_and_report(&self) {
        if !self.takes_memory_reports() {
            return;
        }
        self.mark(MINIMIZE_PHASE);
        self.report(MINIMIZED, Ask::MinimizeThenReport);
        self.step(MINIMIZED);
    }

    fn report(&self, at_phase: &str, ask: Ask) {
        let Some(dir) = self.memory_reports().as_ref().map(|(dir, _)| dir.clone()) else {
            return;
        };
        // A minimize runs every process's collectors before the report: give it longer.
        let limit = match ask {
            Ask::Report => MEMORY_REPORT_LIMIT,
            Ask::MinimizeThenReport => MEMORY_REPORT_LIMIT * 2,
        };
        let parsed = firefox_report_dump::request(&dir, ask, limit)
            .and_then(|gz| firefox_report::parse_gz(&gz).map_err(|e| format!("{e:#}")));
        let report = match parsed {
            Ok(by_type) => firefox_report::PhaseReport {
                at_phase: at_phase.to_owned(),
                by_type: Some(by_type),
                reason: None,
            },
            Err(reason) => firefox_report::PhaseReport {
                at_phase: at_phase.to_owned(),
                by_type: None,
                reason: Some(reason),
            },
        };
        if let Some((_, taken)) = self.memory_reports().as_mut() {
            taken.push(report);
        }
    }

    fn memory_reports(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(std::path::PathBuf, Vec<firefox_report::PhaseReport>)>>
    {
        self.shared
            .memory_reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The `processMemory` answer of `/benchmark-result`, so far (less `available`).
    pub fn process_memory(&self) -> ProcessMemory {
        let driver = self.shared.driver_gpu().answer();
        let mut memory =
            ProcessMemory::from_measured(&self.shared.measured(), self.interval, driver);
        if let Some((floor, prediction)) = self
            .shared
            .floor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            memory.beside.floor = Some(floor);
            memory.beside.prediction = prediction;
        }
        if let Some((_, taken)) = self.memory_reports().as_ref() {
            memory.beside.reports = taken.clone();
        }
        memory
    }

    /// [`Sampler::process_memory`] as JSON, for the server to add `available` to.
    pub fn snapshot(&self) -> Value {
        serde_json::to_value(self.process_memory()).expect("processMemory has string map keys only")
    }

    /// Stops the threads and waits for them.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

fn ms_since(started: Instant, at: Instant) -> f64 {
    at.duration_since(started).as_secs_f64() * 1e3
}

fn rss_loop(shared: &Shared, interval: Duration, tag: BrowserTag) {
    let mut browser = BrowserProcesses::new(tag);
    let page = page_size();
    let cpu_at_start = thread_cpu_time();
    let mut tracked: HashMap<u32, Tracked> = HashMap::new();
    let mut browser_main = 0;
    let mut next_tick = Instant::now();
    let mut tick: u64 = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if tick.is_multiple_of(REDISCOVER_EVERY_TICKS) {
            let named = shared.browser_pid.load(Ordering::Relaxed);
            if named != browser_main {
                // Classified before the browser was named: classify again.
                browser_main = named;
                browser.set_main(named);
                tracked.clear();
            }
            let pids = browser.scan();
            tracked.retain(|pid, _| pids.contains(pid));
            for pid in pids {
                // A child forked from Chromium's zygote shows the zygote's command line until
                // it sets its own title: classify "other" processes again until they do.
                if tracked
                    .get(&pid)
                    .is_some_and(|p| p.class.kind != ProcessType::Other)
                {
                    continue;
                }
                let Some(cmdline) = read_cmdline(pid) else {
                    continue;
                };
                let class = classify(&cmdline, pid == browser_main);
                let rss = tracked.get(&pid).map_or(0, |p| p.rss);
                tracked.insert(pid, Tracked { class, rss });
            }
        }
        tracked.retain(|pid, process| match read_rss(*pid, page) {
            Some(rss) => {
                process.rss = rss;
                true
            }
            None => false,
        });
        *shared.processes.lock().unwrap_or_else(|e| e.into_inner()) = tracked
            .iter()
            .map(|(pid, p)| (*pid, p.class.clone()))
            .collect();
        let phase = shared.current_phase();
        {
            let mut m = shared.measured();
            m.max_processes = m.max_processes.max(tracked.len());
            record_rss(
                m.phase(&phase, ms_since(shared.started, now)),
                tracked.values(),
            );
            m.ticks += 1;
            m.last_tick = Some(now);
            m.rss_cpu = thread_cpu_time().saturating_sub(cpu_at_start);
        }
        tick += 1;
        next_tick += interval;
        let now = Instant::now();
        if next_tick > now {
            std::thread::sleep(next_tick - now);
        } else {
            // Fell behind (the machine is busy): skip the missed ticks rather than burst.
            next_tick = now;
        }
    }
}

/// Asks the driver every tick for the VRAM of the processes the RSS thread found last; ends
/// as soon as the driver is unavailable (at once where NVML does not load).
fn driver_gpu_loop(shared: &Shared, interval: Duration) {
    let mut next_tick = Instant::now();
    while !shared.stop.load(Ordering::Relaxed) {
        let processes = shared
            .processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if !processes.is_empty() && shared.sample_driver_gpu(&processes, None).is_none() {
            return;
        }
        if matches!(*shared.driver_gpu(), DriverGpu::Unavailable { .. }) {
            return;
        }
        next_tick += interval;
        let now = Instant::now();
        if next_tick > now {
            std::thread::sleep(next_tick - now);
        } else {
            next_tick = now;
        }
    }
}

fn pss_loop(shared: &Shared, interval: Duration) {
    while !shared.stop.load(Ordering::Relaxed) {
        let processes = shared
            .processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if processes.is_empty() {
            std::thread::sleep(interval);
            continue;
        }
        let phase = shared.current_phase();
        let cpu = shared.pss_pass(&processes, &phase).cpu;
        let done = Instant::now();
        // The page-table walk costs CPU in proportion to the browser's memory; the wall time
        // also counts waiting for the browser's own memory locks, which costs nobody CPU.
        let gap = interval.max(cpu.mul_f64(1.0 / PSS_DUTY - 1.0));
        // A newly marked phase gets a pass at once, whatever the budget says: phases such as
        // vision-release or release last well under the gap (a pass took 28 ms of CPU and
        // 170 ms of wall time with the page's models loaded in Firefox here, so the gap is
        // about half a second), and would otherwise have no PSS at all.
        let until = done + gap;
        while !shared.stop.load(Ordering::Relaxed)
            && Instant::now() < until
            && shared.current_phase() == phase
        {
            std::thread::sleep(interval.min(until.saturating_duration_since(Instant::now())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit of every wait below: no figure of the test (a loaded machine only takes
    /// longer), but past it the test fails, printing what the sampler had seen.
    const LIMIT: Duration = Duration::from_secs(60);

    /// Waits until `ready` holds for the sampler's answer, and returns that answer.
    fn wait_until(sampler: &Sampler, what: &str, ready: impl Fn(&ProcessMemory) -> bool) {
        let started = Instant::now();
        loop {
            let memory = sampler.process_memory();
            if ready(&memory) {
                return;
            }
            assert!(
                started.elapsed() < LIMIT,
                "{what}: not seen within {LIMIT:?}; the sampler's answer: {}",
                serde_json::to_string(&memory).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the sampler's process list holds `pid`.
    fn wait_until_tracked(sampler: &Sampler, pid: u32) {
        wait_until(sampler, &format!("process {pid} tracked"), |_| {
            let processes = sampler.shared.processes.lock().unwrap();
            processes.iter().any(|(p, _)| *p == pid)
        });
    }

    fn phase<'a>(memory: &'a ProcessMemory, name: &str) -> Option<&'a PhaseMemory> {
        memory
            .phases
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }

    /// Prints the rates reached: they depend on how busy the machine is, so they are shown,
    /// not asserted.
    fn print_rates(sampler: &Sampler) {
        let memory = sampler.snapshot();
        println!(
            "sampler reached {:.1} Hz: {}",
            memory["sampler"]["achievedHz"].as_f64().unwrap_or(0.0),
            memory["sampler"]
        );
    }

    #[test]
    fn samples_a_child_process_and_attributes_phases() {
        // A real child process that grows its memory once the test says so (a file appears)
        // and holds it until told to end (another file), so that however loaded the machine,
        // the growth falls in the "grow" phase and is sampled there.
        let signal = |name: &str| {
            std::env::temp_dir().join(format!("ocr-bench-{name}-{}", std::process::id()))
        };
        let (go, end) = (signal("grow"), signal("end"));
        let _ = std::fs::remove_file(&go);
        let _ = std::fs::remove_file(&end);
        let tag = BrowserTag::new();
        let mut child = std::process::Command::new("sh")
            .env(crate::browser_processes::TAG_VARIABLE, tag.value())
            .args([
                "-c",
                "while [ ! -e \"$1\" ]; do sleep 0.01; done; x=$(head -c 40000000 /dev/zero | tr '\\0' a); while [ ! -e \"$2\" ]; do sleep 0.01; done",
                "sh",
            ])
            .arg(&go)
            .arg(&end)
            .spawn()
            .expect("sh");
        let sampler = Sampler::start(Duration::from_millis(10), tag);
        wait_until_tracked(&sampler, child.id());
        sampler.mark("baseline");
        // Ticks go on after a mark, and every marked phase gets a PSS pass.
        let sampled = |name: &'static str| {
            move |m: &ProcessMemory| {
                phase(m, name).is_some_and(|p| {
                    p.samples >= 2
                        && p.pss_samples >= 1
                        && p.total.peak_rss > 0
                        && p.total.peak_pss.is_some_and(|b| b > 0)
                })
            }
        };
        wait_until(&sampler, "baseline sampled", sampled("baseline"));
        // A phase shorter than a tick still gets the sample taken at its mark.
        sampler.mark("instant");
        sampler.mark("grow");
        std::fs::write(&go, b"").expect("the signal file");
        // `$(…)` holds 40 MB in the shell: the grow phase must see it, the baseline must not.
        wait_until(&sampler, "the 40 MB in the grow phase", |m| {
            let peak = |name| phase(m, name).map_or(0, |p| p.total.peak_rss);
            sampled("grow")(m) && peak("grow") > peak("baseline") + 30_000_000
        });
        std::fs::write(&end, b"").expect("the signal file");
        let _ = child.wait();
        let _ = std::fs::remove_file(&go);
        let _ = std::fs::remove_file(&end);
        sampler.stop();
        let snapshot = sampler.snapshot();
        let phases = snapshot["phases"].as_object().expect("phases");
        let names: Vec<&str> = phases.keys().map(String::as_str).collect();
        assert_eq!(names, [STARTUP_PHASE, "baseline", "instant", "grow"]);
        assert!(
            phases["instant"]["samples"].as_u64().unwrap() >= 1,
            "{}",
            phases["instant"]
        );
        // Every marked phase, however short, has PSS too (taken at its mark), and the shared
        // part of it where the kernel reports one.
        for name in ["baseline", "instant", "grow"] {
            let total = &phases[name]["total"];
            assert!(
                phases[name]["pssSamples"].as_u64().unwrap() >= 1,
                "{name}: {}",
                phases[name]
            );
            let (pss, shmem) = (
                total["peakPssBytes"].as_u64(),
                total["peakPssShmemBytes"].as_u64(),
            );
            assert!(pss.is_some_and(|pss| pss > 0), "{name}: {total}");
            if std::fs::read_to_string("/proc/self/smaps_rollup")
                .is_ok_and(|t| t.contains("Pss_Shmem:"))
            {
                assert!(
                    shmem.is_some_and(|shmem| shmem <= pss.unwrap()),
                    "{name}: {total}"
                );
            }
        }
        // Without the NVIDIA driver (this machine) the answer says why, and no phase has
        // driver figures.
        let driver = &snapshot["driverGpuMemory"];
        if driver["available"] == false {
            let reason = driver["reason"].as_str().unwrap();
            assert!(
                reason == driver_gpu::NO_NVIDIA_DRIVER || reason.starts_with("NVML: "),
                "{driver}"
            );
            assert!(phases
                .values()
                .all(|p| p["total"].get("peakDriverGpuBytes").is_none()));
        }
        print_rates(&sampler);
    }

    /// A driver that lists one process with what `bytes` holds at the time of asking.
    struct OneProcess {
        pid: u32,
        bytes: Arc<std::sync::atomic::AtomicU64>,
    }

    impl GpuProcessMemory for OneProcess {
        fn bytes_by_pid(&mut self) -> Result<HashMap<u32, u64>, String> {
            // A process outside the tree, which must not count.
            Ok(HashMap::from([
                (self.pid, self.bytes.load(Ordering::Relaxed)),
                (1, 1 << 40),
            ]))
        }
        fn devices(&self) -> u32 {
            1
        }
    }

    #[test]
    fn driver_vram_is_attributed_to_phases_and_types_like_rss() {
        // A child that outlives the test's waits (killed below).
        let tag = BrowserTag::new();
        let mut child = std::process::Command::new("sleep")
            .env(crate::browser_processes::TAG_VARIABLE, tag.value())
            .arg("600")
            .spawn()
            .expect("sleep");
        let bytes = Arc::new(std::sync::atomic::AtomicU64::new(10 << 20));
        let driver = DriverGpu::from_source(Box::new(OneProcess {
            pid: child.id(),
            bytes: Arc::clone(&bytes),
        }));
        let sampler = Sampler::start_with_driver(Duration::from_millis(10), tag, driver);
        wait_until_tracked(&sampler, child.id());
        // Each mark asks the driver at once, so "small" has its bytes however short it is.
        sampler.mark("small");
        // The mark first: a tick between a store and the mark would give "small" the new bytes.
        sampler.mark("large");
        bytes.store(50 << 20, Ordering::Relaxed);
        wait_until(&sampler, "the new bytes in the large phase", |m| {
            phase(m, "large").is_some_and(|p| p.total.peak_driver_gpu == Some(50 << 20))
        });
        let _ = child.kill();
        let _ = child.wait();
        sampler.stop();
        let memory = sampler.process_memory();
        let driver = memory.beside.driver_gpu_memory.as_ref().expect("an answer");
        // One sample at each mark, and the one that saw the new bytes.
        assert!(driver.available && driver.samples >= 3, "{driver:?}");
        let (small, large) = (
            phase(&memory, "small").expect("small"),
            phase(&memory, "large").expect("large"),
        );
        assert!(small.driver_gpu_samples >= 1, "{small:?}");
        assert_eq!(small.total.peak_driver_gpu, Some(10 << 20));
        assert_eq!(large.total.peak_driver_gpu, Some(50 << 20));
        let other = &large.by_type[&ProcessType::Other];
        assert_eq!(other.peak_driver_gpu, Some(50 << 20));
        assert_eq!(other.end_driver_gpu, Some(50 << 20));
        print_rates(&sampler);
    }
}
