//! The types of what the page posts: the summary (`/benchmark-result`, `window.__benchmarkResult`),
//! one case's result (`/benchmark-progress` and `summary.results`), the environment, the
//! memory samples and the decode probe's figures. The field names are the JSON's: the seed's
//! first (`nCER`, `medianMs`, ...), the additions after them (docs/architecture.md, "Summary").
//!
//! The runner reads and writes the result record through these types; their TypeScript is
//! generated from them (`typescript.rs`, `types.d.ts`).
//!
//! Two parts stay JSON: the WebGPU adapter's description (whatever `GPUAdapterInfo` and the
//! limits the page reads hold) and ORT's operator profile. `extra` on the summary and on a case
//! keeps a field a newer page adds, so a runner never drops what it does not know yet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::Config;
use crate::latency::{CompletionCheck, LatencyStats, MeanInterval};

/// Fields this version does not name, kept as posted.
pub type Extra = Map<String, Value>;

/// The whole summary of one run, as posted to `/benchmark-result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PageSummary {
    pub run_id: String,
    // The seed's fields, in the seed's order.
    pub tier: String,
    pub memory_mode: String,
    pub loader_mode: String,
    pub schedule_mode: String,
    pub decoder_mode: String,
    pub benchmark_scope: String,
    pub capability: Capability,
    pub cases: usize,
    #[serde(rename = "nCER")]
    pub ncer: Option<f64>,
    pub distance: Option<usize>,
    /// Null where accuracy does not apply (the decoder-only scope), as `nCER` is.
    pub characters: Option<usize>,
    pub exact: Option<usize>,
    pub median_ms: Option<f64>,
    pub peak_case_ms: Option<f64>,
    pub memory_samples: Vec<MemorySample>,
    pub results: Vec<CaseResult>,
    // The additions.
    pub config: Config,
    pub cases_name: String,
    pub weights: String,
    pub max_tokens: u32,
    pub accuracy_applicable: bool,
    pub mean_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub ms_per_token: Option<f64>,
    pub environment: Environment,
    pub timing_notes: Vec<String>,
    /// `InferenceSession.create` per session (`vision`, `decoder`).
    pub session_ms: BTreeMap<String, f64>,
    pub wall_ms: f64,
    pub manifest: ManifestUse,
    pub poll: PollSetting,
    pub completion: Completion,
    pub completion_bound: bool,
    pub decode_probe: RunProbe,
    pub repeats: Repeats,
    pub warmup_results: Vec<CaseResult>,
    pub pipeline_compilation: Option<PipelineCompilation>,
    /// ORT's per-operator profile under `profile=ops`, else null.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub profile: Value,
    /// GPU bytes per realm from the wrapped devices (absent in records older than them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory: Option<GpuMemorySummary>,
    /// Every ORT session the page's realm created, in order (absent in records older than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<SessionRecord>>,
    /// `verify=wasm`: the WASM (CPU) reference decode against the timed one; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    // Fields a newer page adds are not part of the declared type.
    #[serde(flatten)]
    #[cfg_attr(test, ts(skip))]
    pub extra: Extra,
}

impl PageSummary {
    /// True when `verify=wasm` found a case beyond its tolerance: the figures are then not a
    /// result of this configuration, whatever they say.
    pub fn verification_failed(&self) -> bool {
        self.verification.as_ref().is_some_and(|v| !v.passed)
    }
}

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

/// `verify=wasm`: every timed case against the same decode on the WASM (CPU) execution provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// `wasm`.
    pub method: String,
    pub tolerance: VerificationTolerance,
    /// Every case within the tolerance.
    pub passed: bool,
    /// Cases within the tolerance, of `total`.
    pub agreeing: usize,
    pub total: usize,
    /// A case beyond the tolerance if there is one, else the largest logit difference.
    pub worst: Option<VerifiedCase>,
    pub cases: Vec<VerifiedCase>,
    /// The whole WASM pass: creating its sessions and decoding every case.
    pub wall_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VerificationTolerance {
    /// The most a logit may differ at a step compared.
    pub max_abs_logit_diff: f64,
    /// `fp16` when an fp16 graph ran (`tier=242`, `decoder=fp16-matmul`), else `fp32`.
    pub precision: String,
    /// `equal`: every chosen token, EOS included, must be the reference's.
    pub tokens: String,
}

/// One timed case against its reference decode. Step 0 is the prefill's logits, step k the
/// k-th decode step's; logits are compared at every step whose earlier tokens agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VerifiedCase {
    pub id: String,
    pub repeat: Option<u32>,
    pub tokens_agree: bool,
    /// The first step whose chosen token differs (or where one decode stopped), else null.
    pub first_diverging_step: Option<usize>,
    /// Over the steps compared; null when a difference was not a finite number (NaN logits).
    pub max_abs_logit_diff: Option<f64>,
    pub steps_compared: usize,
    /// The tokens the reference decoded (EOS not included, as in `tokenIds`).
    pub reference_token_ids: Vec<i64>,
    pub within_tolerance: bool,
}

