//! Where a run's browser runs: what `run_once` needs of a browser, whatever starts it.
//!
//! A [`BrowserTarget`] starts a browser at a URL and says which browser it is, on which
//! machine, and the identity the record and the sweep's resume key keep (`local` today). The
//! [`RunningBrowser`] it returns says whether the browser has exited, stops it, and names its
//! processes when the runner can sample them.
//!
//! Today's target is the local child process ([`local::LocalTarget`]). A WebDriver target (a
//! remote browser) fits the same seam without changing `run_once`:
//! - [`BrowserTarget::listen_address`] gives an address the remote browser can reach instead
//!   of loopback;
//! - [`BrowserTarget::sampler`] and [`RunningBrowser::processes`] answer `None`: no process
//!   to sample, so the result's `processMemory` says why there are none;
//! - [`RunningBrowser::exit_status`] asks the session whether it still lives, with no Unix
//!   signals or child process;
//! - [`RunningBrowser::stop`] deletes the session; `run_once` calls it on every way out of a
//!   run, and a target's `Drop` stops it too, so an error between start and stop leaves no
//!   session behind.

pub mod local;

use std::net::IpAddr;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use crate::browser::{BrowserInfo, StopReport};
use crate::gpu_route::{GpuRoute, GpuRouteRequest};
use crate::memory::Sampler;

/// The identity of the local target in the record (older files, without one, read as this).
pub const LOCAL: &str = "local";

/// A place a run's browser can be started.
pub trait BrowserTarget: Send + Sync {
    /// What the record's `target` field and the sweep's resume key keep: `local`, or for a
    /// remote browser its kind and address. The browser itself is [`BrowserTarget::browser`].
    fn identity(&self) -> String;

    /// The browser this target starts, as the record names it.
    fn browser(&self) -> &BrowserInfo;

    /// The machine the browser runs on, for the `start` record.
    fn machine(&self) -> Value;

    /// A process sampler taking a sample every `interval`, started before the browser so
    /// that its startup is measured; `None` where the browser's processes cannot be read.
    fn sampler(&self, interval: Duration) -> Option<Sampler>;

    /// Where the run's server listens so that this target's browser can reach it.
    fn listen_address(&self) -> IpAddr;

    /// How the browser reaches WebGPU under `--gpu-route`: its switches, environment and why.
    fn gpu_route(&self, request: GpuRouteRequest) -> GpuRoute;

    /// Starts the browser on `url` with a fresh profile.
    fn start(&self, url: &str, route: &GpuRoute) -> Result<Box<dyn RunningBrowser>>;
}

/// The processes a sampler follows: the browser's main process and its descendants, less
/// the runner's own helpers among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processes {
    pub browser: u32,
    /// Processes that are no part of the browser's memory (the local watchdog).
    pub not_the_browser: Vec<u32>,
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

    /// The last `lines` lines of the browser's own output (empty where there is none).
    fn log_tail(&self, lines: usize) -> String;
}
