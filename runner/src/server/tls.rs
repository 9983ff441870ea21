//! HTTPS for `--tls`: a self-signed certificate made at start for the names the browser
//! opens, or the user's own PEM files, and a listener that completes each connection's TLS
//! handshake (off the accept loop, within a limit) before the router sees it. The last
//! failed handshake is kept, so that a run whose page never loads can say the browser
//! refused the certificate.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::reach::TlsSource;

/// How long one connection may take over its handshake before it is dropped.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);

/// What the server serves HTTPS with, and the last handshake that failed.
#[derive(Clone)]
pub struct Tls {
    config: Arc<ServerConfig>,
    /// The last failed handshake in words (`from ADDRESS: ERROR`), for the run's message.
    pub last_refusal: Arc<Mutex<Option<String>>>,
}

impl Tls {
    /// The certificate `source` names: made now for `names`, or read from the user's files.
    pub fn new(source: &TlsSource, names: &[String]) -> Result<Tls> {
        let (chain, key) = match source {
            TlsSource::SelfSigned => {
                let (cert, key) = self_signed(names)?;
                (vec![cert], key)
            }
            TlsSource::Files { cert, key } => from_files(cert, key)?,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("choosing the TLS versions")?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .context("the TLS certificate and key do not fit together")?;
        // The router speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            last_refusal: Arc::new(Mutex::new(None)),
        })
    }

    /// The last failed handshake, if any.
    pub fn refusal(&self) -> Option<String> {
        self.last_refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A certificate valid for `names` (addresses become IP names, the rest DNS names) and its
/// key, made with a fresh ECDSA P-256 key.
pub fn self_signed(names: &[String]) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>)> {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(names.to_vec())
            .with_context(|| format!("making a TLS certificate for {}", names.join(", ")))?;
    let key = PrivatePkcs8KeyDer::from(signing_key.serialize_der());
    Ok((cert.der().clone(), PrivateKeyDer::Pkcs8(key)))
}

/// `--tls-cert` (the chain, leaf first) and `--tls-key`, PEM.
fn from_files(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            anyhow::anyhow!(
                "--tls-cert {}: {e} (a PEM certificate chain is allowed)",
                cert.display()
            )
        })?;
    if chain.is_empty() {
        anyhow::bail!(
            "--tls-cert {}: no CERTIFICATE block in it (a PEM certificate chain is allowed)",
            cert.display()
        );
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        anyhow::anyhow!(
            "--tls-key {}: {e} (a PEM private key, PKCS#8, PKCS#1 or SEC1, is allowed)",
            key.display()
        )
    })?;
    Ok((chain, key))
}

/// TCP connections with their handshake done, for `axum::serve`.
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    /// Accepts and shakes hands; stopped with the listener, which frees the port.
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, tls: &Tls) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (sender, ready) = mpsc::channel(16);
        let acceptor = TlsAcceptor::from(Arc::clone(&tls.config));
        let last_refusal = Arc::clone(&tls.last_refusal);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    // Out of descriptors and the like: pass, as axum's own listener does.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let sender = sender.clone();
                let last_refusal = Arc::clone(&last_refusal);
                tokio::spawn(async move {
                    let why = match tokio::time::timeout(HANDSHAKE_LIMIT, acceptor.accept(stream))
                        .await
                    {
                        Ok(Ok(stream)) => {
                            let _ = sender.send((stream, peer)).await;
                            return;
                        }
                        Ok(Err(e)) => e.to_string(),
                        Err(_) => format!("no handshake within {} s", HANDSHAKE_LIMIT.as_secs()),
                    };
                    *last_refusal.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(format!("from {peer}: {why}"));
                });
            }
        });
        Ok(TlsListener {
            local,
            ready,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task ended (it never does while the listener lives): wait on.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls_pki_types::ServerName;

    /// Whether the certificate is valid for `name`, as a TLS client checks it.
    fn valid_for(cert: &CertificateDer<'_>, name: &str) -> bool {
        let cert = webpki::EndEntityCert::try_from(cert).expect("a certificate webpki reads");
        let name = ServerName::try_from(name).expect("a server name");
        cert.verify_is_valid_for_subject_name(&name).is_ok()
    }

    #[test]
    fn the_self_signed_certificate_names_the_public_host_and_loopback() {
        let names = ["192.0.2.7", "bench.example", "127.0.0.1", "localhost"].map(String::from);
        let (cert, _key) = self_signed(&names).unwrap();
        for name in ["192.0.2.7", "bench.example", "127.0.0.1", "localhost"] {
            assert!(valid_for(&cert, name), "{name} is not in the certificate");
        }
        for name in ["192.0.2.8", "other.example", "::1"] {
            assert!(
                !valid_for(&cert, name),
                "{name} should not be in the certificate"
            );
        }
        // The key fits the certificate: a server configuration takes both.
        Tls::new(&TlsSource::SelfSigned, &names).unwrap();
    }

    #[test]
    fn unreadable_certificate_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        std::fs::write(&cert, "not a certificate\n").unwrap();
        let source = TlsSource::Files {
            cert: cert.clone(),
            key: dir.path().join("missing-key.pem"),
        };
        let err = format!("{:#}", Tls::new(&source, &[]).err().unwrap());
        assert!(
            err.contains("--tls-cert") && err.contains("no CERTIFICATE block"),
            "{err}"
        );
    }
}
