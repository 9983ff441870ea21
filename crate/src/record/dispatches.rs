//! The compute dispatches onnxruntime-web encoded (counted in the realm that ran each session,
//! `browser/dispatch-count.js`; docs/benchmark-protocol.md, "Dispatches"): per case, and their
//! medians over the steady cases.

use serde::{Deserialize, Serialize};

/// One case's dispatches: its vision encode, its prefill and its decode steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CaseDispatches {
    /// The vision encoder's `run()`; null where the case ran none (`scope=decoder`).
    pub vision: Option<u32>,
    pub prefill: u32,
    /// The median (nearest rank) over the case's decode steps; null for a case without one.
    pub step_p50: Option<f64>,
}

/// Each figure of [`CaseDispatches`], its median (nearest rank) over the cases that have it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DispatchMedians {
    pub vision_p50: Option<f64>,
    pub prefill_p50: Option<f64>,
    pub step_p50: Option<f64>,
}
