//! Samples the memory of the browser's whole process tree from `/proc`, many times a second,
//! and attributes every sample to the phase the page marked last.
//!
//! The runner makes itself a child subreaper (see [`become_subreaper`]), so every process the
//! browser starts stays in the runner's tree even when its parent exits (Firefox re-launches
//! itself, Chromium's crash handler double-forks). The tree is therefore "all descendants of
//! this process", found through `/proc/PID/task/TID/children`.
//!
//! Every tick reads RSS from `/proc/PID/statm` (one short read per process). PSS comes from
//! `/proc/PID/smaps_rollup`, which walks every page table of the process and so costs far more;
//! it is read as often as keeps its own cost under [`PSS_DUTY`] of one core.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

/// The phase before the page's first mark: the browser starting and loading the page.
pub const STARTUP_PHASE: &str = "startup";

/// The share of one core that PSS reading may take: the gap after a PSS pass is stretched to
/// keep within it (except right after a mark). Measured with `examples/sampler_cost.rs`: a
/// PSS pass over Chromium holding 1.9 GiB cost 35 ms of CPU, 255 times an RSS tick, so PSS at
/// the RSS rate would take more than a whole core.
const PSS_DUTY: f64 = 0.05;

/// How often the process tree is walked again for new processes, in ticks. Processes come
/// and go a handful of times per run; a new one is missed for at most this many ticks.
const REDISCOVER_EVERY_TICKS: u64 = 4;

/// Process types of the architecture: Chromium's `--type=` switch, Firefox's
/// `-contentproc` trailing type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessType {
    Browser,
    Gpu,
    Renderer,
    Utility,
    Other,
}

/// A process's type and a finer label (the utility service it hosts, for example), so that a
/// background service never passes as the model's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub kind: ProcessType,
    pub label: String,
}

/// Classifies a process from its command line. `is_browser_main` is true for the process the
/// runner launched itself.
pub fn classify(cmdline: &[String], is_browser_main: bool) -> Classified {
    let exe = cmdline
        .first()
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_owned())
        .unwrap_or_default();
    if let Some(kind) = cmdline.iter().find_map(|a| a.strip_prefix("--type=")) {
        let sub_type = cmdline
            .iter()
            .find_map(|a| a.strip_prefix("--utility-sub-type="));
        return match kind {
            "gpu-process" => Classified {
                kind: ProcessType::Gpu,
                label: "gpu-process".into(),
            },
            "renderer" => Classified {
                kind: ProcessType::Renderer,
                label: "renderer".into(),
            },
            "utility" => Classified {
                kind: ProcessType::Utility,
                label: format!("utility:{}", sub_type.unwrap_or("unknown")),
            },
            other => Classified {
                kind: ProcessType::Other,
                label: other.to_owned(),
            },
        };
    }
    if cmdline.iter().any(|a| a == "-contentproc") {
        // Firefox puts the process type last: `… -contentproc … tab`.
        let last = cmdline.last().map(String::as_str).unwrap_or("");
        let kind = match last {
            "tab" => ProcessType::Renderer,
            "gpu" => ProcessType::Gpu,
            "rdd" | "socket" | "utility" => ProcessType::Utility,
            _ => ProcessType::Other,
        };
        let label = match kind {
            ProcessType::Utility => format!("utility:{last}"),
            _ => last.to_owned(),
        };
        return Classified { kind, label };
    }
    if is_browser_main {
        return Classified {
            kind: ProcessType::Browser,
            label: "browser".into(),
        };
    }
    // Firefox's fork server and background tasks, crash handlers and reporters: none of them
    // is the model's, and each is labelled so that it is seen.
    let background_task = cmdline
        .iter()
        .position(|a| a == "--backgroundtask" || a == "-backgroundtask")
        .and_then(|i| cmdline.get(i + 1));
    let label = if cmdline.iter().any(|a| a == "-forkserver") {
        "forkserver".to_owned()
    } else if let Some(task) = background_task {
        format!("backgroundtask:{task}")
    } else {
        exe
    };
    Classified {
        kind: ProcessType::Other,
        label,
    }
}

