//! One report from the page: the sender checked, the body typed into its record, appended,
//! passed to the waiting run, and answered.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use ocr_bench_core::phase::{Phase, RELEASE_STEPS};
use serde_json::{json, Map, Value};

use super::endpoint::{Endpoint, Refusal};
use super::state::DEFAULT_PAGE;
use super::{AppState, Event, BODY_LIMIT_BYTES};
use crate::memory::firefox_report::AT_END;
use crate::record::{Posted, Record, StartBody};

/// How deep a body may nest. Its record holds it up to two levels further down, and serde_json
/// reads 128 levels at most: a start body whose adapter nested 124 arrays deep was taken and
/// written as a line that every reader then refused, and with it the whole results file. The
/// page's bodies nest 6 deep.
const BODY_DEPTH_LIMIT: usize = 64;

/// Every endpoint: the sender checked, the body typed into its record, appended, passed to
/// the waiting run, and answered (`/benchmark-result` with the process memory, the others
/// with `ok`). A result the run's own page posted that cannot be taken (not JSON, not an
/// object, no `runId`, another run's, too large) is written down with its body and ends the
/// run at once: the page posts one result, so nothing is left to wait for.
pub(super) async fn receive(
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
    if let Err((status, message)) = state.check_sender(&headers) {
        let refusal = Refusal::recorded(status, message);
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
    let depth = nesting(&body);
    if depth > BODY_DEPTH_LIMIT {
        let refusal = unreadable(format!(
            "the body nests {depth} levels deep; at most {BODY_DEPTH_LIMIT}"
        ));
        return state.refuse(endpoint, refusal, claimed, posted, ends_run);
    }
    let Value::Object(body) = body else {
        let refusal = unreadable(format!(
            "the body must be a JSON object, got {}",
            kind_of(&body)
        ));
        return state.refuse(endpoint, refusal, claimed, posted, ends_run);
    };
    // Firefox's end report, taken before the result's snapshot holds the reports.
    if matches!(endpoint, Endpoint::Result) {
        state.take_memory_report(AT_END.to_owned()).await;
        state.minimize_and_report().await;
        if let Some(hold) = &state.hold {
            hold.at_result(state.run_number).await;
        }
    }
    let record = match state.record(endpoint, body) {
        Ok(record) => record,
        Err(refusal) => return state.refuse(endpoint, refusal, claimed, posted, ends_run),
    };
    if let Err(message) = state.check_run_id(record.run_id()) {
        let refusal = Refusal::recorded(StatusCode::FORBIDDEN, message);
        return state.refuse(endpoint, refusal, claimed, posted, ends_run);
    }
    // Firefox's report as the page enters a phase, before the page hears the answer, so
    // that the report is of the moment the phase begins (the previous one's end).
    if let Record::Mark {
        phase, step: None, ..
    } = &record
    {
        state.take_memory_report(phase.clone()).await;
        if let (Some(hold), Ok(phase)) = (&state.hold, phase.parse()) {
            hold.at_mark(state.run_number, phase).await;
        }
    }
    let answer = match &record {
        Record::Result { process_memory, .. } => Json(process_memory).into_response(),
        _ => Json(json!({ "ok": true })).into_response(),
    };
    if let Err(e) = state.append(record.clone()) {
        return state.write_failed(e);
    }
    if let Record::Result {
        summary: Posted::Benchmark(summary),
        ..
    } = &record
    {
        state.keep_floors(summary);
    }
    state.announce(&record);
    state.tell(Event::Accepted(Box::new(record)));
    answer
}

impl AppState {
    /// Asks Firefox for a memory report kept as taken at `at_phase`, where the run takes them
    /// (`--memory-reports`); its wait blocks a thread of its own, not the server's.
    async fn take_memory_report(&self, at_phase: String) {
        let Some(sampler) = self.sampler.clone().filter(|s| s.takes_memory_reports()) else {
            return;
        };
        let _ = tokio::task::spawn_blocking(move || sampler.take_memory_report(&at_phase)).await;
    }

    /// Has Firefox minimize its memory and report, where the run takes its reports
    /// ([`crate::memory::Sampler::minimize_and_report`]); blocks a thread of its own.
    async fn minimize_and_report(&self) {
        let Some(sampler) = self.sampler.clone().filter(|s| s.takes_memory_reports()) else {
            return;
        };
        let _ = tokio::task::spawn_blocking(move || sampler.minimize_and_report()).await;
    }

    /// The record of one request's body; `Err` says what was wrong and what is allowed.
    pub(super) fn record(
        &self,
        endpoint: Endpoint,
        mut body: Map<String, Value>,
    ) -> Result<Record, Refusal> {
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
                let step = match body.get("step") {
                    None => None,
                    Some(step) => Some(self.release_step(&phase, step, endpoint)?),
                };
                // Mark first, then write: the samples of the new phase start as early as possible.
                if let Some(sampler) = &self.sampler {
                    match &step {
                        Some(step) => sampler.step(step),
                        None => sampler.mark(&phase),
                    }
                }
                Record::Mark {
                    run_id,
                    phase,
                    step,
                }
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
                    Err(e) if self.context.page.as_deref() == Some(DEFAULT_PAGE) => {
                        return Err(Refusal::recorded(
                            StatusCode::UNPROCESSABLE_ENTITY,
                            format!(
                                "not the benchmark page's summary ({e}); {} posts the summary of docs/architecture.md, \"Summary\"",
                                DEFAULT_PAGE
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
}

/// The `runId` a body claims, for the record of a refused attempt.
impl AppState {
    /// A mark's `step`, checked: a name of [`RELEASE_STEPS`], within the release phase, which
    /// the page has marked already (the step's samples count towards it).
    fn release_step(
        &self,
        phase: &str,
        step: &Value,
        endpoint: Endpoint,
    ) -> Result<String, Refusal> {
        let bad = |what: String| Refusal::bad(format!("{what}; {}", endpoint.allowed()));
        let Some(step) = step.as_str().filter(|s| RELEASE_STEPS.contains(s)) else {
            return Err(bad(format!("unknown step {step}")));
        };
        if phase != Phase::Release.as_str() {
            return Err(bad(format!("step {step:?} with phase {phase:?}")));
        }
        if let Some(current) = self.sampler.as_ref().map(|s| s.current_phase()) {
            if current != phase {
                return Err(bad(format!(
                    "step {step:?} while the phase under way is {current:?}"
                )));
            }
        }
        Ok(step.to_owned())
    }
}

fn claimed_run_id(body: &Value) -> Option<String> {
    body.get("runId").and_then(Value::as_str).map(str::to_owned)
}

/// How many arrays and objects deep `value` goes (serde_json has read it, so at most 128).
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
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
