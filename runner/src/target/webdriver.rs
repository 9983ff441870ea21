//! The WebDriver target: a browser behind a W3C WebDriver endpoint (chromedriver,
//! geckodriver, a Selenium Grid, a device cloud), driven through `fantoccini`.
//!
//! The runner opens a session with the run's capabilities, navigates it to the launch URL
//! and waits for the page to post to its server, as for a local browser; the session is
//! deleted on every way out of the run, and after a crash of the runner by a watchdog
//! process (`ocr-bench webdriver-watchdog`) that outlives it. Credentials in the endpoint's
//! URL or the capabilities go to the endpoint only: the record, the log and every error
//! name the endpoint without them ([`Endpoint::shown`], [`Redactor`]). Where the endpoint
//! speaks WebDriver BiDi, the page's console lines are read through it ([`console`]).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::error::{CmdError, NewSessionError};
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Map, Value};

mod capabilities;
mod connector;
mod console;
mod endpoint;
mod watchdog;

use capabilities::reported_capabilities;
pub use capabilities::{default_capabilities, read_capabilities};
use console::{Console, WEB_SOCKET_URL};
pub use endpoint::{Endpoint, Redactor};
pub use watchdog::{watchdog_main, WATCHDOG_COMMAND};
use watchdog::{SessionWatchdog, DELETE_LIMIT};

use super::{BrowserTarget, Processes, RunningBrowser};
use crate::browser::{BrowserInfo, BrowserKind, ExtraOptions, StopReport};
use crate::browser_processes::BrowserTag;
use crate::exit::{Cause, Failure};
use crate::gpu_route::{GpuRoute, GpuRouteRequest, Route};
use crate::memory::Sampler;

/// How long the endpoint may take to create a session (a grid may queue the request).
pub const SESSION_LIMIT: Duration = Duration::from_secs(120);
/// How often the run asks the endpoint whether the session and its window still live.
const LIVENESS_POLL: Duration = Duration::from_secs(1);

/// Why a WebDriver run has no process figures.
pub const NO_PROCESS_MEMORY: &str = "the browser runs behind a WebDriver endpoint, whose \
     processes the runner cannot read (no /proc of that machine); the page's own figures \
     (GPU bytes, WASM heaps, JS heap) are in the summary";

/// Why `--chromium-switch` and `--firefox-pref` are refused with `--capabilities`.
pub const EXTRA_WITH_CAPABILITIES: &str = "--chromium-switch and --firefox-pref go into the \
     runner's default capabilities, not into --capabilities of your own; put the switch in \
     their goog:chromeOptions.args or the pref in moz:firefoxOptions.prefs (the record then does \
     not name it), or leave --capabilities out";

/// `--webdriver URL [--capabilities FILE|JSON]`, checked: where sessions are opened and
/// what they ask for (`None`: the defaults of each `--browser`).
#[derive(Clone)]
pub struct WebDriverSpec {
    pub endpoint: Endpoint,
    pub capabilities: Option<Map<String, Value>>,
}

/// The endpoint without credentials; the capabilities' values are never shown.
impl std::fmt::Debug for WebDriverSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebDriverSpec")
            .field("endpoint", &self.endpoint)
            .field("capabilities", &self.capabilities.as_ref().map(|_| "given"))
            .finish()
    }
}

impl WebDriverSpec {
    /// Reads the two flags; the error says which was wrong and what is allowed.
    pub fn parse(url: &str, capabilities: Option<&str>) -> Result<WebDriverSpec, String> {
        Ok(WebDriverSpec {
            endpoint: Endpoint::parse(url)?,
            capabilities: capabilities.map(read_capabilities).transpose()?,
        })
    }

    /// The target for `kind` (ignored where the capabilities name the browser), its default
    /// capabilities with the user's own switches or prefs of `extra`.
    pub fn target(
        &self,
        kind: BrowserKind,
        extra: &ExtraOptions,
    ) -> Result<WebDriverTarget, String> {
        WebDriverTarget::new(
            self.endpoint.clone(),
            self.capabilities.clone(),
            kind,
            extra,
        )
    }
}

