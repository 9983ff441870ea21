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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chromium_switch_is_taken_as_given_unless_malformed_or_the_harnesss_own() {
        let validation = "--enable-dawn-features=skip_validation";
        assert_eq!(parse_chromium_switch(validation).unwrap(), validation);
        assert_eq!(
            parse_chromium_switch("--js-flags=--expose-gc --trace").unwrap(),
            "--js-flags=--expose-gc --trace"
        );
        for malformed in ["enable-dawn-features=x", "-v", "--", "--=x", "--a b"] {
            let err = parse_chromium_switch(malformed).unwrap_err();
            assert!(
                err.contains("starts with --") && err.contains(validation),
                "{malformed}: {err}"
            );
        }
        for (switch, place) in [
            ("--headless", "one of its fixed switches"),
            ("--headless=new", "one of its fixed switches"),
            ("--enable-features=Foo", "on the GPU route"),
            ("--use-angle=swiftshader", "on the GPU route"),
            ("--user-data-dir=/tmp/p", "at the launch"),
            ("--ignore-certificate-errors", "at the launch"),
        ] {
            let err = parse_chromium_switch(switch).unwrap_err();
            let name = switch_name(switch);
            assert!(
                err.contains(&format!("the harness sets {name} itself ({place}")),
                "{switch}: {err}"
            );
        }
    }

    #[test]
    fn a_firefox_pref_is_a_name_and_a_literal_user_js_takes_and_not_the_harnesss_own() {
        for (given, value) in [
            ("general.useragent.override=\"probe\"", "\"probe\""),
            ("webgl.max-size=4096", "4096"),
            ("dom.webgpu.testing=true", "true"),
        ] {
            let pref = parse_firefox_pref(given).unwrap();
            assert_eq!(pref.value, value);
            assert_eq!(pref.to_string(), given);
        }
        let no_equals = parse_firefox_pref("dom.webgpu.testing").unwrap_err();
        assert!(no_equals.contains("has no `=`"), "{no_equals}");
        for value in ["yes", "1.5", "[1]", "null", "'single'", ""] {
            let err = parse_firefox_pref(&format!("a.b={value}")).unwrap_err();
            assert!(
                err.contains("is not a literal Firefox takes")
                    && err.contains("true, false, an integer or a string in double quotes"),
                "{value}: {err}"
            );
        }
        let quoted = parse_firefox_pref("a\"b=1").unwrap_err();
        assert!(quoted.contains("is not a pref's name"), "{quoted}");
        for own in [
            "dom.webgpu.enabled=false",
            "memory_info_dumper.watch_fifo.enabled=false",
        ] {
            let err = parse_firefox_pref(own).unwrap_err();
            assert!(err.contains("the harness sets"), "{own}: {err}");
        }
    }

    #[test]
    fn an_option_for_a_browser_not_started_is_refused_saying_which_applies_to_which() {
        let extra = ExtraOptions {
            chromium_switches: vec!["--enable-dawn-features=skip_validation".to_owned()],
            firefox_prefs: Vec::new(),
        };
        let err = extra.check_applies(&[BrowserKind::Firefox]).unwrap_err();
        assert!(
            err.contains("no Chromium is started here (only firefox)")
                && err.contains("--chromium-switch SWITCH applies to Chromium")
                && err.contains("--firefox-pref NAME=VALUE to Firefox"),
            "{err}"
        );
        assert!(extra
            .check_applies(&[BrowserKind::Firefox, BrowserKind::Chromium])
            .is_ok());
        let prefs = ExtraOptions {
            chromium_switches: Vec::new(),
            firefox_prefs: vec![parse_firefox_pref("a.b=1").unwrap()],
        };
        let err = prefs.check_applies(&[BrowserKind::Chromium]).unwrap_err();
        assert!(err.contains("no Firefox is started here"), "{err}");
        // Each browser takes its own part only.
        let both = ExtraOptions {
            chromium_switches: extra.chromium_switches.clone(),
            firefox_prefs: prefs.firefox_prefs.clone(),
        };
        assert_eq!(both.of(BrowserKind::Chromium), extra);
        assert_eq!(both.of(BrowserKind::Firefox), prefs);
    }

    #[test]
    fn the_browser_record_names_them_and_leaves_them_out_when_there_are_none() {
        let mut info = crate::browser::BrowserInfo {
            name: BrowserKind::Firefox,
            executable: "/usr/bin/firefox".into(),
            version: "Mozilla Firefox 140.5.0esr".to_owned(),
            extra: ExtraOptions::default(),
        };
        let plain = serde_json::to_value(&info).unwrap();
        assert!(plain.get("extra").is_none(), "{plain}");
        // Older files, without the field, read as started plainly.
        let read: crate::browser::BrowserInfo = serde_json::from_value(plain).unwrap();
        assert!(read.extra.is_empty());
        info.extra.firefox_prefs =
            vec![parse_firefox_pref("general.useragent.override=\"x\"").unwrap()];
        let written = serde_json::to_value(&info).unwrap();
        assert_eq!(
            written["extra"],
            serde_json::json!({ "firefoxPrefs": ["general.useragent.override=\"x\""] })
        );
        let read: crate::browser::BrowserInfo = serde_json::from_value(written).unwrap();
        assert_eq!(read, info);
    }
}
