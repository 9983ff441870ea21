//! One run: a server, a sampler and a fresh browser on one page and configuration, until the
//! page posts its result or its error, the browser dies, or time runs out. The browser is
//! started and stopped through its [`BrowserTarget`] and stopped in every case, and a closing
//! `run` record says how the run ended.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::browser::{BrowserKind, StopReport};
use crate::browser_processes::BrowserTag;
use crate::exit::{Cause, Failure};
use crate::gpu_route::{self, AdapterVerdict, GpuRoute, GpuRouteRequest, Route};
use crate::probe_cache::{ProbeCache, ProbeMode};
use crate::reach::Reach;
use crate::record::{ErrorBody, Posted, Record, RunEnd};
use crate::server::{self, AppState, Event, RunContext};
use crate::target::BrowserTarget;
use ocr_bench_core::record::RunnerProbeKey;

mod checks;
mod outcome;
pub mod pace;
pub use checks::{check_manifest, check_model_folder, check_page, check_runtime};
pub use outcome::{Outcome, VERIFICATION_FAILED};
pub use pace::TimeLimit;

/// The benchmark page; its query is checked with the core before a browser starts.
pub use crate::server::DEFAULT_PAGE;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub root: PathBuf,
    pub page: String,
    /// The query string given to the page (canonical for the benchmark page).
    pub query: String,
    pub results: PathBuf,
    /// `--timeout`: given, or following the work the query asks for ([`pace`]).
    pub timeout: TimeLimit,
    pub sample_interval: Duration,
    /// `--gpu-route`: how the browser reaches WebGPU.
    pub gpu_route: GpuRouteRequest,
    /// `--probe`: whether the page may reuse a kept completion floor ([`crate::probe_cache`]).
    pub probe: ProbeMode,
    /// `--host`, `--port`, `--public-url`, `--tls`: where the server listens and the origin
    /// the browser opens.
    pub reach: Reach,
}

/// How long the browser may take to open the launch URL once it is started: a page that
/// never reaches the runner (an address the browser's machine cannot reach, a certificate
/// it refuses) ends the run with a message saying which, not at `--timeout`.
pub const REACH_LIMIT: Duration = Duration::from_secs(60);

pub struct RunReport {
    pub outcome: Outcome,
    pub wall: Duration,
    /// The time limit the run had ([`TimeLimit::resolve`]).
    pub limit: Duration,
    pub stop: StopReport,
    pub browser_log_tail: String,
    /// What a WebDriver endpoint reported of the browser (`None` for a local one).
    pub reported_capabilities: Option<serde_json::Value>,
}

/// A page error body `{ phase, error: { name, message, stack } }`: its phase and one line.
fn page_error_message(body: &ErrorBody) -> (Option<String>, String) {
    let phase = body.phase.clone().filter(|p| !p.is_empty());
    (phase, body.message())
}

/// What the page has reported so far.
struct Seen {
    phase: String,
    /// When the runner saw the page's current phase begin.
    phase_began: Instant,
    /// When the phase that finished the first case began: the cases' pace is counted from it.
    cases_began: Option<Instant>,
    cases_done: usize,
    /// The run's beginning, for the elapsed time of the progress line.
    started: Instant,
    /// The work the query asks for (`None` for another page), for the total and the estimate.
    work: Option<pace::Work>,
    limit: Duration,
    /// The page's `runId`, from its first report, for the closing record.
    run_id: Option<String>,
    /// The run's GPU route; the page's adapter is added to it when the page starts.
    gpu_route: GpuRoute,
}

