//! The HTTP server: the repository root as static files with the headers that make the page
//! cross-origin isolated, and the JSON endpoints the page reports to. Every request to an
//! endpoint is appended at once as one JSONL record, so a crash loses no finished case.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::{Context, Result};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::UnboundedSender;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::browser::BrowserInfo;
use crate::memory::Sampler;
use crate::record::{Line, ProcessMemoryAnswer, Record};

/// The summary of a full run with its memory samples and per-case results runs to a few
/// hundred KiB; allow far more than that.
const BODY_LIMIT_BYTES: usize = 64 << 20;

/// Who is being measured: the runner's own browser (under `run`), or a person's (`serve`).
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub browser: Option<BrowserInfo>,
    /// The canonical query string of the configuration, as the runner sent it.
    pub query: Option<String>,
    pub page: Option<String>,
    pub machine: Value,
}

pub struct AppState {
    results_path: PathBuf,
    results: Mutex<File>,
    context: RunContext,
    sampler: Option<Arc<Sampler>>,
    /// Every record the page's requests produced, for the run that waits on it.
    events: Option<UnboundedSender<Record>>,
}

impl AppState {
    /// Opens (creating it and its directory if needed) the results file for appending.
    pub fn new(
        results_path: &Path,
        context: RunContext,
        sampler: Option<Arc<Sampler>>,
        events: Option<UnboundedSender<Record>>,
    ) -> Result<Self> {
        if let Some(dir) = results_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(results_path)
            .with_context(|| format!("opening the results file {}", results_path.display()))?;
        Ok(Self {
            results_path: results_path.to_owned(),
            results: Mutex::new(file),
            context,
            sampler,
            events,
        })
    }

    /// Appends one record (one line, one `write` call) with the time and this run's context.
    pub fn append(&self, record: Record) -> Result<()> {
        let ctx = &self.context;
        let line = Line {
            record,
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            browser: ctx.browser.clone(),
            query: ctx.query.clone(),
            page: ctx.page.clone(),
        };
        let mut text = serde_json::to_string(&line)?;
        text.push('\n');
        let mut file = self.results.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .with_context(|| format!("appending to {}", self.results_path.display()))
    }

    /// The `processMemory` answer of `/benchmark-result`.
    fn process_memory(&self) -> ProcessMemoryAnswer {
        match &self.sampler {
            Some(sampler) => ProcessMemoryAnswer::measured(sampler.process_memory()),
            None => ProcessMemoryAnswer::not_sampled(),
        }
    }

    /// The record of one request's body; `Err` says what was wrong and what is allowed.
    fn record(&self, endpoint: Endpoint, mut body: Map<String, Value>) -> Result<Record, String> {
        // The summary keeps its own `runId`; the other bodies' moves to the record's top.
        let run_id = match endpoint {
            Endpoint::Result => None,
            _ => match body.remove("runId") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) => Some(id),
                Some(other) => return Err(format!("`runId` must be a string, got {other}")),
            },
        };
        let parse_error = |e: serde_json::Error| format!("{e}; {}", endpoint.allowed());
        let body = Value::Object(body);
        Ok(match endpoint {
            Endpoint::Start => Record::Start {
                run_id,
                machine: self.context.machine.clone(),
                body: serde_json::from_value(body).map_err(parse_error)?,
            },
            Endpoint::Mark => {
                let phase = body
                    .get("phase")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| format!("{}, got {body}", endpoint.allowed()))?
                    .to_owned();
                // Mark first, then write: the samples of the new phase start as early as possible.
                if let Some(sampler) = &self.sampler {
                    sampler.mark(&phase);
                }
                Record::Mark { run_id, phase }
            }
            Endpoint::Progress => Record::Progress {
                run_id,
                body: serde_json::from_value(body).map_err(parse_error)?,
            },
            Endpoint::Error => Record::Error {
                run_id,
                phase: self.sampler.as_ref().map(|s| s.current_phase()),
                body: serde_json::from_value(body).map_err(parse_error)?,
            },
            Endpoint::Result => Record::Result {
                summary: serde_json::from_value(body).map_err(parse_error)?,
                process_memory: self.process_memory(),
            },
        })
    }
}

/// The endpoints the page reports to, one record kind each.
#[derive(Debug, Clone, Copy)]
enum Endpoint {
    Start,
    Mark,
    Progress,
    Error,
    Result,
}

