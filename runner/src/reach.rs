//! How a run's browser reaches the runner: the address the server listens on (`--host`,
//! `--port`), the origin the browser opens (`--public-url`, else the listening address), and
//! whether the page is served over HTTPS (`--tls`, or a `--public-url https://…`).
//!
//! WebGPU needs a secure context: `http://127.0.0.1` is one, `http://HOST:PORT` seen from
//! another machine is not (`navigator.gpu` is undefined there), so a browser elsewhere opens
//! `https://HOST:PORT` (`docs/remote-browsers.md`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

/// Where the page is served and how the browser opens it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// `--host`: `None` listens where the target wants (loopback).
    pub host: Option<IpAddr>,
    /// `--port` (0 picks a free one); `None`: the public URL's port, else a free one.
    pub port: Option<u16>,
    /// `--public-url`: the origin the browser opens instead of the listening address.
    pub public: Option<PublicOrigin>,
    /// HTTPS and its certificate; `None` serves plain HTTP.
    pub tls: Option<TlsSource>,
}

/// The certificate the runner serves HTTPS with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// Made at start for the public host, 127.0.0.1 and localhost; the browser is told to
    /// accept it (WebDriver `acceptInsecureCerts`, Chromium `--ignore-certificate-errors`).
    SelfSigned,
    /// `--tls-cert`/`--tls-key`: PEM files the browser already trusts.
    Files { cert: PathBuf, key: PathBuf },
}

/// `--public-url`: a scheme, a host and maybe a port, nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicOrigin {
    pub https: bool,
    /// As a URL writes it (an IPv6 address in brackets).
    pub host: url::Host<String>,
    /// The URL's port, else the scheme's (443, 80), as a browser reads it.
    pub port: u16,
}

const PUBLIC_URL_ALLOWED: &str = "allowed: http:// or https:// with a host and an optional \
     port, such as https://192.0.2.7:8443 (without a port: 443 or 80, as a browser reads it)";

impl PublicOrigin {
    /// Reads `--public-url`; the error says what was wrong and what is allowed.
    pub fn parse(text: &str) -> Result<PublicOrigin, String> {
        let url = url::Url::parse(text).map_err(|e| {
            format!("--public-url {text:?} is not a URL ({e}); {PUBLIC_URL_ALLOWED}")
        })?;
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            other => {
                return Err(format!(
                    "--public-url: the scheme {other:?} is not one a browser opens the page \
                     with; {PUBLIC_URL_ALLOWED}"
                ))
            }
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!(
                "--public-url carries credentials, which the page has no use for; \
                 {PUBLIC_URL_ALLOWED}"
            ));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "--public-url {text:?} has a path, query or fragment; the runner serves the \
                 page at the origin's root, so give the origin alone; {PUBLIC_URL_ALLOWED}"
            ));
        }
        let host = url
            .host()
            .ok_or_else(|| format!("--public-url {text:?} names no host; {PUBLIC_URL_ALLOWED}"))?
            .to_owned();
        Ok(PublicOrigin {
            https,
            host,
            // As a browser reads it: without a port, the scheme's own.
            port: url
                .port_or_known_default()
                .unwrap_or(if https { 443 } else { 80 }),
        })
    }

    /// The name the certificate must be valid for: an address or a DNS name.
    pub fn certificate_name(&self) -> String {
        match &self.host {
            url::Host::Domain(name) => name.clone(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        }
    }
}

