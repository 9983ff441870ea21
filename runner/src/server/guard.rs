//! Who may report: only a page that holds the server's secret. The browser opens a launch URL
//! that sets the secret as a cookie and sends it on to the page; the page and its workers send
//! the cookie with every same-origin request. Under `run` the launch URL works once and the
//! first accepted report fixes the page's `runId`; under `serve` it works every time (a person
//! opens it in each browser), and any number of pages report.
//! A report must also come from the server's own origin as JSON (`check_sender`), which
//! a form or a `text/plain` fetch of another site cannot send without a CORS preflight.

use std::sync::{Mutex, OnceLock};

use axum::http::{header, HeaderMap, StatusCode};

/// The cookie that carries the server's secret: set by the launch URL, then sent by the
/// browser with every same-origin request of the page and its workers.
pub const RUN_COOKIE: &str = "ocr-bench-run";
/// The launch URL's path; the secret follows it.
pub const LAUNCH_PATH: &str = "/__ocr-bench/launch/";

/// 128 random bits from the kernel, as hex: the secret of one run or one `serve`.
pub fn new_secret() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Where the launch URL sends the browser.
enum Launch {
    /// Under `run`: the runner's page and query, once.
    Once(Mutex<Option<String>>),
    /// Under `serve`: this page, with the launch URL's own query, every time.
    Always(String),
}

pub struct RunGuard {
    secret: String,
    launch: Launch,
    /// Under `run`: the page's `runId`, from its first accepted report.
    run_id: Option<Mutex<Option<String>>>,
    /// The origins a report may come from, known once the server listens; the first one's
    /// scheme is the server's.
    origins: OnceLock<Vec<String>>,
}

impl RunGuard {
    /// `run`'s guard: the launch URL sends the browser to `target` once.
    pub fn new(secret: String, target: String) -> Self {
        Self {
            secret,
            launch: Launch::Once(Mutex::new(Some(target))),
            run_id: Some(Mutex::new(None)),
            origins: OnceLock::new(),
        }
    }

    /// `serve`'s guard: the launch URL sends every browser to `page` with the launch URL's
    /// query (`?tier=242` …), so that the secret never sits in the page's own query.
    pub fn reusable(secret: String, page: String) -> Self {
        Self {
            secret,
            launch: Launch::Always(page),
            run_id: None,
            origins: OnceLock::new(),
        }
    }

    /// Whether this guards a run (one page, one `runId`) rather than a `serve`.
    pub fn guards_a_run(&self) -> bool {
        self.run_id.is_some()
    }

    /// The origins reports are accepted from: the server's own, and its public URL's; and the
    /// origin of the address each request reached (its `Host`), which a page of another site
    /// never has.
    pub fn accept_origins(&self, origins: Vec<String>) {
        let _ = self.origins.set(origins);
    }

    /// Where to send the browser, for the right secret (under `run`, once); `query` is the
    /// launch URL's own, passed on under `serve`.
    pub fn take_launch(&self, secret: &str, query: Option<&str>) -> Option<String> {
        if secret != self.secret {
            return None;
        }
        match &self.launch {
            Launch::Once(target) => target.lock().unwrap_or_else(|e| e.into_inner()).take(),
            Launch::Always(page) => Some(match query.filter(|q| !q.is_empty()) {
                Some(query) => format!("{page}?{query}"),
                None => page.clone(),
            }),
        }
    }

    /// Whether a report comes from a page of this server: from its own origin, as JSON, with
    /// its secret. `Err` is the status and why not, in words.
    pub fn check_sender(&self, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
        let forbidden = |message: String| (StatusCode::FORBIDDEN, message);
        self.check_origin(headers).map_err(forbidden)?;
        self.check_secret(headers).map_err(forbidden)?;
        check_json(headers).map_err(|message| (StatusCode::UNSUPPORTED_MEDIA_TYPE, message))
    }

    /// A browser names the page's origin in `Origin` on every POST, and says `cross-site` in
    /// `Sec-Fetch-Site` for another site's; a client that is no browser sends neither and
    /// must hold the secret all the same.
    fn check_origin(&self, headers: &HeaderMap) -> Result<(), String> {
        let accepted = self.origins.get().map(Vec::as_slice).unwrap_or_default();
        let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
        if text("sec-fetch-site") == Some("cross-site") {
            return Err(format!(
                "the request came from another site (Sec-Fetch-Site: cross-site); reports are \
                 accepted only from this server's own pages, at {}",
                accepted.join(" or ")
            ));
        }
        let scheme = accepted
            .first()
            .and_then(|origin| origin.split_once("://"))
            .map_or("http", |(scheme, _)| scheme);
        let reached = text("host").map(|host| format!("{scheme}://{host}"));
        match headers.get(header::ORIGIN) {
            None => Ok(()),
            Some(origin)
                if accepted
                    .iter()
                    .chain(reached.as_ref())
                    .any(|a| a.as_bytes() == origin.as_bytes()) =>
            {
                Ok(())
            }
            Some(origin) => Err(format!(
                "the request came from origin {:?}; reports are accepted only from this \
                 server's own pages, at {}",
                String::from_utf8_lossy(origin.as_bytes()),
                accepted.join(" or ")
            )),
        }
    }

    /// Whether the request carries the server's secret; `Err` says why not, in words.
    pub fn check_secret(&self, headers: &HeaderMap) -> Result<(), String> {
        let presented = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == RUN_COOKIE)
            .map(|(_, value)| value.to_owned());
        let (whose, other) = if self.guards_a_run() {
            (
                "this run accepts reports only from the page it opened",
                "another run's",
            )
        } else {
            (
                "this server accepts reports only from pages opened through the launch URL it printed",
                "another server's",
            )
        };
        match presented {
            Some(value) if value == self.secret => Ok(()),
            Some(_) => Err(format!(
                "the request carried {other} `{RUN_COOKIE}` cookie; {whose}"
            )),
            None => Err(format!(
                "the request carried no `{RUN_COOKIE}` cookie; {whose} (its launch URL sets the cookie)"
            )),
        }
    }

    /// Under `run`, the first report fixes the page's `runId`; another one is refused.
    pub fn check_run_id(&self, claimed: &str) -> Result<(), String> {
        let Some(run_id) = &self.run_id else {
            return Ok(());
        };
        let mut run_id = run_id.lock().unwrap_or_else(|e| e.into_inner());
        match run_id.as_deref() {
            None => {
                *run_id = Some(claimed.to_owned());
                Ok(())
            }
            Some(mine) if mine == claimed => Ok(()),
            Some(mine) => Err(format!(
                "runId {claimed:?} is not this run's; its page reported runId {mine:?}"
            )),
        }
    }
}

/// A report is `Content-Type: application/json`: what another site's page cannot send
/// without asking first (a CORS preflight, which this server never grants).
fn check_json(headers: &HeaderMap) -> Result<(), String> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if media_type.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(format!(
            "the request's Content-Type is {content_type:?}; allowed: application/json"
        ))
    }
}
