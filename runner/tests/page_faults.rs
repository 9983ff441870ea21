//! The GPU-side fault matrix: a real `ocr-bench run` of the benchmark page (onnxruntime-web,
//! the worker and the models) in headless Firefox on short runs, each hit by one fault: the
//! page's device lost in the middle of decoding, the vision worker throwing or ending during
//! encode, a page that stops reporting, the process that holds the WebGPU device killed, a
//! corrupt image, and Ctrl-C during a sweep then its resumption. The in-page faults come from
//! the test-only `OCR_BENCH_INJECT` (`docs/benchmark-protocol.md`, "Fault injection").
//!
//! Each checks the message naming the fault, that every case finished before it is in the
//! results file, that the run is marked failed and never scored, that no browser process or
//! profile is left, and the exit status for its cause (`runner/README.md`, "Exit status").
//! Where Firefox or the built page and models are missing, each fails naming what installs or
//! builds them (skipped instead under `OCR_BENCH_SKIP_BROWSER_TESTS=1`). About 6 minutes in all on
//! the 2-core development machine at a load of 20 (the hang alone waits its 45 s timeout, and
//! longer where the page is slower to reach it).

mod harness;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use harness::{firefox_fault, records, Fault, Running, BIN};

/// The checkout: the page, the worker, the built core and models.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether the page can run here: the wasm core and the models are built. Where they are not,
/// the test fails naming what builds them (or is skipped under `OCR_BENCH_SKIP_BROWSER_TESTS=1`).
fn page_built() -> bool {
    let root = checkout();
    let missing: Vec<&str> = [
        "pkg/ocr_bench_core_bg.wasm",
        "models/generated/vision_int4.onnx",
        "models/eval/smoke2/cases.json",
        "node_modules/onnxruntime-web",
    ]
    .into_iter()
    .filter(|p| !root.join(p).exists())
    .collect();
    if !missing.is_empty() {
        harness::skip_or_fail(
            &format!("the page is not built: {} missing", missing.join(", ")),
            "./scripts/setup && ./scripts/build-wasm && (cd scripts && ../.venv/bin/python -m ocrmodel.build_models)",
        );
    }
    missing.is_empty()
}

/// `ocr-bench run` of the benchmark page in Firefox with `query`, and the fault `inject`.
fn run_page(
    fault: &Fault,
    root: &Path,
    query: &str,
    inject: Option<&str>,
    timeout_s: u64,
) -> Running {
    let mut args: Vec<OsString> = vec!["--root".into(), root.into()];
    for arg in [
        "run",
        "--browser",
        "firefox",
        "--timeout",
        &timeout_s.to_string(),
        "--results",
    ] {
        args.push(arg.into());
    }
    args.push(fault.path("results.jsonl").into());
    args.push(query.into());
    let env: Vec<(&str, &str)> = inject
        .map(|spec| ("OCR_BENCH_INJECT", spec))
        .into_iter()
        .collect();
    fault.start(&args, &env)
}

fn kinds(all: &[Value]) -> Vec<&str> {
    all.iter().map(|r| r["kind"].as_str().unwrap()).collect()
}

/// The results of a failed run: `progress` records for the cases finished before the fault,
/// no `result`, a closing record with `outcome`; and `compare` finds no finished run to score.
fn assert_failed_run(fault: &Fault, cases_before: usize, outcome: &str) -> Value {
    let results = fault.path("results.jsonl");
    let all = records(&results);
    let kinds = kinds(&all);
    assert_eq!(
        kinds.iter().filter(|k| **k == "progress").count(),
        cases_before,
        "{kinds:?}"
    );
    assert!(!kinds.contains(&"result"), "{kinds:?}");
    let closing = all.last().unwrap();
    assert_eq!(closing["kind"], "run", "{kinds:?}");
    assert_eq!(closing["outcome"], outcome, "{closing}");
    // Never scored: compare takes only finished runs.
    let compare = Command::new(BIN)
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&compare.stderr).contains("no finished run"));
    // The fault is never part of the configuration.
    for record in &all {
        let query = record["query"].as_str().unwrap_or_default();
        assert!(!query.contains("inject"), "{record}");
        assert!(
            !record["body"]["config"].to_string().contains("inject"),
            "{record}"
        );
    }
    closing.clone()
}

