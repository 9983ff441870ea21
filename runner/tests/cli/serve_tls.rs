//! `ocr-bench serve --tls`: the page over HTTPS with a certificate the runner makes at start,
//! as a browser on another machine needs it (WebGPU only in a secure context). The client
//! reads the certificate back on a first connection, then trusts it alone on a second, which
//! checks it as a browser would: signed by its key and valid for the address opened.

use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};

use super::*;

/// Takes whatever certificate the server presents and keeps it.
#[derive(Debug)]
struct ReadBack {
    seen: Mutex<Option<CertificateDer<'static>>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for ReadBack {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.seen.lock().unwrap() = Some(end_entity.clone().into_owned());
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `GET path` over TLS to `address` (`127.0.0.1:PORT`) with `config`: the response's head
/// and body as text.
fn get(config: Arc<ClientConfig>, address: &str, path: &str) -> Result<String, String> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let connection = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let tcp = TcpStream::connect(address).map_err(|e| e.to_string())?;
    let mut stream = rustls::StreamOwned::new(connection, tcp);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    // A server may close without TLS's close_notify: what arrived is the response.
    if let Err(e) = stream.read_to_end(&mut response) {
        if response.is_empty() {
            return Err(e.to_string());
        }
    }
    Ok(String::from_utf8_lossy(&response).into_owned())
}

#[test]
fn serve_tls_serves_the_page_over_https_with_a_certificate_for_loopback() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("www")).unwrap();
    std::fs::write(root.path().join("www/index.html"), "<p>tls page</p>").unwrap();
    let results = root.path().join("results.jsonl");
    let served = serve_with(root.path(), &results, &["--tls"]);
    let address = served
        .base
        .strip_prefix("https://")
        .unwrap_or_else(|| panic!("serve --tls printed {}", served.base));

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = || {
        ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .unwrap()
    };
    let read_back = Arc::new(ReadBack {
        seen: Mutex::new(None),
        provider: Arc::clone(&provider),
    });
    let reading = builder()
        .dangerous()
        .with_custom_certificate_verifier(read_back.clone())
        .with_no_client_auth();
    get(Arc::new(reading), address, "/www/index.html").unwrap();
    let certificate = read_back
        .seen
        .lock()
        .unwrap()
        .clone()
        .expect("a certificate");

    // Trusted alone, the certificate is checked as a browser checks it.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certificate).unwrap();
    let trusting = builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let response = get(Arc::new(trusting), address, "/www/index.html").unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("<p>tls page</p>"), "{response}");
    assert!(
        response.contains("cross-origin-opener-policy: same-origin"),
        "{response}"
    );

    // Plain HTTP on the same port gets no page.
    let plain = agent()
        .get(format!("http://{address}/www/index.html"))
        .call();
    assert!(
        plain.map_or(true, |r| r.status() != 200),
        "the page was served over plain HTTP too"
    );
}

#[test]
fn serve_refuses_tls_with_a_plain_http_public_url() {
    let root = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args([
            "serve",
            "--tls",
            "--public-url",
            "http://192.0.2.7:8443",
            "--root",
        ])
        .arg(root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("write https://"), "{stderr}");
}
