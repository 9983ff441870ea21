//! Test-only fault injection (`docs/benchmark-protocol.md`, "Fault injection"). With
//! `OCR_BENCH_INJECT=KIND@POINT[:N]` in its environment, `run` (and every run of a `sweep`)
//! sends its browser from the launch URL to the page with `inject=KIND@POINT[:N]` added, and
//! the page arms the fault only once `/__ocr-bench/inject` has confirmed it: with the run's
//! secret, for the very fault the runner was asked for. The benchmark's `query` and `config`
//! never hold it.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::AppState;

/// The environment variable that asks the runner for a fault.
pub const INJECT_VARIABLE: &str = "OCR_BENCH_INJECT";
/// Where the page asks whether its `inject=` is the runner's.
pub const INJECT_PATH: &str = "/__ocr-bench/inject";
/// The page's query parameter (`www/fault-injection.js`).
pub const INJECT_PARAMETER: &str = "inject";

/// Each kind and the points of the page it can fire at, as `www/fault-injection.js` has them.
pub const KINDS: [(&str, &[&str]); 8] = [
    ("hang", &["case", "encode"]),
    ("device-lost", &["case", "decode"]),
    ("worker-throw", &["encode"]),
    ("worker-terminate", &["encode"]),
    ("worker-device-lost", &["encode"]),
    ("diverge-logit", &["decode"]),
    ("diverge-token", &["decode"]),
    ("diverge-kv", &["decode"]),
];

/// A fault the page knows: `KIND@POINT[:N]`, N a case number from 1 (default 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection(String);

impl Injection {
    /// `Err` says what was wrong and what is allowed.
    pub fn parse(spec: &str) -> Result<Injection, String> {
        let allowed = || {
            let kinds: Vec<String> = KINDS
                .iter()
                .map(|(kind, points)| format!("{kind}@{}", points.join("|")))
                .collect();
            format!(
                "allowed: KIND@POINT[:N] with N a case number from 1, one of {}",
                kinds.join(", ")
            )
        };
        let refused = || {
            format!(
                "{INJECT_VARIABLE}={spec:?} is not a fault the page knows; {}",
                allowed()
            )
        };
        let (kind, rest) = spec.split_once('@').ok_or_else(refused)?;
        let (point, number) = match rest.split_once(':') {
            Some((point, number)) => (point, Some(number)),
            None => (rest, None),
        };
        let known = KINDS
            .iter()
            .any(|(k, points)| *k == kind && points.contains(&point));
        let number_ok = number.is_none_or(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && n.parse::<u32>().is_ok_and(|n| (1..=10_000).contains(&n))
        });
        if !known || !number_ok {
            return Err(refused());
        }
        Ok(Injection(spec.to_owned()))
    }

    /// The fault `OCR_BENCH_INJECT` asks for, if it is set.
    pub fn from_env() -> Result<Option<Injection>, String> {
        match std::env::var(INJECT_VARIABLE) {
            Ok(spec) => Injection::parse(&spec).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(format!("{INJECT_VARIABLE} is not valid UTF-8"))
            }
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `target` (the page's path and query) with `inject=` added.
    pub fn add_to(&self, target: &str) -> String {
        let separator = if target.contains('?') { '&' } else { '?' };
        format!("{target}{separator}{INJECT_PARAMETER}={}", self.0)
    }
}

/// `POST /__ocr-bench/inject` `{ inject }`: 200 `{ ok, inject }` for the run's own page asking
/// for the runner's fault; 403 with the reason otherwise (under `serve` always).
pub(super) async fn confirm(
    state: &AppState,
    headers: &HeaderMap,
    body: Option<Value>,
) -> Response {
    let asked = body
        .as_ref()
        .and_then(|b| b.get("inject"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let refuse = |reason: String| {
        eprintln!("ocr-bench: {INJECT_PATH} refused (403): {reason}");
        (
            StatusCode::FORBIDDEN,
            Json(json!({ "ok": false, "error": reason })),
        )
            .into_response()
    };
    let Some(guard) = state.guard.as_ref().filter(|_| state.serves_a_run()) else {
        return refuse(format!(
            "this server was started by `serve`; only a page that `ocr-bench run` opened with \
             {INJECT_VARIABLE} set may arm a fault"
        ));
    };
    if let Err(reason) = guard.check_secret(headers) {
        return refuse(reason);
    }
    match &state.injection {
        Some(injection) if injection.as_str() == asked => {
            (StatusCode::OK, Json(json!({ "ok": true, "inject": asked }))).into_response()
        }
        Some(injection) => refuse(format!(
            "this run was asked for inject={}, not inject={asked}",
            injection.as_str()
        )),
        None => refuse(format!("this run was not started with {INJECT_VARIABLE}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_faults_the_page_knows_are_accepted() {
        for spec in [
            "hang@case",
            "hang@case:2",
            "hang@encode:1",
            "device-lost@decode:2",
            "device-lost@case:1",
            "worker-throw@encode",
            "worker-terminate@encode:3",
            "diverge-logit@decode",
            "diverge-token@decode:2",
            "diverge-kv@decode:1",
        ] {
            assert_eq!(Injection::parse(spec).unwrap().as_str(), spec);
        }
        for spec in [
            "",
            "hang",
            "hang@",
            "hang@decode",
            "device-lost@encode",
            "worker-throw@case",
            "diverge-token@case",
            "diverge-kv@encode",
            "diverge@decode",
            "hang@case:0",
            "hang@case:",
            "hang@case:-1",
            "hang@case:1x",
            "hang@case:10001",
            "crash@case",
        ] {
            let err = Injection::parse(spec).unwrap_err();
            assert!(
                err.contains(&format!("{spec:?}"))
                    && err.contains("worker-terminate@encode")
                    && err.contains("hang@case|encode"),
                "{spec}: {err}"
            );
        }
    }

    #[test]
    fn the_page_url_gets_the_fault_after_its_query() {
        let injection = Injection::parse("hang@case:2").unwrap();
        assert_eq!(
            injection.add_to("/www/index.html?scope=decoder"),
            "/www/index.html?scope=decoder&inject=hang@case:2"
        );
        assert_eq!(
            injection.add_to("/www/index.html"),
            "/www/index.html?inject=hang@case:2"
        );
    }
}
