//! Launches headless Chromium or Firefox with a fresh profile, and stops it leaving nothing
//! behind.
//!
//! No driver protocol: the page reports to the runner's server, so the browser only needs a
//! URL. Each browser runs in its own process group, and the runner is a child subreaper
//! ([`crate::procfs::become_subreaper`]), so every process it starts can be found and killed.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::exit::{Cause, Failure};
use crate::gpu_route::{self, GpuRoute, GpuRouteRequest, Route, CHROMIUM_GPU_SWITCHES};
use crate::procfs::{self, describe_process, is_alive, process_group_members};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrowserKind {
    Chromium,
    Firefox,
}

impl BrowserKind {
    pub fn name(self) -> &'static str {
        match self {
            BrowserKind::Chromium => "chromium",
            BrowserKind::Firefox => "firefox",
        }
    }

    /// Executables tried in order; `OCR_BENCH_CHROMIUM` / `OCR_BENCH_FIREFOX` name another.
    fn candidates(self) -> (&'static str, &'static [&'static str]) {
        match self {
            BrowserKind::Chromium => (
                "OCR_BENCH_CHROMIUM",
                &["chromium", "chromium-browser", "google-chrome"],
            ),
            BrowserKind::Firefox => ("OCR_BENCH_FIREFOX", &["firefox-esr", "firefox"]),
        }
    }
}

impl fmt::Display for BrowserKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BrowserKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "chromium" | "chrome" => Ok(BrowserKind::Chromium),
            "firefox" => Ok(BrowserKind::Firefox),
            other => Err(format!(
                "unknown browser {other:?}; allowed: chromium, firefox"
            )),
        }
    }
}

/// A browser found on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrowserInfo {
    pub name: BrowserKind,
    pub executable: PathBuf,
    pub version: String,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Finds the browser's executable and asks it for its version.
/// Errors name the executable or the variable; their exit status is "browser missing".
pub fn probe(kind: BrowserKind) -> Result<BrowserInfo> {
    probe_executable(kind).map_err(|e| Failure::new(Cause::BrowserMissing, format!("{e:#}")).into())
}

fn probe_executable(kind: BrowserKind) -> Result<BrowserInfo> {
    let (variable, names) = kind.candidates();
    let named = std::env::var_os(variable).is_some();
    let executable = match std::env::var_os(variable) {
        Some(path) => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                bail!(
                    "{variable}={} names no file; allowed: the path of a {kind} executable, or leave {variable} unset to look for {} on PATH",
                    path.display(),
                    names.join(", ")
                );
            }
            path
        }
        None => names
            .iter()
            .find_map(|n| find_in_path(n))
            .with_context(|| {
                format!(
                    "{kind} is not installed: none of {} is on PATH (or set {variable})",
                    names.join(", ")
                )
            })?,
    };
    let output = Command::new(&executable)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .with_context(|| {
            // A file that is there but will not run: say which setting named it.
            let source = if named {
                format!(" ({variable} names it)")
            } else {
                String::new()
            };
            format!("running {} --version{source}", executable.display())
        })?;
    // Debian's chromium wrapper also prints shell noise on stderr; the version is on stdout.
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || version.is_empty() {
        bail!(
            "{} --version failed ({}): {}",
            executable.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(BrowserInfo {
        name: kind,
        executable,
        version,
    })
}

/// Chromium switches. `--enable-unsafe-webgpu` gives WebGPU on SwiftShader where there is no
/// GPU; the memory switches make `performance.memory` unbucketed and
/// `measureUserAgentSpecificMemory` answer at once instead of waiting for a garbage
/// collection (7–19 s per call with the seed page here).
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--enable-unsafe-webgpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--mute-audio",
    "--enable-precise-memory-info",
    "--enable-blink-features=ForceEagerMeasureMemory",
    // Chromium starts an OnDeviceModelService utility process (about 94 MiB) 3 minutes after
    // startup to benchmark the device's "performance class" (seen at 170-182 s here), which
    // would count as the page's memory. Giving the class on the command line skips the
    // benchmark: of four idle browsers watched for 210 s, only the one with this switch never
    // started the service; --disable-features=OptimizationGuideOnDeviceModel,
    // LogOnDeviceMetricsOnStartup (and a dozen more AI features) and
    // --disable-field-trial-config did not stop it. 1 is the class "error": not capable.
    "--optimization-guide-performance-class=1",
];

