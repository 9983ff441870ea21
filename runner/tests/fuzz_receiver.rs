//! The server's endpoints over bad bodies, through a real server on 127.0.0.1: any bytes, and
//! the page's real reports mutated, to every endpoint, under `serve` and under `run` (under
//! `run` the benchmark page's summary is required), mostly as the server's own page sends
//! them and at times from a sender it refuses. Whatever arrives is answered 2xx with one
//! record of the endpoint's kind written, or 4xx with a JSON error and at most a `refused`
//! record (always one for a refused sender); never a 5xx (the results file here is writable),
//! never a panic, and every line written reads back as a record.

mod in_process;
#[allow(dead_code)] // the file strategies are the readers'
mod mutate;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ocr_bench::record::{parse_records, Line};
use ocr_bench::server::{AppState, RunContext, Served, DEFAULT_PAGE, RUN_COOKIE};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;

/// The endpoints and the record kind each writes; the fault confirmation writes none.
const ENDPOINTS: [(&str, Option<&str>); 6] = [
    ("/benchmark-start", Some("start")),
    ("/benchmark-mark", Some("mark")),
    ("/benchmark-progress", Some("progress")),
    ("/benchmark-error", Some("error")),
    ("/benchmark-result", Some("result")),
    ("/__ocr-bench/inject", None),
];

const SECRET: &str = "fuzzed-run-secret";

/// The run id every real body names, so that a run's server takes them as its page's.
const RUN_ID: &str = "fuzzed-run";

/// The bodies the page posted in the committed files, each with its endpoint, as the page
/// posted them: the record's `runId` (one for all) back in the body, the summary as it is.
fn page_bodies() -> Vec<((&'static str, Option<&'static str>), String)> {
    mutate::real_lines()
        .into_iter()
        .filter_map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            let kind = record["kind"].as_str()?;
            let endpoint = *ENDPOINTS.iter().find(|(_, k)| *k == Some(kind))?;
            let mut body = match kind {
                "start" | "progress" | "error" => record["body"].as_object()?.clone(),
                "mark" => ["phase", "step"]
                    .into_iter()
                    .filter_map(|field| Some((field.to_owned(), record.get(field)?.clone())))
                    .collect(),
                _ => record["summary"].as_object()?.clone(),
            };
            body.insert("runId".to_owned(), RUN_ID.into());
            Some((endpoint, Value::Object(body).to_string()))
        })
        .chain([(ENDPOINTS[3], PAGE_ERROR.to_owned())])
        .collect()
}

/// No committed file holds a page's error report: this is one as the page posts it.
const PAGE_ERROR: &str = r#"{"runId":"fuzzed-run","phase":"decoder-run","error":{"name":"OperationError","message":"the device was lost","stack":"decode@http://127.0.0.1/www/bench.mjs:1:1"}}"#;

/// A request: a page's real body to its endpoint, mutated or not, or to another endpoint;
/// or any bytes to any endpoint.
fn request() -> impl Strategy<Value = ((&'static str, Option<&'static str>), Vec<u8>)> {
    let any_endpoint = || prop::sample::select(ENDPOINTS.to_vec());
    let real = (
        prop::sample::select(page_bodies()),
        prop::collection::vec(mutate::mutation(), 0..4),
        prop::option::weighted(0.2, any_endpoint()),
    )
        .prop_map(|((own, body), mutations, other)| {
            let body = mutate::apply(&body, &mutations).into_bytes();
            (other.unwrap_or(own), body)
        });
    prop_oneof![
        1 => (any_endpoint(), prop::collection::vec(any::<u8>(), 0..4096)),
        3 => real,
    ]
}

struct Server {
    base: String,
    results: PathBuf,
    _runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

/// A real server on a free port of 127.0.0.1, as `serve` starts it (with its token) or as
/// `run` starts it for the benchmark page; requests carry the cookie the launch URL sets.
fn server(guarded: bool) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let context = RunContext {
        page: guarded.then(|| DEFAULT_PAGE.to_owned()),
        query: guarded.then(|| "cases=smoke2".to_owned()),
        ..RunContext::default()
    };
    let state = AppState::new(&results, context, None, None).unwrap();
    let page = format!("/{DEFAULT_PAGE}");
    let state = Arc::new(if guarded {
        state.guarded(SECRET.to_owned(), page)
    } else {
        state.with_token(SECRET.to_owned(), page)
    });
    let served = Served::new(dir.path(), &results);
    let (base, runtime) = in_process::start(&state, served, 2);
    Server {
        base,
        results,
        _runtime: runtime,
        _dir: dir,
    }
}

