//! Which browsers the runner knows: their names, and where each one's executable is looked for
//! (a variable, or the usual names on PATH; `probe.rs` looks).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrowserKind {
    Chromium,
    Firefox,
}

impl BrowserKind {
    pub fn name(self) -> &'static str {
        match self {
            BrowserKind::Chromium => "chromium",
            BrowserKind::Firefox => "firefox",
        }
    }

    /// Executables tried in order; `OCR_BENCH_CHROMIUM` / `OCR_BENCH_FIREFOX` name another.
    pub(super) fn candidates(self) -> (&'static str, &'static [&'static str]) {
        match self {
            BrowserKind::Chromium => (
                "OCR_BENCH_CHROMIUM",
                &["chromium", "chromium-browser", "google-chrome"],
            ),
            BrowserKind::Firefox => ("OCR_BENCH_FIREFOX", &["firefox-esr", "firefox"]),
        }
    }
}

impl fmt::Display for BrowserKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BrowserKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "chromium" | "chrome" => Ok(BrowserKind::Chromium),
            "firefox" => Ok(BrowserKind::Firefox),
            other => Err(format!(
                "unknown browser {other:?}; allowed: chromium, firefox"
            )),
        }
    }
}
