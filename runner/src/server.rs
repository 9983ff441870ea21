//! The HTTP server: the repository root as static files with the headers that make the page
//! cross-origin isolated, and the JSON endpoints the page reports to. Every request to an
//! endpoint is appended at once as one JSONL record, so a crash loses no finished case.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::Result;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use ocr_bench_core::phase::Phase;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::UnboundedSender;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::browser::BrowserInfo;
use crate::exit::{Cause, Failure};
use crate::memory::Sampler;
use crate::record::{Line, Posted, ProcessMemoryAnswer, Record, Refused, StartBody};

mod endpoint;
mod guard;
mod injection;
mod results_file;
use endpoint::{Endpoint, Refusal};
use guard::RunGuard;
pub use guard::{LAUNCH_PATH, RUN_COOKIE};
pub use injection::{Injection, INJECT_PATH, INJECT_VARIABLE};
use results_file::ResultsFile;

/// The summary of smoke2 (2 cases, 2 tokens each) is 19.9 KB as written; a case adds about
/// 1 KB plus its tokens' timings, so 200 cases of 128 tokens stay near 1 MB. 8 MiB leaves
/// room for that eight times over and refuses a runaway body (a 50 MB one was accepted).
pub const BODY_LIMIT_BYTES: usize = 8 << 20;

/// Who is being measured: the runner's own browser (under `run`), or a person's (`serve`).
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub browser: Option<BrowserInfo>,
    /// Where the browser runs (`BrowserTarget::identity`); `None` under `serve`.
    pub target: Option<String>,
    /// The canonical query string of the configuration, as the runner sent it.
    pub query: Option<String>,
    pub page: Option<String>,
    pub machine: Value,
}

/// What the server tells the run that waits on it.
#[derive(Debug, Clone)]
pub enum Event {
    /// A report was accepted and written (boxed: a result is far larger than the rest).
    Accepted(Box<Record>),
    /// A request was refused (and recorded as an attempt): the reason, and whether it ends the
    /// run (a result the page itself posted that cannot be taken: no later one will come).
    Refused { reason: String, ends_run: bool },
    /// A record could not be written: the file and the OS error.
    WriteFailed(String),
}

pub struct AppState {
    results: Mutex<ResultsFile>,
    context: RunContext,
    sampler: Option<Arc<Sampler>>,
    /// Every record the page's requests produced, for the run that waits on it.
    events: Option<UnboundedSender<Event>>,
    guard: Option<RunGuard>,
    /// Under `run` with `OCR_BENCH_INJECT`: the test-only fault the page is sent to arm.
    injection: Option<Injection>,
    /// The start message of each `runId`, so that two pages on one server keep theirs apart.
    starts: Mutex<HashMap<String, StartBody>>,
}

impl AppState {
    /// Opens (creating it and its directory if needed) the results file for appending.
    pub fn new(
        results_path: &Path,
        context: RunContext,
        sampler: Option<Arc<Sampler>>,
        events: Option<UnboundedSender<Event>>,
    ) -> Result<Self> {
        Ok(Self {
            results: Mutex::new(ResultsFile::open(results_path)?),
            context,
            sampler,
            events,
            guard: None,
            injection: None,
            starts: Mutex::new(HashMap::new()),
        })
    }

    /// Accepts reports only with `secret`: the launch URL (`LAUNCH_PATH` + secret) sets it as a
    /// cookie once and sends the browser on to `target` (path and query of the page), with the
    /// test-only `inject=` that `OCR_BENCH_INJECT` asks for (checked by the commands first).
    pub fn guarded(mut self, secret: String, target: String) -> Self {
        self.injection = Injection::from_env().ok().flatten();
        let target = match &self.injection {
            Some(injection) => injection.add_to(&target),
            None => target,
        };
        self.guard = Some(RunGuard::new(secret, target));
        self
    }

    /// Appends one record (one line, one `write` call) with the time and this run's context.
    /// The error names the file and the OS error.
    pub fn append(&self, record: Record) -> Result<()> {
        let ctx = &self.context;
        let line = Line {
            record,
            time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            browser: ctx.browser.clone(),
            target: ctx.target.clone(),
            query: ctx.query.clone(),
            page: ctx.page.clone(),
        };
        let text = serde_json::to_string(&line)?;
        self.results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append_line(&text)
    }

    fn tell(&self, event: Event) {
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }

    /// The `processMemory` answer of `/benchmark-result`.
    fn process_memory(&self) -> ProcessMemoryAnswer {
        match &self.sampler {
            Some(sampler) => ProcessMemoryAnswer::measured(sampler.process_memory()),
            None => ProcessMemoryAnswer::not_sampled(),
        }
    }

    /// Under `run`: whether the request carries the run's secret.
    fn check_secret(&self, headers: &HeaderMap) -> Result<(), String> {
        self.guard
            .as_ref()
            .map_or(Ok(()), |guard| guard.check_secret(headers))
    }