/// Chromium's switches on `route`: the fixed ones, and on the GPU route those that reach
/// the GPU through Vulkan ([`crate::gpu_route::CHROMIUM_GPU_SWITCHES`]).
pub fn chromium_switches(route: Route) -> Vec<String> {
    let on_gpu: &[&str] = match route {
        Route::Gpu => CHROMIUM_GPU_SWITCHES,
        Route::Software => &[],
    };
    CHROMIUM_FLAGS
        .iter()
        .chain(on_gpu)
        .map(|s| (*s).to_owned())
        .collect()
}

/// The GPU route of one run of `browser` as `asked`: this machine's route, with the switches
/// that start `browser` on it (Firefox takes prefs, not switches).
pub fn gpu_route(asked: GpuRouteRequest, browser: BrowserKind) -> GpuRoute {
    let mut route = gpu_route::resolve(asked);
    route.flags = match browser {
        BrowserKind::Chromium => chromium_switches(route.route),
        BrowserKind::Firefox => Vec::new(),
    };
    route
}

/// Firefox prefs: WebGPU on (lavapipe here, with `shader-f16`), and everything that would
/// start network traffic, updates, telemetry or first-run pages off. Values are JavaScript
/// literals that are JSON too (a WebDriver session takes them as `moz:firefoxOptions` prefs).
pub(crate) const FIREFOX_PREFS: &[(&str, &str)] = &[
    ("dom.webgpu.enabled", "true"),
    ("gfx.webgpu.ignore-blocklist", "true"),
    ("app.update.enabled", "false"),
    ("app.update.auto", "false"),
    ("app.update.disabledForTesting", "true"),
    ("app.normandy.enabled", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.firstrunSkipsHomepage", "true"),
    ("browser.aboutwelcome.enabled", "false"),
    ("startup.homepage_welcome_url", "\"\""),
    ("startup.homepage_welcome_url.additional", "\"\""),
    ("trailhead.firstrun.didSeeAboutWelcome", "true"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("toolkit.telemetry.enabled", "false"),
    ("toolkit.telemetry.unified", "false"),
    ("toolkit.telemetry.archive.enabled", "false"),
    ("extensions.update.enabled", "false"),
    ("extensions.getAddons.cache.enabled", "false"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.safebrowsing.update.enabled", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("toolkit.startup.max_resumed_crashes", "-1"),
    ("browser.tabs.warnOnClose", "false"),
    // The page's console goes to the browser log, which the runner shows on failure.
    ("devtools.console.stdout.content", "true"),
];

/// A running browser. [`Browser::stop`] must be called; dropping it also kills the group.
pub struct Browser {
    child: Child,
    /// Kills the browser's process group and removes the profile if the runner dies first.
    watchdog: Option<Watchdog>,
    /// The fresh profile and the browser log beside it, removed on drop.
    workdir: tempfile::TempDir,
    pub log_path: PathBuf,
    stopped: bool,
    /// Whether `stop` follows SIGTERM with SIGKILL (always, but in a test of what is left).
    sigkill: bool,
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
    /// Starts the browser on `url` with a fresh profile. Its stdout and stderr go to a log
    /// file beside the profile. `route` gives Chromium's switches and the environment the
    /// GPU route adds.
    pub fn launch(info: &BrowserInfo, url: &str, route: &GpuRoute) -> Result<Browser> {
        let disabled = Disabled::from_env().map_err(|m| Failure::new(Cause::Usage, m))?;
        let workdir = tempfile::Builder::new()
            .prefix(&format!("ocr-bench-{}-", info.name))
            .tempdir()
            .context("creating a temporary profile directory")?;
        let profile = workdir.path().join("profile");
        fs::create_dir(&profile).context("creating the profile directory")?;
        let log_path = workdir.path().join("browser.log");
        let log = fs::File::create(&log_path).context("creating the browser log")?;
        let mut command = Command::new(&info.executable);
        match info.name {
            BrowserKind::Chromium => {
                command.args(&route.flags);
                command.arg(format!("--user-data-dir={}", profile.display()));
                // Chromium refuses to run as root with its sandbox.
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    command.arg("--no-sandbox");
                }
                command.arg(url);
            }
            BrowserKind::Firefox => {
                write_user_js(&profile)?;
                command.args(["--headless", "--no-remote", "--new-instance", "--profile"]);
                command.arg(&profile);
                command.arg(url);
                command.env("MOZ_CRASHREPORTER_DISABLE", "1");
            }
        }
        command.envs(route.env.iter().filter_map(|pair| pair.split_once('=')));
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
        let mut browser = Browser {
            child,
            watchdog: None,
            workdir,
            log_path,
            stopped: false,
            sigkill: !disabled.sigkill,
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

    /// The watchdog's pid, which is no part of the browser's memory.
    pub fn watchdog_pid(&self) -> Option<u32> {
        self.watchdog.as_ref().map(Watchdog::pid)
    }

    /// The exit status if the browser's main process has ended.
    pub fn try_exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last `lines` lines of the browser's own output.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(&self.log_path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Stops the whole browser: SIGTERM to its process group, SIGKILL to whatever is left
    /// after a grace period (and to any descendant that left the group), then reaps every
    /// orphan and checks that no process remains.
    pub fn stop(&mut self) -> StopReport {
        self.stopped = true;
        let pgid = self.child.id() as i32;
        // SAFETY: kill with a negative pid signals a process group; no memory is touched.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        // Chromium's crash handlers run in groups of their own.
        for pid in self.remaining() {
            // SAFETY: as above, on a single pid.
            unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline && !self.remaining().is_empty() {
            reap_children();
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
            reap_children();
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
            reap_children();
            let left = procfs::descendants(std::process::id());
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.dismiss();
        }
        let mut pids = procfs::descendants(std::process::id());
        for pid in self.remaining() {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        let left = pids.into_iter().map(describe_process).collect();
        StopReport { killed, left }
    }

    /// Live processes that belong to this browser: descendants of the runner (it is a
    /// subreaper, so orphans stay descendants) and members of the browser's process group.
    fn remaining(&self) -> Vec<u32> {
        let pgid = self.child.id();
        let watchdog = self.watchdog.as_ref().map(Watchdog::pid);
        let mut pids: Vec<u32> = procfs::descendants(std::process::id())
            .into_iter()
            .filter(|pid| is_alive(*pid) && Some(*pid) != watchdog)
            .collect();
        for pid in process_group_members(pgid) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        pids
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

/// A shell beside the browser that waits on a pipe from the runner. The runner writes `done`
/// once it has stopped the browser itself; end of file without it means the runner died
/// (SIGKILL cannot be caught), and the watchdog kills the browser's process group and removes
/// the profile. It has its own process group and ignores the terminal's signals, so a closed
/// terminal or Ctrl-C reaches only the runner, which stops the browser itself.
struct Watchdog {
    child: Child,
}

/// `$1` the browser's process group, `$2` the profile's directory. The wait is bounded: 10 s
/// in steps of 0.1 s (Firefox's 11 processes were gone within 0.3 s of SIGKILL here). The
/// signal is given as `-s KILL`: dash (Debian's `/bin/sh`) reads `kill -KILL -- -PGID` as
/// the number `-` and kills nothing, which only the watchdog-alone test showed.
const WATCHDOG_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT
if read -r word && [ "$word" = done ]; then exit 0; fi
kill -s KILL -- "-$1" 2>/dev/null
i=0
while kill -s 0 -- "-$1" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rm -rf -- "$2"
"#;

impl Watchdog {
    fn start(pgid: u32, workdir: &Path) -> Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        let child = Command::new("/bin/sh")
            .args(["-c", WATCHDOG_SCRIPT, "ocr-bench-watchdog"])
            .arg(pgid.to_string())
            .arg(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("starting the browser's watchdog (/bin/sh)")?;
        Ok(Watchdog { child })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The browser is stopped: tell the watchdog to leave it, and reap it.
    fn dismiss(mut self) {
        if let Some(mut pipe) = self.child.stdin.take() {
            use std::io::Write;
            let _ = pipe.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

fn write_user_js(profile: &Path) -> Result<()> {
    let text: String = FIREFOX_PREFS
        .iter()
        .map(|(name, value)| format!("user_pref(\"{name}\", {value});\n"))
        .collect();
    fs::write(profile.join("user.js"), text).context("writing the Firefox profile's user.js")
}

/// Reaps every exited child, including orphans handed to this subreaper.
fn reap_children() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into our local; WNOHANG never blocks.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        write_user_js(dir.path()).unwrap();
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