/// Makes this process the reaper of its orphaned descendants, so that none escapes the
/// sampled tree or the final kill.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every descendant of `root`, found through the `children` files of each of its threads.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let path = task.path().join("children");
            let Ok(text) = fs::read_to_string(path) else {
                continue;
            };
            for child in text
                .split_ascii_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if !found.contains(&child) {
                    found.push(child);
                    stack.push(child);
                }
            }
        }
    }
    found
}

pub fn read_cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // Chromium rewrites its process title: its children show one NUL-free string.
    let args = match args.as_slice() {
        [single] if single.contains(' ') => {
            single.split_ascii_whitespace().map(str::to_owned).collect()
        }
        _ => args,
    };
    // A zombie has an empty command line; it holds no memory worth sampling.
    if args.is_empty() {
        None
    } else {
        Some(args)
    }
}

pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the running system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// Resident set size in bytes, from the second field of `/proc/PID/statm`.
pub fn read_rss(pid: u32, page: u64) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = text.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page)
}

/// Proportional set size in bytes, from `/proc/PID/smaps_rollup`.
pub fn read_pss(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Pss:"))?;
    let kib: u64 = line.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// CPU time this thread has used.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Peak and end of one process type (or of all of them) within one phase.
#[derive(Debug, Clone, Default)]
struct Extent {
    peak_rss: u64,
    end_rss: u64,
    peak_pss: Option<u64>,
    end_pss: Option<u64>,
    peak_processes: usize,
}

impl Extent {
    fn add_rss(&mut self, rss: u64, processes: usize) {
        self.peak_rss = self.peak_rss.max(rss);
        self.end_rss = rss;
        self.peak_processes = self.peak_processes.max(processes);
    }

    fn add_pss(&mut self, pss: u64) {
        self.peak_pss = Some(self.peak_pss.unwrap_or(0).max(pss));
        self.end_pss = Some(pss);
    }

    fn to_json(&self) -> Value {
        let mut v = json!({
            "peakRssBytes": self.peak_rss,
            "endRssBytes": self.end_rss,
            "peakProcesses": self.peak_processes,
        });
        if let (Some(peak), Some(end)) = (self.peak_pss, self.end_pss) {
            v["peakPssBytes"] = json!(peak);
            v["endPssBytes"] = json!(end);
        }
        v
    }
}

#[derive(Debug, Clone, Default)]
struct PhaseStats {
    samples: u64,
    pss_samples: u64,
    first_ms: f64,
    last_ms: f64,
    by_type: BTreeMap<ProcessType, Extent>,
    total: Extent,
    /// Peak RSS summed over the processes of each label (`utility:network.mojom.NetworkService`,
    /// `tab`, …).
    peak_rss_by_label: BTreeMap<String, u64>,
}

/// One process as the RSS thread knows it.
struct Tracked {
    class: Classified,
    rss: u64,
}

/// What the sampler has measured so far, phase by phase in the order the phases began.
#[derive(Default)]
struct Measured {
    phases: Vec<(String, PhaseStats)>,
    ticks: u64,
    rss_cpu: Duration,
    pss_passes: u64,
    pss_cpu: Duration,
    pss_wall: Duration,
    started: Option<Instant>,
    last_tick: Option<Instant>,
    max_processes: usize,
}

impl Measured {
    /// The entry of `phase`, created (last, keeping the order phases began in) if new.
    fn phase(&mut self, phase: &str, at_ms: f64) -> &mut PhaseStats {
        let index = match self.phases.iter().position(|(name, _)| name == phase) {
            Some(index) => index,
            None => {
                self.phases.push((
                    phase.to_owned(),
                    PhaseStats {
                        first_ms: at_ms,
                        ..Default::default()
                    },
                ));
                self.phases.len() - 1
            }
        };
        let stats = &mut self.phases[index].1;
        stats.last_ms = stats.last_ms.max(at_ms);
        stats
    }
}

struct Shared {
    phase: Mutex<String>,
    /// The browser's main process, once launched (0 before).
    browser_pid: AtomicU32,
    /// The processes the RSS thread found last, for the PSS thread and for marks.
    processes: Mutex<Vec<(u32, Classified)>>,
    measured: Mutex<Measured>,
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
}

/// A running sampler: one thread reads RSS every tick, another PSS as often as its budget
/// allows, so a slow PSS pass never delays an RSS tick. Dropping it stops both.
pub struct Sampler {
    shared: Arc<Shared>,
    interval: Duration,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Sampler {
    /// Starts sampling every descendant of this process, every `interval`. It starts before
    /// the browser so that the startup is measured too; [`Sampler::set_browser_pid`] then
    /// names the browser's main process.
    pub fn start(interval: Duration) -> Self {
        let started = Instant::now();
        let shared = Arc::new(Shared {
            phase: Mutex::new(STARTUP_PHASE.to_owned()),
            browser_pid: AtomicU32::new(0),
            processes: Mutex::new(Vec::new()),
            measured: Mutex::new(Measured {
                started: Some(started),
                ..Default::default()
            }),
            stop: AtomicBool::new(false),
            started,
        });
        let rss_shared = Arc::clone(&shared);
        let pss_shared = Arc::clone(&shared);
        let threads = vec![
            std::thread::Builder::new()
                .name("rss-sampler".into())
                .spawn(move || rss_loop(&rss_shared, interval))
                .expect("spawning the RSS sampler thread"),
            std::thread::Builder::new()
                .name("pss-sampler".into())
                .spawn(move || pss_loop(&pss_shared, interval))
                .expect("spawning the PSS sampler thread"),
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
        let processes = self
            .shared
            .processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let page = page_size();
        let tracked: Vec<Tracked> = processes
            .into_iter()
            .filter_map(|(pid, class)| read_rss(pid, page).map(|rss| Tracked { class, rss }))
            .collect();
        if tracked.is_empty() {
            return;
        }
        let at_ms = ms_since(self.shared.started, Instant::now());
        let mut m = self.shared.measured();
        record_rss(m.phase(phase, at_ms), tracked.iter());
    }

    pub fn current_phase(&self) -> String {
        self.shared.current_phase()
    }

    /// The `processMemory` object of `/benchmark-result`.
    pub fn snapshot(&self) -> Value {
        let m = self.shared.measured();
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
        let phases: serde_json::Map<String, Value> = m
            .phases
            .iter()
            .map(|(name, stats)| {
                let by_type: serde_json::Map<String, Value> = stats
                    .by_type
                    .iter()
                    .map(|(kind, extent)| (type_name(*kind).to_owned(), extent.to_json()))
                    .collect();
                let value = json!({
                    "samples": stats.samples,
                    "pssSamples": stats.pss_samples,
                    "durationMs": (stats.last_ms - stats.first_ms).max(0.0),
                    "byType": by_type,
                    "total": stats.total.to_json(),
                    "peakRssBytesByLabel": stats.peak_rss_by_label,
                });
                (name.clone(), value)
            })
            .collect();
        json!({
            "sampler": {
                "source": "RSS from /proc/PID/statm every tick; PSS from /proc/PID/smaps_rollup on a second thread, within 5% of one core",
                "ticks": m.ticks,
                "achievedHz": per_second(m.ticks),
                "rssCpuShareOfOneCore": share(m.rss_cpu),
                "pssPasses": m.pss_passes,
                "pssHz": per_second(m.pss_passes),
                "meanPssPassCpuMs": mean_ms(m.pss_cpu),
                "meanPssPassWallMs": mean_ms(m.pss_wall),
                "pssCpuShareOfOneCore": share(m.pss_cpu),
                "cpuShareOfOneCore": share(m.rss_cpu + m.pss_cpu),
                "maxProcesses": m.max_processes,
            },
            "intervalMs": self.interval.as_secs_f64() * 1e3,
            "phases": phases,
        })
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

fn type_name(kind: ProcessType) -> &'static str {
    match kind {
        ProcessType::Browser => "browser",
        ProcessType::Gpu => "gpu",
        ProcessType::Renderer => "renderer",
        ProcessType::Utility => "utility",
        ProcessType::Other => "other",
    }
}

fn ms_since(started: Instant, at: Instant) -> f64 {
    at.duration_since(started).as_secs_f64() * 1e3
}

fn rss_loop(shared: &Shared, interval: Duration) {
    let me = std::process::id();
    let page = page_size();
    let cpu_at_start = thread_cpu_time();
    let mut tracked: HashMap<u32, Tracked> = HashMap::new();
    let mut browser_main = 0;
    let mut next_tick = Instant::now();
    let mut tick: u64 = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if tick.is_multiple_of(REDISCOVER_EVERY_TICKS) {
            let pids = descendants(me);
            let named = shared.browser_pid.load(Ordering::Relaxed);
            if named != browser_main {
                // Classified before the browser was named: classify again.
                browser_main = named;
                tracked.clear();
            }
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
        let cpu_before = thread_cpu_time();
        let wall_before = Instant::now();
        let mut by_type: BTreeMap<ProcessType, u64> = BTreeMap::new();
        for (pid, class) in processes {
            // A process that exited during the pass simply holds nothing any more.
            if let Some(pss) = read_pss(pid) {
                *by_type.entry(class.kind).or_default() += pss;
            }
        }
        let cpu = thread_cpu_time().saturating_sub(cpu_before);
        let done = Instant::now();
        // The page-table walk costs CPU in proportion to the browser's memory; the wall time
        // also counts waiting for the browser's own memory locks, which costs nobody CPU.
        let gap = interval.max(cpu.mul_f64(1.0 / PSS_DUTY - 1.0));
        let phase = shared.current_phase();
        {
            let mut m = shared.measured();
            record_pss(m.phase(&phase, ms_since(shared.started, done)), &by_type);
            m.pss_passes += 1;
            m.pss_cpu += cpu;
            m.pss_wall += done.duration_since(wall_before);
        }
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

fn record_rss<'a>(stats: &mut PhaseStats, tracked: impl IntoIterator<Item = &'a Tracked>) {
    stats.samples += 1;
    let mut by_type: BTreeMap<ProcessType, (u64, usize)> = BTreeMap::new();
    let mut by_label: BTreeMap<&str, u64> = BTreeMap::new();
    for process in tracked {
        let entry = by_type.entry(process.class.kind).or_default();
        entry.0 += process.rss;
        entry.1 += 1;
        *by_label.entry(process.class.label.as_str()).or_default() += process.rss;
    }
    for (label, rss) in by_label {
        let peak = stats.peak_rss_by_label.entry(label.to_owned()).or_default();
        *peak = (*peak).max(rss);
    }
    // A type that had processes earlier in the phase and has none now ends at zero.
    for (kind, extent) in stats.by_type.iter_mut() {
        if !by_type.contains_key(kind) {
            extent.add_rss(0, 0);
        }
    }
    let (mut total, mut processes) = (0, 0);
    for (kind, (rss, count)) in &by_type {
        stats
            .by_type
            .entry(*kind)
            .or_default()
            .add_rss(*rss, *count);
        total += rss;
        processes += count;
    }
    stats.total.add_rss(total, processes);
}

fn record_pss(stats: &mut PhaseStats, by_type: &BTreeMap<ProcessType, u64>) {
    stats.pss_samples += 1;
    for (kind, pss) in by_type {
        stats.by_type.entry(*kind).or_default().add_pss(*pss);
    }
    for (kind, extent) in stats.by_type.iter_mut() {
        if !by_type.contains_key(kind) && extent.peak_pss.is_some() {
            extent.add_pss(0);
        }
    }
    stats.total.add_pss(by_type.values().sum());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn classifies_chromium_processes() {
        let main = classify(
            &args("/usr/lib/chromium/chromium --headless --user-data-dir=/tmp/x"),
            true,
        );
        assert_eq!(main.kind, ProcessType::Browser);
        let gpu = classify(
            &args("/usr/lib/chromium/chromium --type=gpu-process --use-angle=swiftshader"),
            false,
        );
        assert_eq!(gpu.kind, ProcessType::Gpu);
        let renderer = classify(
            &args("/usr/lib/chromium/chromium --type=renderer --lang=en"),
            false,
        );
        assert_eq!(renderer.kind, ProcessType::Renderer);
        let odm = classify(
            &args("/usr/lib/chromium/chromium --type=utility --utility-sub-type=on_device_model.mojom.OnDeviceModelService"),
            false,
        );
        assert_eq!(odm.kind, ProcessType::Utility);
        assert_eq!(
            odm.label,
            "utility:on_device_model.mojom.OnDeviceModelService"
        );
        let zygote = classify(
            &args("/usr/lib/chromium/chromium --type=zygote --no-zygote-sandbox"),
            false,
        );
        assert_eq!(
            (zygote.kind, zygote.label.as_str()),
            (ProcessType::Other, "zygote")
        );
    }

    #[test]
    fn classifies_firefox_processes() {
        let main = classify(
            &args("/usr/lib/firefox-esr/firefox-esr --headless --profile /tmp/p"),
            true,
        );
        assert_eq!(main.kind, ProcessType::Browser);
        let tab = classify(
            &args("/usr/lib/firefox-esr/firefox-esr -contentproc -isForBrowser {u} 123 tab"),
            false,
        );
        assert_eq!(tab.kind, ProcessType::Renderer);
        let gpu = classify(
            &args("/usr/lib/firefox-esr/firefox-esr -contentproc {u} 123 gpu"),
            false,
        );
        assert_eq!(gpu.kind, ProcessType::Gpu);
        for (last, kind) in [
            ("rdd", ProcessType::Utility),
            ("socket", ProcessType::Utility),
            ("utility", ProcessType::Utility),
        ] {
            let c = classify(
                &args(&format!(
                    "/usr/lib/firefox-esr/firefox-esr -contentproc {{u}} 123 {last}"
                )),
                false,
            );
            assert_eq!(c.kind, kind, "{last}");
            assert_eq!(c.label, format!("utility:{last}"));
        }
        let task = classify(
            &args(
                "/usr/lib/firefox-esr/firefox-esr --backgroundtask crashreporterNetworkBackend x",
            ),
            false,
        );
        assert_eq!(
            (task.kind, task.label.as_str()),
            (
                ProcessType::Other,
                "backgroundtask:crashreporterNetworkBackend"
            )
        );
        let fork = classify(&args("/usr/lib/firefox-esr/firefox-esr -forkserver"), false);
        assert_eq!(
            (fork.kind, fork.label.as_str()),
            (ProcessType::Other, "forkserver")
        );
    }

    #[test]
    fn samples_a_child_process_and_attributes_phases() {
        // A real child process that grows its memory between two phases.
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "sleep 0.3; x=$(head -c 40000000 /dev/zero | tr '\\0' a); sleep 0.4",
            ])
            .spawn()
            .expect("sh");
        let sampler = Sampler::start(Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(150));
        sampler.mark("baseline");
        std::thread::sleep(Duration::from_millis(150));
        // A phase shorter than a tick still gets the sample taken at its mark.
        sampler.mark("instant");
        sampler.mark("grow");
        let _ = child.wait();
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
        for name in ["baseline", "grow"] {
            let phase = &phases[name];
            assert!(phase["samples"].as_u64().unwrap() >= 5, "{name}: {phase}");
            assert!(
                phase["total"]["peakRssBytes"].as_u64().unwrap() > 0,
                "{name}: {phase}"
            );
            // Every marked phase gets a PSS pass as soon as it begins.
            assert!(
                phase["pssSamples"].as_u64().unwrap() >= 1,
                "{name}: {phase}"
            );
            assert!(
                phase["total"]["peakPssBytes"].as_u64().unwrap() > 0,
                "{name}: {phase}"
            );
        }
        // `$(…)` holds 40 MB in the shell: the grow phase must see it, the baseline must not.
        let grow_peak = phases["grow"]["total"]["peakRssBytes"].as_u64().unwrap();
        let baseline_peak = phases["baseline"]["total"]["peakRssBytes"]
            .as_u64()
            .unwrap();
        assert!(
            grow_peak > baseline_peak + 30_000_000,
            "grow {grow_peak} vs baseline {baseline_peak}"
        );
        assert!(
            snapshot["sampler"]["achievedHz"].as_f64().unwrap() > 20.0,
            "{}",
            snapshot["sampler"]
        );
    }
}