impl Seen {
    /// Follows one accepted record; `Some` when it ends the run.
    fn accept(&mut self, record: Record, on_status: &(dyn Fn(&str) + Sync)) -> Option<Outcome> {
        if self.run_id.is_none() {
            self.run_id = record.run_id().map(str::to_owned);
        }
        match record {
            Record::Start { body, .. } => {
                on_status("started");
                if let Some(outcome) = self.judge_adapter(&body.adapter, on_status) {
                    return Some(outcome);
                }
                if gpu_route::adapter_route(&body.adapter) == Some(Route::Software) {
                    on_status(&pace::software_adapter_note(
                        &gpu_route::describe_adapter(&body.adapter),
                        self.work.as_ref(),
                        self.limit,
                    ));
                }
            }
            Record::Mark {
                phase,
                step: Some(step),
                ..
            } => on_status(&format!("{phase}: {step}")),
            Record::Mark { phase, .. } => {
                on_status(&phase);
                self.phase = phase;
                self.phase_began = Instant::now();
            }
            Record::Progress { body, .. } => {
                self.cases_done += 1;
                let cases_began = *self.cases_began.get_or_insert(self.phase_began);
                on_status(&pace::progress_line(
                    &self.phase,
                    u32::try_from(self.cases_done).unwrap_or(u32::MAX),
                    self.work.map(|work| work.timed_cases),
                    &body.case.id,
                    self.started.elapsed(),
                    cases_began.elapsed(),
                ));
            }
            Record::Error { body, .. } => {
                let (error_phase, message) = page_error_message(&body);
                // The page's own phase, else the one it marked last.
                let phase = error_phase.unwrap_or_else(|| self.phase.clone());
                return Some(Outcome::PageError { phase, message });
            }
            Record::Result {
                summary,
                process_memory,
            } => {
                return Some(Outcome::Finished {
                    summary,
                    process_memory,
                })
            }
            Record::Run(_) | Record::Refused(_) => {
                unreachable!("the server passes on only the page's records")
            }
        }
        None
    }
}

impl Seen {
    /// Records the page's adapter in the route; `Some` when `--gpu-route gpu` got a fallback
    /// adapter. On a GPU route chosen by `auto`, a fallback adapter is accepted and noted.
    fn judge_adapter(
        &mut self,
        adapter: &Value,
        on_status: &(dyn Fn(&str) + Sync),
    ) -> Option<Outcome> {
        let route = &mut self.gpu_route;
        match route.judge_adapter(adapter) {
            AdapterVerdict::Fits => None,
            AdapterVerdict::FallbackRefused => Some(Outcome::SoftwareAdapter {
                phase: self.phase.clone(),
                adapter: gpu_route::describe_adapter(adapter),
                reason: route.reason.clone(),
            }),
            AdapterVerdict::FallbackAccepted => {
                on_status(&format!(
                    "the GPU route was taken ({}), but the page got a fallback adapter ({}); \
                     accepted because --gpu-route is auto",
                    route.reason,
                    gpu_route::describe_adapter(adapter)
                ));
                None
            }
        }
    }
}

/// Runs the page once in a fresh browser of `target`. `on_status` hears the phase and case
/// progress.
pub async fn run_once(
    options: &RunOptions,
    target: &dyn BrowserTarget,
    on_status: &(dyn Fn(&str) + Sync),
) -> Result<RunReport> {
    let report = run_attempt(options, target, on_status).await?;
    let route = target.gpu_route(options.gpu_route);
    if !no_adapter_on_a_first_gpu_start(&report.outcome, target.browser().name, route.route) {
        return Ok(report);
    }
    // Both attempts stay in the results file; the second is the run's.
    on_status(
        "Chromium's first start on the GPU route gave the page no adapter (seen on fresh GPU \
         servers, where the next start gets the GPU); starting it once more",
    );
    run_attempt(options, target, on_status).await
}

/// The page's words when WebGPU gives it no adapter at all (`browser/gpu.js`).
const NO_ADAPTER: &str = "gave no adapter";

/// On the H200 the first Chromium start of a fresh machine on the GPU route gave the page no
/// adapter at all in two of three machines, and every later start the NVIDIA adapter
/// (2026-12-04; `docs/portable-bundle.md`): that one failure earns one more start.
fn no_adapter_on_a_first_gpu_start(outcome: &Outcome, browser: BrowserKind, route: Route) -> bool {
    matches!(outcome, Outcome::PageError { phase, message }
        if phase == "setup" && message.contains(NO_ADAPTER))
        && browser == BrowserKind::Chromium
        && route == Route::Gpu
}

