//! A WebDriver endpoint's URL, and keeping the credentials it or the capabilities carry out of
//! everything the runner shows: the record, the log and every error name the endpoint without
//! them.

use serde_json::{Map, Value};

/// A WebDriver endpoint's URL: the whole of it for the requests, and how it is shown.
#[derive(Clone)]
pub struct Endpoint {
    pub(super) url: String,
    shown: String,
    pub(super) loopback: bool,
}

/// Shows the URL without its credentials, like everything else here.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Endpoint").field(&self.shown).finish()
    }
}

impl Endpoint {
    /// Parses `--webdriver URL`: `http[s]://[user:key@]host[:port][/path]`.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let parsed = url::Url::parse(text)
            .map_err(|e| format!("--webdriver takes a URL such as http://127.0.0.1:4444 ({e})"))?;
        let mut shown = parsed.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.set_query(None);
        shown.set_fragment(None);
        let shown = shown.as_str().trim_end_matches('/').to_owned();
        match parsed.scheme() {
            "http" | "https" => {}
            other => {
                return Err(format!(
                    "--webdriver {shown}: scheme {other:?} is not WebDriver's; allowed: http://, https://"
                ))
            }
        }
        let loopback = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => return Err(format!("--webdriver {shown}: the URL names no host")),
        };
        Ok(Endpoint {
            url: parsed.as_str().to_owned(),
            shown,
            loopback,
        })
    }

    /// The URL without user, password, query or fragment: what records and messages name.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The secrets of the URL (user and password, as written and decoded).
    fn secrets(&self) -> Vec<String> {
        url_secrets(&self.url)
    }
}

/// The secrets of any URL: its user, password and query values, as written and decoded.
fn url_secrets(url: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Vec::new();
    };
    let mut found = vec![parsed.username().to_owned()];
    found.extend(parsed.password().map(str::to_owned));
    if let Some(query) = parsed.query() {
        found.extend(
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(_, v)| v.to_owned()),
        );
    }
    let decoded: Vec<String> = found
        .iter()
        .filter_map(|s| {
            let pair = format!("x={s}");
            url::form_urlencoded::parse(pair.as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    found.extend(decoded);
    found
}

/// Takes every credential out of a text before it is shown or written: the endpoint's user
/// and password, and the capability values whose key names a secret.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub(super) fn new(endpoint: &Endpoint, capabilities: &Map<String, Value>) -> Redactor {
        let mut secrets = endpoint.secrets();
        collect_secret_values(&Value::Object(capabilities.clone()), false, &mut secrets);
        secrets.retain(|s| s.len() >= 3);
        // Longest first, so that a secret containing another is taken out whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// This redactor and the secrets of `url` too (a session's `webSocketUrl`, which can
    /// carry credentials of its own).
    pub(super) fn with_secrets_of(&self, url: &str) -> Redactor {
        let mut secrets = self.secrets.clone();
        secrets.extend(url_secrets(url).into_iter().filter(|s| s.len() >= 3));
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    pub fn clean(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_owned(), |text, secret| text.replace(secret, "***"))
    }
}

/// Whether a capability key names a credential (`accessKey`, `password`, `token`, …).
fn names_a_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["key", "secret", "password", "token", "user", "auth"]
        .iter()
        .any(|word| key.contains(word))
}

fn collect_secret_values(value: &Value, secret: bool, into: &mut Vec<String>) {
    match value {
        Value::String(s) if secret => into.push(s.clone()),
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_secret_values(v, secret, into)),
        Value::Object(map) => map
            .iter()
            .for_each(|(k, v)| collect_secret_values(v, secret || names_a_secret(k), into)),
        _ => {}
    }
}