/// A browser behind a WebDriver endpoint.
pub struct WebDriverTarget {
    endpoint: Endpoint,
    capabilities: Map<String, Value>,
    info: BrowserInfo,
    redactor: Redactor,
}

impl WebDriverTarget {
    /// `capabilities` as given (`--capabilities`), else the defaults for `kind` with `kind`'s
    /// part of `extra`; the browser is the capabilities' `browserName` where they name one.
    /// The user's own capabilities and `extra` together are refused: the runner would not
    /// know where in them a switch or pref goes.
    pub fn new(
        endpoint: Endpoint,
        capabilities: Option<Map<String, Value>>,
        kind: BrowserKind,
        extra: &ExtraOptions,
    ) -> Result<WebDriverTarget, String> {
        let extra = extra.of(kind);
        if capabilities.is_some() && !extra.is_empty() {
            return Err(EXTRA_WITH_CAPABILITIES.to_owned());
        }
        let mut capabilities =
            capabilities.unwrap_or_else(|| default_capabilities(kind, &endpoint, &extra));
        let kind = match capabilities.get("browserName").and_then(Value::as_str) {
            Some(name) => name.parse::<BrowserKind>().map_err(|_| {
                format!(
                    "--capabilities: browserName {name:?} is not a browser ocr-bench knows yet; \
                     allowed: chrome, chromium, firefox"
                )
            })?,
            None => kind,
        };
        // The run waits on the page's own reports, not on the page's load.
        capabilities
            .entry("pageLoadStrategy")
            .or_insert_with(|| json!("none"));
        let redactor = Redactor::new(&endpoint, &capabilities);
        let info = BrowserInfo {
            name: kind,
            executable: std::path::PathBuf::new(),
            version: format!(
                "{kind} through WebDriver at {} (its version: the closing record's \
                 reportedCapabilities)",
                endpoint.shown()
            ),
            extra,
        };
        Ok(WebDriverTarget {
            endpoint,
            capabilities,
            info,
            redactor,
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    async fn open(&self, url: &str, self_signed: bool) -> Result<Session> {
        let shown = self.endpoint.shown();
        let mut builder = ClientBuilder::new(connector::connector());
        let capabilities = session_capabilities(&self.capabilities, self_signed);
        let bidi = capabilities[WEB_SOCKET_URL] == true;
        builder.capabilities(capabilities);
        let connecting = builder.connect(&self.endpoint.url);
        let client = match tokio::time::timeout(SESSION_LIMIT, connecting).await {
            Err(_) => {
                return Err(Failure::new(
                    Cause::BrowserMissing,
                    format!(
                        "the WebDriver endpoint {shown} created no session within {} s",
                        SESSION_LIMIT.as_secs()
                    ),
                )
                .into())
            }
            Ok(Err(e)) => {
                return Err(Failure::new(Cause::BrowserMissing, self.new_session_error(&e)).into())
            }
            Ok(Ok(client)) => client,
        };
        let id = client.session_id().await.ok().flatten().unwrap_or_default();
        let reported = reported_capabilities(client.capabilities());
        let mut session = Session {
            client: Some(client.clone()),
            id,
            shown: shown.to_owned(),
            redactor: self.redactor.clone(),
            ended: Arc::new(Mutex::new(None)),
            poll: None,
            watchdog: None,
            reported,
            console: Console::without("the session has not been asked yet".to_owned()),
            handle: tokio::runtime::Handle::current(),
        };
        // From here on the session is deleted whatever happens: `Session`'s drop does it.
        session.watchdog = Some(
            SessionWatchdog::start(&self.endpoint.url, &session.id)
                .context("starting the WebDriver session's watchdog")?,
        );
        // Before the page opens, so that its first lines are read too.
        session.console =
            Console::open(client.capabilities(), bidi, &self.endpoint, &self.redactor).await;
        if let Err(e) = client.goto(url).await {
            return Err(Failure::new(
                Cause::BrowserMissing,
                format!(
                    "the WebDriver session at {shown} could not open the page: {}",
                    self.redactor.clean(&e.to_string())
                ),
            )
            .into());
        }
        session.poll = Some(tokio::spawn(watch_session(
            client,
            Arc::clone(&session.ended),
            self.redactor.clone(),
        )));
        Ok(session)
    }

    fn new_session_error(&self, error: &NewSessionError) -> String {
        let shown = self.endpoint.shown();
        let detail = self.redactor.clean(&connector::with_causes(error));
        if self.endpoint.url.starts_with("https:") && detail.contains("certificate") {
            return format!(
                "the WebDriver endpoint {shown} was reached, but its TLS certificate is not \
                 trusted ({detail}); an https:// endpoint needs a certificate from a public \
                 authority (the runner checks Mozilla's roots), else reach it by http:// or \
                 through a tunnel"
            );
        }
        match error {
            NewSessionError::Failed(_) | NewSessionError::FailedC(_) | NewSessionError::Lost(_) => {
                format!(
                    "no WebDriver endpoint answered at {shown} ({detail}); start the driver \
                     (chromedriver --port=PORT, geckodriver --port PORT) or the grid, or pass \
                     the URL it listens on"
                )
            }
            NewSessionError::SessionNotCreated(_) => format!(
                "the WebDriver endpoint {shown} refused the session: {detail}; check \
                 --capabilities (browserName, the vendor options) against what the endpoint \
                 offers"
            ),
            _ => format!("the WebDriver endpoint {shown} created no session: {detail}"),
        }
    }
}

/// The capabilities a session asks for: the target's, a WebDriver BiDi connection for the
/// page's console lines (`webSocketUrl`), and where the page is served with the runner's
/// self-signed certificate, `acceptInsecureCerts` (each unless they say otherwise).
fn session_capabilities(
    capabilities: &Map<String, Value>,
    self_signed: bool,
) -> Map<String, Value> {
    let mut capabilities = capabilities.clone();
    capabilities
        .entry(WEB_SOCKET_URL)
        .or_insert(Value::Bool(true));
    if self_signed {
        capabilities
            .entry("acceptInsecureCerts")
            .or_insert(Value::Bool(true));
    }
    capabilities
}

/// Asks the endpoint for the session's windows until it says the session or its browser is
/// gone; writes why into `ended`.
async fn watch_session(client: Client, ended: Arc<Mutex<Option<String>>>, redactor: Redactor) {
    loop {
        tokio::time::sleep(LIVENESS_POLL).await;
        let gone = match client.windows().await {
            Ok(windows) if windows.is_empty() => Some("the session has no window left".to_owned()),
            Ok(_) => None,
            Err(e) if ends_the_session(&e) => Some(redactor.clean(&e.to_string())),
            // A slow answer or a passing error: ask again.
            Err(_) => None,
        };
        if let Some(why) = gone {
            *ended.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
            return;
        }
    }
}

/// Errors that say the session, its window or its browser is gone, or the driver with them.
fn ends_the_session(error: &CmdError) -> bool {
    match error {
        CmdError::Lost(_) | CmdError::Failed(_) | CmdError::FailedC(_) => true,
        CmdError::Standard(e) => {
            error.is_invalid_session_id()
                || error.is_no_such_window()
                || (error.is_unknown_error()
                    && ["crash", "disconnected", "not reachable", "closed"]
                        .iter()
                        .any(|word| e.message.contains(word)))
        }
        _ => false,
    }
}

/// An open WebDriver session; [`RunningBrowser::stop`] deletes it, and so does dropping it.
struct Session {
    client: Option<Client>,
    id: String,
    shown: String,
    redactor: Redactor,
    /// Why the session ended by itself, once the liveness poll saw it.
    ended: Arc<Mutex<Option<String>>>,
    poll: Option<tokio::task::JoinHandle<()>>,
    watchdog: Option<SessionWatchdog>,
    reported: Option<Value>,
    /// The page's console lines, read before the session is deleted.
    console: Console,
    handle: tokio::runtime::Handle,
}

impl RunningBrowser for Session {
    fn processes(&self) -> Option<Processes> {
        None
    }

    fn exit_status(&mut self) -> Option<String> {
        self.ended.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn stop(&mut self) -> StopReport {
        if let Some(poll) = self.poll.take() {
            poll.abort();
        }
        let Some(client) = self.client.take() else {
            return StopReport {
                killed: 0,
                left: Vec::new(),
            };
        };
        // On a thread of its own, so that it blocks whatever called it (a blocking task, or a
        // drop in async code) and never the runtime it waits on.
        let handle = self.handle.clone();
        let console = &self.console;
        let deleted = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    handle.block_on(async {
                        // The last lines come through the session, which the delete ends.
                        console.flush().await;
                        tokio::time::timeout(DELETE_LIMIT, client.close()).await
                    })
                })
                .join()
        });
        self.console.close();
        let left = match deleted {
            Ok(Ok(Ok(()))) => None,
            // A session the endpoint no longer knows is deleted already.
            Ok(Ok(Err(e))) if e.is_invalid_session_id() => None,
            Ok(Ok(Err(e))) => Some(self.redactor.clean(&e.to_string())),
            Ok(Err(_)) => Some(format!("no answer within {} s", DELETE_LIMIT.as_secs())),
            Err(_) => Some("the delete panicked".to_owned()),
        };
        if let Some(watchdog) = self.watchdog.take() {
            // A session that could not be deleted is left to the watchdog's own try.
            if left.is_none() {
                watchdog.dismiss();
            }
        }
        StopReport {
            killed: 0,
            left: left
                .map(|why| {
                    format!(
                        "WebDriver session {} at {}: not deleted ({why})",
                        self.id, self.shown
                    )
                })
                .into_iter()
                .collect(),
        }
    }

