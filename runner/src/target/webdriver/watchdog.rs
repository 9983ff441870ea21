//! The session's watchdog: the runner's own executable (`ocr-bench webdriver-watchdog`), which
//! outlives a runner that dies and then deletes the session it was handed, so a grid's slot is
//! not left taken.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::error::NewSessionError;
use fantoccini::Client;
use serde_json::{json, Value};

/// How long deleting the session may take before it is reported as left.
pub(super) const DELETE_LIMIT: Duration = Duration::from_secs(30);

/// The runner's own executable, waiting on a pipe beside the session: `done` means the runner
/// deleted the session itself; end of file without it means the runner died, and the watchdog
/// deletes the session.
pub(super) struct SessionWatchdog {
    child: Child,
}

impl SessionWatchdog {
    pub(super) fn start(endpoint: &str, session: &str) -> Result<SessionWatchdog> {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().context("finding the runner's executable")?;
        let mut child = Command::new(exe)
            .arg(WATCHDOG_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("starting the watchdog")?;
        // The endpoint (with its credentials) goes through the pipe, never the command line.
        let line = json!({ "endpoint": endpoint, "session": session }).to_string();
        let pipe = child.stdin.as_mut().context("the watchdog's pipe")?;
        writeln!(pipe, "{line}").context("writing to the watchdog")?;
        Ok(SessionWatchdog { child })
    }

    pub(super) fn dismiss(mut self) {
        if let Some(mut pipe) = self.child.stdin.take() {
            let _ = pipe.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

/// The hidden subcommand the watchdog runs as.
pub const WATCHDOG_COMMAND: &str = "webdriver-watchdog";

/// The watchdog's body: reads the endpoint and session, waits for `done` or end of file, and
/// on end of file deletes the session. Ignores the terminal's signals, as the local one does.
pub async fn watchdog_main() -> u8 {
    for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM, libc::SIGQUIT] {
        // SAFETY: setting a signal to be ignored touches no memory of ours.
        unsafe { libc::signal(signal, libc::SIG_IGN) };
    }
    let lines = tokio::task::spawn_blocking(|| {
        let stdin = std::io::stdin();
        let mut first = String::new();
        let mut second = String::new();
        let _ = stdin.read_line(&mut first);
        let _ = stdin.read_line(&mut second);
        (first, second)
    })
    .await;
    let Ok((first, second)) = lines else { return 1 };
    if second.trim() == "done" {
        return 0;
    }
    let Ok(given) = serde_json::from_str::<Value>(&first) else {
        return 1;
    };
    let (Some(endpoint), Some(session)) = (given["endpoint"].as_str(), given["session"].as_str())
    else {
        return 1;
    };
    let delete = async {
        let client =
            Client::with_existing_session(endpoint, session, super::connector::connector()).await?;
        client
            .close()
            .await
            .map_err(NewSessionError::UnexpectedError)
    };
    match tokio::time::timeout(DELETE_LIMIT, delete).await {
        Ok(Ok(())) => 0,
        _ => 1,
    }
}
