//! `serve`: the page for a browser of the user's own, until Ctrl-C; over HTTPS with `--tls`
//! or `--tls-cert`/`--tls-key`, for a browser on another machine (WebGPU needs a secure
//! context, which `http://HOST:PORT` is not there). It hands out only what pages load
//! (`server::Served`), and takes reports only from pages opened through the launch URL it
//! prints, which sets this start's token as a cookie.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use ocr_bench::exit::{Cause, Failure};
use ocr_bench::reach::Reach;
use ocr_bench::{machine, server};
use ocr_bench_core::config::DEFAULT_MANIFEST;

pub async fn serve_command(
    root: &Path,
    reach: &Reach,
    results: &Path,
    serve_dirs: &[PathBuf],
) -> Result<u8> {
    let mut served = server::Served::new(root, results)
        .with_folder(Path::new("models"))
        .with_manifest(&root.join(DEFAULT_MANIFEST.trim_start_matches('/')));
    for dir in serve_dirs {
        served = served
            .with_given_folder(dir)
            .map_err(|m| Failure::new(Cause::Usage, m))?;
    }
    let context = server::RunContext {
        machine: machine::describe(),
        ..Default::default()
    };
    let host = reach.listen_address(std::net::Ipv4Addr::LOCALHOST.into());
    if !host.is_loopback() {
        eprintln!(
            "ocr-bench: warning: binding {host} exposes the page and the results endpoints to \
             other machines (reports still need the token of the launch URL printed below); \
             the default, 127.0.0.1, allows only this machine"
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
    let token = server::new_secret().context("reading /dev/urandom for the server's token")?;
    let page = format!("/{}", server::DEFAULT_PAGE);
    let state = Arc::new(
        server::AppState::new(results, context, None, None)?.with_token(token.clone(), page),
    );
    let folders = served.folders();
    let (address, task) = server::start_server(
        host,
        reach.listen_port(),
        served,
        Arc::clone(&state),
        tls.as_ref(),
    )
    .await?;
    let origins = server::own_origins(reach, address);
    state.accept_origins(origins.clone());
    let origin = reach.origin(address);
    println!("serving {} at {origin}/", root.display());
    println!(
        "open {origin}{}{token} (it sets this server's token as a cookie and opens {}; add \
         ?tier=242&schedule=resident … to it to configure)",
        server::LAUNCH_PATH,
        server::DEFAULT_PAGE
    );
    println!("results are appended to {}", results.display());
    if !host.is_loopback() {
        println!("serving only {}", folders.join(" "));
        println!(
            "listening on {address}; reports are taken from pages at {} (or the address the \
             browser reached) that carry the token",
            origins.join(" or ")
        );
    }
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