/// Who sends a request: the server's own page (from its origin, as JSON, with its cookie), or
/// one of the senders the server refuses whatever the body.
#[derive(Debug, Clone, Copy)]
enum Sender {
    Page,
    NoCookie,
    AnotherCookie,
    AnotherOrigin,
    CrossSite,
    NotJson(&'static str),
}

fn sender() -> impl Strategy<Value = Sender> {
    prop_oneof![
        12 => Just(Sender::Page),
        1 => Just(Sender::NoCookie),
        1 => Just(Sender::AnotherCookie),
        1 => Just(Sender::AnotherOrigin),
        1 => Just(Sender::CrossSite),
        1 => prop::sample::select(vec!["text/plain", "multipart/form-data", "application/jsonx"])
            .prop_map(Sender::NotJson),
    ]
}

fn post_as(
    server: &Server,
    agent: &ureq::Agent,
    path: &str,
    sender: Sender,
) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
    let (origin, content_type, cookie) = match sender {
        Sender::Page => (server.base.as_str(), "application/json", Some(SECRET)),
        Sender::NoCookie => (server.base.as_str(), "application/json", None),
        Sender::AnotherCookie => (server.base.as_str(), "application/json", Some("not-it")),
        Sender::AnotherOrigin => ("http://elsewhere.example", "application/json", Some(SECRET)),
        Sender::CrossSite => (server.base.as_str(), "application/json", Some(SECRET)),
        Sender::NotJson(content_type) => (server.base.as_str(), content_type, Some(SECRET)),
    };
    let mut request = agent
        .post(format!("{}{path}", server.base))
        .header("Origin", origin)
        .header("Content-Type", content_type);
    if let Some(secret) = cookie {
        request = request.header("Cookie", format!("{RUN_COOKIE}={secret}"));
    }
    if matches!(sender, Sender::CrossSite) {
        request = request.header("Sec-Fetch-Site", "cross-site");
    }
    request
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

fn written_text(results: &Path) -> String {
    std::fs::read_to_string(results).unwrap_or_default()
}

/// Posts `body` to `endpoint` as `sender` and checks the answer and what was written.
fn post(
    server: &Server,
    agent: &ureq::Agent,
    (path, kind): (&str, Option<&str>),
    sender: Sender,
    body: &[u8],
) -> Result<(), TestCaseError> {
    let before = written_text(&server.results).len();
    let mut response = post_as(server, agent, path, sender)
        .send(body)
        .map_err(|e| TestCaseError::fail(format!("{sender:?} to {path}: no answer: {e}")))?;
    let status = response.status().as_u16();
    let answer = response.body_mut().read_to_string().unwrap_or_default();
    let text = written_text(&server.results);
    let new = &text[before..];
    let lines = parse_records(new).map_err(|bad| {
        TestCaseError::fail(format!("{path} wrote a line that is no record: {bad:?}"))
    })?;
    prop_assert!(lines.torn.is_empty(), "{path} tore a line: {new}");
    let kinds: Vec<&str> = lines.lines.iter().map(|(_, l)| l.record.kind()).collect();
    if kind.is_some() && !matches!(sender, Sender::Page) {
        let expected = match sender {
            Sender::NotJson(_) => 415,
            _ => 403,
        };
        prop_assert_eq!(status, expected, "{:?} to {}: {}", sender, path, answer);
        prop_assert_eq!(kinds.clone(), ["refused"], "{:?} to {}", sender, path);
    }
    match status {
        200..=299 => {
            prop_assert_eq!(kinds, kind.into_iter().collect::<Vec<_>>(), "{}", path);
        }
        400..=499 => {
            prop_assert!(
                kinds.is_empty() || (kind.is_some() && kinds == ["refused"]),
                "{path} answered {status} and wrote {kinds:?}"
            );
            if kind.is_some() {
                let error: Value = serde_json::from_str(&answer)
                    .map_err(|e| TestCaseError::fail(format!("{path} {status}: {e}: {answer}")))?;
                prop_assert_eq!(&error["ok"], &Value::Bool(false));
                prop_assert!(error["error"].as_str().is_some_and(|e| !e.is_empty()));
            }
        }
        _ => prop_assert!(false, "{path} answered {status}: {answer}"),
    }
    // Every line reads back as the readers read it.
    for (_, line) in &lines.lines {
        let again: Line = serde_json::from_str(&serde_json::to_string(line).unwrap()).unwrap();
        prop_assert_eq!(&again, line);
    }
    Ok(())
}

fn fuzz(guarded: bool, cases: u32) {
    let server = server(guarded);
    let agent = agent();
    TestRunner::new(mutate::config(cases))
        .run(&(request(), sender()), |((endpoint, body), sender)| {
            // The fault confirmation refuses a body that is not JSON before reading it, and
            // closes the connection under a client still sending it: no answer to check.
            let sender = match (endpoint, sender) {
                ((_, None), Sender::NotJson(_)) => Sender::Page,
                _ => sender,
            };
            post(&server, &agent, endpoint, sender, &body)
        })
        .unwrap();
}

#[test]
fn serve_answers_any_body_without_a_server_error() {
    fuzz(false, 500);
}

#[test]
fn a_run_answers_any_body_from_its_page_without_a_server_error() {
    fuzz(true, 500);
}

/// Found by the properties above: a start body whose adapter's `features` nested 124 arrays
/// deep was taken (serde_json reads 128 levels), and its record, two levels deeper, was a line
/// that no reader could read, so `export`, `compare` and `report` refused the whole file.
#[test]
fn a_body_nested_too_deep_for_its_record_is_refused() {
    let server = server(false);
    let agent = agent();
    let real = |path: &str| -> Value {
        let (_, body) = page_bodies()
            .into_iter()
            .find(|((p, _), _)| *p == path)
            .unwrap();
        serde_json::from_str(&body).unwrap()
    };
    let mut start = real("/benchmark-start");
    start["adapter"]["features"] = mutate::nested(124);
    let mut result = real("/benchmark-result");
    result["results"][0]["tokenIds"] = mutate::nested(100);
    for (path, body, written) in [
        ("/benchmark-start", start, None),
        ("/benchmark-result", result, Some("refused")),
    ] {
        let before = written_text(&server.results).len();
        let mut response = post_as(&server, &agent, path, Sender::Page)
            .send(body.to_string())
            .unwrap();
        let status = response.status().as_u16();
        let answer = response.body_mut().read_to_string().unwrap();
        assert_eq!(status, 400, "{path}: {answer}");
        assert!(answer.contains("levels deep; at most 64"), "{answer}");
        let text = written_text(&server.results);
        let records = parse_records(&text[before..]).expect("every line reads back");
        let kinds: Vec<&str> = records.lines.iter().map(|(_, l)| l.record.kind()).collect();
        assert_eq!(kinds, written.into_iter().collect::<Vec<_>>(), "{path}");
    }
}
