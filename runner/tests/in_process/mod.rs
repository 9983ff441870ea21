//! A real server of the runner started inside a test, on a free port of 127.0.0.1: the state
//! a test made (`run`'s or `serve`'s) behind the allow-list of what it hands out, with the
//! runtime that keeps it up for as long as the test holds it.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use ocr_bench::server::{start_server, AppState, Served};

/// The server's base URL (`http://127.0.0.1:PORT`, the origin reports are accepted from) and
/// its runtime (dropped, the server ends).
pub fn start(
    state: &Arc<AppState>,
    served: Served,
    worker_threads: usize,
) -> (String, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads)
        .enable_all()
        .build()
        .unwrap();
    let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let (address, _) = runtime
        .block_on(start_server(localhost, 0, served, state.clone(), None))
        .unwrap();
    let base = format!("http://{address}");
    state.accept_origins(vec![base.clone()]);
    (base, runtime)
}