/// The page's error message as written in its `error` record.
fn page_error(fault: &Fault) -> String {
    let all = records(&fault.path("results.jsonl"));
    let error = all
        .iter()
        .find(|r| r["kind"] == "error")
        .expect("an error record");
    error["body"]["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The device destroyed after the prefill of the second case: the first case is kept, the
/// page names the lost device, exit 1.
#[test]
fn a_device_lost_in_the_middle_of_decoding_fails_the_run_and_keeps_the_cases_before() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "device-lost@decode:2";
    let run = run_page(
        &fault,
        &checkout(),
        "scope=decoder&repeat=2&maxTokens=2",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("The WebGPU device was lost (reason: destroyed")
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert!(
        stderr.contains("the page failed in phase decoder-run"),
        "{stderr}"
    );
    assert_failed_run(&fault, 1, "error");
    fault.assert_nothing_left();
}

/// The vision worker throws in the handler of the second encode: exit 1 with its message.
#[test]
fn a_worker_that_throws_during_encode_fails_the_run() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "worker-throw@encode:2";
    let run = run_page(
        &fault,
        &checkout(),
        "cases=smoke2&maxTokens=1",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("The vision worker threw during encode (injected fault worker-throw)")
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert!(
        stderr.contains("the page failed in phase vision-encode"),
        "{stderr}"
    );
    // Staged: every case is encoded before any is decoded, so none was finished.
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// A fault in the vision worker during the first encode: the run fails with exit 1 and a
/// message that says `expected` and names the injected fault, keeping no case.
fn a_worker_fault_during_encode_is_named(spec: &str, expected: &str) {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let run = run_page(
        &fault,
        &checkout(),
        "cases=smoke2&maxTokens=1",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains(expected)
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// The vision worker's own device is lost in the middle of an encode: the failure it causes is
/// reported as the loss, from the worker.
#[test]
fn a_worker_whose_device_is_lost_reports_the_loss() {
    a_worker_fault_during_encode_is_named(
        "worker-device-lost@encode:1",
        "The WebGPU device was lost (reason: destroyed",
    );
}

/// The vision worker closes itself in the middle of an encode, answering nothing: the page
/// learns it from the worker's lifetime lock at once, not from a call limit minutes later.
#[test]
fn a_worker_that_ends_during_encode_fails_the_run_at_once() {
    a_worker_fault_during_encode_is_named(
        "worker-terminate@encode:1",
        "The vision worker ended without answering \"encode\"",
    );
}

/// The page stops reporting at its first case: `--timeout` ends the run with exit 3, and
/// nothing is left. (At its second case the test would wait out the first case's shader
/// compilation too, which took 12 s here idle and over 30 s at a load of 20.)
///
/// The timeout must outlast the page's way to the hang (decoder-run began 8 s idle to 19 s at
/// a load of 20 after the start here), which no fixed figure promises on a loaded machine: a
/// run that timed out before the hang is shown and run again with twice the timeout, so a
/// slow machine costs time, never the verdict.
#[test]
fn a_page_that_hangs_is_ended_by_the_timeout() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "hang@case:1";
    let mut timeout = 45;
    let (code, stderr) = loop {
        let run = run_page(
            &fault,
            &checkout(),
            "scope=decoder&maxTokens=1",
            Some(spec),
            timeout,
        );
        // Past the run's own timeout: the runner, not this limit, ends the run.
        let (code, stderr) = run.finish(Duration::from_secs(timeout + 30));
        let reached = stderr.contains("FAULT hang: case 1 never ends");
        if reached || timeout >= 360 {
            break (code, stderr);
        }
        println!(
            "the page had not reached the hang within {timeout} s; again with {} s:\n{stderr}",
            timeout * 2
        );
        std::fs::remove_file(fault.path("results.jsonl")).unwrap();
        timeout *= 2;
    };
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "timed out after {timeout} s in phase decoder-run with 0 case(s) finished"
        )),
        "{stderr}"
    );
    // The browser's log, shown on a timeout, has the page saying where it stopped.
    assert!(stderr.contains("FAULT hang: case 1 never ends"), "{stderr}");
    assert_failed_run(&fault, 0, "timeout");
    fault.assert_nothing_left();
}

/// The ICD driver mapped into a process: it holds a Vulkan (hence WebGPU) device.
fn holds_a_vulkan_driver(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|maps| maps.lines().any(|l| l.contains("/libvulkan_")))
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The process that holds the WebGPU device, found by the Vulkan driver it maps and typed by
/// the runner's classification, killed with SIGKILL while the decoder runs. Firefox ESR on
/// Linux runs WebGPU in its parent process, so the browser is gone: exit 4.
#[test]
fn killing_the_process_that_holds_the_webgpu_device_ends_the_run() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let mut run = run_page(&fault, &checkout(), "scope=decoder&maxTokens=2", None, 300);
    run.wait_for("] decoder-run", Duration::from_secs(180));
    let runner = run.child.id();
    let holders: Vec<(u32, ocr_bench::process_type::ProcessType)> = fault
        .pids()
        .into_iter()
        .filter(|pid| holds_a_vulkan_driver(*pid))
        .filter_map(|pid| {
            let cmdline = ocr_bench::procfs::read_cmdline(pid)?;
            let main = parent_of(pid) == Some(runner);
            Some((pid, ocr_bench::process_type::classify(&cmdline, main).kind))
        })
        .collect();
    assert_eq!(
        holders.iter().map(|(_, kind)| *kind).collect::<Vec<_>>(),
        [ocr_bench::process_type::ProcessType::Browser],
        "one process, Firefox's parent, holds the device: {holders:?} of {:?}",
        fault.processes()
    );
    // SAFETY: kill on a pid of this test's own browser.
    assert_eq!(unsafe { libc::kill(holders[0].0 as i32, libc::SIGKILL) }, 0);
    let (code, stderr) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("firefox exited (signal: 9 (SIGKILL)) in phase decoder-run before the page reported a result"),
        "{stderr}"
    );
    assert_failed_run(&fault, 0, "browser-exited");
    fault.assert_nothing_left();
}