/// The model's shape from the manifest, and what each session is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    pub layers: u32,
    pub hidden_size: u32,
    pub intermediate_size: u32,
    pub attention_heads: u32,
    pub kv_heads: u32,
    pub vocabulary: u32,
    pub max_tokens: u32,
    pub vision: String,
    pub decoder: String,
}

/// One finished case: the seed's fields, then the additions and the decode probe's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub id: String,
    pub expected: String,
    pub actual: String,
    pub distance: Option<usize>,
    pub characters: Option<usize>,
    pub exact: Option<bool>,
    pub text: String,
    pub tokens: usize,
    pub vision_ms: f64,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub total_ms: f64,
    pub token_ids: Vec<i64>,
    pub decode_steps: usize,
    /// Resident schedule only: when `vision.run()` returned, before the GPU finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision_call_ms: Option<f64>,
    pub time_to_first_token_ms: f64,
    pub token_latency: Option<LatencyStats>,
    pub tokens_per_second: Option<f64>,
    pub decode_probe: CaseProbe,
    /// Which pass over the set (0-based); null for a warm-up run.
    pub repeat: Option<u32>,
    // Fields a newer page adds are not part of the declared type.
    #[serde(flatten)]
    #[cfg_attr(test, ts(skip))]
    pub extra: Extra,
}

/// One case's decode steps: the prefill, then per step after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CaseProbe {
    pub prefill_submit_ms: f64,
    pub prefill_sync_ms: f64,
    pub submit_ms: Vec<f64>,
    pub sync_ms: Vec<f64>,
    /// One more than the steps: the prefill's choice comes first.
    pub choose_ms: Vec<f64>,
    /// choose=gpu: the steps queued per readback (`sync`), whose one wait sits on the last
    /// step of each batch; absent where every step is read back (and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_readback: Option<u32>,
}

/// Who measured: the browser, its adapter(s) and ORT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    pub user_agent: String,
    #[cfg_attr(test, ts(type = "unknown"))]
    pub adapter: Value,
    pub ort_version: String,
    pub cross_origin_isolated: bool,
    pub hardware_concurrency: Option<u32>,
    /// The vision worker's adapter (staged schedule), once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "unknown"))]
    pub worker_adapter: Option<Value>,
    /// The decoder worker's adapter (`realm=worker`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "unknown"))]
    pub decoder_worker_adapter: Option<Value>,
}

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

/// The manifest the run used and the model entries it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ManifestUse {
    pub url: String,
    pub name: Option<String>,
    #[cfg_attr(test, ts(type = "unknown"))]
    pub vision: Value,
    #[cfg_attr(test, ts(type = "unknown"))]
    pub decoder: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PollSetting {
    pub mode: String,
    pub kick_ms: Option<f64>,
}

/// The completion floor of each realm and the verdict over the decode steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Completion {
    pub page: Option<CompletionFloor>,
    pub worker: Option<CompletionFloor>,
    /// The decoder worker's floor (`realm=worker`): the one the check then uses.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "decoderWorker"
    )]
    pub decoder_worker: Option<CompletionFloor>,
    pub check: CompletionCheck,
}

/// One realm's empty-queue and one-dispatch round trips, raw and as statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CompletionFloor {
    #[serde(flatten)]
    pub rounds: FloorRounds,
    pub empty_queue: Option<LatencyStats>,
    pub dispatch_readback: Option<LatencyStats>,
}

/// The rounds as the page measured them (3 warm-up rounds, then 20 timed ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FloorRounds {
    pub rounds: u32,
    pub warmup_rounds: u32,
    pub empty_queue_ms: Vec<f64>,
    pub dispatch_readback_ms: Vec<f64>,
    pub poll: String,
    pub kick_ms: Option<f64>,
    pub kicks: u64,
    /// How long the realm's probe took, warm-up rounds and pipeline included, in the page's
    /// `probe` phase; absent from records made while the probe ran inside the load phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_ms: Option<f64>,
}

/// The decode probe over every timed case of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunProbe {
    pub token_latency: Option<LatencyStats>,
    pub submit: Option<LatencyStats>,
    pub sync: Option<LatencyStats>,
    pub choose: Option<LatencyStats>,
    pub prefill_submit: Option<LatencyStats>,
    pub prefill_sync: Option<LatencyStats>,
    pub time_to_first_token: Option<LatencyStats>,
    pub tokens_per_second: Option<f64>,
    pub gpu_ms_per_decoder_run: Option<f64>,
}