    /// Under `run`: the first report fixes the page's `runId`; another one is refused.
    fn check_run_id(&self, claimed: Option<&str>) -> Result<(), String> {
        match (&self.guard, claimed) {
            (Some(guard), Some(claimed)) => guard.check_run_id(claimed),
            _ => Ok(()),
        }
    }

    /// The record of one request's body; `Err` says what was wrong and what is allowed.
    fn record(&self, endpoint: Endpoint, mut body: Map<String, Value>) -> Result<Record, Refusal> {
        // The summary keeps its own `runId`; the other bodies' moves to the record's top.
        let run_id = match endpoint {
            Endpoint::Result => None,
            _ => match body.remove("runId") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) => Some(id),
                Some(other) => {
                    return Err(Refusal::bad(format!(
                        "`runId` must be a string, got {other}"
                    )))
                }
            },
        };
        let parse_error =
            |e: serde_json::Error| Refusal::bad(format!("{e}; {}", endpoint.allowed()));
        let body = Value::Object(body);
        Ok(match endpoint {
            Endpoint::Start => {
                let start: StartBody = serde_json::from_value(body).map_err(parse_error)?;
                if let Some(id) = &run_id {
                    self.starts
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(id.clone(), start.clone());
                }
                Record::Start {
                    run_id,
                    machine: self.context.machine.clone(),
                    body: start,
                }
            }
            Endpoint::Mark => {
                let phase = body
                    .get("phase")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Refusal::bad(format!("{}, got {body}", endpoint.allowed())))?;
                if phase.parse::<Phase>().is_err() {
                    return Err(Refusal::bad(format!(
                        "unknown phase {phase:?}; {}",
                        endpoint.allowed()
                    )));
                }
                let phase = phase.to_owned();
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
            Endpoint::Result => {
                // The cookie proved who sent it; the `runId` says which run the figures are.
                if !body.get("runId").is_some_and(Value::is_string) {
                    let got = body.get("runId").map_or("none", kind_of);
                    return Err(Refusal::recorded(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!(
                            "the result names no `runId` (got {got}); {}",
                            endpoint.allowed()
                        ),
                    ));
                }
                let summary = match serde_json::from_value(body.clone()) {
                    Ok(summary) => Posted::Benchmark(summary),
                    // The project's own page must post its summary; its bugs are not figures.
                    Err(e) if self.context.page.as_deref() == Some(crate::run::DEFAULT_PAGE) => {
                        return Err(Refusal::recorded(
                            StatusCode::UNPROCESSABLE_ENTITY,
                            format!(
                                "not the benchmark page's summary ({e}); {} posts the summary of docs/architecture.md, \"Summary\"",
                                crate::run::DEFAULT_PAGE
                            ),
                        ));
                    }
                    Err(_) => Posted::Other(body),
                };
                Record::Result {
                    summary,
                    process_memory: self.process_memory(),
                }
            }
        })
    }

    /// Writes the refused attempt (with the body as posted, cut to a size) and answers it;
    /// `ends_run` when the page itself posted a result that cannot be taken.
    fn refuse(
        &self,
        endpoint: Endpoint,
        refusal: Refusal,
        claimed: Option<String>,
        posted: Option<&[u8]>,
        ends_run: bool,
    ) -> Response {
        if refusal.recorded {
            let reason = format!(
                "{} refused ({}): {}",
                endpoint.path(),
                refusal.status.as_u16(),
                refusal.message
            );
            eprintln!("ocr-bench: {reason}");
            let attempt = Record::Refused(Refused {
                endpoint: endpoint.path().to_owned(),
                status: refusal.status.as_u16(),
                reason: refusal.message.clone(),
                claimed_run_id: claimed,
                posted: None,
                posted_bytes: None,
            });
            let attempt = match (attempt, posted) {
                (Record::Refused(refused), Some(body)) => {
                    Record::Refused(refused.keep_posted(body))
                }
                (attempt, _) => attempt,
            };
            if let Err(e) = self.append(attempt) {
                return self.write_failed(e);
            }
            self.tell(Event::Refused { reason, ends_run });
        }
        (
            refusal.status,
            Json(json!({ "ok": false, "error": refusal.message })),
        )
            .into_response()
    }

    fn write_failed(&self, error: anyhow::Error) -> Response {
        let message = format!("{error:#}");
        eprintln!("ocr-bench: {message}");
        self.tell(Event::WriteFailed(message.clone()));
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({ "ok": false, "error": message })),
        )
            .into_response()
    }

    /// Under `serve`, one line per result naming the browser and adapter of its own start.
    fn announce(&self, record: &Record) {
        if self.guard.is_some() {
            return;
        }
        let Some(id) = record
            .run_id()
            .filter(|_| matches!(record, Record::Result { .. }))
        else {
            return;
        };
        let starts = self.starts.lock().unwrap_or_else(|e| e.into_inner());
        match starts.get(id) {
            Some(start) => println!(
                "result of run {id}: {} · adapter {} · ORT {}",
                start.user_agent, start.adapter, start.ort_version
            ),
            None => println!("result of run {id} (no start message for it)"),
        }
    }
}

