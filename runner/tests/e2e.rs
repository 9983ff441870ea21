//! End to end: the real page, worker, onnxruntime-web and models, in headless Chromium and
//! Firefox, driven through `ocr-bench run`. Slow (the page on SwiftShader takes tens of
//! seconds per run and more on a busy machine), so every test is ignored by default:
//!
//! ```text
//! cargo test -p ocr-bench --test e2e -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! They need the wasm build in `www/pkg/`, the models in `models/generated/` and the
//! `smoke2` evaluation set. `OCR_BENCH_E2E_TIMEOUT` (seconds, default 900) bounds each run;
//! `OCR_BENCH_E2E_RESULTS=FILE` also appends every run's records to FILE (each run otherwise
//! writes to a temporary file of its own).
//!
//! Every configuration runs once per browser and is remembered for the rest of the test
//! binary, so the cross-browser comparison reuses the runs of the per-browser tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ocr_bench_core::score::score_case;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

/// Short cases and few tokens keep each run to tens of seconds on SwiftShader.
const BASE: &str = "cases=smoke2&maxTokens=2";

/// Between them these cover every value of every choice parameter (the free-form ones take
/// `smoke2`, the default manifest and 2 tokens). The values that need `shader-f16` (tier
/// 242, decoder fp16-matmul) sit together in the last one, so that on an adapter without
/// it only that configuration is refused and the others still run every other value.
const DEFAULT: &str = "";
/// The decode probe's own values ride along in the decoder-only one, where a repeat costs one
/// short prefill: a throttled queue kick, two repeats, onnxruntime-web's profiler.
const EVERY_OTHER_VALUE: &str = "memory=default&loader=bytes&schedule=resident&decoder=gather-opt&scope=decoder&weights=external&poll=kick&kickMs=1&repeat=2&profile=ops";
const FIXED_KV: &str = "decoder=fixed-kv&schedule=resident&weights=external";
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
    exit_code: Option<i32>,
    stderr: String,
    records: Vec<Value>,
    /// Processes left in this test's tree after the runner exited (should be none).
    orphans: Vec<String>,
    seconds: f64,
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
        let tasks = match std::fs::read_dir(format!("/proc/{pid}/task")) {
            Ok(tasks) => tasks,
            Err(e) if pid == own => {
                panic!("cannot read /proc/{pid}/task, so no orphan check is possible: {e}")
            }
            Err(_) => continue,
        };
        for task in tasks.flatten() {
            let text = match std::fs::read_to_string(task.path().join("children")) {
                Ok(text) => text,
                Err(e) if pid == own => panic!(
                    "cannot read {}: {e}; the orphan check needs /proc/PID/task/TID/children (a kernel with CONFIG_PROC_CHILDREN)",
                    task.path().join("children").display()
                ),
                Err(_) => String::new(),
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

fn launch(browser: &str, query: &str) -> Run {
    // As a subreaper, this test inherits any browser process the runner failed to stop,
    // so a leftover cannot hide by being re-parented to init.
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer and touches no memory.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) },
        0
    );
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let full_query = if query.is_empty() {
        BASE.to_owned()
    } else {
        format!("{BASE}&{query}")
    };
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
            "--results",
        ])
        .arg(&results)
        .arg(&full_query)
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
    let run = Run {
        query: full_query,
        exit_code: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        records,
        orphans,
        seconds,
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
        .or_insert_with(|| launch(browser, query))
        .clone()
}

