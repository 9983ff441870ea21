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
    /// The `outcome` field of the closing record; sweeps skip `result` and `error` on resume.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Finished { .. } => "result",
            Outcome::PageError { .. } => "error",
            Outcome::TimedOut { .. } => "timeout",
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
            Outcome::TimedOut { .. } => Cause::Timeout,
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