/// The `runId` a body claims, for the record of a refused attempt.
fn claimed_run_id(body: &Value) -> Option<String> {
    body.get("runId").and_then(Value::as_str).map(str::to_owned)
}

/// What a JSON value is, for a message that must not repeat a whole body.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every endpoint: the sender checked, the body typed into its record, appended, passed to
/// the waiting run, and answered (`/benchmark-result` with the process memory, the others
/// with `ok`). A result the run's own page posted that cannot be taken (not JSON, not an
/// object, no `runId`, another run's, too large) is written down with its body and ends the
/// run at once: the page posts one result, so nothing is left to wait for.
async fn receive(
    state: Arc<AppState>,
    endpoint: Endpoint,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let bytes = match body {
        Ok(bytes) => Some(bytes),
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => None,
        Err(rejection) => return Refusal::bad(rejection.body_text()).into_answer(),
    };
    let posted = bytes.as_deref();
    let parsed = posted.map(serde_json::from_slice::<Value>);
    let claimed = match &parsed {
        Some(Ok(body)) => claimed_run_id(body),
        _ => None,
    };
    if let Err(message) = state.check_secret(&headers) {
        let refusal = Refusal::recorded(StatusCode::FORBIDDEN, message);
        return state.refuse(endpoint, refusal, claimed, posted, false);
    }
    // From here on the run's own page sent it.
    let ends_run = matches!(endpoint, Endpoint::Result);
    let unreadable = |message: String| {
        let message = format!("{message}; {}", endpoint.allowed());
        if ends_run {
            Refusal::recorded(StatusCode::BAD_REQUEST, message)
        } else {
            Refusal::bad(message)
        }
    };
    let Some(parsed) = parsed else {
        let message = format!(
            "the body is larger than {} MiB, the most a summary needs",
            BODY_LIMIT_BYTES >> 20
        );
        let refusal = Refusal::recorded(StatusCode::PAYLOAD_TOO_LARGE, message);
        return state.refuse(endpoint, refusal, None, None, ends_run);
    };
    let body = match parsed {
        Ok(body) => body,
        Err(e) => {
            let refusal = unreadable(format!("the body is not JSON ({e})"));
            return state.refuse(endpoint, refusal, None, posted, ends_run);
        }
    };
    let Value::Object(body) = body else {
        let refusal = unreadable(format!(
            "the body must be a JSON object, got {}",
            kind_of(&body)
        ));
        return state.refuse(endpoint, refusal, claimed, posted, ends_run);
    };
    let record = match state.record(endpoint, body) {
        Ok(record) => record,
        Err(refusal) => return state.refuse(endpoint, refusal, claimed, posted, ends_run),
    };
    if let Err(message) = state.check_run_id(record.run_id()) {
        let refusal = Refusal::recorded(StatusCode::FORBIDDEN, message);
        return state.refuse(endpoint, refusal, claimed, posted, ends_run);
    }
    let answer = match &record {
        Record::Result { process_memory, .. } => Json(process_memory).into_response(),
        _ => Json(json!({ "ok": true })).into_response(),
    };
    if let Err(e) = state.append(record.clone()) {
        return state.write_failed(e);
    }
    state.announce(&record);
    state.tell(Event::Accepted(Box::new(record)));
    answer
}

/// The one-time launch URL: sets the run's cookie and sends the browser to the page. A second
/// visit, or a wrong secret, is refused.
async fn launch(state: Arc<AppState>, secret: String) -> Response {
    let target = state
        .guard
        .as_ref()
        .and_then(|guard| guard.take_launch(&secret));
    let Some(target) = target else {
        return (
            StatusCode::FORBIDDEN,
            "this launch URL is not valid (it works once, for the browser the runner started)\n",
        )
            .into_response();
    };
    let cookie = format!("{RUN_COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict");
    let mut response = Redirect::to(&target).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
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
        .route(
            &format!("{LAUNCH_PATH}{{secret}}"),
            get(
                |State(state), axum::extract::Path(secret): axum::extract::Path<String>| {
                    launch(state, secret)
                },
            ),
        )
        .route(
            INJECT_PATH,
            post(
                |State(state): State<Arc<AppState>>,
                 headers: HeaderMap,
                 body: Result<Json<Value>, JsonRejection>| async move {
                    injection::confirm(&state, &headers, body.ok().map(|Json(v)| v)).await
                },
            ),
        );
    for endpoint in Endpoint::ALL {
        app = app.route(
            endpoint.path(),
            post(move |State(state), headers, body| receive(state, endpoint, headers, body)),
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
    let listener = tokio::net::TcpListener::bind((address, port))
        .await
        .map_err(|e| {
            Failure::new(
                Cause::Listen,
                format!("binding {address}:{port}: {e} (is another server using the port? `--port 0` picks a free one)"),
            )
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