/// The phases of a configuration, from docs/benchmark-protocol.md ("Phases"), not from the page.
fn expected_phases(summary: &Value) -> Vec<&'static str> {
    if summary["benchmarkScope"] == "decoder" {
        vec!["baseline", "decoder-load", "decoder-run", "release"]
    } else if summary["scheduleMode"] == "resident" {
        vec![
            "baseline",
            "vision-load",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    } else {
        vec![
            "baseline",
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

/// Everything a finished run must show.
fn check_finished(run: &Run) {
    assert_eq!(run.exit_code, Some(0), "{}", run.describe());
    check_no_orphans(run);
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
    let cases = summary["results"].as_array().expect("results is an array");
    assert!(!cases.is_empty(), "no case results");
    for case in cases {
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
    assert_eq!(summary["cases"].as_u64(), Some(cases.len() as u64));
    for case in cases {
        for field in CASE_FIELDS {
            assert!(
                case.get(field).is_some(),
                "case {} lacks `{field}`",
                case["id"]
            );
        }
    }
    check_probe(summary);

    // The records carry who ran it where.
    assert!(
        result["browser"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        result["browser"]
    );
    // The environment is written once, in the start record.
    let start = run
        .record("start")
        .unwrap_or_else(|| panic!("no start record\n{}", run.describe()));
    assert!(
        start["body"]["ortVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("1.")),
        "{}",
        start["body"]["ortVersion"]
    );
    assert!(start["body"]["adapter"].is_object(), "{}", start["body"]);
    assert!(
        start["machine"]["cores"].as_u64().is_some_and(|c| c >= 1),
        "{}",
        start["machine"]
    );

    // Accuracy, recomputed here from the expected and actual text with the core's scoring.
    if summary["accuracyApplicable"] == true {
        let (mut distance, mut characters) = (0usize, 0usize);
        for case in cases {
            let score = score_case(
                case["expected"].as_str().unwrap(),
                case["actual"].as_str().unwrap(),
            );
            assert_eq!(
                case["distance"].as_u64(),
                Some(score.distance as u64),
                "case {}",
                case["id"]
            );
            assert_eq!(
                case["exact"].as_bool(),
                Some(score.exact),
                "case {}",
                case["id"]
            );
            distance += score.distance;
            characters += score.characters;
        }
        let ncer = distance as f64 / characters as f64;
        let reported = summary["nCER"]
            .as_f64()
            .expect("nCER is a number where accuracy applies");
        assert!(
            (reported - ncer).abs() < 1e-12,
            "reported nCER {reported}, recomputed {ncer}"
        );
        assert_eq!(summary["distance"].as_u64(), Some(distance as u64));
    } else {
        assert_eq!(
            summary["nCER"],
            Value::Null,
            "decoder-only scope: nCER is not applicable"
        );
        assert_eq!(
            summary["exact"],
            Value::Null,
            "decoder-only scope: exact is not applicable"
        );
    }

    // Process memory above zero in every phase of this schedule, and sampled fast enough.
    let memory = &result["processMemory"];
    assert_eq!(memory["available"], true, "{memory}");
    for phase in expected_phases(summary) {
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
}

fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// The decode probe (docs/benchmark-protocol.md): typed, consistent with the case times, and
/// with a completion floor per realm and a verdict in words.
fn check_probe(summary: &Value) {
    let config = &summary["config"];
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
        let latencies: Vec<f64> = (0..steps)
            .map(|k| submit[k] + sync[k] + choose[k + 1])
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
    let realms: &[&str] =
        if summary["scheduleMode"] == "staged" && summary["benchmarkScope"] != "decoder" {
            &["page", "worker"]
        } else {
            &["page"]
        };
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
        assert_eq!(
            floor["poll"], config["poll"],
            "{realm} floor measured with the run's poll mode"
        );
        if config["poll"] == "kick" {
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
    assert_eq!(summary["poll"]["mode"], config["poll"]);

    // Warm-up runs kept apart, repeats summarised, the first run set against the steady state.
    let warmup = config["warmup"].as_u64().expect("config.warmup") as usize;
    let repeat = config["repeat"].as_u64().expect("config.repeat") as usize;
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
    if config["profile"] == "ops" {
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

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn chromium_default_configuration() {
    check_finished(&run("chromium", DEFAULT));
}

#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_default_configuration() {
    check_finished(&run("firefox", DEFAULT));
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

/// Chromium (SwiftShader) and Firefox (lavapipe) run the same graphs on different software
/// GPUs; their float results differ in the last bits, so a near-tie between two logits can
/// tip greedy choice. Exact identity is required for the first token of every case (the
/// prefill, where the trained model's margin is large), and the agreement over all tokens is
/// printed.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn same_tokens_in_chromium_and_firefox() {
    let (mut agreeing, mut compared) = (0usize, 0usize);
    for query in [DEFAULT, EVERY_OTHER_VALUE, FIXED_KV] {
        let chromium = run("chromium", query);
        let firefox = run("firefox", query);
        let cases = |run: &Run| -> Vec<Value> {
            let result = run
                .record("result")
                .unwrap_or_else(|| panic!("no result\n{}", run.describe()));
            result["summary"]["results"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        for (left, right) in cases(&chromium).iter().zip(cases(&firefox).iter()) {
            assert_eq!(left["id"], right["id"]);
            let ids = |case: &Value| -> Vec<u64> {
                case["tokenIds"]
                    .as_array()
                    .expect("tokenIds")
                    .iter()
                    .filter_map(Value::as_u64)
                    .collect()
            };
            let (a, b) = (ids(left), ids(right));
            assert!(
                !a.is_empty() && !b.is_empty(),
                "case {} decoded no token",
                left["id"]
            );
            assert_eq!(
                a[0], b[0],
                "{query:?} case {}: first token differs: chromium {a:?}, firefox {b:?}",
                left["id"]
            );
            let positions = a.len().max(b.len());
            agreeing += a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
            compared += positions;
            eprintln!(
                "e2e: {query:?} case {}: chromium {a:?} firefox {b:?}",
                left["id"]
            );
        }
    }
    assert!(compared > 0);
    eprintln!(
        "e2e: token agreement chromium vs firefox: {agreeing}/{compared} = {:.3} (positions up to the first difference)",
        agreeing as f64 / compared as f64
    );
}

/// A sweep records every combination, and a second invocation finds them finished and runs
/// nothing. The combinations are ones the adapter refuses quickly where it lacks
/// `shader-f16` (Chromium on SwiftShader), so the test costs seconds there.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn sweep_records_every_combination_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("sweep.jsonl");
    let sweep = || {
        Command::new(BIN)
            .arg("--root")
            .arg(repository_root())
            .args([
                "sweep",
                "--browser",
                "chromium",
                "--timeout",
                &run_timeout().to_string(),
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
    let first = sweep();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s), 0 already finished"),
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
    let table = String::from_utf8_lossy(&first.stdout);
    assert!(table.contains("decoder=fixed-kv"), "{table}");

    let second = sweep();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("2 combination(s), 2 already finished"),
        "{stderr}"
    );
    assert!(descendants().is_empty(), "{:?}", descendants());
}