    /// The page's console lines (through WebDriver BiDi), or one line saying why there are
    /// none.
    fn log_tail(&self, lines: usize) -> String {
        self.console.tail(lines)
    }

    fn console_lines(&self) -> Option<usize> {
        self.console.seen()
    }

    fn reported_capabilities(&self) -> Option<Value> {
        self.reported.clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.client.is_some() {
            self.stop();
        }
    }
}

impl BrowserTarget for WebDriverTarget {
    fn identity(&self) -> String {
        format!("webdriver:{}", self.endpoint.shown())
    }

    fn browser(&self) -> &BrowserInfo {
        &self.info
    }

    /// The runner's machine is not the browser's; the endpoint is all that is known here.
    fn machine(&self) -> Value {
        json!({ "webdriver": self.endpoint.shown(), "browserMachine": "unknown to the runner" })
    }

    /// The browser's machine is not this one: its driver is unknown here (the page's user
    /// agent and adapter still tell its floors apart).
    fn gpu_driver(&self) -> Option<String> {
        None
    }

    fn sampler(&self, _interval: Duration, _tag: &BrowserTag) -> Option<Sampler> {
        None
    }

    /// Loopback unless `--host` says otherwise: the page needs a secure context, which
    /// `http://127.0.0.1` is and `http://HOST:PORT` is not; a browser on another machine
    /// opens `--public-url https://HOST:PORT` with `--tls` (`crate::reach`).
    fn listen_address(&self) -> IpAddr {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    }