/// The closing records' outcomes, in order.
fn outcomes(results: &Path) -> Vec<String> {
    records(results)
        .iter()
        .filter(|r| r["kind"] == "run")
        .map(|r| r["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// Ctrl-C while the second combination loads its decoder: exit 130, that combination marked
/// interrupted; the same command again runs only it.
#[test]
fn a_sweep_interrupted_by_ctrl_c_resumes_with_what_is_missing() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let results = fault.path("results.jsonl");
    // The first combination fails at once (a manifest whose decoder file is missing: the
    // page's own error, which a sweep counts as finished); the second does GPU work.
    let (_broken, broken_url) = manifest_without_its_decoder_file();
    let manifests = format!("manifest={broken_url},/models/manifest.json");
    let mut args: Vec<OsString> = vec!["--root".into(), checkout().into()];
    for arg in [
        "sweep",
        "--browser",
        "firefox",
        "--timeout",
        "300",
        "--param",
        "scope=decoder",
        "--param",
        "maxTokens=1",
        "--param",
        manifests.as_str(),
        "--results",
    ] {
        args.push(arg.into());
    }
    args.push(results.clone().into());
    let mut sweep = fault.start(&args, &[]);
    sweep.wait_for("FAIL  firefox", Duration::from_secs(120));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    // The broken combination marks decoder-load too, before it fails.
    while !records(&results).iter().any(|r| {
        r["phase"] == "decoder-load" && !r["query"].as_str().unwrap_or("").contains("broken")
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the second combination did not load its decoder within 120 s; the records so far: {:?}",
            records(&results)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    sweep.signal(libc::SIGINT);
    let (code, stderr) = sweep.finish(Duration::from_secs(30));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted in phase decoder-load"),
        "{stderr}"
    );
    assert_eq!(outcomes(&results), ["error", "interrupted"]);
    assert!(!kinds(&records(&results)).contains(&"result"));
    fault.assert_nothing_left();

    let resumed = fault.start(&args, &[]);
    let (code, stderr) = resumed.finish(Duration::from_secs(300));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 1 already finished")
            && stderr.contains("1 to run"),
        "{stderr}"
    );
    assert_eq!(outcomes(&results), ["error", "interrupted", "result"]);
    // Everything the second sweep wrote is the interrupted combination's.
    let all = records(&results);
    let closings: Vec<usize> = (0..all.len())
        .filter(|i| all[*i]["kind"] == "run")
        .collect();
    let interrupted = &all[closings[1]];
    assert!(
        !interrupted["query"].as_str().unwrap().contains("broken"),
        "{interrupted}"
    );
    for record in &all[closings[1] + 1..] {
        assert_eq!(record["query"], interrupted["query"], "{record}");
    }
    fault.assert_nothing_left();
}

/// A manifest under the checkout (in the ignored `target/`) that the runner reads and accepts,
/// but whose `baseline` decoder file is not there, so the page fails loading it. Returns its
/// folder and its `manifest=` URL path.
fn manifest_without_its_decoder_file() -> (tempfile::TempDir, String) {
    let checkout = checkout().canonicalize().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("broken-manifest-")
        .tempdir_in(checkout.join("target"))
        .unwrap();
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(checkout.join("models/manifest.json")).unwrap(),
    )
    .unwrap();
    // From target/<dir>/ back to models/; the decoder's model file is beside the manifest.
    manifest["vocab"] = format!("../../models/{}", manifest["vocab"].as_str().unwrap()).into();
    manifest["decoder"]["baseline"]["embedded"] = "missing-decoder.onnx".into();
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let url = format!(
        "/target/{}/manifest.json",
        dir.path().file_name().unwrap().to_str().unwrap()
    );
    (dir, url)
}

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A served root of its own: the page, the workers, the shared modules and the core copied (the
/// runner takes only a page under its root), the models and onnxruntime-web linked, the manifest
/// and vocabulary copied. Returns its `models/` folder.
fn own_root(root: &Path) -> PathBuf {
    let checkout = checkout().canonicalize().unwrap();
    for dir in ["www", "browser", "worker", "pkg"] {
        copy_dir(&checkout.join(dir), &root.join(dir));
    }
    std::os::unix::fs::symlink(checkout.join("node_modules"), root.join("node_modules")).unwrap();
    let models = root.join("models");
    std::fs::create_dir(&models).unwrap();
    std::os::unix::fs::symlink(checkout.join("models/generated"), models.join("generated"))
        .unwrap();
    for file in ["manifest.json", "vocab.json"] {
        std::fs::copy(checkout.join("models").join(file), models.join(file)).unwrap();
    }
    models
}

/// An evaluation set whose image is not a PNG: the page names the case, the set and the file.
#[test]
fn a_corrupt_image_is_named_with_its_case_and_file() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let root = fault.path("root");
    let models = own_root(&root);
    let set = models.join("eval/broken");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("cases.json"),
        r#"[{ "id": "torn", "image": "torn.png", "expected": "x" }]"#,
    )
    .unwrap();
    // A PNG signature and then nothing a decoder can read.
    std::fs::write(
        set.join("torn.png"),
        b"\x89PNG\r\n\x1a\nnot the rest of a png",
    )
    .unwrap();

    let run = run_page(&fault, &root, "cases=broken&maxTokens=1", None, 300);
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("Case torn of the evaluation set \"broken\": the image http://")
            && message.contains("/models/eval/broken/torn.png could not be decoded as an image"),
        "{message}"
    );
    assert!(!message.contains("model file"), "{message}");
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// A manifest naming a decoder file that is not there: the message names that file and its
/// status once, and says nothing of external data for an embedded model.
#[test]
fn a_missing_model_file_is_named_once() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let root = fault.path("root");
    let models = own_root(&root);
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    manifest["decoder"]["baseline"]["embedded"] = "generated/missing-decoder.onnx".into();
    std::fs::write(models.join("broken-manifest.json"), manifest.to_string()).unwrap();

    let query = "scope=decoder&maxTokens=1&manifest=/models/broken-manifest.json";
    let run = run_page(&fault, &root, query, None, 300);
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.starts_with("Loading the decoder \"baseline\": the model file http://")
            && message.contains("/models/generated/missing-decoder.onnx could not be fetched (HTTP 404). Are the models built"),
        "{message}"
    );
    assert_eq!(
        message.matches("could not be fetched").count(),
        1,
        "{message}"
    );
    assert!(!message.contains("external data"), "{message}");
    assert!(
        stderr.contains("the page failed in phase decoder-load"),
        "{stderr}"
    );
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}
