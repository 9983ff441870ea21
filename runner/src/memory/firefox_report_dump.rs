//! Asks a running Firefox for its memory reports and reads the file it writes: with
//! `memory_info_dumper.watch_fifo.enabled` set, Firefox watches `$TMPDIR/debug_info_trigger`,
//! and the line `memory report` written into it makes every process report and the parent
//! write `$TMPDIR/unified-memory-report-<id>-<pid>.json.gz` (a few seconds, more with the
//! models loaded). Signals do not work for this: Firefox's signal for it ends the parent.
//! The line `minimize memory report` first has every process minimize its memory (the
//! browser's own memory-pressure path: garbage and cycle collection, caches dropped, the
//! allocator's free pages returned), then report.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The FIFO Firefox watches, in its TMPDIR.
const TRIGGER: &str = "debug_info_trigger";
/// What Firefox names a finished report (it writes under another name, then renames).
const REPORT_PREFIX: &str = "unified-memory-report-";
const REPORT_SUFFIX: &str = ".json.gz";
/// How often the directory is looked at while waiting.
const POLL: Duration = Duration::from_millis(100);

/// What the request asks Firefox for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// A report of the moment.
    Report,
    /// Every process minimizes its memory, then reports.
    MinimizeThenReport,
}

impl Ask {
    fn line(self) -> &'static [u8] {
        match self {
            Ask::Report => b"memory report\n",
            Ask::MinimizeThenReport => b"minimize memory report\n",
        }
    }
}

/// Asks for one report and returns its bytes, waiting at most `limit`; `Err` says why there is
/// none (no FIFO yet, nothing written in time), for the record. The file is removed once read.
pub fn request(dir: &Path, ask: Ask, limit: Duration) -> Result<Vec<u8>, String> {
    let before = reports_in(dir);
    let trigger = dir.join(TRIGGER);
    // Non-blocking: where Firefox is not reading the FIFO the open fails at once (ENXIO)
    // instead of waiting for a reader that never comes.
    let mut fifo = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&trigger)
        .map_err(|e| format!("opening {}: {e}", trigger.display()))?;
    fifo.write_all(ask.line())
        .map_err(|e| format!("writing to {}: {e}", trigger.display()))?;
    drop(fifo);
    let asked = Instant::now();
    while asked.elapsed() < limit {
        if let Some(path) = reports_in(dir).difference(&before).next() {
            let bytes = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            let _ = fs::remove_file(path);
            return Ok(bytes);
        }
        std::thread::sleep(POLL);
    }
    Err(format!(
        "Firefox wrote no memory report within {} s of the request",
        limit.as_secs()
    ))
}

/// The finished reports in `dir`.
fn reports_in(dir: &Path) -> BTreeSet<PathBuf> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(REPORT_PREFIX) && name.ends_with(REPORT_SUFFIX)
        })
        .map(|entry| entry.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_firefox_reading_the_fifo_the_request_says_why_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let err = request(dir.path(), Ask::Report, Duration::from_secs(1)).unwrap_err();
        assert!(err.contains(TRIGGER), "{err}");
        // A FIFO nobody reads: the non-blocking open fails instead of hanging.
        let fifo = dir.path().join(TRIGGER);
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let err = request(dir.path(), Ask::Report, Duration::from_secs(1)).unwrap_err();
        assert!(err.contains("opening"), "{err}");
    }
}