impl Endpoint {
    const ALL: [(Endpoint, &'static str); 5] = [
        (Endpoint::Start, "/benchmark-start"),
        (Endpoint::Mark, "/benchmark-mark"),
        (Endpoint::Progress, "/benchmark-progress"),
        (Endpoint::Error, "/benchmark-error"),
        (Endpoint::Result, "/benchmark-result"),
    ];

    /// What the body must be, for the error answer.
    fn allowed(self) -> &'static str {
        match self {
            Endpoint::Start => "the body is { runId, config, userAgent, adapter, ortVersion }",
            Endpoint::Mark => "`phase` must be a non-empty string (baseline, vision-load, vision-encode, vision-release, decoder-load, decoder-run, release)",
            Endpoint::Progress => "the body is { runId, case } with one case result (docs/architecture.md, \"Summary\")",
            Endpoint::Error => "the body is { runId, phase, error: { name, message, stack } }",
            Endpoint::Result => "the body is the page's summary, or any JSON object another page posts",
        }
    }
}

/// A JSON error answer naming what was wrong.
fn bad_request(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({ "ok": false, "error": message })),
    )
        .into_response()
}

fn write_failed(error: anyhow::Error) -> Response {
    eprintln!("ocr-bench: {error:#}");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({ "ok": false, "error": format!("{error:#}") })),
    )
        .into_response()
}

/// Every endpoint: the body typed into its record, appended, passed to the waiting run, and
/// answered (`/benchmark-result` with the process memory, the others with `ok`).
async fn receive(state: Arc<AppState>, endpoint: Endpoint, body: Value) -> Response {
    let Value::Object(body) = body else {
        return bad_request(format!("the body must be a JSON object, got {body}"));
    };
    let record = match state.record(endpoint, body) {
        Ok(record) => record,
        Err(message) => return bad_request(message),
    };
    let answer = match &record {
        Record::Result { process_memory, .. } => Json(process_memory).into_response(),
        _ => Json(json!({ "ok": true })).into_response(),
    };
    if let Err(e) = state.append(record.clone()) {
        return write_failed(e);
    }
    if let Some(events) = &state.events {
        let _ = events.send(record);
    }
    answer
}

/// The MIME types the architecture fixes; `mime_guess` would call `.mjs`
/// `application/javascript` and leave `.onnx`/`.data` to chance.
fn content_type_for(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match extension {
        "mjs" | "js" => "text/javascript",
        "wasm" => "application/wasm",
        "onnx" | "data" => "application/octet-stream",
        "json" => "application/json",
        "html" => "text/html; charset=utf-8",
        _ => return None,
    })
}

async fn fix_content_type(request: Request, next: Next) -> Response {
    let content_type = content_type_for(request.uri().path());
    let mut response = next.run(request).await;
    if let Some(content_type) = content_type.filter(|_| response.status().is_success()) {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    response
}

/// The router: endpoints, `/` to the page, and the repository root as static files.
pub fn router(root: &Path, state: Arc<AppState>) -> Router {
    let isolation = [
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-embedder-policy", "require-corp"),
        ("cross-origin-resource-policy", "same-origin"),
        ("cache-control", "no-store"),
    ];
    let mut app = Router::new().route(
        "/",
        get(|| async { Redirect::temporary("/www/index.html") }),
    );
    for (endpoint, path) in Endpoint::ALL {
        app = app.route(
            path,
            post(move |State(state), Json(body)| receive(state, endpoint, body)),
        );
    }
    let mut app = app
        .fallback_service(ServeDir::new(root))
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .layer(middleware::from_fn(fix_content_type))
        .with_state(state);
    for (name, value) in isolation {
        app = app.layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        ));
    }
    app
}

/// Binds `address:port` (port 0: a free port) and serves until the task is dropped.
pub async fn start_server(
    address: IpAddr,
    port: u16,
    root: &Path,
    state: Arc<AppState>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind((address, port)).await.with_context(|| {
        format!("binding {address}:{port} (is another server using the port? `--port 0` picks a free one)")
    })?;
    let bound = listener.local_addr()?;
    let app = router(root, state);
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("ocr-bench: server stopped: {e}");
        }
    });
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_architecture() {
        assert_eq!(
            content_type_for("/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs"),
            Some("text/javascript")
        );
        assert_eq!(
            content_type_for("/www/pkg/ocr_bench_core_bg.wasm"),
            Some("application/wasm")
        );
        assert_eq!(
            content_type_for("/models/generated/vision_int4.onnx"),
            Some("application/octet-stream")
        );
        assert_eq!(
            content_type_for("/models/generated/external/vision_int4.onnx.data"),
            Some("application/octet-stream")
        );
        assert_eq!(
            content_type_for("/models/manifest.json"),
            Some("application/json")
        );
        assert_eq!(content_type_for("/www/style.css"), None);
    }
}