async fn run_attempt(
    options: &RunOptions,
    target: &dyn BrowserTarget,
    on_status: &(dyn Fn(&str) + Sync),
) -> Result<RunReport> {
    check_page(&options.root, &options.page).map_err(|m| Failure::new(Cause::Usage, m))?;
    let browser = target.browser();
    let started = Instant::now();
    let work = pace::Work::for_run(&options.root, &options.page, &options.query);
    let limit = options.timeout.resolve(work.as_ref());
    // Started before the browser so that its first processes are seen; the browser's pid is
    // given to it once the browser runs. A target without one answers why there are no
    // process figures.
    // Marks this run's browser processes apart from those of a sweep's other jobs.
    let tag = BrowserTag::new();
    let sampler = target.sampler(options.sample_interval, &tag).map(Arc::new);
    let route = target.gpu_route(options.gpu_route);
    if let Some(sampler) = &sampler {
        // The route says before any page whether the adapter will be software, whose GPU
        // bytes are process memory.
        let placement = match route.route {
            Route::Software => crate::gpu_placement::GpuPlacement::Software,
            Route::Gpu => crate::gpu_placement::GpuPlacement::Device,
        };
        // The run predicts; the sampler only carries the prediction beside what it measures.
        let floor =
            crate::memory_model::floor::for_run(&options.root, &options.page, &options.query);
        let prediction = crate::memory_model::predict::for_run(&floor, &options.query, placement);
        sampler.set_floor(floor, prediction);
    }
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let context = RunContext {
        browser: Some(browser.clone()),
        target: Some(target.identity()),
        query: Some(options.query.clone()),
        page: Some(options.page.clone()),
        machine: target.machine(),
    };
    let secret = server::new_secret().context("reading /dev/urandom for the run's secret")?;
    let page_url_path = page_url_path(&options.page, &options.query);
    let probe_cache = ProbeCache::beside(
        &options.results,
        options.probe,
        RunnerProbeKey {
            browser: browser.version.clone(),
            target: target.identity(),
            driver: target.gpu_driver(),
        },
    );
    let state = Arc::new(
        AppState::new(&options.results, context, sampler.clone(), Some(events_tx))?
            .guarded(secret.clone(), page_url_path.clone())
            .with_probe_cache(probe_cache)
            .without_process_memory(target.no_process_memory()),
    );
    let reach = &options.reach;
    let listen = reach.listen_address(target.listen_address());
    if !listen.is_loopback() {
        on_status(&format!(
            "warning: listening on {listen} exposes the page and the results endpoints to \
             other machines (reports still need the run's secret)"
        ));
    }
    if let Some(warning) = reach.warning(listen) {
        on_status(&format!("warning: {warning}"));
    }
    let tls = reach
        .tls
        .as_ref()
        .map(|source| server::Tls::new(source, &reach.certificate_names(listen)))
        .transpose()?;
    let (address, server_task) = server::start_server(
        listen,
        reach.listen_port(),
        served_for_run(options),
        Arc::clone(&state),
        tls.as_ref(),
    )
    .await?;
    state.accept_origins(server::own_origins(reach, address));
    let origin = reach.origin(address);
    let url = format!("{origin}{page_url_path}");
    on_status(&format!("opening {url} (listening on {address})"));
    // The browser opens the one-time launch URL, which sets the run's secret as a cookie and
    // sends it on to the page; the secret itself is never written to the results file.
    let launch_url = format!("{origin}{}{secret}", server::LAUNCH_PATH);
    on_status(&format!("GPU route {} ({})", route.route, route.reason));
    on_status(&match (options.timeout, work) {
        (TimeLimit::Given(_), _) => {
            format!("time limit {} (--timeout)", pace::duration_words(limit))
        }
        (TimeLimit::FollowsWork, Some(work)) => format!(
            "time limit {}: {} and {} a token for up to {} tokens (--timeout N sets one)",
            pace::duration_words(limit),
            pace::duration_words(pace::SETUP_ALLOWANCE),
            pace::duration_words(pace::PER_TOKEN_ALLOWANCE),
            work.tokens()
        ),
        (TimeLimit::FollowsWork, None) => format!(
            "time limit {}, that of a page other than the benchmark's (--timeout N sets one)",
            pace::duration_words(limit)
        ),
    });
    // A local browser has its own process group, so a terminal's Ctrl-C reaches only the
    // runner: catch it and SIGTERM, and stop the browser before leaving. A closed terminal
    // sends SIGHUP: the same as Ctrl-C. Installed before the browser starts, so that no error
    // comes between its start and its stop.
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate =
        signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut hangup = signal(SignalKind::hangup()).context("installing the SIGHUP handler")?;
    // Ctrl-C too, before the start: a WebDriver session being created when it comes is then
    // deleted once it exists, instead of outliving a runner that SIGINT ended.
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut seen = Seen {
        phase: crate::memory::STARTUP_PHASE.to_owned(),
        phase_began: started,
        cases_began: None,
        cases_done: 0,
        started,
        work,
        limit,
        run_id: None,
        gpu_route: route,
    };
    // A browser that cannot be started still gets its closing record.
    let mut instance = match target.start(&launch_url, &seen.gpu_route, reach.self_signed(), &tag) {
        Ok(instance) => instance,
        Err(e) if is_not_started(&e) => {
            if let Some(sampler) = &sampler {
                sampler.stop();
            }
            server_task.abort();
            let outcome = Outcome::NotStarted {
                message: format!("{e:#}"),
            };
            let no_stop = StopReport {
                killed: 0,
                left: Vec::new(),
            };
            return close_run(
                state,
                outcome,
                started,
                no_stop,
                url,
                seen,
                Remote::default(),
                browser,
            )
            .map(|report| RunReport {
                browser_log_tail: String::new(),
                ..report
            });
        }
        Err(e) => return Err(e),
    };
    if let (Some(sampler), Some(processes)) = (&sampler, instance.processes()) {
        sampler.set_browser_pid(processes.browser);
    }
    if let (Some(sampler), Some(dir)) = (&sampler, instance.memory_report_dir()) {
        sampler.enable_memory_reports(dir);
    }

    let deadline = tokio::time::Instant::now() + limit;
    let reach_deadline = tokio::time::Instant::now() + REACH_LIMIT;
    let mut launched = false;
    let mut poll = tokio::time::interval(Duration::from_millis(200));
    let outcome = loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(Event::Refused { reason, ends_run }) => {
                    on_status(&reason);
                    if ends_run {
                        break Outcome::ResultRefused {
                            phase: seen.phase.clone(),
                            reason,
                            cases_done: seen.cases_done,
                        };
                    }
                }
                Some(Event::WriteFailed(message)) => {
                    break Outcome::WriteFailed { phase: seen.phase.clone(), message };
                }
                Some(Event::Launched) => launched = true,
                Some(Event::Accepted(record)) => {
                    if let Some(outcome) = seen.accept(*record, on_status) {
                        break outcome;
                    }
                }
                None => unreachable!("the server holds the sender for the whole run"),
            },
            _ = tokio::time::sleep_until(reach_deadline), if !launched => {
                break Outcome::NotReached {
                    origin: origin.clone(),
                    limit: REACH_LIMIT,
                    tls_refusal: tls.as_ref().and_then(server::Tls::refusal),
                    tls: tls.is_some(),
                };
            }
            _ = tokio::time::sleep_until(deadline) => {
                break Outcome::TimedOut { phase: seen.phase.clone(), cases_done: seen.cases_done };
            }
            _ = interrupt.recv() => break Outcome::Interrupted { phase: seen.phase.clone() },
            _ = terminate.recv() => break Outcome::Interrupted { phase: seen.phase.clone() },
            _ = hangup.recv() => break Outcome::Interrupted { phase: seen.phase.clone() },
            _ = poll.tick() => {
                if let Some(status) = instance.exit_status() {
                    break Outcome::BrowserExited { status, phase: seen.phase.clone() };
                }
            }
        }
    };
    let outcome = explain_missing_webgpu(outcome, &origin);
    // The sampler has served its purpose; stop it before the kill so the kill is not sampled.
    if let Some(sampler) = &sampler {
        sampler.stop();
    }
    let stop = tokio::task::spawn_blocking(move || {
        let report = instance.stop();
        (report, instance)
    })
    .await
    .context("stopping the browser")?;
    let (stop, instance) = stop;
    let browser_log_tail = instance.log_tail(40);
    let remote = Remote {
        reported_capabilities: instance.reported_capabilities(),
        console_lines: instance.console_lines(),
        kept_profile: instance.kept_profile(),
    };
    drop(instance);
    server_task.abort();
    let closed = close_run(
        state.clone(),
        outcome,
        started,
        stop,
        url,
        seen,
        remote,
        browser,
    );
    state.run_closed();
    let report = closed?;
    Ok(RunReport {
        browser_log_tail,
        ..report
    })
}