/// Whether a browser takes `origin` (`scheme://host:port`) for a secure context: HTTPS, or
/// HTTP on a loopback address or `localhost` ("potentially trustworthy" in the W3C Secure
/// Contexts spec).
pub fn secure_origin(origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    url.scheme() == "https"
        || match url.host() {
            Some(url::Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

impl Reach {
    /// The flags of `run` and `sweep`, checked: an `https://` public URL serves HTTPS, and so
    /// do `--tls-cert`/`--tls-key`; `--tls` with an `http://` one is refused.
    pub fn from_flags(
        host: Option<IpAddr>,
        port: Option<u16>,
        public_url: Option<&str>,
        tls: bool,
        files: Option<(PathBuf, PathBuf)>,
    ) -> Result<Reach, String> {
        let public = public_url.map(PublicOrigin::parse).transpose()?;
        let https = tls || files.is_some() || public.as_ref().is_some_and(|p| p.https);
        if let Some(public) = public.as_ref().filter(|p| https && !p.https) {
            return Err(format!(
                "--tls serves the page over HTTPS, but --public-url names http://{}; write \
                 https://, or leave --tls (and --tls-cert/--tls-key) out for plain HTTP",
                public.host
            ));
        }
        let source = match files {
            Some((cert, key)) => TlsSource::Files { cert, key },
            None => TlsSource::SelfSigned,
        };
        let tls = https.then_some(source);
        Ok(Reach {
            host,
            port,
            public,
            tls,
        })
    }

    /// The address to listen on: `--host`, else the target's own.
    pub fn listen_address(&self, target_default: IpAddr) -> IpAddr {
        self.host.unwrap_or(target_default)
    }

    /// The port to listen on: `--port`, else the public URL's (the browser opens it there
    /// unless a proxy forwards), else a free one.
    pub fn listen_port(&self) -> u16 {
        self.port
            .or(self.public.as_ref().map(|public| public.port))
            .unwrap_or(0)
    }

    /// The origin the browser opens, once the server listens on `bound`: the public one,
    /// else the bound address (loopback for 0.0.0.0 or ::).
    pub fn origin(&self, bound: SocketAddr) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        match &self.public {
            Some(public) => format!("{scheme}://{}:{}", public.host, public.port),
            None => {
                let ip = match bound.ip() {
                    IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
                    ip => ip,
                };
                format!("{scheme}://{}", SocketAddr::new(ip, bound.port()))
            }
        }
    }

    /// Whether the browser must be told to accept the runner's own certificate.
    pub fn self_signed(&self) -> bool {
        self.tls == Some(TlsSource::SelfSigned)
    }

    /// The names the self-signed certificate is valid for: the public host, the listening
    /// address where it is a particular one, 127.0.0.1 and localhost.
    pub fn certificate_names(&self, listen: IpAddr) -> Vec<String> {
        let mut names: Vec<String> = self
            .public
            .iter()
            .map(PublicOrigin::certificate_name)
            .collect();
        if !listen.is_unspecified() {
            names.push(listen.to_string());
        }
        for name in ["127.0.0.1", "localhost"] {
            names.push(name.to_owned());
        }
        let mut seen = std::collections::HashSet::new();
        names.retain(|name| seen.insert(name.clone()));
        names
    }

    /// A warning where the browser cannot reach what the runner listens on: a public host
    /// elsewhere while the runner listens on loopback only (right only behind a proxy or a
    /// tunnel on this machine).
    pub fn warning(&self, listen: IpAddr) -> Option<String> {
        let public = self.public.as_ref()?;
        let public_is_loopback = match &public.host {
            url::Host::Domain(name) => name == "localhost",
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        };
        (listen.is_loopback() && !public_is_loopback).then(|| {
            format!(
                "--public-url names {}, but the runner listens on {listen} only, which no \
                 other machine reaches; add --host 0.0.0.0 (or this machine's address) unless \
                 a proxy or tunnel here forwards to it",
                public.host
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(public_url: Option<&str>, tls: bool) -> Result<Reach, String> {
        Reach::from_flags(None, None, public_url, tls, None)
    }

    #[test]
    fn a_public_url_is_an_origin_and_https_implies_tls() {
        let https = reach(Some("https://192.0.2.7:8443"), false).unwrap();
        assert!(https.self_signed());
        let bound: SocketAddr = "0.0.0.0:41000".parse().unwrap();
        assert_eq!(https.origin(bound), "https://192.0.2.7:8443");
        // The runner listens on the public URL's port unless --port says otherwise.
        assert_eq!(https.listen_port(), 8443);
        assert_eq!(reach(None, true).unwrap().listen_port(), 0);
        let proxied =
            Reach::from_flags(None, Some(9000), Some("https://192.0.2.7"), false, None).unwrap();
        assert_eq!(proxied.listen_port(), 9000);
        // Without a port: the scheme's, as a browser reads it (a proxy on 443 forwarding to
        // the runner); a trailing slash is the root.
        let no_port = reach(Some("https://bench.example/"), false).unwrap();
        assert_eq!(no_port.origin(bound), "https://bench.example:443");
        let v6 = reach(Some("https://[2001:db8::7]:9443"), false).unwrap();
        assert_eq!(v6.origin(bound), "https://[2001:db8::7]:9443");
        assert_eq!(v6.public.unwrap().certificate_name(), "2001:db8::7");
        // Plain HTTP stays plain; --tls alone serves HTTPS on the listening address.
        let plain = reach(Some("http://127.0.0.2:8000"), false).unwrap();
        assert_eq!(plain.tls, None);
        assert_eq!(plain.origin(bound), "http://127.0.0.2:8000");
        let tls = reach(None, true).unwrap();
        assert_eq!(tls.origin(bound), "https://127.0.0.1:41000");
        assert_eq!(
            reach(None, false).unwrap().origin(bound),
            "http://127.0.0.1:41000"
        );
        let files = Reach::from_flags(
            None,
            Some(0),
            None,
            false,
            Some(("c.pem".into(), "k.pem".into())),
        )
        .unwrap();
        assert!(files.tls.is_some() && !files.self_signed());
    }

    #[test]
    fn bad_public_urls_say_what_was_wrong_and_what_is_allowed() {
        for (text, says) in [
            ("192.0.2.7:8443", "is not a URL"),
            ("bench:8443", "\"bench\""),
            ("ftp://192.0.2.7", "\"ftp\""),
            ("https://u:pw-5521@192.0.2.7", "credentials"),
            (
                "https://192.0.2.7/www/index.html",
                "path, query or fragment",
            ),
            ("https://192.0.2.7/?tier=242", "path, query or fragment"),
            ("not a url", "is not a URL"),
        ] {
            let err = reach(Some(text), false).unwrap_err();
            assert!(
                err.contains(says) && err.contains("allowed: http:// or https://"),
                "{text}: {err}"
            );
            assert!(!err.contains("pw-5521"), "{err}");
        }
        let mixed = reach(Some("http://192.0.2.7:8000"), true).unwrap_err();
        assert!(mixed.contains("write https://"), "{mixed}");
    }

    #[test]
    fn only_https_and_loopback_origins_are_secure_contexts() {
        for origin in [
            "https://192.0.2.7:8443",
            "http://127.0.0.1:8000",
            "http://127.0.0.2:8000",
            "http://[::1]:8000",
            "http://localhost:8000",
        ] {
            assert!(secure_origin(origin), "{origin}");
        }
        for origin in [
            "http://192.0.2.7:8000",
            "http://bench.example:80",
            "nonsense",
        ] {
            assert!(!secure_origin(origin), "{origin}");
        }
    }

    #[test]
    fn the_certificate_names_the_public_host_the_address_and_loopback() {
        let public = reach(Some("https://192.0.2.7:8443"), false).unwrap();
        assert_eq!(
            public.certificate_names("0.0.0.0".parse().unwrap()),
            ["192.0.2.7", "127.0.0.1", "localhost"]
        );
        assert_eq!(
            public.certificate_names("192.0.2.7".parse().unwrap()),
            ["192.0.2.7", "127.0.0.1", "localhost"]
        );
        let named = reach(Some("https://bench.example"), false).unwrap();
        assert_eq!(
            named.certificate_names("10.0.0.3".parse().unwrap()),
            ["bench.example", "10.0.0.3", "127.0.0.1", "localhost"]
        );
    }

    #[test]
    fn a_public_host_elsewhere_on_a_loopback_listener_is_warned_of() {
        let public = reach(Some("https://192.0.2.7:8443"), false).unwrap();
        let warning = public.warning("127.0.0.1".parse().unwrap()).unwrap();
        assert!(warning.contains("--host 0.0.0.0"), "{warning}");
        assert_eq!(public.warning("0.0.0.0".parse().unwrap()), None);
        let tunnel = reach(Some("https://localhost:9000"), false).unwrap();
        assert_eq!(tunnel.warning("127.0.0.1".parse().unwrap()), None);
    }
}
