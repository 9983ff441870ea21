//! What a user adds to a browser's start for a diagnosis: Chromium switches
//! (`--chromium-switch`) and Firefox prefs (`--firefox-pref`), checked before any browser
//! starts and recorded with the browser on every record of the run, so that a figure measured
//! with, say, Dawn's validation off is never read as a plain one.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::kind::BrowserKind;
use super::options::{pref_set_by_the_harness, set_by_the_harness, switch_name};

/// The switches and prefs a run adds to the harness's own; each browser takes only its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraOptions {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chromium_switches: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub firefox_prefs: Vec<FirefoxPref>,
}

impl ExtraOptions {
    pub fn is_empty(&self) -> bool {
        self.chromium_switches.is_empty() && self.firefox_prefs.is_empty()
    }

    /// The part `kind` is started with.
    pub fn of(&self, kind: BrowserKind) -> ExtraOptions {
        match kind {
            BrowserKind::Chromium => ExtraOptions {
                chromium_switches: self.chromium_switches.clone(),
                firefox_prefs: Vec::new(),
            },
            BrowserKind::Firefox => ExtraOptions {
                chromium_switches: Vec::new(),
                firefox_prefs: self.firefox_prefs.clone(),
            },
        }
    }

    /// Refuses an option that no browser of `started` takes, saying which applies to which.
    pub fn check_applies(&self, started: &[BrowserKind]) -> Result<(), String> {
        const WHICH: &str = "--chromium-switch SWITCH applies to Chromium (its command line), \
             --firefox-pref NAME=VALUE to Firefox (its profile's prefs)";
        let starts = |kind| started.contains(&kind);
        let browsers = started
            .iter()
            .map(|kind| kind.name())
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(switch) = self.chromium_switches.first() {
            if !starts(BrowserKind::Chromium) {
                return Err(format!(
                    "--chromium-switch {switch}: no Chromium is started here (only {browsers}); {WHICH}"
                ));
            }
        }
        if let Some(pref) = self.firefox_prefs.first() {
            if !starts(BrowserKind::Firefox) {
                return Err(format!(
                    "--firefox-pref {pref}: no Firefox is started here (only {browsers}); {WHICH}"
                ));
            }
        }
        Ok(())
    }

    /// In words for a table or a line: the switches and prefs, space-separated.
    pub fn describe(&self) -> String {
        self.chromium_switches
            .iter()
            .cloned()
            .chain(self.firefox_prefs.iter().map(FirefoxPref::to_string))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Reads one `--chromium-switch`: a switch as Chromium takes it (`--name` or `--name=value`),
/// none that the harness sets itself.
pub fn parse_chromium_switch(text: &str) -> Result<String, String> {
    const ALLOWED: &str = "allowed: --NAME or --NAME=VALUE, one the harness does not set, \
         such as --chromium-switch=--enable-dawn-features=skip_validation";
    let name = switch_name(text);
    let well_formed = name.len() > 2
        && name.starts_with("--")
        && name[2..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !well_formed {
        return Err(format!(
            "--chromium-switch {text:?} is not a Chromium switch: it starts with -- and a name \
             of letters, digits, - and _; {ALLOWED}"
        ));
    }
    if let Some(place) = set_by_the_harness(text) {
        return Err(format!(
            "--chromium-switch {text:?}: the harness sets {name} itself ({place}), and a second \
             one would override it or be overridden; {ALLOWED}"
        ));
    }
    Ok(text.to_owned())
}

/// Reads one `--firefox-pref NAME=VALUE` ([`FirefoxPref`]), none that the harness sets itself.
pub fn parse_firefox_pref(text: &str) -> Result<FirefoxPref, String> {
    let pref: FirefoxPref = text.parse()?;
    if pref_set_by_the_harness(&pref.name) {
        return Err(format!(
            "--firefox-pref {text:?}: the harness sets {} itself, and a second value would \
             override its own; allowed: a pref the harness does not set",
            pref.name
        ));
    }
    Ok(pref)
}

/// One Firefox pref, `NAME=VALUE`: the value a JSON literal as Firefox's `user.js` takes it
/// (true or false, an integer, a string in double quotes), kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FirefoxPref {
    pub name: String,
    /// The literal as given (`true`, `42`, `"text"`), written to `user.js` as it is.
    pub value: String,
}

impl FirefoxPref {
    /// The value as JSON (a WebDriver session takes prefs as JSON values).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.value).expect("checked to be a JSON literal when read")
    }
}

impl FromStr for FirefoxPref {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const ALLOWED: &str = "allowed: NAME=VALUE with VALUE true, false, an integer or a \
             string in double quotes, such as --firefox-pref 'general.useragent.override=\"x\"'";
        let Some((name, value)) = text.split_once('=') else {
            return Err(format!(
                "--firefox-pref {text:?} has no `=` between the pref's name and its value; {ALLOWED}"
            ));
        };
        // The name is written between double quotes in user.js.
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\');
        if !name_ok {
            return Err(format!(
                "--firefox-pref {text:?}: {name:?} is not a pref's name (printable ASCII without \
                 spaces, quotes or backslashes); {ALLOWED}"
            ));
        }
        let literal = match serde_json::from_str::<Value>(value) {
            Ok(Value::Bool(_) | Value::String(_)) => true,
            Ok(Value::Number(number)) => number.is_i64(),
            _ => false,
        };
        if !literal {
            return Err(format!(
                "--firefox-pref {text:?}: the value {value:?} is not a literal Firefox takes; {ALLOWED}"
            ));
        }
        Ok(FirefoxPref {
            name: name.to_owned(),
            value: value.to_owned(),
        })
    }
}

impl fmt::Display for FirefoxPref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

impl TryFrom<String> for FirefoxPref {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<FirefoxPref> for String {
    fn from(pref: FirefoxPref) -> String {
        pref.to_string()
    }
}
