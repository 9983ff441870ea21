//! The endpoints the page reports to, and how a request that is not taken is answered.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use ocr_bench_core::phase::{Phase, RELEASE_STEPS};
use serde_json::json;

/// Why a request was not taken: its status, the message naming what is allowed, and whether
/// it is written down as an attempt (refusals of foreign or oversized reports are; a page's
/// own malformed body is only answered).
pub(super) struct Refusal {
    pub(super) status: StatusCode,
    pub(super) message: String,
    pub(super) recorded: bool,
}

impl Refusal {
    pub(super) fn bad(message: String) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message,
            recorded: false,
        }
    }

    pub(super) fn recorded(status: StatusCode, message: String) -> Self {
        Self {
            status,
            message,
            recorded: true,
        }
    }
}

/// The endpoints the page reports to, one record kind each.
#[derive(Debug, Clone, Copy)]
pub(super) enum Endpoint {
    Start,
    Mark,
    Progress,
    Error,
    Result,
}

impl Endpoint {
    pub(super) const ALL: [Endpoint; 5] = [
        Endpoint::Start,
        Endpoint::Mark,
        Endpoint::Progress,
        Endpoint::Error,
        Endpoint::Result,
    ];

    pub(super) fn path(self) -> &'static str {
        match self {
            Endpoint::Start => "/benchmark-start",
            Endpoint::Mark => "/benchmark-mark",
            Endpoint::Progress => "/benchmark-progress",
            Endpoint::Error => "/benchmark-error",
            Endpoint::Result => "/benchmark-result",
        }
    }

    /// What the body must be, for the error answer.
    pub(super) fn allowed(self) -> String {
        match self {
            Endpoint::Start => "the body is { runId, config, userAgent, adapter, ortVersion }",
            Endpoint::Mark => {
                return format!(
                    "`phase` must be one of {}; a `step` (one of {}) only with `phase` {}, the phase under way",
                    Phase::allowed(),
                    RELEASE_STEPS.join(", "),
                    Phase::Release
                )
            }
            Endpoint::Progress => "the body is { runId, case } with one case result (docs/architecture.md, \"Summary\")",
            Endpoint::Error => "the body is { runId, phase, error: { name, message, stack } }",
            Endpoint::Result => "the body is a JSON object naming the run's `runId` (a string): the page's summary (docs/architecture.md, \"Summary\"), or any other page's figures, kept as posted",
        }
        .to_owned()
    }
}

impl Refusal {
    pub(super) fn into_answer(self) -> Response {
        (
            self.status,
            Json(json!({ "ok": false, "error": self.message })),
        )
            .into_response()
    }
}
