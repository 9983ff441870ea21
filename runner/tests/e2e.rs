//! End to end: the real page, worker, onnxruntime-web and models, in headless Chromium and
//! Firefox, driven through `ocr-bench run`. Slow (the page on SwiftShader takes tens of
//! seconds per run and more on a busy machine), so every test is ignored by default:
//!
//! ```text
//! cargo test -p ocr-bench --test e2e -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! They need the wasm build in `pkg/`, the models in `models/generated/` and the
//! `smoke2` evaluation set. `OCR_BENCH_E2E_TIMEOUT` (seconds, default 900) bounds each run;
//! `OCR_BENCH_E2E_RESULTS=FILE` also appends every run's records to FILE (each run otherwise
//! writes to a temporary file of its own).
//!
//! Every configuration runs once per browser and is remembered for the rest of the test
//! binary, so the cross-browser comparison reuses the runs of the per-browser tests.
//!
//! What a finished run is checked against comes from outside the page: the query parsed by
//! the core's parser, `models/manifest.json`, the evaluation set on disk, scoring and
//! statistics written again in `e2e/checks.rs`, and the token ids of the page's loop run on
//! onnxruntime CPU in Python (`e2e/oracle.rs`, `scripts/ocrmodel/oracle.py`), which also needs
//! `.venv`. No assertion depends on how fast the machine is; rates and times are printed.

#[path = "e2e/batched.rs"]
mod batched;
#[path = "e2e/checks.rs"]
mod checks;
#[path = "e2e/configurations.rs"]
mod configurations;
#[path = "e2e/decoder_worker.rs"]
mod decoder_worker;
#[path = "e2e/imported.rs"]
mod imported;
#[path = "e2e/memory_reports.rs"]
mod memory_reports;
#[path = "e2e/oracle.rs"]
mod oracle;
#[path = "e2e/peer.rs"]
mod peer;
#[path = "e2e/pool.rs"]
mod pool;
#[path = "e2e/recorded_checks.rs"]
mod recorded_checks;
#[path = "e2e/run_checks.rs"]
mod run_checks;
#[path = "e2e/sweep.rs"]
mod sweep;
#[path = "e2e/user_manifest.rs"]
mod user_manifest;
#[path = "e2e/webdriver.rs"]
mod webdriver;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ocr_bench_core::config::{Choose, Poll, Profile, Realm, Schedule, Scope};
use ocr_bench_core::{parse_query, Config};
use serde_json::Value;

use batched::*;
use run_checks::*;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

/// Short cases and few tokens keep each run to tens of seconds on SwiftShader.
const BASE: &str = "cases=smoke2";

/// Added unless a configuration sets its own `maxTokens`.
const FEW_TOKENS: &str = "maxTokens=2";

/// Between them these cover every value of every choice parameter (the free-form ones take
/// `smoke2`, the default manifest and 2 tokens). The values that need `shader-f16` (tier
/// 242, decoder fp16-matmul) sit together in the last one, so that on an adapter without
/// it only that configuration is refused and the others still run every other value.
const DEFAULT: &str = "";

/// The decode probe's own values ride along in the decoder-only one, where a repeat costs one
/// short prefill: a throttled queue kick (every 4 ms: at 1 ms the kicks slowed Chromium's
/// prefill on SwiftShader by a fifth), two repeats, onnxruntime-web's profiler.
const EVERY_OTHER_VALUE: &str = "memory=default&loader=bytes&schedule=resident&decoder=gather-opt&scope=decoder&weights=external&poll=kick&kickMs=4&repeat=2&profile=ops&verify=wasm";

/// The full reading: smoke2's strings are five characters, so EOS comes at the sixth choice;
/// 16 tokens bound a page that never chooses EOS.
const FIXED_KV: &str =
    "decoder=fixed-kv&schedule=resident&weights=external&verify=wasm&maxTokens=16";

/// The default decoder (and schedule) read to EOS and checked against the WASM reference, on
/// smoke2's first case alone (`smoke1`): a Chromium decode step costs seconds on SwiftShader.
const VERIFIED: &str = "cases=smoke1&verify=wasm&maxTokens=16";

const FP16: &str = "tier=242&decoder=fp16-matmul&memory=default&loader=bytes";