/// The page's words when the browser exposes no WebGPU at all (`browser/gpu.js`).
const NO_WEBGPU: &str = "navigator.gpu is missing";

/// A page without WebGPU that was opened at an origin that is no secure context: the page's
/// message blames the browser's settings, but the origin is the cause.
fn explain_missing_webgpu(outcome: Outcome, origin: &str) -> Outcome {
    match outcome {
        Outcome::PageError { phase, message }
            if message.contains(NO_WEBGPU) && !crate::reach::secure_origin(origin) =>
        {
            Outcome::PageError {
                phase,
                message: format!(
                    "{message} The page was opened at {origin}, which is not a secure \
                     context, and WebGPU exists only in one: serve it over HTTPS (--tls, \
                     --public-url https://…) or open it on loopback"
                ),
            }
        }
        other => other,
    }
}

/// A target's failure to start its browser (exit 7), which ends the run with a record.
fn is_not_started(error: &anyhow::Error) -> bool {
    error
        .chain()
        .find_map(|e| e.downcast_ref::<Failure>())
        .is_some_and(|f| f.cause == Cause::BrowserMissing)
}

/// What the started browser tells the closing record: a WebDriver session's capabilities
/// and console lines, a local browser's kept profile.
#[derive(Default)]
struct Remote {
    reported_capabilities: Option<Value>,
    console_lines: Option<usize>,
    kept_profile: Option<crate::browser::KeptProfile>,
}

