//! One run: a server, a sampler and a fresh headless browser on one page and configuration,
//! until the page posts its result or its error, the browser dies, or time runs out. The
//! browser is stopped in every case, and a closing `run` record says how the run ended.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::browser::{Browser, BrowserInfo, StopReport};
use crate::memory::Sampler;
use crate::record::{ErrorBody, Posted, ProcessMemoryAnswer, Record, RunEnd};
use crate::server::{self, AppState, RunContext};

/// The benchmark page; its query is checked with the core before a browser starts.
pub const DEFAULT_PAGE: &str = "www/index.html";

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub root: PathBuf,
    pub page: String,
    /// The query string given to the page (canonical for the benchmark page).
    pub query: String,
    pub results: PathBuf,
    pub timeout: Duration,
    pub sample_interval: Duration,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The page posted its summary; `process_memory` is what the server answered.
    Finished {
        summary: Posted,
        process_memory: ProcessMemoryAnswer,
    },
    /// The page reported an error (its own message).
    PageError {
        phase: String,
        message: String,
    },
    TimedOut {
        phase: String,
        cases_done: usize,
    },
    BrowserExited {
        status: String,
        phase: String,
    },
    /// Ctrl-C or SIGTERM reached the runner; the browser was still stopped.
    Interrupted {
        phase: String,
    },
}

impl Outcome {
    /// The `outcome` field of the closing record; sweeps skip `result` and `error` on resume.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Finished { .. } => "result",
            Outcome::PageError { .. } => "error",
            Outcome::TimedOut { .. } => "timeout",
            Outcome::BrowserExited { .. } => "browser-exited",
            Outcome::Interrupted { .. } => "interrupted",
        }
    }

    /// A sentence for a person; `None` when the run finished.
    pub fn failure_message(&self, browser: &str, timeout: Duration) -> Option<String> {
        match self {
            Outcome::Finished { .. } => None,
            Outcome::PageError { phase, message } => {
                Some(format!("the page failed in phase {phase}: {message}"))
            }
            Outcome::TimedOut { phase, cases_done } => Some(format!(
                "timed out after {} s in phase {phase} with {cases_done} case(s) finished; \
                 the browser was stopped (raise --timeout if the run is just slow)",
                timeout.as_secs()
            )),
            Outcome::BrowserExited { status, phase } => Some(format!(
                "{browser} exited ({status}) in phase {phase} before the page reported a result"
            )),
            Outcome::Interrupted { phase } => Some(format!(
                "interrupted in phase {phase}; the browser was stopped"
            )),
        }
    }
}

pub struct RunReport {
    pub outcome: Outcome,
    pub wall: Duration,
    pub stop: StopReport,
    pub browser_log_tail: String,
}

/// A page error body `{ phase, error: { name, message, stack } }`: its phase and one line.
fn page_error_message(body: &ErrorBody) -> (Option<String>, String) {
    let phase = body.phase.clone().filter(|p| !p.is_empty());
    (phase, body.message())
}

/// Runs the page once in a fresh browser. `on_status` hears the phase and case progress.
pub async fn run_once(
    options: &RunOptions,
    browser: &BrowserInfo,
    machine: &Value,
    on_status: &(dyn Fn(&str) + Sync),
) -> Result<RunReport> {
    let page_file = options.root.join(&options.page);
    anyhow::ensure!(
        page_file.is_file(),
        "the page {} does not exist under {} (build the page first, or pass --page)",
        options.page,
        options.root.display()
    );
    let started = Instant::now();
    let sampler = Arc::new(Sampler::start(options.sample_interval));
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let context = RunContext {
        browser: Some(browser.clone()),
        query: Some(options.query.clone()),
        page: Some(options.page.clone()),
        machine: machine.clone(),
    };
    let state = Arc::new(AppState::new(
        &options.results,
        context,
        Some(Arc::clone(&sampler)),
        Some(events_tx),
    )?);
    let (address, server_task) = server::start_server(
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        0,
        &options.root,
        Arc::clone(&state),
    )
    .await?;
    let url = page_url(address, &options.page, &options.query);
    on_status(&format!("opening {url}"));
    let mut instance = Browser::launch(browser, &url)?;
    sampler.set_browser_pid(instance.pid());

    let deadline = tokio::time::Instant::now() + options.timeout;
    let mut phase = crate::memory::STARTUP_PHASE.to_owned();
    let mut cases_done = 0usize;
    let mut poll = tokio::time::interval(Duration::from_millis(200));
    // The browser has its own process group, so a terminal's Ctrl-C reaches only the runner:
    // catch it and SIGTERM, and stop the browser before leaving.
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    let outcome = loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(Record::Start { .. }) => on_status("started"),
                Some(Record::Mark { phase: p, .. }) => {
                    on_status(&p);
                    phase = p;
                }
                Some(Record::Progress { body, .. }) => {
                    cases_done += 1;
                    on_status(&format!("{phase}: case {cases_done} ({}) done", body.case.id));
                }
                Some(Record::Error { body, .. }) => {
                    let (error_phase, message) = page_error_message(&body);
                    // The page's own phase, else the one it marked last.
                    break Outcome::PageError { phase: error_phase.unwrap_or_else(|| phase.clone()), message };
                }
                Some(Record::Result { summary, process_memory }) => {
                    break Outcome::Finished { summary, process_memory };
                }
                Some(Record::Run(_)) => unreachable!("only the runner writes `run` records"),
                None => unreachable!("the server holds the sender for the whole run"),
            },
            _ = tokio::time::sleep_until(deadline) => {
                break Outcome::TimedOut { phase: phase.clone(), cases_done };
            }
            _ = tokio::signal::ctrl_c() => break Outcome::Interrupted { phase: phase.clone() },
            _ = terminate.recv() => break Outcome::Interrupted { phase: phase.clone() },
            _ = poll.tick() => {
                if let Some(status) = instance.try_exit_status() {
                    break Outcome::BrowserExited { status: status.to_string(), phase: phase.clone() };
                }
            }
        }
    };
    // The sampler has served its purpose; stop it before the kill so the kill is not sampled.
    sampler.stop();
    let stop = tokio::task::spawn_blocking(move || {
        let report = instance.stop();
        (report, instance)
    })
    .await
    .context("stopping the browser")?;
    let (stop, instance) = stop;
    let browser_log_tail = instance.log_tail(40);
    drop(instance);
    server_task.abort();

    let wall = started.elapsed();
    state.append(Record::Run(RunEnd {
        outcome: outcome.label().to_owned(),
        message: outcome.failure_message(browser.name.name(), options.timeout),
        wall_seconds: wall.as_secs_f64(),
        stop: stop.clone(),
        url,
    }))?;
    Ok(RunReport {
        outcome,
        wall,
        stop,
        browser_log_tail,
    })
}

fn page_url(address: std::net::SocketAddr, page: &str, query: &str) -> String {
    let page = page.trim_start_matches('/');
    if query.is_empty() {
        format!("http://{address}/{page}")
    } else {
        format!("http://{address}/{page}?{query}")
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
    fn urls_carry_the_query_only_when_there_is_one() {
        let address: std::net::SocketAddr = "127.0.0.1:8123".parse().unwrap();
        assert_eq!(
            page_url(address, "www/index.html", ""),
            "http://127.0.0.1:8123/www/index.html"
        );
        assert_eq!(
            page_url(address, "/www/index.html", "tier=242"),
            "http://127.0.0.1:8123/www/index.html?tier=242"
        );
    }
}
