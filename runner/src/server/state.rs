//! The server's state: who is being measured, the results file, the run that waits on the
//! records, the guard of who may report; and how a refused request is written down and
//! answered.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::Result;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::endpoint::{Endpoint, Refusal};
use super::guard::RunGuard;
use super::hold::Hold;
use super::injection::Injection;
use super::results_file::ResultsFile;
use crate::browser::BrowserInfo;
use crate::memory::Sampler;
use crate::probe_cache::ProbeCache;
use crate::record::{Line, ProcessMemoryAnswer, Record, Refused, StartBody};

/// Who is being measured: the runner's own browser (under `run`), or a person's (`serve`).
/// The benchmark page: the page a run opens unless told otherwise, and the one whose result
/// must be the project's summary.
pub const DEFAULT_PAGE: &str = "www/index.html";

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
    /// The browser opened the run's launch URL: it reaches the runner.
    Launched,
}

pub struct AppState {
    pub(super) results: Mutex<ResultsFile>,
    pub(super) context: RunContext,
    pub(super) sampler: Option<Arc<Sampler>>,
    /// Every record the page's requests produced, for the run that waits on it.
    pub(super) events: Option<UnboundedSender<Event>>,
    pub(super) guard: Option<RunGuard>,
    /// Under `run` with `OCR_BENCH_INJECT`: the test-only fault the page is sent to arm.
    pub(super) injection: Option<Injection>,
    /// Under `run` with `OCR_BENCH_TEST_HOLD`: the test-only hold of one phase's mark.
    pub(super) hold: Option<Hold>,
    /// This server's number among the runner's (a sweep's jobs each have one), for the hold.
    pub(super) run_number: u64,
    /// The start message of each `runId`, so that two pages on one server keep theirs apart.
    pub(super) starts: Mutex<HashMap<String, StartBody>>,
    /// Why a run's browser has no process figures (a WebDriver browser); `None`: serve mode.
    pub(super) no_process_memory: Option<&'static str>,
    /// Under `run`: the completion floors kept beside the results ([`super::probe_offer`]).
    pub(super) probe_cache: Option<ProbeCache>,
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
            hold: None,
            run_number: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
            starts: Mutex::new(HashMap::new()),
            no_process_memory: None,
            probe_cache: None,
        })
    }

    /// A run whose browser's processes cannot be sampled: the result says `reason`.
    pub fn without_process_memory(mut self, reason: Option<&'static str>) -> Self {
        self.no_process_memory = reason;
        self
    }

    /// Under `run`: accepts reports only with `secret`: the launch URL (`LAUNCH_PATH` +
    /// secret) sets it as a cookie once and sends the browser on to `target` (path and query
    /// of the page), with the test-only `inject=` that `OCR_BENCH_INJECT` asks for (checked by
    /// the commands first).
    pub fn guarded(mut self, secret: String, target: String) -> Self {
        self.injection = Injection::from_env().ok().flatten();
        self.hold = Hold::from_env().ok().flatten();
        let target = match &self.injection {
            Some(injection) => injection.add_to(&target),
            None => target,
        };
        self.guard = Some(RunGuard::new(secret, target));
        self
    }

    /// Notes that this run has ended (its browser stopped, its closing record written),
    /// answering the results a test-only hold keeps waiting for it ([`Hold::at_result`]).
    pub fn run_closed(&self) {
        if self.hold.is_some() {
            super::hold::run_ended(self.run_number);
        }
    }

    /// Under `serve`: accepts reports only with `secret`, which the launch URL sets as a cookie
    /// every time it is opened before it sends the browser on to `page` (a path).
    pub fn with_token(mut self, secret: String, page: String) -> Self {
        self.guard = Some(RunGuard::reusable(secret, page));
        self
    }

    /// The origins reports are accepted from, once the server listens
    /// ([`super::own_origins`]).
    pub fn accept_origins(&self, origins: Vec<String>) {
        if let Some(guard) = &self.guard {
            guard.accept_origins(origins);
        }
    }

    /// Whether this server belongs to one run (rather than to `serve`).
    pub(super) fn serves_a_run(&self) -> bool {
        self.guard.as_ref().is_some_and(RunGuard::guards_a_run)
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

    pub(super) fn tell(&self, event: Event) {
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }

    /// The `processMemory` answer of `/benchmark-result`.
    pub(super) fn process_memory(&self) -> ProcessMemoryAnswer {
        match &self.sampler {
            Some(sampler) => ProcessMemoryAnswer::measured(sampler.process_memory()),
            None => match self.no_process_memory {
                Some(reason) => ProcessMemoryAnswer::unavailable(reason),
                None => ProcessMemoryAnswer::not_sampled(),
            },
        }
    }

    /// Whether a report comes from a page of this server ([`RunGuard::check_sender`]).
    pub(super) fn check_sender(&self, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
        self.guard
            .as_ref()
            .map_or(Ok(()), |guard| guard.check_sender(headers))
    }

    /// Under `run`: the first report fixes the page's `runId`; another one is refused.
    pub(super) fn check_run_id(&self, claimed: Option<&str>) -> Result<(), String> {
        match (&self.guard, claimed) {
            (Some(guard), Some(claimed)) => guard.check_run_id(claimed),
            _ => Ok(()),
        }
    }

    /// Writes the refused attempt (with the body as posted, cut to a size) and answers it;
    /// `ends_run` when the page itself posted a result that cannot be taken.
    pub(super) fn refuse(
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

    pub(super) fn write_failed(&self, error: anyhow::Error) -> Response {
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
    pub(super) fn announce(&self, record: &Record) {
        if self.serves_a_run() {
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
