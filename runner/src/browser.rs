//! Launches headless Chromium or Firefox with a fresh profile (or one kept across runs), and stops it leaving nothing
//! behind.
//!
//! No driver protocol: the page reports to the runner's server, so the browser only needs a
//! URL. Each browser runs in its own process group with a tag of its own in its environment,
//! and the runner is a child subreaper ([`crate::procfs::become_subreaper`]), so every process
//! it starts can be found and killed, and told apart from another browser's of the same sweep
//! ([`crate::browser_processes`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

mod extra;
mod kind;
mod options;
mod probe;
mod watchdog;

pub use extra::{parse_chromium_switch, parse_firefox_pref, ExtraOptions, FirefoxPref};
pub use kind::BrowserKind;
pub use options::{chromium_switches, gpu_route};
pub(crate) use options::{FIREFOX_PREFS, SELF_SIGNED_SWITCH};
pub use probe::{probe, BrowserInfo};
use watchdog::Watchdog;

use crate::browser_processes::{BrowserProcesses, BrowserTag, LiveBrowser, TAG_VARIABLE};
use crate::exit::{Cause, Failure};
use crate::gpu_route::GpuRoute;
use crate::procfs::{self, describe_process, is_alive, process_group_members};

/// A running browser. [`Browser::stop`] must be called; dropping it also kills the group.
pub struct Browser {
    child: Child,
    /// The browser's processes: its tag, and those recognised so far.
    processes: BrowserProcesses,
    /// Counts it among the runner's live browsers until it is stopped.
    live: Option<LiveBrowser>,
    /// Kills the browser's process group and removes the profile if the runner dies first.
    watchdog: Option<Watchdog>,
    /// The fresh profile and the browser log beside it, removed on drop.
    workdir: tempfile::TempDir,
    pub log_path: PathBuf,
    stopped: bool,
    /// Whether `stop` follows SIGTERM with SIGKILL (always, but in a test of what is left).
    sigkill: bool,
    /// Firefox's TMPDIR under `--memory-reports`, where it keeps the FIFO that asks for a
    /// memory report and writes the reports (`memory::firefox_report_dump`).
    pub memory_report_dir: Option<PathBuf>,
    /// The profile this run started on where it is kept across runs (`--keep-profile`).
    pub kept_profile: Option<KeptProfile>,
}

/// How a local browser starts, besides its route.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Firefox only: the runner may ask for its own memory reports (`--memory-reports`).
    pub memory_reports: bool,
    /// `--keep-profile DIR`: the profile is `DIR/<browser>`, kept across runs so that the
    /// browser's caches (its shader and pipeline caches among them) stay warm; `None`: a
    /// fresh profile per run, removed after it.
    pub kept_profile: Option<PathBuf>,
}

/// A profile kept across runs, as the closing record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptProfile {
    pub dir: String,
    /// Whether an earlier run had left it (its caches possibly warm), or this run made it.
    pub reused: bool,
}

/// What stopping the browser found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StopReport {
    /// Processes of the browser that had to be killed with SIGKILL.
    pub killed: usize,
    /// Processes still alive after the kill: `pid command` each. Should be empty.
    pub left: Vec<String>,
}

