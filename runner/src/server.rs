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
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::browser::BrowserInfo;
use crate::memory::Sampler;

/// The summary of a full run with its memory samples and per-case results runs to a few
/// hundred KiB; allow far more than that.
const BODY_LIMIT_BYTES: usize = 64 << 20;

/// What the page told the server, for the run that waits on it.
#[derive(Debug, Clone)]
pub enum PageEvent {
    Start,
    Mark(String),
    Progress(Value),
    Error(Value),
    Result(Value),
}

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
    events: Option<UnboundedSender<PageEvent>>,
    /// The last `/benchmark-start` body: its adapter and versions go into the result record.
    start: Mutex<Option<Value>>,
}

impl AppState {
    /// Opens (creating it and its directory if needed) the results file for appending.
    pub fn new(
        results_path: &Path,
        context: RunContext,
        sampler: Option<Arc<Sampler>>,
        events: Option<UnboundedSender<PageEvent>>,
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
            start: Mutex::new(None),
        })
    }

    /// Appends one record (one line, one `write` call) with the time and this run's context.
    pub fn append(&self, kind: &str, mut record: serde_json::Map<String, Value>) -> Result<()> {
        let now = SystemTime::now();
        record.insert("kind".into(), json!(kind));
        record.insert(
            "time".into(),
            json!(humantime::format_rfc3339_millis(now).to_string()),
        );
        let ctx = &self.context;
        record.insert("browser".into(), serde_json::to_value(&ctx.browser)?);
        record.insert("query".into(), json!(ctx.query));
        record.insert("page".into(), json!(ctx.page));
        let mut line = serde_json::to_string(&Value::Object(record))?;
        line.push('\n');
        let mut file = self.results.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .with_context(|| format!("appending to {}", self.results_path.display()))
    }

    fn notify(&self, event: PageEvent) {
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }

    /// The `processMemory` answer of `/benchmark-result`.
    fn process_memory(&self) -> Value {
        match &self.sampler {
            Some(sampler) => {
                let mut snapshot = sampler.snapshot();
                snapshot["available"] = json!(true);
                snapshot
            }
            None => json!({
                "available": false,
                "reason": "the browser was not started by ocr-bench (serve mode), so its processes are not sampled; use `ocr-bench run`",
            }),
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

/// The 400 response for a body that is not a JSON object, or `None` when it is one.
fn not_an_object(body: &Value) -> Option<Response> {
    (!body.is_object()).then(|| bad_request(format!("the body must be a JSON object, got {body}")))
}

fn ok() -> Response {
    Json(json!({ "ok": true })).into_response()
}

async fn start(State(state): State<Arc<AppState>>, Json(body): Json<Value>) -> Response {
    if let Some(response) = not_an_object(&body) {
        return response;
    }
    let mut record = serde_json::Map::new();
    record.insert(
        "runId".into(),
        body.get("runId").cloned().unwrap_or(Value::Null),
    );
    record.insert("machine".into(), state.context.machine.clone());
    record.insert("body".into(), body.clone());
    if let Err(e) = state.append("start", record) {
        return write_failed(e);
    }
    *state.start.lock().unwrap_or_else(|e| e.into_inner()) = Some(body.clone());
    state.notify(PageEvent::Start);
    ok()
}

async fn mark(State(state): State<Arc<AppState>>, Json(body): Json<Value>) -> Response {
    let Some(phase) = body
        .get("phase")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    else {
        return bad_request(format!("`phase` must be a non-empty string (baseline, vision-load, vision-encode, vision-release, decoder-load, decoder-run, release), got {body}"));
    };
    let phase = phase.to_owned();
    // Mark first, then write: the samples of the new phase start as early as possible.
    if let Some(sampler) = &state.sampler {
        sampler.mark(&phase);
    }
    let mut record = serde_json::Map::new();
    record.insert(
        "runId".into(),
        body.get("runId").cloned().unwrap_or(Value::Null),
    );
    record.insert("phase".into(), json!(phase));
    if let Err(e) = state.append("mark", record) {
        return write_failed(e);
    }
    state.notify(PageEvent::Mark(phase));
    ok()
}

async fn progress(State(state): State<Arc<AppState>>, Json(body): Json<Value>) -> Response {
    if let Some(response) = not_an_object(&body) {
        return response;
    }
    let mut record = serde_json::Map::new();
    record.insert(
        "runId".into(),
        body.get("runId").cloned().unwrap_or(Value::Null),
    );
    record.insert("body".into(), body.clone());
    if let Err(e) = state.append("progress", record) {
        return write_failed(e);
    }
    state.notify(PageEvent::Progress(body));
    ok()
}

async fn error(State(state): State<Arc<AppState>>, Json(body): Json<Value>) -> Response {
    if let Some(response) = not_an_object(&body) {
        return response;
    }
    let mut record = serde_json::Map::new();
    record.insert(
        "runId".into(),
        body.get("runId").cloned().unwrap_or(Value::Null),
    );
    record.insert(
        "phase".into(),
        state
            .sampler
            .as_ref()
            .map(|s| json!(s.current_phase()))
            .unwrap_or(Value::Null),
    );
    record.insert("body".into(), body.clone());
    if let Err(e) = state.append("error", record) {
        return write_failed(e);
    }
    state.notify(PageEvent::Error(body));
    ok()
}

async fn result(State(state): State<Arc<AppState>>, Json(summary): Json<Value>) -> Response {
    if let Some(response) = not_an_object(&summary) {
        return response;
    }
    let process_memory = state.process_memory();
    let start = state
        .start
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or(Value::Null);
    let mut record = serde_json::Map::new();
    record.insert(
        "runId".into(),
        summary.get("runId").cloned().unwrap_or(Value::Null),
    );
    let config = summary
        .get("config")
        .or_else(|| start.get("config"))
        .cloned()
        .unwrap_or(Value::Null);
    record.insert("config".into(), config);
    for field in ["adapter", "ortVersion", "userAgent"] {
        record.insert(
            field.into(),
            start.get(field).cloned().unwrap_or(Value::Null),
        );
    }
    record.insert("machine".into(), state.context.machine.clone());
    record.insert("summary".into(), summary.clone());
    record.insert("processMemory".into(), process_memory.clone());
    if let Err(e) = state.append("result", record) {
        return write_failed(e);
    }
    state.notify(PageEvent::Result(summary));
    Json(process_memory).into_response()
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
    let mut app = Router::new()
        .route(
            "/",
            get(|| async { Redirect::temporary("/www/index.html") }),
        )
        .route("/benchmark-start", post(start))
        .route("/benchmark-mark", post(mark))
        .route("/benchmark-progress", post(progress))
        .route("/benchmark-error", post(error))
        .route("/benchmark-result", post(result))
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
