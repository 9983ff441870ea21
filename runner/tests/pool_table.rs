//! `ocr-bench pool-table`, the last step of `bench/pool-sizes`, on the committed runs of
//! `tests/data/pool/`: `bench/pool-sizes --browser firefox --sizes 1,2 --base
//! 'cases=smoke2&maxTokens=4&realm=worker'` in Firefox on lavapipe, one round. Every figure the
//! table prints is checked against the fixture read as plain JSON, not through the code under
//! test.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn fixture(k: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/pool/{k}.jsonl"))
}

fn result(k: u32) -> Value {
    std::fs::read_to_string(fixture(k))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "result")
        .expect("a result record")
}

fn table(files: &[PathBuf]) -> (i32, String, String) {
    table_in(&[], files)
}

/// `pool-table` with `options` before the files.
fn table_in(options: &[&str], files: &[PathBuf]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .arg("pool-table")
        .args(options)
        .args(files)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn row(text: &str, k: u32) -> Vec<String> {
    text.lines()
        .find(|l| l.starts_with(&format!("| {k} |")))
        .unwrap_or_else(|| panic!("no row for pool={k} in\n{text}"))
        .split('|')
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

fn mib(bytes: f64) -> String {
    format!("{:.0} MiB", bytes / (1024.0 * 1024.0))
}

#[test]
fn each_pool_size_gets_its_set_time_rate_tokens_and_memory() {
    let (code, text, stderr) = table(&[fixture(1), fixture(2)]);
    assert_eq!(code, 0, "{stderr}");
    let one = result(1);
    let two = result(2);
    let set_ms = |r: &Value| {
        r["processMemory"]["phases"]["decoder-run"]["durationMs"]
            .as_f64()
            .unwrap()
    };
    let steps = |r: &Value| {
        let s = &r["summary"];
        s["results"]
            .as_array()
            .unwrap()
            .iter()
            .chain(s["warmupResults"].as_array().unwrap())
            .map(|c| c["decodeSteps"].as_u64().unwrap())
            .sum::<u64>() as f64
    };
    let (row1, row2) = (row(&text, 1), row(&text, 2));
    assert_eq!(row1[2], format!("{:.2} s", set_ms(&one) / 1000.0), "{text}");
    assert_eq!(row2[2], format!("{:.2} s", set_ms(&two) / 1000.0), "{text}");
    assert_eq!(
        row2[3],
        format!("{:.2}x", set_ms(&one) / set_ms(&two)),
        "{text}"
    );
    assert_eq!(
        row2[4],
        format!("{:.2}", steps(&two) * 1000.0 / set_ms(&two)),
        "{text}"
    );
    let p50 = |r: &Value| {
        r["summary"]["decodeProbe"]["tokenLatency"]["p50Ms"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(row2[5], format!("{:.1} ms", p50(&two)), "{text}");
    // Both sizes read the same tokens here; each realm of the pool read a case.
    assert_eq!(
        (row1[6].as_str(), row2[6].as_str()),
        ("yes", "yes"),
        "{text}"
    );
    // Accuracy beside the tokens: the page's own nCER.
    let ncer = |r: &Value| format!("{:.4}", r["summary"]["nCER"].as_f64().unwrap());
    assert_eq!((&row1[7], &row2[7]), (&ncer(&one), &ncer(&two)), "{text}");
    assert_eq!(row2[8], "1/1", "{text}");
    // Memory: the pool's two realms summed, the K=1 worker's own report, the runner's PSS.
    let realms = two["summary"]["pool"]["realmMemory"].as_array().unwrap();
    let gpu: f64 = realms
        .iter()
        .map(|r| r["gpu"]["peakBytes"].as_f64().unwrap())
        .sum();
    assert_eq!(row2[9], mib(gpu), "{text}");
    let heaps: f64 = realms
        .iter()
        .flat_map(|r| r["wasmHeaps"].as_array().unwrap())
        .map(|h| h["bytes"].as_f64().unwrap())
        .sum();
    assert_eq!(row2[10], mib(heaps), "{text}");
    assert_eq!(
        row1[9],
        mib(one["summary"]["gpuMemory"]["decoderWorker"]["peakBytes"]
            .as_f64()
            .unwrap()),
        "{text}"
    );
    let pss = |r: &Value| {
        r["processMemory"]["phases"]["decoder-run"]["total"]["peakPssBytes"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(
        (row1[11].clone(), row2[11].clone()),
        (mib(pss(&one)), mib(pss(&two))),
        "{text}"
    );
    // No NVML on this machine: no VRAM figure, not a zero.
    assert_eq!(row2[12], "-", "{text}");
    let best = if set_ms(&one) <= set_ms(&two) { 1 } else { 2 };
    assert!(
        text.contains(&format!("Best whole-set time: pool={best} ")),
        "{text}"
    );
}

/// The K=1 fixture's run as round `n`: a new run id and the per-token p50 `p50_ms`.
fn round_of_one(n: usize, p50_ms: f64) -> String {
    let text = std::fs::read_to_string(fixture(1)).unwrap();
    let old = result(1)["summary"]["runId"].as_str().unwrap().to_owned();
    let new = format!("{old}-round-{n}");
    text.lines()
        .map(|l| {
            let mut record: Value = serde_json::from_str(l).unwrap();
            if record["runId"] == old.as_str() {
                record["runId"] = new.as_str().into();
            }
            if record["kind"] == "result" {
                record["summary"]["runId"] = new.as_str().into();
                record["summary"]["decodeProbe"]["tokenLatency"]["p50Ms"] = p50_ms.into();
            }
            record.to_string() + "\n"
        })
        .collect()
}

/// Both tables take the median over the rounds from the core's `stats`: over two rounds the
/// mean of the two, where `pool-table` once took the lower one.
#[test]
fn over_an_even_number_of_rounds_the_pool_table_and_the_decode_table_agree() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("1.jsonl");
    std::fs::write(&file, round_of_one(1, 10.0) + &round_of_one(2, 20.0)).unwrap();
    let (code, pool, stderr) = table(std::slice::from_ref(&file));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(row(&pool, 1)[1], "2", "two rounds: {pool}");
    assert_eq!(row(&pool, 1)[5], "15.0 ms", "{pool}");
    let decode = Command::new(BIN)
        .arg("table")
        .arg("--against")
        .arg(&file)
        .arg(&file)
        .output()
        .unwrap();
    let decode_text = String::from_utf8_lossy(&decode.stdout);
    assert_eq!(decode.status.code(), Some(0), "{decode_text}");
    assert!(decode_text.contains("| 2 | 15.00 |"), "{decode_text}");
}

#[test]
fn tokens_that_differ_from_the_first_size_are_counted() {
    let dir = std::env::temp_dir().join(format!("pool-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let edited = dir.join("2.jsonl");
    let text = std::fs::read_to_string(fixture(2)).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut record: Value = serde_json::from_str(l).unwrap();
            if record["kind"] == "result" {
                record["summary"]["results"][0]["tokenIds"] = serde_json::json!([1, 2, 3]);
            }
            record.to_string()
        })
        .collect();
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();
    let (code, out, stderr) = table(&[fixture(1), edited]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(row(&out, 2)[6], "1 of 2 cases differ", "{out}");
}

#[test]
fn a_file_that_cannot_be_read_is_refused_with_its_name() {
    let missing = Path::new("/nonexistent/pool-8.jsonl");
    let (code, out, stderr) = table(&[fixture(1), missing.to_owned()]);
    assert_eq!(code, 2, "{out}");
    assert!(stderr.contains("/nonexistent/pool-8.jsonl"), "{stderr}");
}

#[test]
fn one_table_in_every_format_says_the_same_figures() {
    let sizes = [fixture(1), fixture(2)];
    let (_, markdown, _) = table(&sizes);
    let (code, csv, stderr) = table_in(&["--format", "csv"], &sizes);
    assert_eq!(code, 0, "{stderr}");
    let (code, html, stderr) = table_in(&["--format", "html"], &sizes);
    assert_eq!(code, 0, "{stderr}");
    let set_ms = result(2)["processMemory"]["phases"]["decoder-run"]["durationMs"]
        .as_f64()
        .unwrap();
    // pool=2's whole set: seconds with the unit in markdown and HTML, plain ms in CSV.
    let shown = format!("{:.2} s", set_ms / 1000.0);
    assert_eq!(row(&markdown, 2)[2], shown, "{markdown}");
    assert!(
        html.contains(&format!("<td class=\"number\">{shown}</td>")),
        "{html}"
    );
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..4],
        ["pool", "rounds", "whole set (ms)", "set K=1/this (ratio)"]
    );
    let csv_row2: Vec<&str> = lines
        .find(|l| l.starts_with("2,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(csv_row2[2], format!("{set_ms:.2}"), "{csv}");
    // Every column in every format; the driver was not read here: an empty CSV field.
    assert_eq!(csv_row2.len(), row(&markdown, 2).len(), "{csv}");
    assert_eq!(csv_row2.last(), Some(&""), "{csv}");
    assert_eq!(
        html.matches("</th>").count(),
        row(&markdown, 2).len(),
        "{html}"
    );
    assert!(html.contains("<p>Best whole-set time: pool="), "{html}");
    let (code, _, stderr) = table_in(&["--format", "tsv"], &sizes);
    assert_eq!(code, 2);
    assert!(stderr.contains("allowed: markdown, csv, html"), "{stderr}");
}