impl Browser {
    /// Starts the browser on `url` with a fresh profile, or the kept one of
    /// `launch.kept_profile`, its processes marked with `tag`. Its stdout and stderr go to a
    /// log file in a directory of the run's own. `route` gives Chromium's switches and the environment the GPU route adds.
    /// `launch.memory_reports` (Firefox only) lets the runner ask Firefox for its own memory
    /// reports: the pref that opens the FIFO, and a TMPDIR of the run's own.
    pub fn launch(
        info: &BrowserInfo,
        url: &str,
        route: &GpuRoute,
        launch: &LaunchOptions,
        tag: &BrowserTag,
    ) -> Result<Browser> {
        let disabled = Disabled::from_env().map_err(|m| Failure::new(Cause::Usage, m))?;
        // Counted before its first process exists, so that another browser's stop never
        // takes this one's processes for strays of its own.
        let live = LiveBrowser::register();
        let workdir = tempfile::Builder::new()
            .prefix(&format!("ocr-bench-{}-", info.name))
            .tempdir()
            .context("creating a temporary profile directory")?;
        let (profile, kept_profile) = match &launch.kept_profile {
            None => {
                let profile = workdir.path().join("profile");
                fs::create_dir(&profile).context("creating the profile directory")?;
                (profile, None)
            }
            Some(dir) => {
                let profile = dir.join(info.name.name());
                let reused = fs::read_dir(&profile).is_ok_and(|mut d| d.next().is_some());
                fs::create_dir_all(&profile).map_err(|e| {
                    Failure::new(
                        Cause::Usage,
                        format!("--keep-profile: creating {}: {e}", profile.display()),
                    )
                })?;
                let kept = KeptProfile {
                    dir: profile.display().to_string(),
                    reused,
                };
                (profile, Some(kept))
            }
        };
        let log_path = workdir.path().join("browser.log");
        let log = fs::File::create(&log_path).context("creating the browser log")?;
        let mut command = Command::new(&info.executable);
        let mut memory_report_dir = None;
        match info.name {
            BrowserKind::Chromium => {
                command.args(&route.flags);
                // The user's own, for a diagnosis (`--chromium-switch`); none is one of the
                // harness's, so none overrides a switch above or below.
                command.args(&info.extra.chromium_switches);
                command.arg(format!("{}={}", options::PROFILE_SWITCH, profile.display()));
                // Chromium refuses to run as root with its sandbox.
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    command.arg(options::NO_SANDBOX_SWITCH);
                }
                command.arg(url);
            }
            BrowserKind::Firefox => {
                write_user_js(&profile, &info.extra.firefox_prefs)?;
                if launch.memory_reports {
                    memory_report_dir = Some(allow_memory_reports(
                        &profile,
                        workdir.path(),
                        &mut command,
                    )?);
                }
                command.args(["--headless", "--no-remote", "--new-instance", "--profile"]);
                command.arg(&profile);
                command.arg(url);
                command.env("MOZ_CRASHREPORTER_DISABLE", "1");
            }
        }
        command.envs(route.env.iter().filter_map(|pair| pair.split_once('=')));
        command.env(TAG_VARIABLE, tag.value());
        use std::os::unix::process::CommandExt;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone().context("duplicating the log handle")?)
            .stderr(log)
            .process_group(0);
        if !disabled.pdeathsig {
            // SAFETY: prctl is async-signal-safe and touches no memory of the parent. It fires
            // when the thread that forked exits: `run_once` launches from the thread that runs
            // `block_on`, the main thread, which lives as long as the runner.
            unsafe {
                command.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().map_err(|e| {
            Failure::new(
                Cause::BrowserMissing,
                format!("starting {}: {e}", info.executable.display()),
            )
        })?;
        let mut processes = BrowserProcesses::new(tag.clone());
        processes.set_main(child.id());
        let mut browser = Browser {
            child,
            processes,
            live: Some(live),
            watchdog: None,
            workdir,
            log_path,
            stopped: false,
            sigkill: !disabled.sigkill,
            memory_report_dir,
            kept_profile,
        };
        // A browser without its watchdog is stopped again: dropping it does that.
        if !disabled.watchdog {
            browser.watchdog = Some(Watchdog::start(browser.pid(), browser.workdir.path())?);
        }
        Ok(browser)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status if the browser's main process has ended. Each call also looks for the
    /// browser's new processes, so that one whose parent exits later is still known as the
    /// browser's ([`BrowserProcesses::scan`]).
    pub fn try_exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.processes.scan();
        self.child.try_wait().ok().flatten()
    }

    /// The last `lines` lines of the browser's own output.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(&self.log_path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Stops the whole browser: SIGTERM to its process group, SIGKILL to whatever is left
    /// after a grace period (and to any of its processes that left the group), then reaps its
    /// orphans and checks that none of its processes remains. Another browser of the same
    /// runner (a sweep's other job) is neither signalled nor reaped.
    pub fn stop(&mut self) -> StopReport {
        self.stopped = true;
        let pgid = self.child.id() as i32;
        // Found before the group is signalled: a child whose parent exits first is then
        // still known by its parent.
        let running = self.remaining();
        // SAFETY: kill with a negative pid signals a process group; no memory is touched.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        // Chromium's crash handlers run in groups of their own.
        for pid in running {
            // SAFETY: as above, on a single pid.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline && !self.remaining().is_empty() {
            self.reap_orphans();
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut killed = 0;
        let rounds = if self.sigkill { 3 } else { 0 };
        for _ in 0..rounds {
            let remaining = self.remaining();
            if remaining.is_empty() {
                break;
            }
            for pid in &remaining {
                // SAFETY: as above, on a single pid.
                unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
            }
            // SAFETY: as above.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            killed = killed.max(remaining.len());
            std::thread::sleep(Duration::from_millis(100));
            self.reap_orphans();
        }
        if self.sigkill {
            let _ = self.child.wait();
        } else {
            // Nothing killed it: a browser that ignored SIGTERM is still running, and is left.
            let _ = self.child.try_wait();
        }
        // Orphans handed to this subreaper may still be exiting: reap until none is left,
        // zombies included, so that none outlives the runner.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            self.reap_orphans();
            if self.present().is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.dismiss();
        }
        let left = self.present().into_iter().map(describe_process).collect();
        self.live = None;
        StopReport { killed, left }
    }

    /// This browser's processes, zombies included: those [`BrowserProcesses::scan`]
    /// recognises, and where it is the runner's only live browser every other descendant of
    /// the runner but its watchdog.
    fn candidates(&mut self) -> Vec<u32> {
        let mut pids = self.processes.scan();
        if self.live.as_ref().is_some_and(LiveBrowser::alone) {
            let watchdog = self.watchdog.as_ref().map(Watchdog::pid);
            for pid in procfs::descendants(std::process::id()) {
                if Some(pid) != watchdog && !pids.contains(&pid) {
                    pids.push(pid);
                }
            }
        }
        pids
    }

    /// Live processes of this browser: those carrying its tag or descending from one that
    /// does (the runner is a subreaper, so orphans stay in its tree), the rest of the runner's
    /// tree where it is the only live browser ([`Browser::candidates`]), and members of its
    /// process group.
    fn remaining(&mut self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .candidates()
            .into_iter()
            .filter(|pid| is_alive(*pid))
            .collect();
        for pid in process_group_members(self.child.id()) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        pids
    }

    /// [`Browser::remaining`] with the zombies not reaped yet, once the main process has been
    /// waited for (while it runs, it is the browser itself).
    fn present(&mut self) -> Vec<u32> {
        let mut pids = self.candidates();
        for pid in process_group_members(self.child.id()) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        pids.retain(|pid| procfs::exists(*pid));
        pids
    }

    /// Reaps this browser's exited processes that were handed to this subreaper. Only its
    /// own: waiting on any child would take another browser's exit status, which its owner
    /// then never sees (its `try_wait` fails), and it would wait out its timeout.
    fn reap_orphans(&mut self) {
        let main = self.child.id();
        for pid in self.candidates() {
            if pid == main {
                continue;
            }
            let mut status = 0;
            // SAFETY: waitpid writes the status into our local; WNOHANG never blocks, and a
            // pid that is not this process's child is answered with ECHILD.
            unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.stopped {
            self.stop();
        }
    }
}

/// The test-only `OCR_BENCH_TEST_DISABLE`: a comma-separated list of guards to leave out, so
/// that a test can show each of the two that outlive the runner (the parent-death signal and
/// the watchdog) working alone, and that a process which survives the stop is reported (exit
/// 5). A benchmark never sets it; `runner/README.md` lists the values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Disabled {
    /// No `PR_SET_PDEATHSIG`: if the runner dies, only the watchdog stops the browser.
    pub pdeathsig: bool,
    /// No watchdog: if the runner dies, only the parent-death signal stops the browser, and
    /// nothing removes its profile.
    pub watchdog: bool,
    /// `stop` sends SIGTERM only, so a process that ignores it is left.
    pub sigkill: bool,
}

