//! The connector every WebDriver request goes through: plain HTTP for `http://` endpoints (a
//! local driver, a grid on the network) and TLS for `https://` ones (the device clouds), the
//! endpoint's certificate checked against Mozilla's roots built into the runner.

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;

pub(super) fn connector() -> HttpsConnector<HttpConnector> {
    HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .build()
}

/// An error and every cause under it, in one line: a connector's failure says only "client
/// error (Connect)" at the top, the certificate's verdict further down. `cause()`, not
/// `source()`: fantoccini's errors name their inner error only through the older method,
/// whose default answers with `source()` for everyone else.
#[allow(deprecated)]
pub(super) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.cause();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.cause();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

    use super::*;

    /// A TLS server on loopback with a certificate of its own making, as a grid behind a
    /// self-signed proxy would have; returns its port.
    async fn self_signed_server() -> u16 {
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(signing_key.serialize_der()));
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = tcp.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((stream, _)) = tcp.accept().await {
                let _ = acceptor.accept(stream).await;
            }
        });
        port
    }

    #[tokio::test]
    async fn an_https_endpoint_is_spoken_to_and_its_certificate_checked_against_the_public_roots() {
        let port = self_signed_server().await;
        let error = fantoccini::ClientBuilder::new(connector())
            .connect(&format!("https://127.0.0.1:{port}"))
            .await
            .expect_err("a certificate no public authority signed");
        let text = with_causes(&error);
        // The TLS handshake happened and its verdict is named: not a plain-HTTP failure.
        assert!(
            text.contains("certificate") && text.contains("UnknownIssuer"),
            "{text}"
        );
    }
}