/// Writes the closing `run` record and says how the run ended.
#[allow(clippy::too_many_arguments)]
fn close_run(
    state: Arc<AppState>,
    outcome: Outcome,
    started: Instant,
    stop: StopReport,
    url: String,
    seen: Seen,
    remote: Remote,
    browser: &crate::browser::BrowserInfo,
) -> Result<RunReport> {
    let wall = started.elapsed();
    let closing = state.append(Record::Run(RunEnd {
        outcome: outcome.label().to_owned(),
        message: outcome
            .failure_message(browser.name.name(), seen.limit)
            .or_else(|| outcome.verification_failure().map(str::to_owned)),
        wall_seconds: wall.as_secs_f64(),
        stop: stop.clone(),
        url,
        run_id: seen.run_id,
        gpu_route: Some(seen.gpu_route),
        reported_capabilities: remote.reported_capabilities.clone(),
        console_lines: remote.console_lines,
        kept_profile: remote.kept_profile,
        another_page: matches!(
            &outcome,
            Outcome::Finished {
                summary: Posted::Other(_),
                ..
            }
        ),
    }));
    // A file that failed already fails again; the first message is the one to keep.
    let outcome = match (closing, outcome) {
        (Err(e), outcome) if !matches!(outcome, Outcome::WriteFailed { .. }) => {
            Outcome::WriteFailed {
                phase: seen.phase,
                message: format!("{e:#}"),
            }
        }
        (_, outcome) => outcome,
    };
    Ok(RunReport {
        outcome,
        wall,
        limit: seen.limit,
        stop,
        browser_log_tail: String::new(),
        reported_capabilities: remote.reported_capabilities,
    })
}

/// The page's path and query on the server.
fn page_url_path(page: &str, query: &str) -> String {
    let page = page.trim_start_matches('/');
    if query.is_empty() {
        format!("/{page}")
    } else {
        format!("/{page}?{query}")
    }
}

