//! Where a run's browser runs: what `run_once` needs of a browser, whatever starts it.
//!
//! A [`BrowserTarget`] starts a browser at a URL and says which browser it is, on which
//! machine, and the identity the record and the sweep's resume key keep (`local`, or
//! `webdriver:URL` without credentials). The
//! [`RunningBrowser`] it returns says whether the browser has exited, stops it, and names its
//! processes when the runner can sample them.
//!
//! Two targets: the local child process ([`local::LocalTarget`]) and a browser behind a W3C
//! WebDriver endpoint ([`webdriver::WebDriverTarget`]), which differs from the local one thus:
//! - [`BrowserTarget::listen_address`] is loopback too unless `--host` says otherwise: WebGPU
//!   needs a secure context, which `http://127.0.0.1` is and `http://HOST:PORT` is not, so a
//!   browser on another machine opens `--public-url https://HOST:PORT` with `--tls`
//!   (`crate::reach`, `docs/remote-browsers.md`);
//! - [`BrowserTarget::sampler`] and [`RunningBrowser::processes`] answer `None`: no process
//!   to sample, so the result's `processMemory` says why there are none
//!   ([`BrowserTarget::no_process_memory`]);
//! - [`RunningBrowser::exit_status`] asks the session whether it still lives, with no Unix
//!   signals or child process; [`RunningBrowser::reported_capabilities`] names the browser as
//!   the session reported it;
//! - [`RunningBrowser::stop`] deletes the session; `run_once` calls it on every way out of a
//!   run, and a target's `Drop` stops it too, so an error between start and stop leaves no
//!   session behind; a watchdog process deletes it if the runner dies.

pub mod local;
pub mod webdriver;

use std::net::IpAddr;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use crate::browser::{BrowserInfo, BrowserKind, StopReport};
use crate::browser_processes::BrowserTag;
use crate::gpu_route::{GpuRoute, GpuRouteRequest};
use crate::memory::Sampler;

/// The identity of the local target in the record (older files, without one, read as this).
pub const LOCAL: &str = "local";

/// A sweep's `--target`: `local:BROWSER`, or `webdriver:URL#BROWSER` (the endpoint's default
/// capabilities for that browser).
#[derive(Debug, Clone)]
pub enum TargetSpec {
    Local(BrowserKind),
    WebDriver(webdriver::WebDriverSpec, BrowserKind),
}

impl TargetSpec {
    /// Reads one `--target`; the error says what was wrong and what is allowed.
    pub fn parse(text: &str) -> Result<TargetSpec, String> {
        const ALLOWED: &str = "allowed: local:BROWSER or webdriver:URL#BROWSER, such as \
             local:firefox or webdriver:http://127.0.0.1:9515#chromium";
        let browser = |name: &str| {
            name.parse::<BrowserKind>()
                .map_err(|e| format!("--target {text:?}: {e}"))
        };
        if let Some(name) = text.strip_prefix("local:") {
            return Ok(TargetSpec::Local(browser(name)?));
        }
        if let Some(rest) = text.strip_prefix("webdriver:") {
            let Some((url, name)) = rest.rsplit_once('#') else {
                return Err(format!(
                    "--target: a webdriver target names its browser after '#'; {ALLOWED}"
                ));
            };
            let spec = webdriver::WebDriverSpec::parse(url, None)?;
            return Ok(TargetSpec::WebDriver(spec, browser(name)?));
        }
        // The text may be a URL with credentials: say only what it starts with.
        let kind = text.split(':').next().unwrap_or_default();
        Err(format!(
            "--target of kind {kind:?} is not one ocr-bench knows; {ALLOWED}"
        ))
    }
}

/// A place a run's browser can be started.
pub trait BrowserTarget: Send + Sync {
    /// What the record's `target` field and the sweep's resume key keep: `local`, or for a
    /// remote browser its kind and address. The browser itself is [`BrowserTarget::browser`].
    fn identity(&self) -> String;

    /// The browser this target starts, as the record names it.
    fn browser(&self) -> &BrowserInfo;

    /// The machine the browser runs on, for the `start` record.
    fn machine(&self) -> Value;

