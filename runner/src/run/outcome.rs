//! How a run ended, each way with its exit cause and its message.

use std::time::Duration;

use crate::exit::Cause;
use crate::record::{Posted, ProcessMemoryAnswer};

/// How a run ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// `--gpu-route gpu` and the page got a fallback or software adapter: the adapter in
    /// words and why the GPU route was taken.
    SoftwareAdapter {
        phase: String,
        adapter: String,
        reason: String,
    },
    /// The page posted its summary; `process_memory` is what the server answered.
    Finished {
        summary: Posted,
        process_memory: ProcessMemoryAnswer,
    },
    /// The page reported an error (its own message).
    PageError {
        phase: String,
        message: String,
    },
    TimedOut {
        phase: String,
        cases_done: usize,
    },
    /// The browser did not open the launch URL within `limit`: the origin it was sent to,
    /// the last TLS handshake that failed, and whether the page was served over HTTPS.
    NotReached {
        origin: String,
        limit: Duration,
        tls_refusal: Option<String>,
        tls: bool,
    },
    BrowserExited {
        status: String,
        phase: String,
    },
    /// The target could not start the browser (no executable, no WebDriver endpoint, a
    /// session refused): the reason, free of credentials.
    NotStarted {
        message: String,
    },
    /// Ctrl-C, SIGTERM or SIGHUP reached the runner; the browser was still stopped.
    Interrupted {
        phase: String,
    },
    /// A record could not be written to the results file: the file and the OS error.
    WriteFailed {
        phase: String,
        message: String,
    },
    /// The page's own result was refused (not JSON, not an object, no `runId`, another run's,
    /// too large): the server's reason, and the cases reported through `/benchmark-progress`.
    ResultRefused {
        phase: String,
        reason: String,
        cases_done: usize,
    },
}

/// Said of a finished run whose `verify=wasm` found a case that left the WASM reference.
pub const VERIFICATION_FAILED: &str = "verification failed: the WebGPU run left the WASM \
     reference (verify=wasm); its figures are not a result of the configuration";

impl Outcome {
    /// Every `outcome` a closing record can hold, in the order of the variants (the docs are
    /// held to this list by `tests/prose_lists.rs`; a unit test holds it to [`Outcome::label`]).
    pub const LABELS: [&'static str; 10] = [
        "software-adapter",
        "result",
        "error",
        "timeout",
        "not-reached",
        "browser-exited",
        "not-started",
        "interrupted",
        "write-failed",
        "result-refused",
    ];

    /// The `outcome` field of the closing record; sweeps skip `result` and `error` on resume.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Finished { .. } => "result",
            Outcome::PageError { .. } => "error",
            Outcome::TimedOut { .. } => "timeout",
            Outcome::NotReached { .. } => "not-reached",
            Outcome::BrowserExited { .. } => "browser-exited",
            Outcome::NotStarted { .. } => "not-started",
            Outcome::Interrupted { .. } => "interrupted",
            Outcome::WriteFailed { .. } => "write-failed",
            Outcome::SoftwareAdapter { .. } => "software-adapter",
            Outcome::ResultRefused { .. } => "result-refused",
        }
    }

    /// The cause, for the exit status; `None` when the run finished.
    pub fn cause(&self) -> Option<Cause> {
        Some(match self {
            Outcome::Finished { .. } => return None,
            Outcome::PageError { .. } => Cause::PageError,
            Outcome::TimedOut { .. } | Outcome::NotReached { .. } => Cause::Timeout,
            Outcome::BrowserExited { .. } => Cause::BrowserExited,
            Outcome::NotStarted { .. } => Cause::BrowserMissing,
            Outcome::Interrupted { .. } => Cause::Interrupted,
            Outcome::WriteFailed { .. } => Cause::WriteFailed,
            Outcome::SoftwareAdapter { .. } => Cause::SoftwareAdapter,
            // The page did not deliver a result the runner can read: the page's failure.
            Outcome::ResultRefused { .. } => Cause::PageError,
        })
    }

    /// A finished run whose `verify=wasm` failed: what is said of it (exit 9), and what its
    /// closing record keeps as its `message`; `None` for any other run.
    pub fn verification_failure(&self) -> Option<&'static str> {
        match self {
            Outcome::Finished { summary, .. }
                if summary.benchmark().is_some_and(|s| s.verification_failed()) =>
            {
                Some(VERIFICATION_FAILED)
            }
            _ => None,
        }
    }

    /// A sentence for a person; `None` when the run finished.
    pub fn failure_message(&self, browser: &str, timeout: Duration) -> Option<String> {
        match self {
            Outcome::Finished { .. } => None,
            Outcome::PageError { phase, message } => {
                Some(format!("the page failed in phase {phase}: {message}"))
            }
            Outcome::TimedOut { phase, cases_done } => Some(format!(
                "timed out after {} s in phase {phase} with {cases_done} case(s) finished; \
                 the browser was stopped (raise --timeout if the run is just slow)",
                timeout.as_secs()
            )),
            Outcome::NotReached {
                origin,
                limit,
                tls_refusal,
                tls,
            } => Some(not_reached_message(
                origin,
                *limit,
                tls_refusal.as_deref(),
                *tls,
            )),
            Outcome::BrowserExited { status, phase } => Some(format!(
                "{browser} exited ({status}) in phase {phase} before the page reported a result"
            )),
            Outcome::NotStarted { message } => Some(message.clone()),
            Outcome::Interrupted { phase } => Some(format!(
                "interrupted in phase {phase}; the browser was stopped"
            )),
            Outcome::WriteFailed { phase, message } => Some(format!(
                "stopped in phase {phase}: {message}; the browser was stopped and the lines \
                 already written are kept (free space, or pass another --results)"
            )),
            Outcome::SoftwareAdapter {
                phase,
                adapter,
                reason,
            } => Some(format!(
                "--gpu-route gpu asked for a real GPU, but {browser} gave the page a fallback \
                 (software) WebGPU adapter ({adapter}); stopped in phase {phase}. The GPU route \
                 was taken because: {reason}. Check the Vulkan driver (a bundle's ./check says \
                 what it finds), or run with --gpu-route auto to accept the fallback"
            )),
            Outcome::ResultRefused {
                phase,
                reason,
                cases_done,
            } => Some(format!(
                "the page's result was refused in phase {phase} with {cases_done} case(s) \
                 reported: {reason}; the browser was stopped and the body is kept in the \
                 `refused` record"
            )),
        }
    }
}