/// The variable that names the guards to leave out.
pub const DISABLE_VARIABLE: &str = "OCR_BENCH_TEST_DISABLE";

impl Disabled {
    /// The guards `OCR_BENCH_TEST_DISABLE` leaves out (none when it is unset or empty).
    pub fn from_env() -> Result<Disabled, String> {
        match std::env::var(DISABLE_VARIABLE) {
            Ok(list) => Disabled::parse(&list),
            Err(std::env::VarError::NotPresent) => Ok(Disabled::default()),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(format!("{DISABLE_VARIABLE} is not valid UTF-8"))
            }
        }
    }

    fn parse(list: &str) -> Result<Disabled, String> {
        let mut disabled = Disabled::default();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "pdeathsig" => disabled.pdeathsig = true,
                "watchdog" => disabled.watchdog = true,
                "sigkill" => disabled.sigkill = true,
                other => {
                    return Err(format!(
                        "{DISABLE_VARIABLE} names {other:?}; allowed (test-only, comma-separated): pdeathsig, watchdog, sigkill"
                    ))
                }
            }
        }
        Ok(disabled)
    }
}

/// The harness's prefs, then the user's own (`--firefox-pref`, none of them the harness's).
fn write_user_js(profile: &Path, extra: &[FirefoxPref]) -> Result<()> {
    let text: String = FIREFOX_PREFS
        .iter()
        .map(|(name, value)| (*name, *value))
        .chain(
            extra
                .iter()
                .map(|pref| (pref.name.as_str(), pref.value.as_str())),
        )
        .map(|(name, value)| format!("user_pref(\"{name}\", {value});\n"))
        .collect();
    fs::write(profile.join("user.js"), text).context("writing the Firefox profile's user.js")
}

