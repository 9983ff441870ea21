//! The exit statuses of `run` and `sweep`, one per cause, and the error that carries a cause
//! up to `main`. `runner/README.md` ("Exit status") lists them.

use std::fmt;

/// Why the runner stopped, each with its own exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The page reported its own error (`run` only: a sweep counts it as a finished
    /// combination, such as fp16 refused on an adapter without shader-f16).
    PageError,
    /// Bad arguments: an unknown parameter or value, a page outside the page set, an
    /// off-origin manifest. clap's own usage errors exit 2 too.
    Usage,
    Timeout,
    BrowserExited,
    ProcessesLeft,
    /// The results file could not be opened or appended to.
    WriteFailed,
    /// The browser is not installed, its `OCR_BENCH_*` target is missing, or it did not start.
    BrowserMissing,
    /// The server could not listen (the port is in use).
    Listen,
    /// SIGINT, SIGTERM or SIGHUP.
    Interrupted,
    /// `verify=wasm` found a case whose tokens or logits left the WASM reference's: the result
    /// is written, but it is not a result of the configuration (a sweep goes on to the next
    /// combination and exits with it at the end).
    VerificationFailed,
    /// `--gpu-route gpu` asked for a real GPU and the page got a fallback (software) adapter:
    /// the run is stopped, since its figures would be the CPU's.
    SoftwareAdapter,
}

impl Cause {
    pub const fn code(self) -> u8 {
        match self {
            Cause::PageError => 1,
            Cause::Usage => 2,
            Cause::Timeout => 3,
            Cause::BrowserExited => 4,
            Cause::ProcessesLeft => 5,
            Cause::WriteFailed => 6,
            Cause::BrowserMissing => 7,
            Cause::Listen => 8,
            Cause::VerificationFailed => 9,
            Cause::SoftwareAdapter => 10,
            Cause::Interrupted => 130,
        }
    }
}

/// An error whose exit status is known; anything else exits 1.
#[derive(Debug)]
pub struct Failure {
    pub cause: Cause,
    pub message: String,
}

impl Failure {
    pub fn new(cause: Cause, message: impl Into<String>) -> Self {
        Self {
            cause,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// The exit status of an error that reached `main`: its cause's, else 1.
pub fn code_of(error: &anyhow::Error) -> u8 {
    error
        .chain()
        .find_map(|e| e.downcast_ref::<Failure>())
        .map_or(1, |f| f.cause.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_its_own_status() {
        let all = [
            Cause::PageError,
            Cause::Usage,
            Cause::Timeout,
            Cause::BrowserExited,
            Cause::ProcessesLeft,
            Cause::WriteFailed,
            Cause::BrowserMissing,
            Cause::Listen,
            Cause::Interrupted,
            Cause::VerificationFailed,
            Cause::SoftwareAdapter,
        ];
        let mut codes: Vec<u8> = all.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }

    #[test]
    fn a_wrapped_failure_keeps_its_status() {
        let error =
            anyhow::Error::new(Failure::new(Cause::WriteFailed, "appending to x: No space"))
                .context("running");
        assert_eq!(code_of(&error), 6);
        assert_eq!(code_of(&anyhow::anyhow!("other")), 1);
    }
}
