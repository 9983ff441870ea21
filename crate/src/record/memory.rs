//! The record's memory: the page's samples between phases and cases, the GPU bytes and WASM
//! heaps per realm, and the live-bytes leak check.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One memory sample the page took between phases or cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemorySample {
    pub label: String,
    pub at_ms: f64,
    // `performance.memory` (Chromium only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub js_heap_size_limit: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "totalJSHeapSize"
    )]
    pub total_js_heap_size: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "usedJSHeapSize"
    )]
    pub used_js_heap_size: Option<u64>,
    // `performance.measureUserAgentSpecificMemory()` (cross-origin isolated Chromium).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent_memory_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent_ms: Option<f64>,
    /// The page's GPU bytes (null until its device exists), from its wrapped device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(as = "Option<GpuBytes>"))]
    pub gpu: Option<Option<GpuBytes>>,
    /// The page realm's WebAssembly heaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wasm_heaps: Option<Vec<WasmHeap>>,
    /// The vision worker's own report, as it last sent it (staged schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<RealmMemory>,
    /// The decoder worker's own report, as it last sent it (`realm=worker`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder_worker: Option<RealmMemory>,
    /// `realm=worker`: the decoder workers the page still held (not terminated) when it took
    /// the sample; 0 after `release=realm`'s step (absent in records older than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder_workers: Option<u32>,
    pub sample_ms: f64,
}

/// The GPU bytes of one realm's device: what is live, the peak, by buffer usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GpuBytes {
    pub live_bytes: u64,
    pub peak_bytes: u64,
    /// `storage`, `uniform`, `mapped`, `copy`, `other`, `texture`.
    pub live_by_kind: BTreeMap<String, u64>,
    pub created: u64,
    pub destroyed: u64,
    /// Dropped without `destroy()` and then garbage-collected.
    pub collected: u64,
    pub device_destroyed: bool,
    pub measured_by: String,
    /// The peak since the sample before (memory samples only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_peak_bytes: Option<u64>,
}

/// One WebAssembly heap of a realm (`onnxruntime`, `core`, or the module's file name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct WasmHeap {
    pub label: String,
    pub bytes: u64,
    pub shared: bool,
}

/// What a worker reports of its own realm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RealmMemory {
    pub gpu: Option<GpuBytes>,
    pub wasm_heaps: Vec<WasmHeap>,
    /// The worker's `performance.memory` (Chromium only).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "totalJSHeapSize"
    )]
    pub total_js_heap_size: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "usedJSHeapSize"
    )]
    pub used_js_heap_size: Option<u64>,
}

/// The run's GPU bytes per realm and the leak check over the cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GpuMemorySummary {
    pub measured_by: String,
    pub page: Option<GpuBytes>,
    pub worker: Option<GpuBytes>,
    /// The decoder worker's device at its last report (`realm=worker`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder_worker: Option<GpuBytes>,
    pub leak_check: LeakCheck,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LeakCheck {
    pub after_cases: Vec<LiveAfterCase>,
    pub grows: bool,
    pub grown_bytes: i64,
    pub repeat_grown_bytes: i64,
    pub verdict: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LiveAfterCase {
    pub label: String,
    pub live_bytes: u64,
}