/// The configurations each browser runs. A Chromium run costs a minute or more on
/// SwiftShader, so Chromium's default one is `VERIFIED` (the default decoder and schedule read
/// to EOS), which its other tests need anyway, and its static cache is read by
/// `CAPTURED_ALL_SMOKE1` (held to `VERIFIED`'s tokens and to Firefox's) rather than `FIXED_KV`.
fn configurations(browser: &str) -> &'static [&'static str] {
    if browser == "chromium" {
        &[VERIFIED, EVERY_OTHER_VALUE, FP16]
    } else {
        &[DEFAULT, EVERY_OTHER_VALUE, FIXED_KV, FP16]
    }
}

/// The seed's summary fields (docs/architecture.md), every one required.
const SEED_FIELDS: [&str; 20] = [
    "runId",
    "tier",
    "memoryMode",
    "loaderMode",
    "scheduleMode",
    "decoderMode",
    "benchmarkScope",
    "capability",
    "cases",
    "nCER",
    "distance",
    "characters",
    "exact",
    "medianMs",
    "peakCaseMs",
    "memorySamples",
    "results",
    "config",
    "casesName",
    "accuracyApplicable",
];

const CAPABILITY_FIELDS: [&str; 9] = [
    "layers",
    "hiddenSize",
    "intermediateSize",
    "attentionHeads",
    "kvHeads",
    "vocabulary",
    "maxTokens",
    "vision",
    "decoder",
];

const CASE_FIELDS: [&str; 12] = [
    "id",
    "expected",
    "actual",
    "distance",
    "characters",
    "exact",
    "text",
    "tokens",
    "visionMs",
    "prefillMs",
    "decodeMs",
    "totalMs",
];

/// Fields the architecture adds to the seed's (never renamed).
const ADDED_FIELDS: [&str; 14] = [
    "decodeProbe",
    "completion",
    "completionBound",
    "poll",
    "repeats",
    "pipelineCompilation",
    "weights",
    "maxTokens",
    "meanMs",
    "p90Ms",
    "msPerToken",
    "environment",
    "timingNotes",
    "config",
];

/// One finished `ocr-bench run`.
#[derive(Clone)]
struct Run {
    query: String,
    /// The core's parse of `query`: what the page was asked to run.
    config: Config,
    exit_code: Option<i32>,
    stderr: String,
    records: Vec<Value>,
    /// Processes left in this test's tree after the runner exited (should be none).
    orphans: Vec<String>,
    seconds: f64,
    /// A run recorded before the page listed its sessions (`summary.sessions`).
    recorded_before_sessions: bool,
    /// A recording made before the completion-floor probe had a phase of its own: no `probe`
    /// mark and no `probeMs`.
    recorded_before_probe_phase: bool,
}

impl Run {
    fn record(&self, kind: &str) -> Option<&Value> {
        self.records.iter().rev().find(|r| r["kind"] == kind)
    }

    fn adapter_has(&self, feature: &str) -> bool {
        self.record("start")
            .and_then(|s| s["body"]["adapter"]["features"].as_array())
            .is_some_and(|features| features.iter().any(|f| f == feature))
    }

    fn describe(&self) -> String {
        let tail: Vec<&str> = self.stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "query {:?}, exit {:?}, {:.0} s, stderr tail:\n{}",
            self.query,
            self.exit_code,
            self.seconds,
            tail.join("\n")
        )
    }
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run_timeout() -> u64 {
    std::env::var("OCR_BENCH_E2E_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(900)
}

/// Every live or zombie descendant of this test process.
fn descendants() -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![std::process::id()];
    let own = std::process::id();
    while let Some(pid) = stack.pop() {
        // A descendant may be gone by now; this process's own tree must be readable, or the
        // orphan check would pass without having looked.
        // Any other process may have exited since its parent listed it (NotFound, or ESRCH
        // from `children`); every other failure leaves part of the tree unread, so it fails.
        let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
            Ok(tasks) => tasks,
            Err(e) if pid == own => {
                panic!("cannot read /proc/{pid}/task, so no orphan check is possible: {e}")
            }
            Err(e) if vanished(&e) => continue,
            Err(e) => panic!("cannot read /proc/{pid}/task, so the orphan check is blind: {e}"),
        };
        for task in tasks.flatten() {
            let text = match std::fs::read_to_string(task.path().join("children")) {
                Ok(text) => text,
                Err(e) if pid == own => panic!(
                    "cannot read {}: {e}; the orphan check needs /proc/PID/task/TID/children (a kernel with CONFIG_PROC_CHILDREN)",
                    task.path().join("children").display()
                ),
                Err(e) if vanished(&e) => String::new(),
                Err(e) => panic!(
                    "cannot read {}: {e}, so the orphan check is blind",
                    task.path().join("children").display()
                ),
            };
            for child in text
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                // `pid (name) state ppid …`: a zombie keeps its name here, not its command line.
                let stat =
                    std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
                let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
                let head: String = stat
                    .split_whitespace()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" ");
                found.push(format!(
                    "{head} {}",
                    String::from_utf8_lossy(&cmdline).replace('\0', " ")
                ));
                stack.push(child);
            }
        }
    }
    found
}

