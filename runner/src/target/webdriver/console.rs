//! The page's console lines through WebDriver BiDi: the session is asked for a
//! `webSocketUrl`; where the endpoint answers with one (geckodriver, chromedriver, Selenium
//! Grid 4), a WebSocket to it subscribes to `log.entryAdded` before the page is opened, and
//! the last [`KEPT`] entries (the page's and its workers' `console.*` calls and uncaught
//! errors) are kept for the run's message on a failure and counted for its closing record.
//!
//! The lines are diagnostics, never part of the measurement: a WebSocket that cannot be
//! opened, a subscription refused or a connection lost leaves the run as it was, and the
//! tail then says why there are no lines. Credentials in the URL (a grid's or a cloud's
//! user and key) go to the endpoint only; every message is cleaned by the [`Redactor`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

use super::{Endpoint, Redactor};

/// The capability that asks the endpoint for a BiDi WebSocket.
pub(super) const WEB_SOCKET_URL: &str = "webSocketUrl";
/// How many console lines are kept: the last ones, which are those nearest a failure.
pub(super) const KEPT: usize = 300;
/// How long opening the WebSocket and subscribing may take before the run goes on without.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
/// How long the lines logged before the run ended may take to arrive, before the session
/// is deleted.
const FLUSH_LIMIT: Duration = Duration::from_secs(3);
/// A console line longer than this is cut (a page can log megabytes in one call).
const LINE_LIMIT: usize = 2000;

/// The page's console as the session's BiDi connection reports it.
pub(super) struct Console {
    lines: Arc<Mutex<Lines>>,
    /// Commands for the connection's task; dropping it closes the WebSocket.
    commands: Option<mpsc::UnboundedSender<Command>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Cleans what the tail shows (a lost connection's error could name its URL).
    redactor: Redactor,
}

#[derive(Default)]
struct Lines {
    kept: VecDeque<String>,
    /// Every entry seen, kept or not.
    seen: usize,
    /// Why there are no lines: no BiDi, or a connection that failed to open.
    missing: Option<String>,
    /// Why the lines stopped coming before the run's end: a connection lost on the way.
    lost: Option<String>,
    /// The run has ended and its session is being deleted, which ends the connection too.
    ending: bool,
}

/// A BiDi command and where its answer goes.
struct Command {
    method: &'static str,
    params: Value,
    answer: oneshot::Sender<Result<Value, String>>,
}

impl Console {
    /// A console without lines, and why.
    pub(super) fn without(why: String) -> Console {
        Console {
            lines: Arc::new(Mutex::new(Lines {
                missing: Some(why),
                ..Lines::default()
            })),
            commands: None,
            task: None,
            redactor: Redactor::default(),
        }
    }

    /// The console of the session whose new-session answer was `reported` (its whole
    /// capabilities), `asked`: whether the session asked for BiDi at all.
    pub(super) async fn open(
        reported: Option<&Map<String, Value>>,
        asked: bool,
        endpoint: &Endpoint,
        redactor: &Redactor,
    ) -> Console {
        if !asked {
            return Console::without(format!(
                "--capabilities sets {WEB_SOCKET_URL} to false, so the session has no WebDriver \
                 BiDi to report them"
            ));
        }
        let Some(url) = reported
            .and_then(|caps| caps.get(WEB_SOCKET_URL))
            .and_then(Value::as_str)
        else {
            return Console::without(format!(
                "the endpoint {} offered no WebDriver BiDi (no {WEB_SOCKET_URL} in its \
                 answer), the only way the runner reads the page's console",
                endpoint.shown()
            ));
        };
        let redactor = redactor.with_secrets_of(url);
        match tokio::time::timeout(CONNECT_LIMIT, Console::connect(url, endpoint)).await {
            Ok(Ok(mut console)) => {
                console.redactor = redactor;
                console
            }
            Ok(Err(why)) => Console::without(format!(
                "the session's WebDriver BiDi connection failed ({})",
                redactor.clean(&why)
            )),
            Err(_) => Console::without(format!(
                "the session's WebDriver BiDi connection did not open within {} s",
                CONNECT_LIMIT.as_secs()
            )),
        }
    }

