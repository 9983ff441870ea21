//! The local target: a headless browser started as a child process of the runner, in a
//! process group of its own, sampled through `/proc` and stopped with signals
//! ([`crate::browser::Browser`]).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use super::{BrowserTarget, Processes, RunningBrowser, LOCAL};
use crate::browser::{
    Browser, BrowserInfo, BrowserKind, ExtraOptions, KeptProfile, LaunchOptions, StopReport,
};
use crate::browser_processes::BrowserTag;
use crate::exit::{Cause, Failure};
use crate::gpu_route::{GpuRoute, GpuRouteRequest};
use crate::memory::Sampler;

/// Why `--memory-reports` is refused through WebDriver.
pub const MEMORY_REPORTS_LOCAL_ONLY: &str = "--memory-reports asks a Firefox started here for its \
    memory reports through a file in its profile, which a WebDriver session does not offer \
    (allowed: --browser firefox without --webdriver or a webdriver: --target)";

/// A browser found on this machine, started as a child process.
pub struct LocalTarget {
    info: BrowserInfo,
    /// This machine, described once (`crate::machine::describe`).
    machine: Value,
    /// `--memory-reports` and `--keep-profile`.
    launch: LaunchOptions,
}

/// Why `--keep-profile` is refused through WebDriver.
pub const KEPT_PROFILE_LOCAL_ONLY: &str = "--keep-profile keeps the profile of a browser started \
    here; a WebDriver endpoint makes its own (allowed: a browser started here, without \
    --webdriver or a webdriver: --target)";

impl LocalTarget {
    pub fn new(info: BrowserInfo, machine: Value) -> Self {
        LocalTarget {
            info,
            machine,
            launch: LaunchOptions::default(),
        }
    }

    /// The target started on a profile kept in `dir` (`DIR/<browser>`) across runs
    /// (`--keep-profile`).
    pub fn with_kept_profile(mut self, dir: std::path::PathBuf) -> Self {
        self.launch.kept_profile = Some(dir);
        self
    }

    /// The target started with the user's own switches or prefs, this browser's part of
    /// `extra` (`--chromium-switch`, `--firefox-pref`); the record names them with the browser.
    pub fn with_extra(mut self, extra: &ExtraOptions) -> Self {
        self.info.extra = extra.of(self.info.name);
        self
    }

    /// The target with Firefox's memory reports taken at every phase (`--memory-reports`);
    /// refused for any other browser, with what is allowed.
    pub fn with_memory_reports(mut self) -> Result<Self, String> {
        if self.info.name != BrowserKind::Firefox {
            return Err(format!(
                "--memory-reports asks Firefox for its own memory reports; {} has none to give \
                 (allowed: --browser firefox, started here, not through --webdriver)",
                self.info.name
            ));
        }
        self.launch.memory_reports = true;
        Ok(self)
    }
}

impl BrowserTarget for LocalTarget {
    fn identity(&self) -> String {
        LOCAL.to_owned()
    }

    fn browser(&self) -> &BrowserInfo {
        &self.info
    }

    fn machine(&self) -> Value {
        self.machine.clone()
    }

    fn gpu_driver(&self) -> Option<String> {
        crate::probe_cache::local_driver()
    }

    /// The browser's processes through `/proc` (those carrying `tag`), driver VRAM through
    /// NVML.
    fn sampler(&self, interval: Duration, tag: &BrowserTag) -> Option<Sampler> {
        Some(Sampler::start(interval, tag.clone()))
    }

    /// Loopback: the browser runs here, and the results endpoints stay off the network.
    fn listen_address(&self) -> IpAddr {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    }

    fn gpu_route(&self, request: GpuRouteRequest) -> GpuRoute {
        crate::browser::gpu_route(request, self.info.name)
    }

    fn start(
        &self,
        url: &str,
        route: &GpuRoute,
        self_signed: bool,
        tag: &BrowserTag,
    ) -> Result<Box<dyn RunningBrowser>> {
        if !self_signed {
            return Ok(Box::new(Browser::launch(
                &self.info,
                url,
                route,
                &self.launch,
                tag,
            )?));
        }
        // The switch goes with the launch only; the record's route keeps the GPU's switches.
        let mut route = route.clone();
        route
            .flags
            .push(accept_self_signed(self.info.name)?.to_owned());
        Ok(Box::new(Browser::launch(
            &self.info,
            url,
            &route,
            &self.launch,
            tag,
        )?))
    }
}

/// The switch that makes a local browser accept the runner's self-signed certificate; a
/// local Firefox has none (its certificate exceptions live in a profile database), so it is
/// refused with the ways that work.
fn accept_self_signed(kind: BrowserKind) -> Result<&'static str> {
    match kind {
        BrowserKind::Chromium => Ok(crate::browser::SELF_SIGNED_SWITCH),
        BrowserKind::Firefox => Err(Failure::new(
            Cause::Usage,
            "a local Firefox cannot be told to accept the runner's self-signed certificate; \
             run it through geckodriver (--webdriver http://127.0.0.1:4444, which asks for \
             acceptInsecureCerts), give --tls-cert/--tls-key a certificate it trusts, or \
             leave --tls out (http://127.0.0.1 is a secure context already)",
        )
        .into()),
    }
}

impl RunningBrowser for Browser {
    fn processes(&self) -> Option<Processes> {
        Some(Processes {
            browser: self.pid(),
        })
    }

    fn exit_status(&mut self) -> Option<String> {
        self.try_exit_status().map(|status| status.to_string())
    }

    fn stop(&mut self) -> StopReport {
        Browser::stop(self)
    }

    fn log_tail(&self, lines: usize) -> String {
        Browser::log_tail(self, lines)
    }

    fn memory_report_dir(&self) -> Option<std::path::PathBuf> {
        self.memory_report_dir.clone()
    }

    fn kept_profile(&self) -> Option<KeptProfile> {
        self.kept_profile.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::BrowserKind;

    #[test]
    fn memory_reports_are_firefoxs_alone_and_chromium_is_told_what_is_allowed() {
        let info = |name| BrowserInfo {
            name,
            executable: "/usr/bin/browser".into(),
            version: "v".to_owned(),
            extra: ExtraOptions::default(),
        };
        let firefox = LocalTarget::new(info(BrowserKind::Firefox), serde_json::Value::Null);
        assert!(firefox.with_memory_reports().unwrap().launch.memory_reports);
        let chromium = LocalTarget::new(info(BrowserKind::Chromium), serde_json::Value::Null);
        let err = chromium.with_memory_reports().err().unwrap();
        assert!(err.contains("allowed: --browser firefox"), "{err}");
    }

    #[test]
    fn the_local_target_is_named_local_and_serves_on_loopback() {
        let info = BrowserInfo {
            name: BrowserKind::Firefox,
            executable: "/usr/bin/firefox".into(),
            version: "Mozilla Firefox 140.0".to_owned(),
            extra: ExtraOptions::default(),
        };
        let target = LocalTarget::new(info.clone(), serde_json::json!({ "cpus": 2 }));
        assert_eq!(target.identity(), "local");
        assert_eq!(target.browser(), &info);
        assert_eq!(target.machine()["cpus"], 2);
        assert!(target.listen_address().is_loopback());
    }
}
