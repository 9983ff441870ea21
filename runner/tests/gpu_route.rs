//! `--gpu-route gpu` on a machine without a GPU: Chromium starts with the GPU route's
//! switches, gets SwiftShader's fallback adapter, and the runner stops the run with exit
//! status 10 and says why. Starts a real Chromium, so it is ignored by default:
//!
//! ```text
//! flock /tmp/browser.lock cargo test -p ocr-bench --test gpu_route -- --ignored --nocapture
//! ```
//!
//! It needs the wasm build in `pkg/`, the `smoke2` evaluation set and Debian's Chromium.
//! The Vulkan loader is pointed at Chromium's own SwiftShader ICD: with Mesa's manifests and no
//! GPU, Chromium on the GPU route's switches never reaches the page (its GPU process fails to
//! create a Skia context over and over), so the run would end only at `--timeout`.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

/// Debian's Chromium ships SwiftShader's Vulkan driver beside its binary.
const SWIFTSHADER_ICD: &str = "/usr/lib/chromium/vk_swiftshader_icd.json";

#[test]
#[ignore = "starts Chromium"]
fn a_forced_gpu_route_refuses_swiftshader() {
    assert!(
        std::path::Path::new(SWIFTSHADER_ICD).is_file(),
        "{SWIFTSHADER_ICD} is missing: install Debian's chromium (scripts/setup)"
    );
    let found = Command::new(BIN)
        .args(["gpu-route", "--browser", "chromium"])
        .env("VK_DRIVER_FILES", SWIFTSHADER_ICD)
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(
        found.starts_with("GPU route: software"),
        "with VK_DRIVER_FILES={SWIFTSHADER_ICD} the route should be software:\n{found}"
    );
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let output = Command::new(BIN)
        .args([
            "run",
            "--browser",
            "chromium",
            "--gpu-route",
            "gpu",
            "--timeout",
            "900",
        ])
        .arg("--results")
        .arg(&results)
        .arg("cases=smoke2&maxTokens=1")
        .env("VK_DRIVER_FILES", SWIFTSHADER_ICD)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(10), "{stderr}");
    assert!(
        stderr.contains("--gpu-route gpu asked for a real GPU, but chromium gave the page a fallback (software) WebGPU adapter")
            && stderr.contains("isFallbackAdapter true")
            && stderr.contains("--gpu-route auto to accept the fallback"),
        "{stderr}"
    );
    let records: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        records.iter().all(|r| r["kind"] != "result"),
        "a refused run wrote a result"
    );
    let run = records
        .iter()
        .rfind(|r| r["kind"] == "run")
        .expect("a closing run record");
    assert_eq!(run["outcome"], "software-adapter", "{run}");
    let route = &run["gpuRoute"];
    assert_eq!(route["asked"], "gpu", "{route}");
    assert_eq!(route["route"], "gpu", "{route}");
    assert_eq!(route["adapter"], "software", "{route}");
    let flags: Vec<&str> = route["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for switch in ocr_bench::gpu_route::CHROMIUM_GPU_SWITCHES {
        assert!(flags.contains(switch), "{switch} missing from {flags:?}");
    }
    let start = records
        .iter()
        .find(|r| r["kind"] == "start")
        .expect("the page started");
    assert_eq!(
        start["body"]["adapter"]["isFallbackAdapter"], true,
        "{start}"
    );
}