    /// Opens the WebSocket and subscribes to the console's entries.
    async fn connect(url: &str, endpoint: &Endpoint) -> Result<Console, String> {
        let (request, credentials) = web_socket_request(url, endpoint)?;
        let mut request = request
            .into_client_request()
            .map_err(|e| format!("{WEB_SOCKET_URL} is not a WebSocket URL: {e}"))?;
        if let Some(credentials) = credentials {
            let value = format!(
                "Basic {}",
                data_encoding::BASE64.encode(credentials.as_bytes())
            );
            let value = HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            request.headers_mut().insert("authorization", value);
        }
        let (socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|e| e.to_string())?;
        let lines = Arc::new(Mutex::new(Lines::default()));
        let (commands, asked) = mpsc::unbounded_channel();
        let task = tokio::spawn(serve_connection(socket, asked, Arc::clone(&lines)));
        let console = Console {
            lines,
            commands: Some(commands),
            task: Some(task),
            redactor: Redactor::default(),
        };
        console
            .command("session.subscribe", json!({ "events": ["log.entryAdded"] }))
            .await
            .map_err(|e| format!("session.subscribe to log.entryAdded: {e}"))?;
        Ok(console)
    }

    /// Sends one BiDi command and waits for its answer.
    async fn command(&self, method: &'static str, params: Value) -> Result<Value, String> {
        let commands = self.commands.as_ref().ok_or("no BiDi connection")?;
        let (answer, answered) = oneshot::channel();
        commands
            .send(Command {
                method,
                params,
                answer,
            })
            .map_err(|_| "the BiDi connection is closed".to_owned())?;
        answered
            .await
            .map_err(|_| "the BiDi connection closed before answering".to_owned())?
    }

    /// Waits (up to [`FLUSH_LIMIT`]) until the entries logged so far have arrived: a script
    /// evaluated in the page answers through the page, after the entries it logged before.
    /// Called before the session is deleted, whose end closes the connection.
    pub(super) async fn flush(&self) {
        if self.commands.is_none() {
            return;
        }
        let round_trip = async {
            let tree = self.command("browsingContext.getTree", json!({})).await?;
            let context = tree["contexts"][0]["context"]
                .as_str()
                .ok_or("no browsing context")?
                .to_owned();
            self.command(
                "script.evaluate",
                json!({
                    "expression": "0",
                    "target": { "context": context },
                    "awaitPromise": false,
                }),
            )
            .await
        };
        // A page that no longer answers (crashed, hung) keeps what arrived so far.
        let _ = tokio::time::timeout(FLUSH_LIMIT, round_trip).await;
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).ending = true;
    }

    /// Closes the connection (the session is deleted, or about to be).
    pub(super) fn close(&mut self) {
        self.commands = None;
    }

    /// How many entries the page logged; `None` where there is no BiDi connection.
    pub(super) fn seen(&self) -> Option<usize> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        (self.task.is_some()).then_some(lines.seen)
    }

    /// The last `count` lines, else one line saying why there are none.
    pub(super) fn tail(&self, count: usize) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut text: Vec<String> = lines
            .kept
            .iter()
            .skip(lines.kept.len().saturating_sub(count))
            .cloned()
            .collect();
        if self.task.is_some() && lines.seen == 0 {
            text.push("(the page logged nothing to its console)".to_owned());
        }
        if let Some(why) = &lines.missing {
            text.push(format!("(no console lines: {why})"));
        }
        if let Some(why) = &lines.lost {
            text.push(format!("(no later console lines: {why})"));
        }
        self.redactor.clean(&text.join("\n"))
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The request for `url` without its user and password, which become an `Authorization`
/// header instead; a URL without them on the endpoint's host and port takes the endpoint's
/// (a grid behind basic authentication asks for them on the WebSocket too).
fn web_socket_request(url: &str, endpoint: &Endpoint) -> Result<(String, Option<String>), String> {
    let mut parsed =
        url::Url::parse(url).map_err(|e| format!("{WEB_SOCKET_URL} is not a URL ({e})"))?;
    let user_of = |url: &url::Url| {
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        };
        (!url.username().is_empty()).then(|| {
            format!(
                "{}:{}",
                decode(url.username()),
                decode(url.password().unwrap_or_default())
            )
        })
    };
    let credentials = user_of(&parsed).or_else(|| {
        let endpoint = url::Url::parse(&endpoint.url).ok()?;
        // ws:// and http:// share their default port, as wss:// and https:// do.
        let same_place = endpoint.host_str() == parsed.host_str()
            && endpoint.port_or_known_default() == parsed.port_or_known_default();
        same_place.then(|| user_of(&endpoint)).flatten()
    });
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    Ok((parsed.into(), credentials))
}

