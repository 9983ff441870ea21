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
use crate::latency::LatencyStats;
use crate::manifest::{Family, Generation, ModelShape};

mod dispatches;
mod memory;
mod probe_cache;
mod sessions;
mod timing;
mod verification;

pub use dispatches::*;
pub use memory::*;
pub use probe_cache::*;
pub use sessions::*;
pub use timing::*;
pub use verification::*;

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
    /// Cases read as the expected text followed by extra characters (absent in records older
    /// than it; null where accuracy does not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailing_extras: Option<usize>,
    /// Accuracy per style where the set's cases name styles; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_style: Option<BTreeMap<String, crate::per_style::StyleSummary>>,
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
    /// `pool` above 1: the whole set read by K decoder realms at once; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolRun>,
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

/// The model's shape from the manifest (its type, `crate::manifest::ModelShape`), and what
/// each session is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    #[serde(flatten)]
    pub shape: ModelShape,
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
    /// The reading is the expected text followed by extra characters (absent in records older
    /// than it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailing_extras: Option<bool>,
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
    /// The compute dispatches of the case's vision, prefill and steps (absent in records older
    /// than the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<CaseDispatches>,
    /// Which pass over the set (0-based); null for a warm-up run.
    pub repeat: Option<u32>,
    /// `pool` above 1: which of the decoder realms (0-based) read the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder_realm: Option<u32>,
    /// The case's style, where its set's `cases.json` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
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
    /// The compute dispatches onnxruntime-web encoded for the prefill's `run()` (absent in
    /// records older than the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_dispatches: Option<u32>,
    /// The same for each step of `submitMs`, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_dispatches: Option<Vec<u32>>,
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
    /// Each variant the adapter's limits fell short of, and the manifest's fallback the page
    /// took instead (`docs/model-contract.md`, "Device limits").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limit_fallbacks: Vec<LimitFallback>,
}

/// A set read by a pool of decoder realms (`pool` above 1): the page's time for the whole set
/// and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PoolRun {
    pub realms: u32,
    /// From the first case taken from the queue to the last one read.
    pub wall_ms: f64,
    /// Decode steps (tokens after the prefill's) of every run, warm-up runs included.
    pub decode_steps: usize,
    /// `decodeSteps` over `wallMs`: the pool's aggregate rate.
    pub steps_per_second: Option<f64>,
    /// Runs (warm-up included) each realm read, by realm index.
    pub cases_per_realm: Vec<u32>,
    /// Each realm's last memory report (GPU bytes of its device, WASM heaps), by realm index.
    #[cfg_attr(test, ts(type = "unknown[]"))]
    pub realm_memory: Vec<Value>,
}

/// The device-limit guard's choice: the variant asked for, the one used, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LimitFallback {
    /// `vision` or `decoder`.
    pub role: String,
    pub asked: String,
    pub used: String,
    /// The limit, the need and the adapter's value, in words.
    pub reason: String,
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
    /// The manifest's family, where it is not the built-in prefix decoder.
    #[serde(default, skip_serializing_if = "Family::is_prefix")]
    pub family: Family,
    /// An encoder-decoder's token rule (`encoderDecoder.generation`), as the run applied it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<Generation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PollSetting {
    pub mode: String,
    pub kick_ms: Option<f64>,
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
