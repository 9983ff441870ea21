//! The probe cache through a run's real server: the page's ask at `/__ocr-bench/probe-cache`
//! (only with the run's cookie), the floors a posted result measured kept beside the results
//! and offered to the next run on the same file, a corrupt cache answered with the reason,
//! and `serve`, which keeps nothing.

use std::path::Path;
use std::sync::Arc;

use ocr_bench::probe_cache::{ProbeCache, ProbeMode};
use ocr_bench::server::{AppState, RunContext, Served, DEFAULT_PAGE, PROBE_CACHE_PATH, RUN_COOKIE};
use ocr_bench_core::record::RunnerProbeKey;
use serde_json::{json, Value};

mod in_process;

const SECRET: &str = "probe-offer-secret";

/// A run's server on a free port of 127.0.0.1 (or `serve`'s, with no cache), with the
/// runtime that keeps it up.
struct Server {
    base: String,
    _runtime: tokio::runtime::Runtime,
}

fn runner_key() -> RunnerProbeKey {
    RunnerProbeKey {
        browser: "Mozilla Firefox 153.8.0esr".to_owned(),
        target: "local".to_owned(),
        driver: Some("nvidia 580.159.04".to_owned()),
    }
}

fn server(results: &Path, cache: Option<ProbeMode>) -> Server {
    let context = RunContext {
        page: Some(DEFAULT_PAGE.to_owned()),
        query: Some("cases=smoke1&maxTokens=2".to_owned()),
        ..RunContext::default()
    };
    let state = AppState::new(results, context, None, None).unwrap();
    let page = format!("/{DEFAULT_PAGE}");
    let state = Arc::new(match cache {
        Some(mode) => state
            .guarded(SECRET.to_owned(), page)
            .with_probe_cache(ProbeCache::beside(results, mode, runner_key())),
        None => state.with_token(SECRET.to_owned(), page),
    });
    let served = Served::new(results.parent().unwrap(), results);
    let (base, runtime) = in_process::start(&state, served, 1);
    Server {
        base,
        _runtime: runtime,
    }
}

/// Posts `body` as the run's page (or without its cookie); the status and the JSON answer.
fn post(server: &Server, path: &str, body: &Value, with_cookie: bool) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent
        .post(format!("{}{path}", server.base))
        .header("Origin", &server.base)
        .header("Content-Type", "application/json");
    if with_cookie {
        request = request.header("Cookie", format!("{RUN_COOKIE}={SECRET}"));
    }
    let mut response = request.send(body.to_string()).unwrap();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The recorded summary of a staged Firefox run on smoke1 (page and vision worker probed),
/// its floors marked as a page now posts them: measured, each under its realm's key.
fn measured_summary() -> Value {
    let text = include_str!("data/realm-worker-smoke1.jsonl");
    let mut summary = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "result")
        .unwrap()["summary"]
        .take();
    let runner = serde_json::to_value(runner_key()).unwrap();
    for realm in ["worker", "decoderWorker"] {
        let mut key = runner.clone();
        let key_fields = json!({
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0",
            "adapter": { "vendor": "", "architecture": "", "device": "", "description": "" },
            "poll": "none",
            "kickMs": 0.5,
            "realm": realm,
        });
        key.as_object_mut()
            .unwrap()
            .extend(key_fields.as_object().unwrap().clone());
        summary["completion"][realm]["source"] = json!({ "origin": "measured", "key": key });
    }
    summary
}

#[test]
fn a_run_offers_the_floors_an_earlier_run_on_its_results_measured_to_its_own_page_only() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let first = server(&results, Some(ProbeMode::Reuse));
    let (status, refused) = post(&first, PROBE_CACHE_PATH, &json!({}), false);
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains(RUN_COOKIE),
        "{refused}"
    );

    let (status, offer) = post(&first, PROBE_CACHE_PATH, &json!({}), true);
    assert_eq!(status, 200, "{offer}");
    assert_eq!(offer["reuse"], true, "{offer}");
    assert_eq!(offer["floors"], json!([]), "nothing kept yet");
    assert_eq!(offer["runner"], serde_json::to_value(runner_key()).unwrap());

    let summary = measured_summary();
    let (status, answer) = post(&first, "/benchmark-result", &summary, true);
    assert_eq!(status, 200, "{answer}");
    let cache = dir.path().join("results.jsonl.probe-cache.json");
    assert!(cache.is_file(), "the result's measured floors are kept");

    let next = server(&results, Some(ProbeMode::Reuse));
    let (_, offer) = post(&next, PROBE_CACHE_PATH, &json!({}), true);
    let floors = offer["floors"].as_array().unwrap();
    assert_eq!(floors.len(), 2, "{offer}");
    for kept in floors {
        let realm = kept["key"]["realm"].as_str().unwrap();
        assert_eq!(
            kept["rounds"]["dispatchReadbackMs"],
            summary["completion"][realm]["dispatchReadbackMs"],
            "{realm}: the rounds as measured"
        );
        assert_eq!(kept["key"], summary["completion"][realm]["source"]["key"]);
        assert_eq!(kept["measuredRunId"], summary["runId"]);
    }

    let always = server(&results, Some(ProbeMode::Always));
    let (_, offer) = post(&always, PROBE_CACHE_PATH, &json!({}), true);
    assert_eq!(offer["reuse"], false, "{offer}");
    assert_eq!(offer["floors"], json!([]));
    assert!(offer["reason"].as_str().unwrap().contains("--probe always"));

    std::fs::write(&cache, "{\"version\": 1, \"floors\": [").unwrap();
    let after_corruption = server(&results, Some(ProbeMode::Reuse));
    let (status, offer) = post(&after_corruption, PROBE_CACHE_PATH, &json!({}), true);
    assert_eq!(status, 200, "a corrupt cache is no server error: {offer}");
    assert_eq!(offer["reuse"], false, "{offer}");
    let reason = offer["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot be read") && reason.contains("measured again"),
        "{reason}"
    );
    let aside = dir.path().join("results.jsonl.probe-cache.json.corrupt");
    assert_eq!(
        std::fs::read_to_string(aside).unwrap(),
        "{\"version\": 1, \"floors\": ["
    );
}

#[test]
fn serve_keeps_no_floors_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let serve = server(&results, None);
    let (status, offer) = post(&serve, PROBE_CACHE_PATH, &json!({}), true);
    assert_eq!(status, 200, "{offer}");
    assert_eq!(offer["reuse"], false, "{offer}");
    assert_eq!(offer["runner"], Value::Null);
    assert!(
        offer["reason"].as_str().unwrap().contains("serve"),
        "{offer}"
    );
    let summary = measured_summary();
    let (status, _) = post(&serve, "/benchmark-result", &summary, true);
    assert_eq!(status, 200);
    assert!(!dir.path().join("results.jsonl.probe-cache.json").exists());
}