/// Why a browser never opened the launch URL, and how to fix it: a refused certificate where a
/// handshake failed, else an origin the browser's machine cannot reach.
fn not_reached_message(origin: &str, limit: Duration, refusal: Option<&str>, tls: bool) -> String {
    let head = format!(
        "the browser did not open the page at {origin} within {} s",
        limit.as_secs()
    );
    match refusal {
        Some(refusal) => format!(
            "{head}: it refused the runner's TLS certificate (the handshake {refusal}); a \
             WebDriver session needs acceptInsecureCerts (the default capabilities ask for it \
             under --tls), Chromium --ignore-certificate-errors, or give --tls-cert/--tls-key \
             a certificate the browser trusts"
        ),
        None => {
            let secure = if tls {
                ""
            } else {
                "; a browser on another machine also needs https:// (--tls) for WebGPU"
            };
            format!(
                "{head}: no request reached the runner, so the browser's machine cannot reach \
                 {origin}; check that --public-url names an address of this machine that it \
                 reaches, that --host listens there (0.0.0.0 or that address) and that no \
                 firewall is in the way{secure}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One outcome of each variant, in the order of the enum: adding a variant breaks the
    /// match below until it is listed here and in [`Outcome::LABELS`].
    fn one_of_each() -> Vec<Outcome> {
        let phase = || "decoder-run".to_owned();
        let all = vec![
            Outcome::SoftwareAdapter {
                phase: phase(),
                adapter: String::new(),
                reason: String::new(),
            },
            Outcome::Finished {
                summary: Posted::Other(serde_json::Value::Null),
                process_memory: ProcessMemoryAnswer {
                    measured: None,
                    available: false,
                    reason: None,
                },
            },
            Outcome::PageError {
                phase: phase(),
                message: String::new(),
            },
            Outcome::TimedOut {
                phase: phase(),
                cases_done: 0,
            },
            Outcome::NotReached {
                origin: String::new(),
                limit: Duration::ZERO,
                tls_refusal: None,
                tls: false,
            },
            Outcome::BrowserExited {
                status: String::new(),
                phase: phase(),
            },
            Outcome::NotStarted {
                message: String::new(),
            },
            Outcome::Interrupted { phase: phase() },
            Outcome::WriteFailed {
                phase: phase(),
                message: String::new(),
            },
            Outcome::ResultRefused {
                phase: phase(),
                reason: String::new(),
                cases_done: 0,
            },
        ];
        for (i, outcome) in all.iter().enumerate() {
            let position = match outcome {
                Outcome::SoftwareAdapter { .. } => 0,
                Outcome::Finished { .. } => 1,
                Outcome::PageError { .. } => 2,
                Outcome::TimedOut { .. } => 3,
                Outcome::NotReached { .. } => 4,
                Outcome::BrowserExited { .. } => 5,
                Outcome::NotStarted { .. } => 6,
                Outcome::Interrupted { .. } => 7,
                Outcome::WriteFailed { .. } => 8,
                Outcome::ResultRefused { .. } => 9,
            };
            assert_eq!(position, i, "one_of_each is out of the enum's order");
        }
        all
    }

    #[test]
    fn the_list_of_labels_is_every_variants_label() {
        let labels: Vec<&str> = one_of_each().iter().map(Outcome::label).collect();
        assert_eq!(labels, Outcome::LABELS);
    }

    #[test]
    fn a_page_never_reached_says_whether_the_certificate_or_the_address_is_at_fault() {
        let limit = Duration::from_secs(60);
        let refused = Outcome::NotReached {
            origin: "https://192.0.2.7:8443".to_owned(),
            limit,
            tls_refusal: Some("from 192.0.2.9:50000: received fatal alert: BadCertificate".into()),
            tls: true,
        };
        let message = refused.failure_message("firefox", limit).unwrap();
        assert!(
            message.contains("within 60 s")
                && message.contains("refused the runner's TLS certificate")
                && message.contains("acceptInsecureCerts")
                && message.contains("--tls-cert"),
            "{message}"
        );
        assert_eq!(refused.label(), "not-reached");
        assert_eq!(refused.cause(), Some(Cause::Timeout));
        let unreachable = Outcome::NotReached {
            origin: "http://192.0.2.7:8000".to_owned(),
            limit,
            tls_refusal: None,
            tls: false,
        };
        let message = unreachable.failure_message("firefox", limit).unwrap();
        assert!(
            message.contains("cannot reach http://192.0.2.7:8000")
                && message.contains("--public-url")
                && message.contains("--host")
                && message.contains("(--tls)"),
            "{message}"
        );
    }
}
