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

#[path = "e2e/checks.rs"]
mod checks;
#[path = "e2e/oracle.rs"]
mod oracle;
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
/// short prefill: a throttled queue kick, two repeats, onnxruntime-web's profiler.
const EVERY_OTHER_VALUE: &str = "memory=default&loader=bytes&schedule=resident&decoder=gather-opt&scope=decoder&weights=external&poll=kick&kickMs=1&repeat=2&profile=ops&verify=wasm";
/// The full reading: smoke2's strings are five characters, so EOS comes at the sixth choice;
/// 16 tokens bound a page that never chooses EOS.
const FIXED_KV: &str =
    "decoder=fixed-kv&schedule=resident&weights=external&verify=wasm&maxTokens=16";
/// The default decoder (and schedule) read to EOS and checked against the WASM reference, on
/// smoke2's first case alone (`smoke1`): a Chromium decode step costs seconds on SwiftShader.
const VERIFIED: &str = "cases=smoke1&verify=wasm&maxTokens=16";
const FP16: &str = "tier=242&decoder=fp16-matmul&memory=default&loader=bytes";
const CONFIGURATIONS: [&str; 4] = [DEFAULT, EVERY_OTHER_VALUE, FIXED_KV, FP16];

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

/// The phases of a configuration, from docs/benchmark-protocol.md ("Phases"), for the query
/// the runner sent, not for what the page says it ran.
fn expected_phases(config: &Config) -> Vec<&'static str> {
    if config.scope == Scope::Decoder {
        vec![
            "baseline",
            "probe",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    } else if config.schedule == Schedule::Resident {
        vec![
            "baseline",
            "probe",
            "vision-load",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    } else {
        vec![
            "baseline",
            "probe",
            "vision-load",
            "vision-encode",
            "vision-release",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    }
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

/// Everything a finished run must show. Returns the CPU oracle's reading of each case (none
/// with `scope=decoder`, whose tokens are forced).
fn check_finished(run: &Run) -> Vec<oracle::Reading> {
    // Exit 9 is a failed verify=wasm: say which case left the reference and how far.
    let verification = run
        .record("result")
        .map(|r| &r["summary"]["verification"])
        .filter(|v| !v.is_null())
        .map_or_else(String::new, |v| format!("\nverification: {v}"));
    assert_eq!(run.exit_code, Some(0), "{}{verification}", run.describe());
    check_no_orphans(run);
    let config = &run.config;
    let root = repository_root();
    let result = run
        .record("result")
        .unwrap_or_else(|| panic!("no result record\n{}", run.describe()));
    let summary = &result["summary"];

    for field in SEED_FIELDS.iter().chain(ADDED_FIELDS.iter()) {
        assert!(
            summary.get(*field).is_some(),
            "summary lacks `{field}`: {summary}"
        );
    }
    for field in CAPABILITY_FIELDS {
        assert!(
            summary["capability"].get(field).is_some(),
            "capability lacks `{field}`"
        );
    }
    // Every record is of the configuration the runner was given (it writes the query in
    // the core's canonical order, so the parses are compared, not the strings).
    for record in &run.records {
        let query = record["query"]
            .as_str()
            .unwrap_or_else(|| panic!("a {} record without its query", record["kind"]));
        assert_eq!(
            parse_query(query).as_ref().ok(),
            Some(config),
            "a {} record of another query: {query:?}",
            record["kind"]
        );
    }
    let page_url = run
        .record("run")
        .and_then(|r| r["url"].as_str())
        .unwrap_or_else(|| panic!("the closing run record has no page url\n{}", run.describe()));
    let (manifest_path, manifest) = checks::check_configuration(&root, summary, config, page_url);
    let start = run
        .record("start")
        .unwrap_or_else(|| panic!("no start record\n{}", run.describe()));
    assert_eq!(
        start["body"]["config"], summary["config"],
        "the page started with the configuration it reported"
    );

    let vocabulary = summary["capability"]["vocabulary"]
        .as_u64()
        .expect("capability.vocabulary");
    let cases = checks::check_case_types(summary, config, vocabulary);
    assert!(!cases.is_empty(), "no case results");
    for case in &cases {
        for field in CASE_FIELDS {
            assert!(
                case.get(field).is_some(),
                "case {} lacks `{field}`",
                case["id"]
            );
        }
        eprintln!(
            "e2e: {} {:?} case {}: tokens {} text {:?} expected {:?}",
            result["browser"]["name"],
            run.query,
            case["id"],
            case["tokenIds"],
            case["actual"],
            case["expected"]
        );
    }
    checks::check_cases_are_the_set(&root, &cases, config);
    checks::check_readings(&manifest_path, &manifest, &cases);
    checks::check_statistics(summary, &cases);
    checks::check_accuracy(summary, &cases, config);
    checks::check_verification(summary, &cases, config);
    let readings = if config.scope == Scope::Full {
        oracle::check_tokens(&root, &manifest_path, config, &cases)
    } else {
        Vec::new()
    };
    if !run.recorded_before_sessions {
        checks::check_sessions(&root, summary, config, page_url);
    }
    check_probe(summary, config, !run.recorded_before_probe_phase);

    // The records carry who ran it where.
    assert!(
        result["browser"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        result["browser"]
    );
    // The environment is written once, in the start record.
    assert!(
        start["body"]["ortVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("1.")),
        "{}",
        start["body"]["ortVersion"]
    );
    assert!(start["body"]["adapter"].is_object(), "{}", start["body"]);
    // A WebDriver browser's machine is known by its endpoint only.
    let remote = result["target"].as_str().is_some_and(|t| t != "local");
    assert!(
        if remote {
            start["machine"]["webdriver"].is_string()
        } else {
            start["machine"]["cores"].as_u64().is_some_and(|c| c >= 1)
        },
        "{}",
        start["machine"]
    );

    // The page went through this configuration's phases, in order, and each has process
    // memory above zero.
    let phases: Vec<&str> = expected_phases(config)
        .into_iter()
        .filter(|phase| !(run.recorded_before_probe_phase && *phase == "probe"))
        .collect();
    let marked: Vec<&str> = run
        .records
        .iter()
        .filter(|r| r["kind"] == "mark")
        .map(|r| r["phase"].as_str().expect("a mark names its phase"))
        .collect();
    assert_eq!(marked, phases, "the phases the page marked");
    let memory = &result["processMemory"];
    // A browser behind WebDriver has no processes here to sample, and says so.
    if remote {
        assert_eq!(memory["available"], false, "{memory}");
        assert!(
            memory["reason"]
                .as_str()
                .is_some_and(|r| r.contains("WebDriver")),
            "{memory}"
        );
        return readings;
    }
    assert_eq!(memory["available"], true, "{memory}");
    for phase in phases {
        let measured = &memory["phases"][phase];
        assert!(
            measured["samples"].as_u64().is_some_and(|n| n > 0),
            "phase {phase} has no samples: {memory}"
        );
        let peak = measured["total"]["peakRssBytes"].as_u64().unwrap_or(0);
        assert!(peak > 0, "phase {phase}: peak RSS {peak}");
        for kind in ["browser", "renderer"] {
            let bytes = measured["byType"][kind]["peakRssBytes"]
                .as_u64()
                .unwrap_or(0);
            assert!(
                bytes > 0,
                "phase {phase}: no {kind} memory: {}",
                measured["byType"]
            );
        }
    }
    // The rate is a figure, not a pass mark: it falls when the machine is loaded.
    let hz = memory["sampler"]["achievedHz"]
        .as_f64()
        .expect("the sampler reports achievedHz as a number");
    println!("sampler rate: {hz:.1} Hz");
    readings
}

fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// The decode probe (docs/benchmark-protocol.md): typed, consistent with the case times, and
/// with a completion floor per realm and a verdict in words.
fn check_probe(summary: &Value, query: &Config, probed_in_its_own_phase: bool) {
    let poll = Value::from(query.get("poll").expect("poll is a parameter"));
    let cases = summary["results"].as_array().expect("results");
    let mut all_steps = Vec::new();
    for case in cases {
        let id = &case["id"];
        let probe = &case["decodeProbe"];
        let steps = case["decodeSteps"].as_u64().expect("decodeSteps") as usize;
        let column = |name: &str| -> Vec<f64> {
            probe[name]
                .as_array()
                .unwrap_or_else(|| panic!("case {id}: decodeProbe.{name} is not a list: {probe}"))
                .iter()
                .map(|v| number(v, name))
                .collect()
        };
        let (submit, sync, choose) = (column("submitMs"), column("syncMs"), column("chooseMs"));
        assert_eq!(
            submit.len(),
            steps,
            "case {id}: one submitMs per decode step"
        );
        assert_eq!(sync.len(), steps, "case {id}: one syncMs per decode step");
        assert_eq!(
            choose.len(),
            steps + 1,
            "case {id}: one chooseMs per chosen token"
        );
        let prefill = number(&probe["prefillSubmitMs"], "prefillSubmitMs")
            + number(&probe["prefillSyncMs"], "prefillSyncMs");
        assert!(
            (prefill - number(&case["prefillMs"], "prefillMs")).abs() < 1e-6,
            "case {id}: prefillMs is its submit + sync"
        );
        let ttft = number(&case["timeToFirstTokenMs"], "timeToFirstTokenMs");
        let expected_ttft = number(&case["visionMs"], "visionMs") + prefill + choose[0];
        assert!(
            (ttft - expected_ttft).abs() < 1e-6,
            "case {id}: time to first token"
        );
        let own: Vec<f64> = (0..steps)
            .map(|k| submit[k] + sync[k] + choose[k + 1])
            .collect();
        // With choose=gpu the steps of a batch of `sync` share its one readback wait.
        let batch = if query.choose == Choose::Gpu {
            query.sync as usize
        } else {
            1
        };
        let latencies: Vec<f64> = own
            .chunks(batch)
            .flat_map(|chunk| {
                let share = chunk.iter().sum::<f64>() / chunk.len() as f64;
                std::iter::repeat_n(share, chunk.len())
            })
            .collect();
        if let Some(max) = latencies.iter().copied().reduce(f64::max) {
            assert!(
                (number(&case["tokenLatency"]["maxMs"], "tokenLatency.maxMs") - max).abs() < 1e-6,
                "case {id}: tokenLatency recomputed"
            );
            assert!(
                number(&case["decodeMs"], "decodeMs") >= latencies.iter().sum::<f64>() - 1e-6,
                "case {id}: the steps fit in decodeMs"
            );
        }
        all_steps.extend(latencies);
    }
    let probe = &summary["decodeProbe"];
    if !all_steps.is_empty() {
        let mut sorted = all_steps.clone();
        sorted.sort_by(f64::total_cmp);
        let p50 = sorted[(sorted.len() as f64 * 0.5).ceil() as usize - 1];
        assert!(
            (number(&probe["tokenLatency"]["p50Ms"], "tokenLatency.p50Ms") - p50).abs() < 1e-6,
            "run tokenLatency p50 recomputed from the cases"
        );
        for name in ["submit", "sync", "choose", "timeToFirstToken"] {
            assert!(number(&probe[name]["p50Ms"], name) >= 0.0);
        }
        number(&probe["tokensPerSecond"], "tokensPerSecond");
    }

    // A completion floor in every realm that ran a session, and a verdict in words.
    let vision_in_a_worker = query.schedule == Schedule::Staged && query.scope == Scope::Full;
    let decoder_in_a_worker = query.realm == Realm::Worker;
    // The page makes a device only for a session of its own.
    let page_session = !decoder_in_a_worker || (query.scope == Scope::Full && !vision_in_a_worker);
    let realms: Vec<&str> = [
        (page_session, "page"),
        (vision_in_a_worker, "worker"),
        (decoder_in_a_worker, "decoderWorker"),
    ]
    .into_iter()
    .filter_map(|(ran, realm)| ran.then_some(realm))
    .collect();
    for realm in realms {
        let floor = &summary["completion"][realm];
        for kind in ["emptyQueue", "dispatchReadback"] {
            assert!(
                number(&floor[kind]["p50Ms"], kind) >= 0.0,
                "{realm} {kind}: {floor}"
            );
            let samples = floor[format!("{kind}Ms")]
                .as_array()
                .expect("samples")
                .len();
            assert_eq!(
                samples,
                floor["rounds"].as_u64().unwrap() as usize,
                "{realm} {kind}"
            );
            assert!(samples >= 20, "{realm} {kind}: at least 20 rounds");
        }
        // Measured in the probe phase, which the runner's sampler saw as a phase of its own.
        if probed_in_its_own_phase {
            let probe_ms = number(&floor["probeMs"], "probeMs");
            assert!(probe_ms > 0.0, "{realm}: probeMs {probe_ms}");
            println!("{realm}: completion-floor probe {probe_ms:.0} ms");
        }
        assert_eq!(
            floor["poll"], poll,
            "{realm} floor measured with the run's poll mode"
        );
        if query.poll == Poll::Kick {
            assert!(
                floor["kicks"].as_u64().is_some_and(|k| k > 0),
                "{realm}: poll=kick kicked: {floor}"
            );
        }
    }
    let check = &summary["completion"]["check"];
    assert!(
        check["verdict"].as_str().is_some_and(|v| !v.is_empty()),
        "completion verdict: {check}"
    );
    assert_eq!(summary["completionBound"], check["bound"]);
    assert!(summary["completionBound"].is_boolean());
    assert_eq!(summary["poll"]["mode"], poll);

    // Warm-up runs kept apart, repeats summarised, the first run set against the steady state.
    let warmup = query.warmup as usize;
    let repeat = query.repeat as usize;
    assert_eq!(
        summary["warmupResults"]
            .as_array()
            .expect("warmupResults")
            .len(),
        warmup
    );
    let repeats = &summary["repeats"];
    assert_eq!(repeats["count"].as_u64(), Some(repeat as u64));
    assert_eq!(
        repeats["perRepeat"].as_array().expect("perRepeat").len(),
        repeat
    );
    assert_eq!(
        repeats["tokensAgree"], true,
        "greedy decoding repeats itself: {repeats}"
    );
    if repeat > 1 {
        let interval = &repeats["interval"]["tokenP50Ms"];
        assert!(
            number(&interval["halfWidth"], "halfWidth") >= 0.0,
            "{interval}"
        );
        assert_eq!(interval["n"].as_u64(), Some(repeat as u64));
    }
    assert_eq!(
        summary["pipelineCompilation"]["first"]["warmup"],
        Value::Bool(warmup > 0),
        "the first run is the warm-up when there is one"
    );
    if query.profile == Profile::Ops {
        let decoder = &summary["profile"]["decoder"];
        assert_eq!(decoder["available"], true, "decoder profile: {decoder}");
        assert!(
            decoder["ops"].as_array().is_some_and(|ops| !ops.is_empty()),
            "per-op figures: {decoder}"
        );
        assert!(
            decoder["placement"]["found"] == true,
            "the node placement was logged: {}",
            decoder["placement"]
        );
        eprintln!(
            "e2e: profile=ops: {} ops, GPU timestamps {}, nodes off WebGPU {}",
            decoder["ops"].as_array().map_or(0, Vec::len),
            decoder["gpuTimestamps"],
            decoder["placement"]["offDevice"]
                .as_array()
                .map_or(0, Vec::len)
        );
    }
}

/// On an adapter without `shader-f16` the fp16 configuration must be refused in words.
fn check_refused_without_f16(run: &Run) {
    assert_eq!(run.exit_code, Some(1), "{}", run.describe());
    check_no_orphans(run);
    let error = run
        .record("error")
        .unwrap_or_else(|| panic!("no error record\n{}", run.describe()));
    let message = error["body"]["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("shader-f16"),
        "the refusal does not name shader-f16: {message}"
    );
    assert!(
        run.stderr.contains(message.lines().next().unwrap_or("")),
        "the runner did not print the page's message"
    );
    assert!(
        run.record("result").is_none(),
        "a refused configuration posted a result"
    );
}

fn every_configuration(browser: &str) {
    for query in CONFIGURATIONS {
        let run = run(browser, query);
        if query == FP16 && !run.adapter_has("shader-f16") {
            check_refused_without_f16(&run);
        } else {
            check_finished(&run);
        }
    }
}

/// The choice on the GPU needs more than `maxTokens=2` to queue steps: its batches never pass
/// `maxTokens`, so two tokens make one batch of one step. smoke1's string is five characters
/// and EOS its sixth choice: with `maxTokens=8` and `sync=4` the loop queues one full batch of
/// four steps, then one of three that EOS ends after its first (the other two discarded).
/// The reference is the same reading with the seed's loop (`choose=cpu`).
/// The seed's loop on smoke1, read to EOS at the sixth choice: the verified run, which
/// `reads_to_eos_as_the_wasm_reference` makes anyway (a Chromium run costs minutes).
const BATCHED_REFERENCE: &str = VERIFIED;
const GPU_BATCHED: &str = "cases=smoke1&maxTokens=8&choose=gpu&sync=4";
/// The seed's loop on smoke1 without the reference check, for runs in another realm.
const BATCHED_REFERENCE_QUERY: &str = "cases=smoke1&maxTokens=8";
/// Graph capture on a static-shape decoder (`capture=on` needs one and `choose=gpu`): the fused
/// one, the fastest on a real GPU and, with its 8-bit weights, about 7× faster than
/// `fixed-kv-gpu` on lavapipe; both replay through the same
/// `browser/decoding/decode-capture.js`.
const CAPTURED_BATCHED: &str =
    "cases=smoke1&maxTokens=8&decoder=fixed-kv-fused&choose=gpu&sync=4&capture=on";
/// One of the decoders whose every node runs on WebGPU: its weights are 4-bit, yet it reads
/// smoke1 to EOS with the baseline's tokens in both browsers (and smoke2 at `maxTokens=4`).
const NEW_DECODER_BATCHED: &str = "cases=smoke1&maxTokens=8&decoder=nbits-int4&choose=gpu&sync=4";

/// The reference read to EOS (`check_read_to_eos`: before `maxTokens`, as the CPU oracle
/// read it) after at least 1 + 4 tokens, so the batched runs did queue a full batch of four
/// and steps past EOS.
fn check_batched_reference(run: &Run) {
    let readings = check_finished(run);
    let cases = case_results(run);
    let summary = &run.record("result").expect("a result")["summary"];
    checks::check_read_to_eos(summary, &cases, &run.config, &readings);
    for case in &cases {
        let tokens = token_ids(case).len();
        assert!(
            tokens >= 5,
            "case {}: {tokens} tokens; the batched runs need at least 5 to fill a batch",
            case["id"]
        );
    }
}

/// Every case of `other` holds the same token ids as the same case of `reference`, in order.
fn assert_same_tokens(reference: &Run, other: &Run) {
    let (left, right) = (case_results(reference), case_results(other));
    assert!(!left.is_empty(), "{:?}: no cases", reference.query);
    assert_eq!(
        left.len(),
        right.len(),
        "{:?} has {} cases, {:?} {}",
        reference.query,
        left.len(),
        other.query,
        right.len()
    );
    for (left, right) in left.iter().zip(&right) {
        assert_eq!(
            left["id"], right["id"],
            "{:?}: the cases in order",
            other.query
        );
        let (a, b) = (token_ids(left), token_ids(right));
        assert!(
            !a.is_empty(),
            "{:?} case {}: no token",
            reference.query,
            left["id"]
        );
        assert_eq!(
            a, b,
            "case {}: the tokens of {:?} and {:?} differ",
            left["id"], reference.query, other.query
        );
    }
}

/// Chromium costs seconds per decode step on SwiftShader, so one run covers both new paths.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_default_configuration() {
    check_finished(&run("chromium", DEFAULT));
    let reference = run("chromium", BATCHED_REFERENCE);
    check_batched_reference(&reference);
    let new_decoder = run("chromium", NEW_DECODER_BATCHED);
    check_finished(&new_decoder);
    assert_same_tokens(&reference, &new_decoder);
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_default_configuration() {
    check_finished(&run("firefox", DEFAULT));
    let reference = run("firefox", BATCHED_REFERENCE);
    check_batched_reference(&reference);
    // Steps queued per readback, on the default decoder and on a new one: the same tokens.
    for query in [GPU_BATCHED, NEW_DECODER_BATCHED] {
        let gpu = run("firefox", query);
        check_finished(&gpu);
        assert_same_tokens(&reference, &gpu);
    }
}

/// The queue kick in both realms of the staged schedule (the vision worker's too) and a
/// warm-up run; Firefox only, where it costs about a minute on lavapipe (`EVERY_OTHER_VALUE`
/// kicks in both browsers).
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_kicked_staged_configuration() {
    check_finished(&run("firefox", "poll=kick&warmup=1"));
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_every_parameter_value() {
    every_configuration("chromium");
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_every_parameter_value() {
    every_configuration("firefox");
}

/// The case results of a finished run; a run without a result or a result without its list
/// of cases fails here instead of comparing as empty.
fn case_results(run: &Run) -> Vec<Value> {
    let result = run
        .record("result")
        .unwrap_or_else(|| panic!("no result\n{}", run.describe()));
    result["summary"]["results"]
        .as_array()
        .unwrap_or_else(|| {
            panic!(
                "the result has no list of cases: {}\n{}",
                result["summary"]["results"],
                run.describe()
            )
        })
        .clone()
}

fn token_ids(case: &Value) -> Vec<u64> {
    case["tokenIds"]
        .as_array()
        .unwrap_or_else(|| panic!("case {}: tokenIds is not a list", case["id"]))
        .iter()
        .map(|t| {
            t.as_u64()
                .unwrap_or_else(|| panic!("case {}: token id {t} is not one", case["id"]))
        })
        .collect()
}

/// Chromium (SwiftShader) and Firefox (lavapipe) run the same graphs on different software
/// GPUs. Every token of every case must be the same in both: greedy choice from logits that
/// differ only in the last bits agrees unless two logits nearly tie, and a difference beyond
/// that is a bug in one of the paths. Only configurations whose tokens the model chooses
/// take part (`scope=decoder` forces them); the default decoder and `fixed-kv` between them
/// cover both cache layouts.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn same_tokens_in_chromium_and_firefox() {
    let mut compared = 0usize;
    for query in [DEFAULT, FIXED_KV] {
        let chromium = run("chromium", query);
        let firefox = run("firefox", query);
        assert_ne!(
            chromium.config.scope,
            Scope::Decoder,
            "{query:?} forces its tokens"
        );
        let (left, right) = (case_results(&chromium), case_results(&firefox));
        assert_eq!(
            left.len(),
            right.len(),
            "{query:?}: chromium has {} cases, firefox {}",
            left.len(),
            right.len()
        );
        assert!(!left.is_empty(), "{query:?}: no cases");
        for (left, right) in left.iter().zip(right.iter()) {
            assert_eq!(left["id"], right["id"], "{query:?}: the cases in order");
            let (a, b) = (token_ids(left), token_ids(right));
            eprintln!(
                "e2e: {query:?} case {}: chromium {a:?} firefox {b:?}",
                left["id"]
            );
            assert!(!a.is_empty(), "{query:?} case {}: no token", left["id"]);
            assert_eq!(
                a, b,
                "{query:?} case {}: the tokens differ (chromium, firefox)",
                left["id"]
            );
            compared += a.len();
        }
    }
    eprintln!("e2e: chromium and firefox agree on all {compared} tokens");
}

/// The full reading: the default decoder and `fixed-kv` decode smoke2 to EOS with the CPU
/// oracle's tokens (nCER recomputed here), and every token and every step's logits agree with
/// the same decode on onnxruntime-web's WASM (CPU) execution provider (`verify=wasm`). The `fixed-kv` run is the
/// one `every_configuration` and the cross-browser comparison use.
fn reads_to_eos_as_the_wasm_reference(browser: &str) {
    for query in [VERIFIED, FIXED_KV] {
        let run = run(browser, query);
        let readings = check_finished(&run);
        let summary = &run.record("result").expect("a result")["summary"];
        checks::check_read_to_eos(summary, &case_results(&run), &run.config, &readings);
    }
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_reads_to_eos_as_the_wasm_reference() {
    reads_to_eos_as_the_wasm_reference("chromium");
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_reads_to_eos_as_the_wasm_reference() {
    reads_to_eos_as_the_wasm_reference("firefox");
}

/// A sweep records every combination, and a second invocation finds them finished and runs
/// nothing. The combinations are ones the adapter refuses quickly where it lacks
/// `shader-f16` (Chromium on SwiftShader), so the test costs seconds there.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn sweep_records_every_combination_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("sweep.jsonl");
    let sweep = |runs: &str| {
        Command::new(BIN)
            .arg("--root")
            .arg(repository_root())
            .args([
                "sweep",
                "--browser",
                "chromium",
                "--timeout",
                &run_timeout().to_string(),
                "--runs",
                runs,
            ])
            .args([
                "--param",
                "tier=242",
                "--param",
                "decoder=baseline,fixed-kv",
                "--param",
                "cases=smoke2",
                "--param",
                "maxTokens=1",
            ])
            .arg("--results")
            .arg(&results)
            .output()
            .expect("running ocr-bench sweep")
    };
    let first = sweep("1");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 0 already finished"),
        "{stderr}"
    );
    let closing: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "run")
        .collect();
    let queries: Vec<&str> = closing
        .iter()
        .map(|r| r["query"].as_str().unwrap())
        .collect();
    assert_eq!(
        queries,
        [
            "tier=242&cases=smoke2&maxTokens=1",
            "tier=242&decoder=fixed-kv&cases=smoke2&maxTokens=1"
        ]
    );
    assert!(
        closing
            .iter()
            .all(|r| r["outcome"] == "result" || r["outcome"] == "error"),
        "{closing:?}"
    );
    // Each run names where its browser ran, which the resume below matches on.
    assert!(
        closing.iter().all(|r| r["target"] == "local"),
        "{closing:?}"
    );
    let table = String::from_utf8_lossy(&first.stdout);
    assert!(table.contains("decoder=fixed-kv"), "{table}");

    let second = sweep("1");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 2 already finished"),
        "{stderr}"
    );
    // --runs: two more runs of each combination, with the runner's own footprint after each.
    let third = sweep("3");
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(third.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 3 run(s), 2 already finished in"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("runner after run").count(), 4, "{stderr}");
    let table = String::from_utf8_lossy(&third.stdout);
    assert!(table.contains("runner over 4 runs: RSS"), "{table}");
    let closing_runs = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""kind":"run""#))
        .count();
    assert_eq!(closing_runs, 6, "each combination three times");
    assert!(descendants().is_empty(), "{:?}", descendants());
}

/// A run recorded by `ocr-bench run` (Firefox, the default configuration on `smoke2`), as
/// the browser tests would see it.
fn recorded_run() -> Run {
    let path = repository_root().join("runner/tests/data/smoke2.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    // Recorded before `verify` existed: its configs read as verify=none, spelled so here as
    // the core now writes them.
    for record in &mut records {
        for part in ["body", "summary"] {
            if let Some(config) = record[part]["config"].as_object_mut() {
                config.entry("verify").or_insert_with(|| "none".into());
            }
        }
    }
    let query = records[0]["query"].as_str().expect("query").to_owned();
    Run {
        config: parse_query(&query).expect("the recorded query"),
        query,
        exit_code: Some(0),
        stderr: String::new(),
        records,
        orphans: Vec::new(),
        seconds: 0.0,
        recorded_before_sessions: true,
        recorded_before_probe_phase: true,
    }
}

/// The checks pass a real recorded run, and each corruption a broken page could make fails
/// them: no browser needed, so this runs with the quick tests.
#[test]
fn the_checks_accept_a_recorded_run_and_reject_each_corruption() {
    check_finished(&recorded_run());

    type Corruption = fn(&mut Value);
    let corruptions: [(&str, Corruption); 12] = [
        ("a token more than tokenIds", |s| {
            s["results"][0]["tokens"] = 3.into()
        }),
        ("another token id", |s| {
            s["results"][1]["tokenIds"][1] = 14211.into()
        }),
        ("a reading the tokens do not spell", |s| {
            s["results"][0]["actual"] = "ありがとう".into()
        }),
        ("an nCER the distances do not give", |s| {
            s["nCER"] = (4.0 / 10.0).into()
        }),
        ("null where a number must be", |s| {
            s["medianMs"] = Value::Null
        }),
        ("the lower median", |s| {
            s["medianMs"] = s["results"][1]["totalMs"].clone()
        }),
        ("a peak that is not the largest case", |s| {
            s["peakCaseMs"] = s["results"][1]["totalMs"].clone()
        }),
        ("another maxTokens than asked", |s| {
            s["config"]["maxTokens"] = 3.into()
        }),
        ("a seed field that disagrees with the query", |s| {
            s["scheduleMode"] = "resident".into()
        }),
        ("another decoder file than the manifest's", |s| {
            s["manifest"]["decoder"]["url"] = s["manifest"]["decoder"]["url"]
                .as_str()
                .unwrap()
                .replace("unified_gather", "gather_before_dq")
                .into()
        }),
        (
            "external data where the query asks for embedded weights",
            |s| {
                s["manifest"]["vision"]["external"] = serde_json::json!({ "path": "x", "url": "y" })
            },
        ),
        ("a case the evaluation set does not have", |s| {
            s["results"][1]["expected"] = "ＯＫだよ".into()
        }),
    ];
    for (what, corrupt) in corruptions {
        let mut run = recorded_run();
        let result = run
            .records
            .iter_mut()
            .find(|r| r["kind"] == "result")
            .expect("a result record");
        corrupt(&mut result["summary"]);
        let caught = std::panic::catch_unwind(|| check_finished(&run));
        assert!(caught.is_err(), "the checks passed {what}");
    }

    // A phase the page skipped.
    let mut run = recorded_run();
    let skipped = run
        .records
        .iter()
        .position(|r| r["kind"] == "mark" && r["phase"] == "vision-release")
        .expect("a vision-release mark");
    run.records.remove(skipped);
    assert!(std::panic::catch_unwind(|| check_finished(&run)).is_err());
}

/// A page loop that chose `character` at `position` of case `case`, with everything the page
/// derives from the tokens made to agree (text, reading, distance, exact, the totals, nCER),
/// so that no check of the record's own consistency can see it.
fn choose_another_token(summary: &mut Value, case: usize, position: usize, character: &str) {
    let root = repository_root();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("models/manifest.json")).unwrap())
            .unwrap();
    let vocab: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(
            root.join("models")
                .join(manifest["vocab"].as_str().unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    let offset = manifest["tokens"]["vocabOffset"].as_u64().unwrap();
    let spell = |ids: &[u64]| -> String {
        ids.iter()
            .filter_map(|&t| t.checked_sub(offset))
            .map(|index| vocab[index as usize].as_str())
            .collect()
    };
    let id = offset + vocab.iter().position(|c| c == character).unwrap() as u64;
    let entry = &mut summary["results"][case];
    let mut tokens = token_ids(entry);
    assert_ne!(tokens[position], id, "{character:?} is already there");
    tokens[position] = id;
    let reading = spell(&tokens);
    let expected = checks::scoring_text(entry["expected"].as_str().unwrap()).unwrap();
    let actual = checks::scoring_text(&reading).unwrap();
    entry["tokenIds"] = serde_json::json!(tokens);
    entry["text"] = reading.clone().into();
    entry["actual"] = reading.into();
    entry["distance"] = checks::levenshtein(&expected, &actual).into();
    entry["exact"] = (expected == actual).into();
    let results = summary["results"].as_array().unwrap();
    let total = |field: &str| {
        results
            .iter()
            .map(|c| c[field].as_u64().unwrap())
            .sum::<u64>()
    };
    let (distance, characters) = (total("distance"), total("characters"));
    let exact = results.iter().filter(|c| c["exact"] == true).count();
    summary["distance"] = distance.into();
    summary["exact"] = exact.into();
    summary["nCER"] = (distance as f64 / characters as f64).into();
}

/// A page whose loop chose another token than the model gives, in a record that is otherwise
/// consistent: every check of the record against itself and the evaluation set passes it, and
/// the CPU oracle fails it, naming the case and the position. No browser needed.
#[test]
fn a_wrong_token_fails_the_checks_through_the_cpu_oracle() {
    let mut run = recorded_run();
    let result = run
        .records
        .iter_mut()
        .find(|r| r["kind"] == "result")
        .expect("a result record");
    choose_another_token(&mut result["summary"], 0, 1, "い");
    let refused = std::panic::catch_unwind(|| check_finished(&run))
        .expect_err("the checks passed a token the CPU did not choose");
    let message = refused
        .downcast_ref::<String>()
        .map_or("(not a formatted message)", String::as_str);
    assert!(
        message.starts_with("CPU oracle (")
            && message.contains("case 1 position 1: the page chose"),
        "the record was refused for another reason than the oracle's: {message}"
    );
}

/// The same in a real browser: the test-only `diverge-token` fault (docs/benchmark-protocol.md,
/// "Fault injection") makes the page's loop take the runner-up at smoke1's first choice, and
/// without `verify=wasm` nothing in the page notices. The run finishes and its record agrees
/// with itself; the CPU oracle fails it at that choice.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_wrong_token_fails_the_checks_through_the_cpu_oracle() {
    let run = launch(
        "firefox",
        "cases=smoke1&maxTokens=2",
        Some("diverge-token@decode"),
    );
    let refused = std::panic::catch_unwind(|| check_finished(&run))
        .expect_err("the checks passed a page that took the runner-up");
    let message = refused
        .downcast_ref::<String>()
        .map_or("(not a formatted message)", String::as_str);
    assert!(
        message.starts_with("CPU oracle (")
            && message.contains("case 1 position 0: the page chose"),
        "the run was refused for another reason than the oracle's: {message}\n{}",
        run.describe()
    );
}

/// `capture=on` (browser/decoding/decode-capture.js): the decode steps replay one graph that
/// onnxruntime-web recorded, on the static-shape decoder, with four steps queued per readback;
/// they must read smoke1 with the seed loop's tokens (a full batch, then one that EOS ends).
fn graph_capture_reads_the_seeds_tokens(browser: &str) {
    let reference = run(browser, BATCHED_REFERENCE);
    check_batched_reference(&reference);
    let captured = run(browser, CAPTURED_BATCHED);
    check_finished(&captured);
    assert!(
        captured.record("result").expect("a result")["summary"]["sessions"]
            .as_array()
            .is_some_and(|sessions| sessions
                .iter()
                .any(|s| s["options"]["enableGraphCapture"] == true)),
        "capture=on: no session was created with enableGraphCapture\n{}",
        captured.describe()
    );
    assert_same_tokens(&reference, &captured);
}

/// `realm=worker` against `realm=page`: the same tokens per case, the decoder worker's own
/// memory in the record (its GPU bytes per sample and at the end, its onnxruntime and core
/// heaps, its completion floor), and a page that held no decoder of its own.
fn decoder_in_a_worker(browser: &str, query: &str, page_query: &str) {
    let worker = run(browser, query);
    check_finished(&worker);
    assert_eq!(worker.config.realm, Realm::Worker, "{query:?}");
    let page = run(browser, page_query);
    check_finished(&page);
    assert_eq!(page.config.realm, Realm::Page, "{page_query:?}");
    let (in_worker, in_page) = (case_results(&worker), case_results(&page));
    assert_eq!(in_worker.len(), in_page.len(), "{query:?}: the cases");
    assert!(!in_worker.is_empty(), "{query:?}: no cases");
    for (left, right) in in_worker.iter().zip(&in_page) {
        assert_eq!(left["id"], right["id"], "{query:?}: the cases in order");
        let (a, b) = (token_ids(left), token_ids(right));
        eprintln!(
            "e2e: {browser} case {}: realm=worker {a:?} realm=page {b:?}",
            left["id"]
        );
        assert!(!a.is_empty(), "{query:?} case {}: no token", left["id"]);
        assert_eq!(
            a, b,
            "{browser} case {}: the tokens of {query:?} and {page_query:?} differ",
            left["id"]
        );
    }

    let summary = &worker.record("result").expect("a result")["summary"];
    assert_eq!(
        summary["config"]["realm"], "worker",
        "{}",
        summary["config"]
    );
    let samples = summary["memorySamples"].as_array().expect("memorySamples");
    let sample = |label: &str| {
        samples
            .iter()
            .find(|s| s["label"].as_str().is_some_and(|l| l.starts_with(label)))
            .unwrap_or_else(|| panic!("no {label} sample: {samples:?}"))
    };
    let heaps = |realm: &Value| -> Vec<String> {
        realm["wasmHeaps"]
            .as_array()
            .unwrap_or_else(|| panic!("no wasmHeaps in {realm}"))
            .iter()
            .map(|h| {
                assert!(h["bytes"].as_u64().is_some_and(|b| b > 0), "{h}");
                text_of(&h["label"])
            })
            .collect()
    };
    for label in ["decoder-session-ready", "after-case-"] {
        let decoder = &sample(label)["decoderWorker"];
        let live = decoder["gpu"]["liveBytes"].as_u64().unwrap_or(0);
        assert!(
            live > 0,
            "{label}: the decoder worker's live GPU bytes: {decoder}"
        );
        let labels = heaps(decoder);
        for heap in ["onnxruntime", "core"] {
            assert!(
                labels.iter().any(|l| l == heap),
                "{label}: no {heap} heap in the decoder worker: {labels:?}"
            );
        }
        // The page decodes nothing: no device (staged: none at all) and no onnxruntime heap.
        let page_realm = sample(label);
        assert!(
            page_realm["gpu"].is_null(),
            "{label}: the page made a device: {}",
            page_realm["gpu"]
        );
        assert!(
            !heaps(page_realm).iter().any(|l| l == "onnxruntime"),
            "{label}: onnxruntime started in the page: {page_realm}"
        );
    }
    let gpu = &summary["gpuMemory"];
    assert!(gpu["page"].is_null(), "the page's device: {}", gpu["page"]);
    assert!(
        gpu["decoderWorker"]["peakBytes"]
            .as_u64()
            .is_some_and(|b| b > 0),
        "the decoder worker's GPU peak: {gpu}"
    );
    assert_eq!(
        gpu["decoderWorker"]["deviceDestroyed"], true,
        "released: {gpu}"
    );
    assert!(
        summary["environment"]["decoderWorkerAdapter"].is_object(),
        "{}",
        summary["environment"]
    );
    let leak = &gpu["leakCheck"]["afterCases"];
    assert_eq!(
        leak.as_array().map(Vec::len),
        Some(in_worker.len()),
        "the leak check follows the decoder worker's device: {leak}"
    );
    eprintln!(
        "e2e: {browser} {query:?}: decoder worker GPU peak {} bytes, token p50 {} ms (realm=page {} ms)",
        gpu["decoderWorker"]["peakBytes"],
        summary["decodeProbe"]["tokenLatency"]["p50Ms"],
        page.record("result").expect("a result")["summary"]["decodeProbe"]["tokenLatency"]["p50Ms"]
    );
}

fn text_of(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
        .to_owned()
}

/// The GPU chooser with 4 steps queued per readback, in the worker, against the seed's loop
/// in the page on smoke1.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_decoder_in_a_worker() {
    decoder_in_a_worker(
        "firefox",
        &format!("{GPU_BATCHED}&realm=worker"),
        BATCHED_REFERENCE,
    );
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_graph_capture() {
    graph_capture_reads_the_seeds_tokens("firefox");
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_decoder_in_a_worker() {
    decoder_in_a_worker(
        "chromium",
        &format!("{BATCHED_REFERENCE_QUERY}&realm=worker"),
        BATCHED_REFERENCE,
    );
}

/// The other parameters in the worker: the resident schedule (embeddings read back from the
/// page's vision output), the queue kick in both realms, a warm-up run, two repeats (the same
/// tokens each pass), onnxruntime-web's profiler of the worker's session and the WASM
/// reference in the page against the logits the worker sent back; and the decoder-only scope,
/// whose zeros the worker makes. Firefox only: each costs about two minutes on lavapipe.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_decoder_in_a_worker_with_the_other_parameters() {
    for query in [
        "realm=worker&schedule=resident&poll=kick&warmup=1&repeat=2&profile=ops&verify=wasm",
        "realm=worker&scope=decoder",
    ] {
        let run = run("firefox", query);
        check_finished(&run);
        let summary = &run.record("result").expect("a result")["summary"];
        assert!(
            summary["completion"]["decoderWorker"]["dispatchReadback"]["p50Ms"].is_number(),
            "{query:?}: the decoder worker's floor: {}",
            summary["completion"]
        );
    }
}
