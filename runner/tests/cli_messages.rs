//! Messages of the command line for what is missing or not allowed, each naming what was
//! wrong and what is allowed, all before a browser starts: a missing evaluation set, a
//! browser variable naming no file, an unknown fault, the test-only fault switch refused
//! under `serve`, a very long query quoted once and cut, and a file that is not JSON lines
//! refused in one line.

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

fn plain(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plan_refuses_a_missing_evaluation_set_as_run_does() {
    let (code, stderr) = plain(&[
        "plan",
        "--base",
        "maxTokens=2",
        "cases=smoke2",
        "cases=nosuchset",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("combination 2 \"cases=nosuchset\"")
            && stderr.contains("there is no evaluation set \"nosuchset\"")
            && ["hayai13", "smoke2", "synth200"]
                .iter()
                .all(|set| stderr.contains(&format!(" {set}"))),
        "{stderr}"
    );
    // The decoder alone reads no images: no set is needed.
    let (code, stderr) = plain(&["plan", "scope=decoder&cases=nosuchset"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A 100 KB query was answered with 300 KB: the query echoed three times.
#[test]
fn a_very_long_query_is_quoted_once_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let long = "x".repeat(100_000);
    let value = format!("tier={}", "y".repeat(100_000));
    for (code, stderr) in [
        plain(&["plan", &long]),
        plain(&["plan", "--base", &long, "poll=kick"]),
        plain(&["plan", &value]),
        ocr_bench(&["run", &long], &[], &results),
        ocr_bench(
            &["sweep", "--param", &format!("cases={long}")],
            &[],
            &results,
        ),
    ] {
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.len() < 2048, "{} bytes: {stderr}", stderr.len());
        assert!(stderr.contains("… (100"), "the length it had: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert!(!results.exists(), "nothing ran");
}

/// An option's refused value, which clap quotes itself (and the option's own parser after it),
/// is cut too: a 100 KB `--browser` came back as 200 KB.
#[test]
fn a_very_long_option_value_is_cut_in_the_usage_error() {
    let long = "x".repeat(100_000);
    for args in [
        &["run", "--browser", &long, "cases=smoke1"][..],
        &["export", "--format", &long, "r.jsonl"][..],
        &["sweep", "--probe", &long],
    ] {
        let (code, stderr) = plain(args);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.len() < 2048, "{} bytes: {stderr}", stderr.len());
        assert!(stderr.contains("… (100000 characters)"), "{stderr}");
        assert!(stderr.contains("allowed"), "what is allowed: {stderr}");
    }
}

/// `export` and `compare` of a file that is not JSON lines (a README) stop at its first line,
/// once; a results file whose last line was cut off mid-write still reads, with one warning.
#[test]
fn a_file_that_is_not_json_lines_is_refused_in_one_line() {
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let smoke2 = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smoke2.jsonl");
    for args in [
        &["export", readme][..],
        &["compare", readme, smoke2],
        &["compare", smoke2, readme],
    ] {
        let (code, stderr) = plain(args);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("README.md:1: not JSON lines: a results file holds one JSON object per line, and this line begins \"# "),
            "{stderr}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let cut_off = dir.path().join("cut-off.jsonl");
    let text = std::fs::read_to_string(smoke2).unwrap();
    let last = text.lines().last().unwrap();
    std::fs::write(&cut_off, format!("{text}{}", &last[..last.len() / 2])).unwrap();
    let cut_off = cut_off.to_str().unwrap();
    let (code, stderr) = plain(&["export", "--results", cut_off]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, compared) = plain(&["compare", cut_off, smoke2]);
    assert_eq!(code, Some(0), "{compared}");
    for stderr in [stderr, compared] {
        let torn = format!(
            "{cut_off}:{}: skipped a torn line",
            text.lines().count() + 1
        );
        assert!(stderr.contains(&torn), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}
