//! `serve`: the page for a browser of the user's own, until Ctrl-C; over HTTPS with `--tls`
//! or `--tls-cert`/`--tls-key`, for a browser on another machine (WebGPU needs a secure
//! context, which `http://HOST:PORT` is not there).

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use ocr_bench::reach::Reach;
use ocr_bench::{machine, server};

pub async fn serve_command(root: &Path, reach: &Reach, results: &Path) -> Result<u8> {
    let context = server::RunContext {
        machine: machine::describe(),
        ..Default::default()
    };
    let host = reach.listen_address(std::net::Ipv4Addr::LOCALHOST.into());
    if !host.is_loopback() {
        eprintln!(
            "ocr-bench: warning: binding {host} exposes the page and the results endpoints to \
             other machines, and anyone who reaches them can append records; the default, \
             127.0.0.1, allows only this machine"
        );
    }
    if let Some(warning) = reach.warning(host) {
        eprintln!("ocr-bench: warning: {warning}");
    }
    let tls = reach
        .tls
        .as_ref()
        .map(|source| server::Tls::new(source, &reach.certificate_names(host)))
        .transpose()?;
    let state = Arc::new(server::AppState::new(results, context, None, None)?);
    let (address, task) =
        server::start_server(host, reach.listen_port(), root, state, tls.as_ref()).await?;
    let origin = reach.origin(address);
    println!("serving {} at {origin}/", root.display());
    println!("open {origin}/www/index.html (add ?tier=242&schedule=resident … to configure)");
    println!("results are appended to {}", results.display());
    if reach.self_signed() {
        println!(
            "the certificate is made now for {}: the browser asks once to accept it (Chromium \
             started by hand: --ignore-certificate-errors)",
            reach.certificate_names(host).join(", ")
        );
    }
    if !host.is_loopback() && reach.tls.is_none() {
        println!(
            "a browser on another machine has no WebGPU over plain HTTP (http://HOST:PORT is \
             not a secure context there): add --tls, or --public-url https://…"
        );
    }
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