/// The error of reading `/proc` for a process that has exited meanwhile.
fn vanished(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::NotFound || error.raw_os_error() == Some(libc::ESRCH)
}

/// One `ocr-bench run`; `inject` is a test-only fault for the page (`OCR_BENCH_INJECT`).
fn launch(browser: &str, query: &str, inject: Option<&str>) -> Run {
    launch_with(browser, query, inject, &[])
}

/// `launch` with `extra` arguments to `run` (such as `--webdriver URL`).
fn launch_with(browser: &str, query: &str, inject: Option<&str>, extra: &[&str]) -> Run {
    // As a subreaper, this test inherits any browser process the runner failed to stop,
    // so a leftover cannot hide by being re-parented to init.
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer and touches no memory.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) },
        0
    );
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let mut full_query = if query.split('&').any(|pair| pair.starts_with("cases=")) {
        String::new()
    } else {
        BASE.to_owned()
    };
    if !query.split('&').any(|pair| pair.starts_with("maxTokens=")) {
        full_query = format!("{full_query}&{FEW_TOKENS}");
    }
    if !query.is_empty() {
        full_query = if full_query.is_empty() {
            query.to_owned()
        } else {
            format!("{full_query}&{query}")
        };
    }
    let started = Instant::now();
    let output = Command::new(BIN)
        .arg("--root")
        .arg(repository_root())
        .args([
            "run",
            "--browser",
            browser,
            "--timeout",
            &run_timeout().to_string(),
        ])
        .args(extra)
        .arg("--results")
        .arg(&results)
        .arg(&full_query)
        .envs(inject.map(|fault| ("OCR_BENCH_INJECT", fault)))
        .output()
        .expect("running ocr-bench");
    let seconds = started.elapsed().as_secs_f64();
    // Give a straggler a moment to show itself before looking.
    std::thread::sleep(Duration::from_millis(500));
    let orphans = descendants();
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    if let Some(keep) = std::env::var_os("OCR_BENCH_E2E_RESULTS") {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&keep)
            .expect("OCR_BENCH_E2E_RESULTS");
        file.write_all(text.as_bytes())
            .expect("appending to OCR_BENCH_E2E_RESULTS");
    }
    let records = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every results line is one JSON object"))
        .collect();
    let config = parse_query(&full_query)
        .unwrap_or_else(|e| panic!("the test's own query {full_query:?} is invalid: {e}"));
    let run = Run {
        query: full_query,
        config,
        exit_code: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        records,
        orphans,
        seconds,
        recorded_before_sessions: false,
        recorded_before_probe_phase: false,
    };
    eprintln!(
        "e2e: {browser} {:?}: exit {:?} in {:.0} s",
        run.query, run.exit_code, run.seconds
    );
    run
}

/// Runs each browser and configuration once per test binary, one at a time: two browsers
/// side by side would distort each other's memory and time on two cores.
fn run(browser: &str, query: &str) -> Run {
    static RUNS: OnceLock<Mutex<HashMap<(String, String), Run>>> = OnceLock::new();
    let mut runs = RUNS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    runs.entry((browser.to_owned(), query.to_owned()))
        .or_insert_with(|| launch(browser, query, None))
        .clone()
}

fn check_no_orphans(run: &Run) {
    assert!(
        run.orphans.is_empty(),
        "processes left after the runner exited: {:?}\n{}",
        run.orphans,
        run.describe()
    );
    let closing = run
        .record("run")
        .unwrap_or_else(|| panic!("no closing run record\n{}", run.describe()));
    assert_eq!(closing["stop"]["left"], serde_json::json!([]), "{closing}");
}
