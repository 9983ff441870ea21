//! The probe cache (`docs/benchmark-protocol.md`, "The probe cache"): each completion floor a
//! run measured, kept beside its results in `<results>.probe-cache.json` under the key of
//! everything the floor depends on, and offered to the next run's page, which reuses a floor
//! only where the key it computes is equal. The runner owns the file; the page never writes.
//!
//! A cache that cannot be read is set aside (`.corrupt` added to its name, never deleted) with
//! a message saying why, and every floor of the run is measured again.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::SystemTime;

use anyhow::{Context, Result};
use ocr_bench_core::record::{
    CachedFloor, FloorOrigin, FloorRounds, PageSummary, ProbeOffer, RunnerProbeKey,
};
use serde::{Deserialize, Serialize};

/// What the runner adds to the results file's name for its cache.
pub const SUFFIX: &str = ".probe-cache.json";
/// The version of the file's layout; another one is measured over, not guessed at.
const VERSION: u32 = 1;

/// `--probe`: whether a run may reuse a kept floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeMode {
    /// Reuse a kept floor whose key equals the page's; measure the rest and keep them.
    #[default]
    Reuse,
    /// Measure every floor (and keep them for later runs).
    Always,
}

impl FromStr for ProbeMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "reuse" => Ok(ProbeMode::Reuse),
            "always" => Ok(ProbeMode::Always),
            other => Err(format!(
                "unknown probe mode {other:?}; allowed: reuse (a kept floor of the same browser, \
                 adapter, driver and waiting), always (measure every floor)"
            )),
        }
    }
}

impl fmt::Display for ProbeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProbeMode::Reuse => "reuse",
            ProbeMode::Always => "always",
        })
    }
}

/// The file as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CacheFile {
    version: u32,
    floors: Vec<CachedFloor>,
}

/// One writer at a time in this process: a sweep's jobs share one results file, so one cache.
static WRITING: Mutex<()> = Mutex::new(());

/// The cache of one results file, as one run sees it.
#[derive(Debug, Clone)]
pub struct ProbeCache {
    path: PathBuf,
    mode: ProbeMode,
    runner: RunnerProbeKey,
}

impl ProbeCache {
    /// The cache beside `results`, for a run of the browser, target and driver `runner` names.
    pub fn beside(results: &Path, mode: ProbeMode, runner: RunnerProbeKey) -> Self {
        Self {
            path: path_beside(results),
            mode,
            runner,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the page is offered: the kept floors of this browser, target and driver (the page
    /// compares the rest of the key), or why it measures every floor.
    pub fn offer(&self) -> ProbeOffer {
        let measure_all = |reason: String| ProbeOffer {
            reuse: false,
            reason: Some(reason),
            runner: Some(self.runner.clone()),
            floors: Vec::new(),
        };
        if self.mode == ProbeMode::Always {
            return measure_all("--probe always: every floor is measured".to_owned());
        }
        let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
        match self.read_or_set_aside() {
            Ok(floors) => ProbeOffer {
                reuse: true,
                reason: None,
                runner: Some(self.runner.clone()),
                floors: floors
                    .into_iter()
                    .filter(|kept| kept.key.runner == self.runner)
                    .collect(),
            },
            Err(reason) => measure_all(reason),
        }
    }

    /// Keeps every floor `summary` says it measured (with a key), replacing a kept one of the
    /// same key; the number kept. A cache that cannot be read is set aside first.
    pub fn keep(&self, summary: &PageSummary) -> Result<usize> {
        let completion = &summary.completion;
        let measured: Vec<CachedFloor> = [
            &completion.page,
            &completion.worker,
            &completion.decoder_worker,
        ]
        .into_iter()
        .flatten()
        .filter_map(|floor| cached(&floor.rounds, &summary.run_id))
        .collect();
        if measured.is_empty() {
            return Ok(0);
        }
        let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
        let mut floors = self.read_or_set_aside().unwrap_or_default();
        floors.retain(|kept| !measured.iter().any(|new| new.key == kept.key));
        floors.extend(measured.iter().cloned());
        self.write(&floors)?;
        Ok(measured.len())
    }

    /// The kept floors (none where there is no file yet); a file that cannot be read is
    /// moved aside and `Err` says why, in words.
    fn read_or_set_aside(&self) -> Result<Vec<CachedFloor>, String> {
        let problem = match read(&self.path) {
            Ok(floors) => return Ok(floors),
            Err(problem) => problem,
        };
        let aside = corrupt_path(&self.path);
        let moved = match std::fs::rename(&self.path, &aside) {
            Ok(()) => format!("moved to {}", aside.display()),
            Err(e) => format!("could not be moved aside ({e})"),
        };
        let reason = format!(
            "the probe cache {} cannot be read ({problem}); it was {moved}, and every floor of \
             this run is measured again",
            self.path.display()
        );
        eprintln!("ocr-bench: {reason}");
        Err(reason)
    }

    /// Writes the whole file at once (a temporary file renamed over it), so that a run that
    /// stops mid-write leaves the old cache or the new one, never half of one.
    fn write(&self, floors: &[CachedFloor]) -> Result<()> {
        let file = CacheFile {
            version: VERSION,
            floors: floors.to_vec(),
        };
        let text = serde_json::to_string_pretty(&file)?;
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(format!(".{}.tmp", std::process::id()));
        let temporary = PathBuf::from(temporary);
        std::fs::write(&temporary, text + "\n")
            .with_context(|| format!("writing the probe cache {}", temporary.display()))?;
        std::fs::rename(&temporary, &self.path)
            .with_context(|| format!("replacing the probe cache {}", self.path.display()))
    }
}

/// `<results>.probe-cache.json`: beside the results, named after them, so that each results
/// file has its own and removing a results file's siblings removes its cache.
pub fn path_beside(results: &Path) -> PathBuf {
    let mut name = results.as_os_str().to_owned();
    name.push(SUFFIX);
    PathBuf::from(name)
}

fn corrupt_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".corrupt");
    PathBuf::from(name)
}

/// The floors of the file at `path`: none where it does not exist; `Err` says what is wrong.
fn read(path: &Path) -> Result<Vec<CachedFloor>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.to_string()),
    };
    let file: CacheFile = serde_json::from_str(&text).map_err(|e| {
        format!("not a probe cache: {e}; allowed: {{\"version\": {VERSION}, \"floors\": [...]}}")
    })?;
    if file.version != VERSION {
        return Err(format!(
            "version {} where this runner writes version {VERSION}",
            file.version
        ));
    }
    Ok(file.floors)
}

/// A floor this run measured, as the cache keeps it; `None` for a reused one or one without
/// a key (a page that no runner offered a cache).
fn cached(rounds: &FloorRounds, run_id: &str) -> Option<CachedFloor> {
    let source = rounds.source.as_ref()?;
    let key = source.key.clone()?;
    (source.origin == FloorOrigin::Measured).then(|| CachedFloor {
        key,
        rounds: FloorRounds {
            source: None,
            ..rounds.clone()
        },
        measured_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
        measured_run_id: Some(run_id.to_owned()),
    })
}

/// The GPU's kernel driver on this machine, for the key: NVIDIA's module version, which a
/// driver update changes; `None` without one. A Mesa update (lavapipe) is not seen here:
/// `--probe always` measures after one.
pub fn local_driver() -> Option<String> {
    std::fs::read_to_string("/sys/module/nvidia/version")
        .ok()
        .map(|v| format!("nvidia {}", v.trim()))
}

#[cfg(test)]
mod tests;
