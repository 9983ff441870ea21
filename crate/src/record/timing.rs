//! The record's timing figures: the completion floors and their verdict, the decode probe's
//! statistics over the run, the repeats compared, and the first case (pipeline compilation)
//! against the steady ones.

use serde::{Deserialize, Serialize};

use crate::latency::{CompletionCheck, LatencyStats, MeanInterval};

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
    /// Measured in this run or reused from the runner's probe cache, and under which key;
    /// absent from records made before the cache (every floor then was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub source: Option<super::FloorSource>,
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
    /// Its dispatches (absent in records older than the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<super::CaseDispatches>,
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
    /// The steady runs' dispatches (absent in records older than the count, and where no
    /// steady run has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<super::DispatchMedians>,
}
