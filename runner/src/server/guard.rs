//! Under `run`, only the page the runner opened may report: the browser opens a one-time
//! launch URL that sets the run's secret as a cookie and sends it on to the page, the page
//! and its worker send the cookie with every same-origin request, and the first accepted
//! report fixes the page's `runId`.

use std::sync::Mutex;

use axum::http::{header, HeaderMap};

/// The cookie that carries a run's secret: set by the one-time launch URL the runner opens,
/// then sent by the browser with every same-origin request of the page and its worker.
pub const RUN_COOKIE: &str = "ocr-bench-run";
/// The launch URL's path; the secret follows it.
pub const LAUNCH_PATH: &str = "/__ocr-bench/launch/";

pub struct RunGuard {
    secret: String,
    /// Where the launch URL sends the browser, until it has been used once.
    launch_target: Mutex<Option<String>>,
    /// The page's `runId`, from its first accepted report.
    run_id: Mutex<Option<String>>,
}

impl RunGuard {
    pub fn new(secret: String, target: String) -> Self {
        Self {
            secret,
            launch_target: Mutex::new(Some(target)),
            run_id: Mutex::new(None),
        }
    }

    /// The page to send the browser to, once, for the right secret.
    pub fn take_launch(&self, secret: &str) -> Option<String> {
        if secret != self.secret {
            return None;
        }
        self.launch_target
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Whether the request carries the run's secret; `Err` says why not, in words.
    pub fn check_secret(&self, headers: &HeaderMap) -> Result<(), String> {
        let presented = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == RUN_COOKIE)
            .map(|(_, value)| value.to_owned());
        match presented {
            Some(value) if value == self.secret => Ok(()),
            Some(_) => Err(format!("the request carried another run's `{RUN_COOKIE}` cookie; this run accepts reports only from the page it opened")),
            None => Err(format!("the request carried no `{RUN_COOKIE}` cookie; this run accepts reports only from the page it opened (its launch URL sets the cookie)")),
        }
    }

    /// The first report fixes the page's `runId`; another one is refused.
    pub fn check_run_id(&self, claimed: &str) -> Result<(), String> {
        let mut run_id = self.run_id.lock().unwrap_or_else(|e| e.into_inner());
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