/// Carries commands to the WebSocket and answers and console entries back, until the
/// connection or the [`Console`] ends.
async fn serve_connection<S>(
    mut socket: tokio_tungstenite::WebSocketStream<S>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    lines: Arc<Mutex<Lines>>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut waiting: HashMap<u64, oneshot::Sender<Result<Value, String>>> = HashMap::new();
    let mut next_id = 1u64;
    let ended = loop {
        tokio::select! {
            message = socket.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    let Ok(message) = serde_json::from_str::<Value>(&text) else {
                        continue;
                    };
                    if let Some(id) = message["id"].as_u64() {
                        if let Some(answer) = waiting.remove(&id) {
                            let _ = answer.send(answer_of(message));
                        }
                    } else if message["method"] == "log.entryAdded" {
                        let line = console_line(&message["params"]);
                        let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
                        lines.seen += 1;
                        if lines.kept.len() == KEPT {
                            lines.kept.pop_front();
                        }
                        lines.kept.push_back(line);
                    }
                }
                Some(Ok(Message::Close(_))) | None => break None,
                Some(Ok(_)) => {}
                Some(Err(e)) => break Some(format!("the BiDi connection failed: {e}")),
            },
            command = commands.recv() => match command {
                Some(Command { method, params, answer }) => {
                    let id = next_id;
                    next_id += 1;
                    let text = json!({ "id": id, "method": method, "params": params }).to_string();
                    match socket.send(Message::text(text)).await {
                        Ok(()) => {
                            waiting.insert(id, answer);
                        }
                        Err(e) => {
                            let _ = answer.send(Err(e.to_string()));
                        }
                    }
                }
                None => {
                    let _ = socket.close(None).await;
                    break None;
                }
            },
        }
    };
    let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
    if !lines.ending {
        lines.lost = Some(ended.unwrap_or_else(|| "the BiDi connection was closed".to_owned()));
    }
}

/// A BiDi answer: its `result`, or its error in words.
fn answer_of(message: Value) -> Result<Value, String> {
    if message["type"] == "error" || message.get("error").is_some() {
        return Err(format!(
            "{}: {}",
            message["error"].as_str().unwrap_or("error"),
            message["message"].as_str().unwrap_or_default()
        ));
    }
    Ok(message["result"].clone())
}