    /// The GPU's kernel driver on the browser's machine, for the probe cache's key
    /// ([`crate::probe_cache::local_driver`]); `None` where there is none or it cannot be seen.
    fn gpu_driver(&self) -> Option<String>;

    /// A process sampler taking a sample every `interval` of the processes that carry `tag`,
    /// started before the browser so that its startup is measured; `None` where the browser's
    /// processes cannot be read.
    fn sampler(&self, interval: Duration, tag: &BrowserTag) -> Option<Sampler>;

    /// Where the run's server listens so that this target's browser can reach it.
    fn listen_address(&self) -> IpAddr;

    /// How the browser reaches WebGPU under `--gpu-route`: its switches, environment and why.
    fn gpu_route(&self, request: GpuRouteRequest) -> GpuRoute;

    /// Starts the browser on `url` with a fresh profile, its processes marked with `tag` where
    /// they run here; `self_signed`: the page is served over HTTPS with the runner's own
    /// certificate, which the browser must accept.
    fn start(
        &self,
        url: &str,
        route: &GpuRoute,
        self_signed: bool,
        tag: &BrowserTag,
    ) -> Result<Box<dyn RunningBrowser>>;

    /// Why the result has no process figures, where [`BrowserTarget::sampler`] is `None`.
    fn no_process_memory(&self) -> Option<&'static str> {
        None
    }
}

/// The processes a sampler follows: the browser's main process, and every process carrying
/// its tag ([`crate::browser_processes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processes {
    pub browser: u32,
}

/// A started browser. [`RunningBrowser::stop`] must be called; dropping it stops it too.
pub trait RunningBrowser: Send {
    /// The browser's processes on this machine; `None` where they cannot be sampled.
    fn processes(&self) -> Option<Processes>;

    /// How the browser ended, in words, once it has; `None` while it runs.
    fn exit_status(&mut self) -> Option<String>;

    /// Stops the browser and whatever it started (blocking); what had to be killed and what
    /// is left, for the closing record.
    fn stop(&mut self) -> StopReport;

    /// The last `lines` lines of the browser's own output (empty where there is none); for a
    /// WebDriver session, the page's console lines, or one line saying why there are none.
    fn log_tail(&self, lines: usize) -> String;

    /// How many console lines the page logged, where the target reads them (a WebDriver
    /// session with BiDi), for the closing record; `None` elsewhere.
    fn console_lines(&self) -> Option<usize> {
        None
    }

    /// What a remote end reported of the browser (`browserName`, `browserVersion`,
    /// `platformName`, …), for the closing record; `None` for a local browser.
    fn reported_capabilities(&self) -> Option<Value> {
        None
    }

    /// Where Firefox takes requests for its memory reports (`--memory-reports`); `None`
    /// where the run does not take them.
    fn memory_report_dir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The profile the browser started on where it is kept across runs (`--keep-profile`).
    fn kept_profile(&self) -> Option<crate::browser::KeptProfile> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_targets_parse_and_errors_say_what_is_allowed() {
        assert!(matches!(
            TargetSpec::parse("local:firefox"),
            Ok(TargetSpec::Local(BrowserKind::Firefox))
        ));
        match TargetSpec::parse("webdriver:http://u:pw-991@127.0.0.1:9515#chromium") {
            Ok(TargetSpec::WebDriver(spec, BrowserKind::Chromium)) => {
                assert_eq!(spec.endpoint.shown(), "http://127.0.0.1:9515");
                assert!(!format!("{spec:?}").contains("pw-991"));
            }
            other => panic!("{other:?}"),
        }
        let no_browser = TargetSpec::parse("webdriver:http://127.0.0.1:9515").unwrap_err();
        assert!(no_browser.contains("after '#'"), "{no_browser}");
        let unknown = TargetSpec::parse("grid:http://a:secret-77@h#firefox").unwrap_err();
        assert!(
            unknown.contains("\"grid\"")
                && unknown.contains("local:BROWSER")
                && !unknown.contains("secret-77"),
            "{unknown}"
        );
        let browser = TargetSpec::parse("local:safari").unwrap_err();
        assert!(browser.contains("chromium, firefox"), "{browser}");
    }
}
