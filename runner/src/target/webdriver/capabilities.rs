//! The capabilities a WebDriver session is asked for (the user's, or the runner's defaults per
//! browser, the same switches and prefs as a local launch) and the few it reports back that
//! the record keeps.

use serde_json::{json, Map, Value};

use super::Endpoint;
use crate::browser::{chromium_switches, BrowserKind, ExtraOptions, FIREFOX_PREFS};
use crate::gpu_route::Route;

/// The capability fields the record keeps of what the session reported: those that name the
/// browser and the driver, never the whole echo (which can carry a vendor's credentials).
const REPORTED_KEYS: &[&str] = &[
    "browserName",
    "browserVersion",
    "platformName",
    "moz:geckodriverVersion",
];

/// Reads `--capabilities`: a JSON object given inline, or the path of a file holding one.
/// A W3C `{"capabilities": {"alwaysMatch": …}}` or `{"alwaysMatch": …}` is taken too.
pub fn read_capabilities(argument: &str) -> Result<Map<String, Value>, String> {
    let text = if argument.trim_start().starts_with('{') {
        argument.to_owned()
    } else {
        std::fs::read_to_string(argument).map_err(|e| {
            format!(
                "--capabilities {argument:?}: not a JSON object and not a readable file ({e}); \
                 allowed: inline JSON such as '{{\"browserName\":\"chrome\"}}', or a file path"
            )
        })?
    };
    // The text may hold credentials: the parse error gives the place, never the text.
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("--capabilities: not valid JSON ({e})"))?;
    let mut value = value;
    for wrapper in ["capabilities", "alwaysMatch"] {
        if let Some(inner) = value.get(wrapper).filter(|v| v.is_object()) {
            value = inner.clone();
        }
    }
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(
            "--capabilities: the JSON is not an object; allowed: an object of \
                  capabilities such as {\"browserName\":\"firefox\"}"
                .to_owned(),
        ),
    }
}

/// The capabilities asked for when none are given: the browser, headless, with the switches
/// (Chromium) or prefs (Firefox) the local launch uses for WebGPU, and the user's own of
/// `extra` after them. A driver on this machine is given the browser a local run would start.
pub fn default_capabilities(
    kind: BrowserKind,
    endpoint: &Endpoint,
    extra: &ExtraOptions,
) -> Map<String, Value> {
    let local = if endpoint.loopback {
        crate::browser::probe(kind).ok()
    } else {
        None
    };
    let capabilities = match kind {
        BrowserKind::Chromium => {
            let mut args = chromium_switches(Route::Software);
            args.extend(extra.chromium_switches.iter().cloned());
            // As the local launch: Chromium refuses to run as root with its sandbox.
            // SAFETY: geteuid has no preconditions.
            if endpoint.loopback && unsafe { libc::geteuid() } == 0 {
                args.push("--no-sandbox".to_owned());
            }
            let mut options = json!({ "args": args });
            if let Some(info) = local {
                options["binary"] = json!(info.executable);
            }
            json!({ "browserName": "chrome", "goog:chromeOptions": options })
        }
        BrowserKind::Firefox => {
            let prefs: Map<String, Value> = FIREFOX_PREFS
                .iter()
                .map(|(name, value)| {
                    let value = serde_json::from_str(value).expect("the prefs are JSON literals");
                    ((*name).to_owned(), value)
                })
                .chain(
                    extra
                        .firefox_prefs
                        .iter()
                        .map(|p| (p.name.clone(), p.json())),
                )
                .collect();
            let mut options = json!({
                "args": ["-headless"],
                "prefs": prefs,
                "env": { "MOZ_CRASHREPORTER_DISABLE": "1" },
            });
            if let Some(info) = local {
                options["binary"] = json!(info.executable);
            }
            json!({ "browserName": "firefox", "moz:firefoxOptions": options })
        }
    };
    match capabilities {
        Value::Object(map) => map,
        _ => unreachable!("built as an object"),
    }
}

/// The fields of the session's reported capabilities that identify the browser.
pub(super) fn reported_capabilities(capabilities: Option<&Map<String, Value>>) -> Option<Value> {
    let capabilities = capabilities?;
    let kept: Map<String, Value> = REPORTED_KEYS
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), capabilities.get(*key)?.clone())))
        .collect();
    Some(Value::Object(kept))
}
