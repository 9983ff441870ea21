//! The record's sessions: each ORT session as the page created it, the files it loaded and
//! the options it was given.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One ORT session, as the page created it (`browser/sessions.js`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// `vision` or `decoder` for the timed run's sessions, `verify` for the WASM reference's.
    pub role: String,
    /// The graph it runs: `vision` or `decoder`.
    pub graph: String,
    /// `url` (onnxruntime-web fetched the files) or `bytes` (the page did).
    pub loader: String,
    pub model: LoadedFile,
    /// The ONNX external data file, when the weights are external.
    pub external_data: Option<ExternalDataFile>,
    /// In the order given to onnxruntime-web (`webgpu`, `wasm`).
    pub execution_providers: Vec<String>,
    pub options: SessionOptionsUsed,
    /// `InferenceSession.create`, including fetching the files.
    pub create_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LoadedFile {
    pub url: String,
    /// The file's size as served (null where the server gave none).
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ExternalDataFile {
    /// The name the `.onnx` refers to it by.
    pub path: String,
    pub url: String,
    pub bytes: Option<u64>,
}

/// The session options that change what runs or how it is measured, as passed to
/// `InferenceSession.create` (ORT's default written out where the page left one unset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionOptionsUsed {
    /// `disabled`, `basic`, `extended` or `all` (ORT's default).
    pub graph_optimization_level: String,
    /// Output name to `cpu` or `gpu-buffer`; an output not named stays on the CPU.
    pub preferred_output_location: BTreeMap<String, String>,
    pub free_dimension_overrides: BTreeMap<String, u64>,
    pub enable_profiling: bool,
    pub enable_graph_capture: bool,
    /// Null: left to ORT.
    pub enable_cpu_mem_arena: Option<bool>,
    pub enable_mem_pattern: Option<bool>,
    pub log_severity_level: u32,
}
