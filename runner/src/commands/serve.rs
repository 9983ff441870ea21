//! `serve`: the page for a browser of the user's own, until Ctrl-C.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use ocr_bench::{machine, server};

pub async fn serve_command(root: &Path, host: IpAddr, port: u16, results: &Path) -> Result<u8> {
    let context = server::RunContext {
        machine: machine::describe(),
        ..Default::default()
    };
    if !host.is_loopback() {
        eprintln!(
            "ocr-bench: warning: binding {host} exposes the page and the results endpoints to \
             other machines, and anyone who reaches them can append records; the default, \
             127.0.0.1, allows only this machine"
        );
    }
    let state = Arc::new(server::AppState::new(results, context, None, None)?);
    let (address, task) = server::start_server(host, port, root, state, None).await?;
    println!("serving {} at http://{address}/", root.display());
    println!(
        "open http://{address}/www/index.html (add ?tier=242&schedule=resident … to configure)"
    );
    println!("results are appended to {}", results.display());
    println!("Chrome/Chromium needs WebGPU enabled (on Linux: --enable-unsafe-webgpu); Firefox needs dom.webgpu.enabled in about:config");
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::select! {
        _ = task => {}
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
    Ok(0)
}