/// Adds the pref that makes Firefox watch `$TMPDIR/debug_info_trigger` for `memory report`
/// and gives it a TMPDIR of its own in the run's directory (`workdir`), so that the FIFO and
/// the reports are this run's alone, a kept profile or not; returns that directory.
fn allow_memory_reports(profile: &Path, workdir: &Path, command: &mut Command) -> Result<PathBuf> {
    let (name, value) = options::MEMORY_REPORT_PREF;
    let mut user_js = fs::OpenOptions::new()
        .append(true)
        .open(profile.join("user.js"))
        .context("opening the Firefox profile's user.js")?;
    use std::io::Write;
    writeln!(user_js, "user_pref(\"{name}\", {value});")
        .context("writing the memory report pref to user.js")?;
    let dir = workdir.join("tmp");
    fs::create_dir(&dir).context("creating Firefox's TMPDIR for the run")?;
    command.env("TMPDIR", &dir);
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_prefs_follow_the_harnesss_in_user_js() {
        let profile = tempfile::tempdir().unwrap();
        let pref: FirefoxPref = "general.useragent.override=\"probe\"".parse().unwrap();
        write_user_js(profile.path(), &[pref]).unwrap();
        let text = fs::read_to_string(profile.path().join("user.js")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), FIREFOX_PREFS.len() + 1);
        assert_eq!(lines[0], "user_pref(\"dom.webgpu.enabled\", true);");
        assert_eq!(
            lines.last().unwrap(),
            &"user_pref(\"general.useragent.override\", \"probe\");"
        );
    }

    #[test]
    fn browser_names_parse_and_errors_name_the_allowed_values() {
        assert_eq!(
            "chromium".parse::<BrowserKind>().unwrap(),
            BrowserKind::Chromium
        );
        assert_eq!(
            "firefox".parse::<BrowserKind>().unwrap(),
            BrowserKind::Firefox
        );
        let err = "safari".parse::<BrowserKind>().unwrap_err();
        assert!(
            err.contains("safari") && err.contains("chromium, firefox"),
            "{err}"
        );
    }

    #[test]
    fn the_test_switches_parse_and_errors_name_the_allowed_values() {
        assert_eq!(Disabled::parse("").unwrap(), Disabled::default());
        assert_eq!(
            Disabled::parse("watchdog, sigkill").unwrap(),
            Disabled {
                pdeathsig: false,
                watchdog: true,
                sigkill: true
            }
        );
        let err = Disabled::parse("pdeathsig,seatbelt").unwrap_err();
        assert!(
            err.contains("\"seatbelt\"") && err.contains("pdeathsig, watchdog, sigkill"),
            "{err}"
        );
    }

    #[test]
    fn user_js_sets_webgpu_prefs() {
        let dir = tempfile::tempdir().unwrap();
        write_user_js(dir.path(), &[]).unwrap();
        let text = fs::read_to_string(dir.path().join("user.js")).unwrap();
        assert!(
            text.contains("user_pref(\"dom.webgpu.enabled\", true);"),
            "{text}"
        );
        assert!(
            text.contains("user_pref(\"gfx.webgpu.ignore-blocklist\", true);"),
            "{text}"
        );
        assert!(
            text.contains("user_pref(\"browser.startup.homepage_override.mstone\", \"ignore\");"),
            "{text}"
        );
    }
}
