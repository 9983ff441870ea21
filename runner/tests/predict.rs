//! `ocr-bench predict`: the expected memory per phase of each configuration, and the largest
//! buffer against a recorded adapter's limits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

/// A real run on an NVIDIA H200 (Firefox ESR 153), whose adapter offers 1 GiB buffers.
fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h200-default-hayai13.jsonl")
}

fn predict(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("predict")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn each_configuration_gets_every_phase_and_says_whether_an_adapter_was_checked() {
    let output = predict(&[
        "--base",
        "cases=smoke2",
        "",
        "decoder=nbits-int4&realm=worker",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("cases=smoke2 · models/manifest.json"),
        "{stdout}"
    );
    assert!(stdout.contains("decoder=nbits-int4"), "{stdout}");
    assert_eq!(stdout.matches("no adapter checked").count(), 2, "{stdout}");
    // The phases in the order they run, each configuration's eight.
    let phases: Vec<&str> = phase_rows(&stdout)
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(phases.len(), 16, "{stdout}");
    assert_eq!(
        &phases[..3],
        ["baseline", "probe", "vision-load"],
        "{stdout}"
    );

    let output = predict(&["--adapter", recorded().to_str().unwrap(), ""]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("within the adapter's maxBufferSize 1073741824"),
        "{stdout}"
    );
}

#[test]
fn a_buffer_over_the_adapters_limits_is_flagged_with_status_1() {
    // The recorded run with its adapter's binding limit cut to 1 MiB.
    let text = std::fs::read_to_string(recorded()).unwrap();
    let tight = text.replace(
        "\"maxStorageBufferBindingSize\":1073741824",
        "\"maxStorageBufferBindingSize\":1048576",
    );
    assert_ne!(tight, text, "the recorded run names its binding limit");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tight.jsonl");
    std::fs::write(&file, tight).unwrap();
    let output = predict(&["--adapter", file.to_str().unwrap(), ""]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("EXCEEDS the adapter's maxStorageBufferBindingSize 1048576"),
        "{stdout}"
    );
}

#[test]
fn bad_input_is_refused_with_status_2_and_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    for (args, words) in [
        (vec!["decoder=int2"], "nbits-int4"),
        (vec!["speed=max"], "unknown parameter `speed`"),
        (
            vec!["--adapter", empty.to_str().unwrap(), ""],
            "maxStorageBufferBindingSize",
        ),
    ] {
        let output = predict(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

/// The rows of every per-phase table in `predict`'s output (not the release steps' tables).
fn phase_rows(stdout: &str) -> Vec<&str> {
    let mut rows = Vec::new();
    let mut in_phases = false;
    for line in stdout.lines() {
        if line.starts_with("expected ") {
            in_phases = line.starts_with("expected peak per phase");
        } else if in_phases && line.starts_with("  ") && !line.trim_start().starts_with("phase") {
            rows.push(line);
        }
    }
    rows
}

/// The figure in `column` (0: the row's name) of the first row named `name`.
fn figure(stdout: &str, name: &str, column: usize) -> String {
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row: {stdout}"));
    row.split_whitespace().nth(column).unwrap().to_owned()
}

#[test]
fn a_pool_of_four_decoder_workers_holds_four_decoders_gpu_bytes_and_heaps() {
    let one = predict(&["realm=worker&decoder=fixed-kv-fused"]);
    let four = predict(&["realm=worker&pool=4&decoder=fixed-kv-fused"]);
    let (one, four) = (
        String::from_utf8_lossy(&one.stdout),
        String::from_utf8_lossy(&four.stdout),
    );
    let at_run =
        |stdout: &str, column| -> f64 { figure(stdout, "decoder-run", column).parse().unwrap() };
    // GPU bytes (column 2) and the decoder workers' heaps (column 5): one decoder's each.
    for column in [2, 5] {
        let ratio = at_run(&four, column) / at_run(&one, column);
        assert!(
            (ratio - 4.0).abs() < 0.01,
            "column {column}: {ratio}\n{one}\n{four}"
        );
    }
    // The page's heap and the vision worker's are shared by the pool.
    assert_eq!(
        figure(&one, "decoder-run", 3),
        figure(&four, "decoder-run", 3)
    );
    // Each worker adds its copy of the weights (decoder-load's floor) to the process: 6.35
    // MiB per MiB of them.
    let pss_added = at_run(&four, 7) - at_run(&one, 7);
    let weights: f64 = figure(&one, "decoder-load", 1).parse().unwrap();
    assert!(
        (pss_added - 3.0 * 6.35 * weights).abs() < 0.5,
        "{one}\n{four}"
    );
}

#[test]
fn the_release_steps_give_back_the_gpu_bytes_then_the_workers_heaps_and_process() {
    let output = predict(&["realm=worker&pool=2&decoder=fixed-kv-fused&release=realm"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("expected after each release step (release=realm)"),
        "{stdout}"
    );
    let held_given = |step: &str, column: usize| -> (f64, f64) {
        let cell = figure(&stdout, step, column);
        let (held, given) = cell.split_once('/').unwrap();
        (held.parse().unwrap(), given.parse().unwrap())
    };
    let run_gpu: f64 = figure(&stdout, "decoder-run", 2).parse().unwrap();
    // After the sessions: no GPU bytes, every heap and the process as they were.
    assert_eq!(held_given("sessions", 1), (0.0, run_gpu));
    assert_eq!(held_given("sessions", 2).1, 0.0);
    assert_eq!(held_given("sessions", 4).1, 0.0);
    assert_eq!(held_given("device", 4).1, 0.0);
    // The workers ended: their heaps and their share of the process come back.
    let workers_heaps: f64 = figure(&stdout, "decoder-run", 5).parse().unwrap();
    assert_eq!(held_given("realm", 2).1, workers_heaps);
    assert!(held_given("realm", 4).1 > 0.0, "{stdout}");
    assert_eq!(held_given("all", 4), held_given("realm", 4));
    // In release the workers' devices are read after their sessions went.
    assert_eq!(figure(&stdout, "release", 2), "0.0");
}

/// The PSS rise of a phase's row: its last column.
fn pss_rise(stdout: &str, phase: &str) -> f64 {
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(phase))
        .unwrap_or_else(|| panic!("no {phase} row: {stdout}"));
    row.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn a_recorded_software_adapter_puts_the_gpu_bytes_in_the_pss_rise() {
    let software = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/firefox-memory-reports-smoke1.jsonl");
    let on_software = predict(&["--adapter", software.to_str().unwrap(), "cases=smoke1"]);
    let on_gpu = predict(&["--adapter", recorded().to_str().unwrap(), "cases=smoke1"]);
    let (soft, gpu) = (
        String::from_utf8_lossy(&on_software.stdout),
        String::from_utf8_lossy(&on_gpu.stdout),
    );
    assert!(
        soft.contains("the GPU bytes in it: the adapter is software"),
        "{soft}"
    );
    assert!(
        gpu.contains("the GPU bytes outside it, in device memory"),
        "{gpu}"
    );
    // decoder-run's GPU bytes (the third column) are the difference.
    let gpu_bytes: f64 = soft
        .lines()
        .find(|l| l.split_whitespace().next() == Some("decoder-run"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap()
        .parse()
        .unwrap();
    let difference = pss_rise(&soft, "decoder-run") - pss_rise(&gpu, "decoder-run");
    assert!((difference - gpu_bytes).abs() <= 0.1, "{soft}\n{gpu}");
}