/// What a run's server hands out: the page's own folder, the manifest its query names
/// (`manifest=`, else the built-in one) with the files that manifest names, and the export
/// folder another page's query names (`model=`, checked before the browser started).
fn served_for_run(options: &RunOptions) -> server::Served {
    let parameter = |wanted: &str| {
        url::form_urlencoded::parse(options.query.as_bytes())
            .find(|(name, _)| name == wanted)
            .map(|(_, value)| value.into_owned())
    };
    let manifest = parameter("manifest")
        .unwrap_or_else(|| ocr_bench_core::config::DEFAULT_MANIFEST.to_owned());
    let mut served = server::Served::new(&options.root, &options.results).with_page(&options.page);
    if let Ok(path) = crate::model_manifest::manifest_path(&options.root, &options.page, &manifest)
    {
        served = served.with_manifest(&path);
    }
    match parameter("model") {
        Some(folder) => served.clone().with_model_folder(&folder).unwrap_or(served),
        None => served,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn page_errors_read_as_one_line() {
        let body = json!({ "runId": "x", "phase": "vision-load", "error": { "name": "UnsupportedAdapterError", "message": "tier 242 needs shader-f16", "stack": "…" } });
        assert_eq!(
            page_error_message(&serde_json::from_value(body).unwrap()),
            (
                Some("vision-load".to_owned()),
                "UnsupportedAdapterError: tier 242 needs shader-f16".to_owned()
            )
        );
        let plain = json!({ "error": { "name": "Error", "message": "boom" } });
        let plain = serde_json::from_value(plain).unwrap();
        assert_eq!(page_error_message(&plain), (None, "boom".to_owned()));
    }

    #[test]
    fn only_chromium_without_an_adapter_on_the_gpu_route_is_started_again() {
        let no_adapter = Outcome::PageError {
            phase: "setup".to_owned(),
            message: "WebGPU is present but gave no adapter (navigator.gpu.requestAdapter() \
                      returned null)."
                .to_owned(),
        };
        let chromium = BrowserKind::Chromium;
        assert!(no_adapter_on_a_first_gpu_start(
            &no_adapter,
            chromium,
            Route::Gpu
        ));
        // Not on the software route, not in Firefox, not for another error or phase.
        assert!(!no_adapter_on_a_first_gpu_start(
            &no_adapter,
            chromium,
            Route::Software
        ));
        let firefox = BrowserKind::Firefox;
        assert!(!no_adapter_on_a_first_gpu_start(
            &no_adapter,
            firefox,
            Route::Gpu
        ));
        let other = Outcome::PageError {
            phase: "setup".to_owned(),
            message: "The vision tier \"242\" needs the WebGPU feature shader-f16".to_owned(),
        };
        assert!(!no_adapter_on_a_first_gpu_start(
            &other,
            chromium,
            Route::Gpu
        ));
        let later = Outcome::PageError {
            phase: "decoder-run".to_owned(),
            message: "gave no adapter".to_owned(),
        };
        assert!(!no_adapter_on_a_first_gpu_start(
            &later,
            chromium,
            Route::Gpu
        ));
    }

    #[test]
    fn no_webgpu_at_an_insecure_origin_names_the_origin() {
        let no_webgpu = || Outcome::PageError {
            phase: "setup".to_owned(),
            message: "This browser exposes no WebGPU (navigator.gpu is missing).".to_owned(),
        };
        let Outcome::PageError { message, .. } =
            explain_missing_webgpu(no_webgpu(), "http://192.0.2.7:8000")
        else {
            panic!("still a page error");
        };
        assert!(
            message.contains("http://192.0.2.7:8000, which is not a secure context")
                && message.contains("--tls"),
            "{message}"
        );
        let Outcome::PageError { message, .. } =
            explain_missing_webgpu(no_webgpu(), "http://127.0.0.1:8000")
        else {
            panic!("still a page error");
        };
        assert!(!message.contains("secure context"), "{message}");
    }

    #[test]
    fn urls_carry_the_query_only_when_there_is_one() {
        assert_eq!(page_url_path("www/index.html", ""), "/www/index.html");
        assert_eq!(
            page_url_path("/www/index.html", "tier=242"),
            "/www/index.html?tier=242"
        );
    }
}