/// One `log.entryAdded` entry as a console line: the time of day (UTC), the level, the
/// text, and where it was logged (`url:line`), as a browser's console shows it.
fn console_line(entry: &Value) -> String {
    let time = entry["timestamp"].as_f64().map_or_else(String::new, |ms| {
        let ms = ms as u64 % 86_400_000;
        format!(
            "{:02}:{:02}:{:02}.{:03} ",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
    });
    let level = entry["level"].as_str().unwrap_or("info");
    let uncaught = if entry["type"] == "javascript" {
        "uncaught "
    } else {
        ""
    };
    let mut text = match entry["text"].as_str() {
        Some(text) => text.to_owned(),
        // Some drivers leave the text out where the arguments are not all strings.
        None => entry["args"]
            .as_array()
            .map(|args| {
                args.iter()
                    .map(|arg| match &arg["value"] {
                        Value::String(s) => s.clone(),
                        Value::Null => arg["type"].as_str().unwrap_or_default().to_owned(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default(),
    };
    if text.len() > LINE_LIMIT {
        let cut = (0..=LINE_LIMIT)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str(" …");
    }
    let frame = &entry["stackTrace"]["callFrames"][0];
    let place = match (frame["url"].as_str(), frame["lineNumber"].as_u64()) {
        // BiDi counts lines from 0; a console counts them from 1.
        (Some(url), Some(line)) if !url.is_empty() => format!(" ({url}:{})", line + 1),
        _ => String::new(),
    };
    format!("{time}{level:<5} {uncaught}{text}{place}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_as_a_console_line() {
        let entry = json!({
            "type": "console", "method": "warn", "level": "warn", "text": "slow adapter",
            "timestamp": 1_796_122_366_667u64,
            "stackTrace": { "callFrames": [
                { "url": "https://127.0.0.1:4000/www/main.js", "lineNumber": 41, "columnNumber": 2 }
            ] },
        });
        assert_eq!(
            console_line(&entry),
            "10:52:46.667 warn  slow adapter (https://127.0.0.1:4000/www/main.js:42)"
        );
        let thrown = json!({ "type": "javascript", "level": "error", "text": "Error: boom" });
        assert_eq!(console_line(&thrown), "error uncaught Error: boom");
        let no_text = json!({ "level": "info", "args": [
            { "type": "string", "value": "cases" }, { "type": "number", "value": 2 },
            { "type": "undefined" }
        ] });
        assert_eq!(console_line(&no_text), "info  cases 2 undefined");
        let long = json!({ "level": "info", "text": "é".repeat(LINE_LIMIT) });
        assert!(console_line(&long).ends_with(" …"));
    }

    #[test]
    fn errors_in_answers_are_told_apart_from_results() {
        let error =
            json!({ "type": "error", "id": 1, "error": "unknown command", "message": "nope" });
        assert_eq!(answer_of(error).unwrap_err(), "unknown command: nope");
        let success = json!({ "type": "success", "id": 2, "result": { "subscription": "s" } });
        assert_eq!(answer_of(success).unwrap()["subscription"], "s");
    }

    #[test]
    fn credentials_go_into_a_header_never_the_request_url() {
        let endpoint = Endpoint::parse("http://alice:pw%40991@grid.example:4444/wd/hub").unwrap();
        let (url, credentials) =
            web_socket_request("ws://grid.example:4444/session/7/se/bidi", &endpoint).unwrap();
        assert_eq!(url, "ws://grid.example:4444/session/7/se/bidi");
        assert_eq!(credentials.as_deref(), Some("alice:pw@991"));
        // The URL's own credentials first, taken out of it.
        let (url, credentials) =
            web_socket_request("wss://bob:tok-3@cloud.example/bidi", &endpoint).unwrap();
        assert_eq!(url, "wss://cloud.example/bidi");
        assert_eq!(credentials.as_deref(), Some("bob:tok-3"));
        // Another host is never sent the endpoint's.
        let (_, credentials) =
            web_socket_request("ws://127.0.0.1:9222/session/7", &endpoint).unwrap();
        assert_eq!(credentials, None);
    }

    #[tokio::test]
    async fn without_bidi_the_tail_says_why_and_nothing_is_counted() {
        let endpoint = Endpoint::parse("http://127.0.0.1:4444").unwrap();
        let redactor = Redactor::default();
        let none = Console::open(Some(&Map::new()), true, &endpoint, &redactor).await;
        assert_eq!(none.seen(), None);
        assert!(
            none.tail(10).contains("offered no WebDriver BiDi"),
            "{}",
            none.tail(10)
        );
        let off = Console::open(None, false, &endpoint, &redactor).await;
        assert!(
            off.tail(10).contains("webSocketUrl to false"),
            "{}",
            off.tail(10)
        );
        // Nothing listens there: the run goes on, and the reason names no credential.
        let caps: Map<String, Value> = serde_json::from_value(json!({
            "webSocketUrl": "ws://carol:sec-4471@127.0.0.1:9/session/1"
        }))
        .unwrap();
        let failed = Console::open(Some(&caps), true, &endpoint, &redactor).await;
        let tail = failed.tail(10);
        assert!(tail.contains("connection failed"), "{tail}");
        assert!(
            !tail.contains("sec-4471") && !tail.contains("carol"),
            "{tail}"
        );
    }
}