    fn gpu_route(&self, request: GpuRouteRequest) -> GpuRoute {
        GpuRoute {
            asked: request,
            route: Route::Software,
            reason: "a WebDriver browser reaches WebGPU as its capabilities say; the runner \
                     cannot look for a GPU on its machine"
                .to_owned(),
            flags: Vec::new(),
            env: Vec::new(),
            adapter: None,
            fallback_accepted: false,
        }
    }

    fn start(
        &self,
        url: &str,
        _route: &GpuRoute,
        self_signed: bool,
        _tag: &BrowserTag,
    ) -> Result<Box<dyn RunningBrowser>> {
        let handle = tokio::runtime::Handle::current();
        let session = tokio::task::block_in_place(|| handle.block_on(self.open(url, self_signed)))?;
        Ok(Box::new(session))
    }

    fn no_process_memory(&self) -> Option<&'static str> {
        Some(NO_PROCESS_MEMORY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::chromium_switches;

    #[test]
    fn the_endpoint_is_shown_without_its_credentials() {
        let endpoint =
            Endpoint::parse("http://alice:s3cr%40t@grid.example:4444/wd/hub?key=tok123").unwrap();
        assert_eq!(endpoint.shown(), "http://grid.example:4444/wd/hub");
        let redactor = Redactor::new(&endpoint, &Map::new());
        let cleaned = redactor.clean("failed for alice with s3cr@t and s3cr%40t and tok123");
        assert!(
            !cleaned.contains("alice") && !cleaned.contains("s3cr") && !cleaned.contains("tok123"),
            "{cleaned}"
        );
        assert!(!endpoint.loopback);
        assert!(Endpoint::parse("http://127.0.0.1:9515").unwrap().loopback);
    }

    #[test]
    fn bad_endpoints_are_refused_saying_what_is_allowed_and_https_is_taken() {
        let https = Endpoint::parse("https://bob:pw123@hub.example/wd/hub").unwrap();
        assert_eq!(https.shown(), "https://hub.example/wd/hub");
        let other = Endpoint::parse("ftp://hub.example").unwrap_err();
        assert!(other.contains("\"ftp\""), "{other}");
        let nonsense = Endpoint::parse("not a url").unwrap_err();
        assert!(nonsense.contains("http://127.0.0.1:4444"), "{nonsense}");
    }

    #[test]
    fn capability_values_under_secret_keys_are_redacted() {
        let capabilities = read_capabilities(
            r#"{"browserName":"chrome","bstack:options":{"userName":"carol","accessKey":"AK-987"}}"#,
        )
        .unwrap();
        let endpoint = Endpoint::parse("http://hub.example:4444").unwrap();
        let redactor = Redactor::new(&endpoint, &capabilities);
        assert_eq!(redactor.clean("carol AK-987 chrome"), "*** *** chrome");
    }

    #[test]
    fn capabilities_are_read_inline_wrapped_or_from_a_file_and_errors_hide_the_text() {
        let wrapped =
            read_capabilities(r#"{"capabilities":{"alwaysMatch":{"browserName":"firefox"}}}"#)
                .unwrap();
        assert_eq!(wrapped["browserName"], "firefox");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("caps.json");
        std::fs::write(&file, r#"{"browserName":"chrome"}"#).unwrap();
        assert_eq!(
            read_capabilities(file.to_str().unwrap()).unwrap()["browserName"],
            "chrome"
        );
        let bad = read_capabilities(r#"{"accessKey": "AK-555""#).unwrap_err();
        assert!(
            bad.contains("not valid JSON") && !bad.contains("AK-555"),
            "{bad}"
        );
        let array = read_capabilities("[1]");
        assert!(array.unwrap_err().contains("not a readable file"));
        let missing = read_capabilities("/no/such/caps.json").unwrap_err();
        assert!(missing.contains("/no/such/caps.json"), "{missing}");
    }

    #[test]
    fn default_capabilities_carry_the_local_launchs_switches_and_prefs() {
        let endpoint = Endpoint::parse("http://grid.example:4444").unwrap();
        let chromium =
            default_capabilities(BrowserKind::Chromium, &endpoint, &ExtraOptions::default());
        let args = chromium["goog:chromeOptions"]["args"].as_array().unwrap();
        for switch in chromium_switches(Route::Software) {
            assert!(args.contains(&json!(switch)), "{switch} missing");
        }
        let firefox =
            default_capabilities(BrowserKind::Firefox, &endpoint, &ExtraOptions::default());
        assert_eq!(
            firefox["moz:firefoxOptions"]["prefs"]["dom.webgpu.enabled"],
            true
        );
        assert_eq!(firefox["moz:firefoxOptions"]["args"], json!(["-headless"]));
    }

    #[test]
    fn the_users_switches_and_prefs_follow_the_harnesss_and_are_refused_with_own_capabilities() {
        let endpoint = Endpoint::parse("http://grid.example:4444").unwrap();
        let extra = ExtraOptions {
            chromium_switches: vec!["--enable-dawn-features=skip_validation".to_owned()],
            firefox_prefs: vec!["general.useragent.override=\"probe\"".parse().unwrap()],
        };
        let chromium =
            WebDriverTarget::new(endpoint.clone(), None, BrowserKind::Chromium, &extra).unwrap();
        let args = chromium.capabilities["goog:chromeOptions"]["args"]
            .as_array()
            .unwrap();
        assert_eq!(
            args.last().unwrap(),
            "--enable-dawn-features=skip_validation"
        );
        assert!(args.contains(&json!("--headless")));
        // Each browser takes and names its own part only.
        assert_eq!(chromium.browser().extra, extra.of(BrowserKind::Chromium));
        assert!(chromium.browser().extra.firefox_prefs.is_empty());
        let firefox =
            WebDriverTarget::new(endpoint.clone(), None, BrowserKind::Firefox, &extra).unwrap();
        let prefs = &firefox.capabilities["moz:firefoxOptions"]["prefs"];
        assert_eq!(prefs["general.useragent.override"], "probe");
        assert_eq!(prefs["dom.webgpu.enabled"], true);
        assert_eq!(firefox.browser().extra.firefox_prefs, extra.firefox_prefs);
        let own = read_capabilities(r#"{"browserName":"chrome"}"#).unwrap();
        let err = WebDriverTarget::new(endpoint, Some(own), BrowserKind::Chromium, &extra)
            .err()
            .unwrap();
        assert!(
            err.contains("--capabilities") && err.contains("goog:chromeOptions.args"),
            "{err}"
        );
    }

    #[test]
    fn a_self_signed_page_asks_the_session_to_accept_insecure_certificates() {
        let endpoint = Endpoint::parse("http://127.0.0.1:4444").unwrap();
        let defaults =
            default_capabilities(BrowserKind::Firefox, &endpoint, &ExtraOptions::default());
        assert_eq!(
            session_capabilities(&defaults, true)["acceptInsecureCerts"],
            true
        );
        assert!(!session_capabilities(&defaults, false).contains_key("acceptInsecureCerts"));
        // BiDi for the console lines, unless the user's capabilities say otherwise.
        assert_eq!(session_capabilities(&defaults, false)["webSocketUrl"], true);
        // The user's own word stands.
        let own =
            read_capabilities(r#"{"acceptInsecureCerts":false,"webSocketUrl":false}"#).unwrap();
        assert_eq!(
            session_capabilities(&own, true)["acceptInsecureCerts"],
            false
        );
        assert_eq!(session_capabilities(&own, true)["webSocketUrl"], false);
    }

    #[test]
    fn the_browser_is_the_capabilities_and_unknown_ones_are_named() {
        let endpoint = Endpoint::parse("http://127.0.0.1:4444").unwrap();
        let caps = read_capabilities(r#"{"browserName":"firefox"}"#).unwrap();
        let target = WebDriverTarget::new(
            endpoint.clone(),
            Some(caps),
            BrowserKind::Chromium,
            &ExtraOptions::default(),
        )
        .unwrap();
        assert_eq!(target.browser().name, BrowserKind::Firefox);
        assert_eq!(target.identity(), "webdriver:http://127.0.0.1:4444");
        assert_eq!(target.capabilities["pageLoadStrategy"], "none");
        let safari = read_capabilities(r#"{"browserName":"safari"}"#).unwrap();
        let err = WebDriverTarget::new(
            endpoint,
            Some(safari),
            BrowserKind::Chromium,
            &ExtraOptions::default(),
        )
        .err()
        .unwrap();
        assert!(
            err.contains("\"safari\"") && err.contains("chrome, chromium, firefox"),
            "{err}"
        );
    }

    #[test]
    fn only_the_identifying_capabilities_are_kept() {
        let echo = read_capabilities(
            r#"{"browserName":"chrome","browserVersion":"156","platformName":"linux","goog:chromeOptions":{"debuggerAddress":"x"},"bstack:options":{"accessKey":"AK"}}"#,
        )
        .unwrap();
        assert_eq!(
            reported_capabilities(Some(&echo)).unwrap(),
            json!({ "browserName": "chrome", "browserVersion": "156", "platformName": "linux" })
        );
    }
}