/// The timings of each pass over the set and their spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Repeats {
    pub count: u32,
    pub per_repeat: Vec<RepeatFigures>,
    pub interval: RepeatIntervals,
    /// False when a repeat decoded other tokens for a case (greedy decoding is deterministic).
    pub tokens_agree: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RepeatFigures {
    pub repeat: Option<u32>,
    pub case_p50_ms: Option<f64>,
    pub vision_p50_ms: Option<f64>,
    pub prefill_p50_ms: Option<f64>,
    pub time_to_first_token_p50_ms: Option<f64>,
    pub token_p50_ms: Option<f64>,
    pub token_p90_ms: Option<f64>,
    pub ms_per_token: Option<f64>,
    pub tokens_per_second: Option<f64>,
}

/// The mean and 95 % interval of each figure of [`RepeatFigures`] across the passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RepeatIntervals {
    pub case_p50_ms: Option<MeanInterval>,
    pub vision_p50_ms: Option<MeanInterval>,
    pub prefill_p50_ms: Option<MeanInterval>,
    pub time_to_first_token_p50_ms: Option<MeanInterval>,
    pub token_p50_ms: Option<MeanInterval>,
    pub token_p90_ms: Option<MeanInterval>,
    pub ms_per_token: Option<MeanInterval>,
    pub tokens_per_second: Option<MeanInterval>,
}

/// The first run (warm-up or timed) against the steady state of the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PipelineCompilation {
    pub first: FirstRun,
    pub steady: Option<SteadyState>,
    pub prefill_extra_ms: Option<f64>,
    pub vision_extra_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FirstRun {
    pub id: String,
    pub warmup: bool,
    pub total_ms: f64,
    pub vision_ms: f64,
    pub prefill_ms: f64,
    pub first_token_step_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SteadyState {
    pub runs: usize,
    pub case_p50_ms: Option<f64>,
    pub vision_p50_ms: Option<f64>,
    pub prefill_p50_ms: Option<f64>,
    pub token_p50_ms: Option<f64>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The `result` record the runner wrote before these types existed (Firefox, smoke2).
    const LEGACY: &str = include_str!("../../runner/tests/data/legacy-smoke2.jsonl");

    /// The legacy summary, its `config` with the parameters added since spelled at their
    /// defaults: a config read from an older record writes them back explicitly.
    fn legacy_summary() -> Value {
        let mut summary = LEGACY
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|record| record["kind"] == "result")
            .expect("the legacy file has a result record")["summary"]
            .clone();
        assert!(summary["config"].get("verify").is_none());
        summary["config"]["verify"] = "none".into();
        summary
    }

    /// Equal JSON, or a panic naming the first path where they differ.
    pub(crate) fn assert_same(written: &Value, posted: &Value, path: &str) {
        assert_within(written, posted, path, 0.0);
    }

    /// As [`assert_same`], numbers within `relative` of each other.
    pub(crate) fn assert_within(written: &Value, posted: &Value, path: &str, relative: f64) {
        match (written, posted) {
            (Value::Object(a), Value::Object(b)) => {
                for key in a.keys().chain(b.keys()) {
                    let missing = Value::String("(absent)".into());
                    let (x, y) = (
                        a.get(key).unwrap_or(&missing),
                        b.get(key).unwrap_or(&missing),
                    );
                    assert_within(x, y, &format!("{path}.{key}"), relative);
                }
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (index, (x, y)) in a.iter().zip(b).enumerate() {
                    assert_within(x, y, &format!("{path}[{index}]"), relative);
                }
            }
            // JavaScript has one number type: `0` and `0.0` are the same value.
            (Value::Number(a), Value::Number(b)) => {
                let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
                assert!(
                    (a - b).abs() <= relative * a.abs().max(b.abs()),
                    "at {path}: {a} != {b}"
                );
            }
            _ => assert_eq!(written, posted, "at {path}"),
        }
    }

    #[test]
    fn every_field_of_a_posted_summary_is_typed_and_round_trips() {
        let posted = legacy_summary();
        let summary: PageSummary = serde_json::from_value(posted.clone()).unwrap();
        assert!(
            summary.extra.is_empty(),
            "untyped: {:?}",
            summary.extra.keys()
        );
        for case in &summary.results {
            assert!(case.extra.is_empty(), "untyped: {:?}", case.extra.keys());
        }
        assert_same(&serde_json::to_value(&summary).unwrap(), &posted, "summary");
        assert_eq!(summary.results.len(), 2);
        assert_eq!(summary.config.max_tokens, 2);
        assert_eq!(summary.results[0].decode_probe.choose_ms.len(), 2);
    }

    #[test]
    fn a_field_a_newer_page_adds_is_kept() {
        let mut posted = legacy_summary();
        posted["futureFigure"] = serde_json::json!({ "n": 1 });
        posted["results"][0]["futureCaseFigure"] = serde_json::json!(2);
        let summary: PageSummary = serde_json::from_value(posted.clone()).unwrap();
        assert_eq!(summary.extra["futureFigure"]["n"], 1);
        assert_same(&serde_json::to_value(&summary).unwrap(), &posted, "summary");
    }
}
