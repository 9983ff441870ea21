//! The probe cache's two ends on the server (`crate::probe_cache`): the run's page asks at
//! [`PROBE_CACHE_PATH`] for the floors the runner kept (with the run's secret, as every report:
//! the offer is the runner's, so it travels beside the launch and never in the page's query),
//! and the floors a result says were measured are kept once the result is written.

use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use ocr_bench_core::record::{PageSummary, ProbeOffer};
use serde_json::json;

use super::AppState;
use crate::probe_cache::ProbeCache;

/// Where the page asks for the kept floors (`www/probe-cache.js`).
pub const PROBE_CACHE_PATH: &str = "/__ocr-bench/probe-cache";

impl AppState {
    /// Under `run`: the page may reuse the floors `cache` keeps, and its measured ones are kept.
    pub fn with_probe_cache(mut self, cache: ProbeCache) -> Self {
        self.probe_cache = Some(cache);
        self
    }

    /// Keeps the floors a written result measured; a cache that cannot be written is said,
    /// and the run goes on (its record holds the floors all the same).
    pub(super) fn keep_floors(&self, summary: &PageSummary) {
        let Some(cache) = &self.probe_cache else {
            return;
        };
        if let Err(e) = cache.keep(summary) {
            eprintln!(
                "ocr-bench: warning: the measured completion floors could not be kept in {} \
                 ({e:#}); the result record holds them, and the next run measures again",
                cache.path().display()
            );
        }
    }
}

/// `POST /__ocr-bench/probe-cache`: the [`ProbeOffer`] of this run, to its own page; under
/// `serve` an offer of nothing, saying why.
pub(super) async fn offer(state: &AppState, headers: &HeaderMap) -> Response {
    if let Err((status, message)) = state.check_sender(headers) {
        eprintln!(
            "ocr-bench: {PROBE_CACHE_PATH} refused ({}): {message}",
            status.as_u16()
        );
        return (status, Json(json!({ "ok": false, "error": message }))).into_response();
    }
    let offer = match &state.probe_cache {
        Some(cache) => cache.offer(),
        None => ProbeOffer {
            reuse: false,
            reason: Some(
                "this server was started by `serve`, which keeps no floors: every floor is measured"
                    .to_owned(),
            ),
            runner: None,
            floors: Vec::new(),
        },
    };
    Json(offer).into_response()
}
