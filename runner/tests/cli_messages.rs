//! Messages of the command line for what is missing or not allowed, each naming what was
//! wrong and what is allowed, all before a browser starts: a missing evaluation set, a
//! browser variable naming no file, an unknown fault, and the test-only fault switch refused
//! under `serve`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn ocr_bench(args: &[&str], env: &[(&str, &str)], results: &Path) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--results")
        .arg(results)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_evaluation_set_is_named_with_its_folder_and_the_sets_there() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    for (code, stderr) in [
        ocr_bench(&["run", "cases=nosuchset"], &[], &results),
        ocr_bench(
            &["sweep", "--param", "cases=smoke2,nosuchset"],
            &[],
            &results,
        ),
    ] {
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("there is no evaluation set \"nosuchset\"")
                && stderr.contains("models/eval/nosuchset/cases.json does not exist")
                && stderr.contains("/models/eval with a cases.json, allowed: ")
                && ["hayai13", "smoke2", "synth200"]
                    .iter()
                    .all(|set| stderr.contains(&format!(" {set}"))),
            "{stderr}"
        );
        assert!(!stderr.contains("model file"), "{stderr}");
    }
    assert!(!results.exists(), "nothing ran");
}

#[test]
fn a_browser_variable_naming_no_file_names_the_variable_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let folder = dir.path().display().to_string();
    for (browser, variable) in [
        ("chromium", "OCR_BENCH_CHROMIUM"),
        ("firefox", "OCR_BENCH_FIREFOX"),
    ] {
        for target in ["/nonexistent/browser", folder.as_str()] {
            let (code, stderr) = ocr_bench(
                &["run", "--browser", browser, "scope=decoder"],
                &[(variable, target)],
                &results,
            );
            assert_eq!(code, Some(7), "{stderr}");
            assert!(
                stderr.contains(&format!("{variable}={target} names no file"))
                    && stderr.contains(&format!("leave {variable} unset")),
                "{stderr}"
            );
        }
    }
}

#[test]
fn a_browser_variable_naming_a_file_that_will_not_run_names_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    // A plain file without the execute bit: there, but not a program.
    let not_a_program = dir.path().join("firefox");
    std::fs::write(&not_a_program, "not a browser").unwrap();
    let target = not_a_program.display().to_string();
    let (code, stderr) = ocr_bench(
        &["run", "--browser", "firefox", "scope=decoder"],
        &[("OCR_BENCH_FIREFOX", target.as_str())],
        &results,
    );
    assert_eq!(code, Some(7), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "running {target} --version (OCR_BENCH_FIREFOX names it)"
        )),
        "{stderr}"
    );
}

#[test]
fn an_unknown_fault_is_refused_naming_the_faults_the_page_knows() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    for args in [
        &["run", "scope=decoder"][..],
        &["sweep", "--param", "scope=decoder"],
    ] {
        let (code, stderr) = ocr_bench(args, &[("OCR_BENCH_INJECT", "crash@decode")], &results);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("OCR_BENCH_INJECT=\"crash@decode\" is not a fault the page knows")
                && stderr.contains("device-lost@case|decode"),
            "{stderr}"
        );
    }
}

/// Under `serve` nobody may arm a fault: the page's confirmation request gets 403.
#[test]
fn serve_never_confirms_a_fault() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--root"])
        .arg(root.path())
        .arg("--results")
        .arg(root.path().join("r.jsonl"))
        .env("OCR_BENCH_INJECT", "hang@case")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let base = first
        .split_whitespace()
        .last()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(format!("{base}/__ocr-bench/inject"))
        .header("Content-Type", "application/json")
        .send(r#"{"inject":"hang@case"}"#)
        .unwrap();
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("started by `serve`") && body.contains("OCR_BENCH_INJECT"),
        "{body}"
    );
}
