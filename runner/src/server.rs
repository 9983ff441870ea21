//! The HTTP server: the files pages load (`served`: an allow-list under the root) with the
//! headers that make the page cross-origin isolated, and the JSON endpoints the page reports
//! to. Every request to an endpoint is appended at once as one JSONL record, so a crash loses
//! no finished case. `state` holds what the server knows and how it refuses, `receive` takes
//! one report, `endpoint` names the endpoints, `guard` the server's secret and who may
//! report, `results_file` the appending.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::Result;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::exit::{Cause, Failure};
use crate::reach::Reach;

mod endpoint;
mod guard;
mod hold;
mod injection;
mod probe_offer;
mod receive;
mod results_file;
mod served;
mod state;
mod tls;
use endpoint::Endpoint;
pub use guard::{new_secret, LAUNCH_PATH, RUN_COOKIE};
pub use hold::{Hold, HOLD_VARIABLE};
pub use injection::{Injection, INJECT_PATH, INJECT_VARIABLE};
pub use probe_offer::PROBE_CACHE_PATH;
use receive::receive;
pub use served::Served;
pub use state::{AppState, Event, RunContext, DEFAULT_PAGE};
pub use tls::Tls;

/// The summary of smoke2 (2 cases, 2 tokens each) is 19.9 KB as written; a case adds about
/// 1 KB plus its tokens' timings, so 200 cases of 128 tokens stay near 1 MB. 8 MiB leaves
/// room for that eight times over and refuses a runaway body (a 50 MB one was accepted).
pub const BODY_LIMIT_BYTES: usize = 8 << 20;

/// The launch URL: sets the server's secret as a cookie and sends the browser to the page
/// (under `serve` with the launch URL's query). Under `run` it works once; a wrong secret is
/// refused.
async fn launch(state: Arc<AppState>, secret: String, query: Option<String>) -> Response {
    let Some(guard) = &state.guard else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Some(target) = guard.take_launch(&secret, query.as_deref()) else {
        let message = if guard.guards_a_run() {
            "this launch URL is not valid (it works once, for the browser the runner started)\n"
        } else {
            "this launch URL is not valid (`ocr-bench serve` prints the one of this server)\n"
        };
        return (StatusCode::FORBIDDEN, message).into_response();
    };
    // The browser reached the runner (and took its certificate, under --tls).
    state.tell(Event::Launched);
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

/// A file `served` does not hand out is not found, whether it exists or not.
async fn only_served(State(served): State<Arc<Served>>, request: Request, next: Next) -> Response {
    if served.allows(request.uri().path()) {
        next.run(request).await
    } else {
        (StatusCode::NOT_FOUND, "not found\n").into_response()
    }
}

/// The origins a server's pages report from: its own (the public URL's where one is given,
/// and then the listening address's too).
pub fn own_origins(reach: &Reach, bound: SocketAddr) -> Vec<String> {
    let mut origins = vec![reach.origin(bound)];
    if reach.public.is_some() {
        let scheme = if reach.tls.is_some() { "https" } else { "http" };
        origins.push(format!("{scheme}://{bound}"));
    }
    origins
}

/// The router: endpoints, `/` to the page, and the files `served` hands out.
pub fn router(served: Served, state: Arc<AppState>) -> Router {
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
                |State(state),
                 axum::extract::Path(secret): axum::extract::Path<String>,
                 RawQuery(query): RawQuery| launch(state, secret, query),
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
        )
        .route(
            PROBE_CACHE_PATH,
            post(
                |State(state): State<Arc<AppState>>, headers: HeaderMap| async move {
                    probe_offer::offer(&state, &headers).await
                },
            ),
        );
    for endpoint in Endpoint::ALL {
        app = app.route(
            endpoint.path(),
            post(move |State(state), headers, body| receive(state, endpoint, headers, body)),
        );
    }
    let files = Router::new()
        .fallback_service(ServeDir::new(served.root()))
        .layer(middleware::from_fn_with_state(
            Arc::new(served),
            only_served,
        ));
    let mut app = app
        .fallback_service(files)
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

/// Binds `address:port` (port 0: a free port) and serves until the task is dropped; over
/// HTTPS with `tls`.
pub async fn start_server(
    address: IpAddr,
    port: u16,
    served: Served,
    state: Arc<AppState>,
    tls: Option<&Tls>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = bind(address, port).await.map_err(|e| {
        Failure::new(
            Cause::Listen,
            format!("binding {address}:{port}: {e} (is another server using the port? `--port 0` picks a free one)"),
        )
    })?;
    let bound = listener.local_addr()?;
    let app = router(served, state);
    let task = match tls {
        None => tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("ocr-bench: server stopped: {e}");
            }
        }),
        Some(tls) => {
            let listener = tls::TlsListener::new(listener, tls)?;
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, app).await {
                    eprintln!("ocr-bench: server stopped: {e}");
                }
            })
        }
    };
    Ok((bound, task))
}

/// Binds, giving a fixed port a second to come free: the previous run of a sweep on the same
/// `--port` lets its listener go as its aborted server task ends.
async fn bind(address: IpAddr, port: u16) -> std::io::Result<tokio::net::TcpListener> {
    let mut tries = 0;
    loop {
        match tokio::net::TcpListener::bind((address, port)).await {
            Err(e) if port != 0 && e.kind() == std::io::ErrorKind::AddrInUse && tries < 10 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
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
            content_type_for("/pkg/ocr_bench_core_bg.wasm"),
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
