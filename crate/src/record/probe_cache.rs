//! The completion floor kept across runs (`docs/benchmark-protocol.md`, "The probe cache"):
//! what a floor depends on (its key), where a floor of the record came from, and what the
//! runner keeps and offers the page. The runner writes the cache beside the results; the page
//! compares the key it computes with each cached one and measures again on any difference.

use serde::{Deserialize, Serialize};

use super::FloorRounds;

/// Everything a realm's completion floor depends on. The runner names the browser build, the
/// target and the GPU driver; the page adds what it sees (its user agent, the adapter) and the
/// run's waiting (`poll`, `kickMs`) and the realm. Two floors with equal keys are the same
/// browser's timer on the same adapter and driver, met the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProbeKey {
    #[serde(flatten)]
    pub runner: RunnerProbeKey,
    pub user_agent: String,
    pub adapter: ProbeAdapter,
    /// `wait`, `kick` or `spin`, as the floor's waiter was made.
    pub poll: String,
    pub kick_ms: Option<f64>,
    /// `page`, `worker` (the vision worker) or `decoderWorker`.
    pub realm: String,
}

/// The part of the key only the runner knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunnerProbeKey {
    /// The browser build as the runner asked its executable (`Mozilla Firefox 140.5.0esr`).
    pub browser: String,
    /// Where the browser runs (`local`, `webdriver:…`).
    pub target: String,
    /// The GPU's kernel driver on the browser's machine (`nvidia 580.159.04`); null where
    /// there is none or the runner cannot see that machine.
    pub driver: Option<String>,
}

/// The adapter as the page sees it (`GPUAdapterInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProbeAdapter {
    pub vendor: String,
    pub architecture: String,
    pub device: String,
    pub description: String,
}

/// Whether the run measured a floor or took it from the runner's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum FloorOrigin {
    Measured,
    Reused,
}

/// Where a floor of the record came from and the key it is kept under (null where no runner
/// keeps floors: under `serve`); a reused one also names the run that measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FloorSource {
    pub origin: FloorOrigin,
    pub key: Option<ProbeKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub measured_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub measured_run_id: Option<String>,
}

/// One floor the cache keeps: its key, its rounds as measured, and when and in which run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CachedFloor {
    pub key: ProbeKey,
    pub rounds: FloorRounds,
    pub measured_at: String,
    pub measured_run_id: Option<String>,
}

/// What the runner answers the page that asks for the cache: whether it may reuse, the
/// runner's part of the key, and the floors kept (those of this browser, target and driver).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProbeOffer {
    /// False under `--probe always`, under `serve`, or when the cache could not be read.
    pub reuse: bool,
    /// Why the page measures every floor, in words, where `reuse` is false.
    pub reason: Option<String>,
    pub runner: Option<RunnerProbeKey>,
    pub floors: Vec<CachedFloor>,
}
