//! Bad arguments and queries refused before any browser starts, each with its exit status and
//! what is allowed; the help lists the page's parameters from the core.

use super::*;

#[test]
fn run_rejects_a_bad_query_before_starting_a_browser() {
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["run", "--results"])
        .arg(results.path().join("r.jsonl"))
        .arg("tier=999&schedule=resident")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`tier`") && stderr.contains("121, 242"),
        "{stderr}"
    );
    // Nothing was launched, so nothing was recorded.
    assert!(!results.path().join("r.jsonl").exists());

    let output = Command::new(BIN)
        .args(["run", "colour=red"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("maxTokens"));
    // The benchmark page however it is spelled.
    let output = Command::new(BIN)
        .args(["run", "--page", "./www/index.html", "scope=all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("full, decoder"));
}

#[test]
fn bad_browser_and_sweep_parameters_name_what_is_allowed() {
    let output = Command::new(BIN)
        .args(["run", "--browser", "safari"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("chromium, firefox"));

    let output = Command::new(BIN)
        .args(["sweep", "--param", "decoder"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("NAME=V1,V2"));

    let results = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["sweep", "--param", "decoder=baseline,turbo", "--results"])
        .arg(results.path().join("r.jsonl"))
        .output()
        .unwrap();
    // The same status as `run` gives a bad value.
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("turbo") && stderr.contains("gather-opt"),
        "{stderr}"
    );
}

#[test]
fn help_lists_the_page_parameters_from_the_core() {
    let output = Command::new(BIN).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for name in ocr_bench_core::config::PARAMETER_NAMES {
        assert!(help.contains(name), "{name} missing from:\n{help}");
    }
}

/// `run` and `sweep` give one status per cause, before any browser starts.
#[test]
fn run_and_sweep_share_their_exit_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("r.jsonl");
    let ocr = |args: &[&str], env: Option<(&str, &str)>| {
        let mut command = Command::new(BIN);
        command.args(args).arg("--results").arg(&results);
        if let Some((name, value)) = env {
            command.env(name, value);
        }
        let out = command.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // An off-origin manifest: 2, naming what is allowed.
    let off = "manifest=https://example.com/manifest.json";
    for (code, stderr) in [
        ocr(&["run", off], None),
        ocr(&["sweep", "--param", off], None),
    ] {
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("not on the serving origin")
                && stderr.contains("/models/manifest.json"),
            "{stderr}"
        );
    }
    // A page outside the page set: 2.
    for page in ["../../../etc/hostname", "README.md", "www/report.html"] {
        let (code, stderr) = ocr(&["run", "--page", page], None);
        assert_eq!(code, Some(2), "{page}: {stderr}");
        assert!(
            stderr.contains("allowed: an .html page under the served root"),
            "{stderr}"
        );
    }
    // A browser variable naming no file: 7, naming the variable.
    let missing = Some(("OCR_BENCH_FIREFOX", "/nonexistent/firefox"));
    for (code, stderr) in [
        ocr(&["run", "--browser", "firefox"], missing),
        ocr(
            &["sweep", "--browser", "firefox", "--param", "tier=242"],
            missing,
        ),
    ] {
        assert_eq!(code, Some(7), "{stderr}");
        assert!(
            stderr.contains("OCR_BENCH_FIREFOX=/nonexistent/firefox names no file"),
            "{stderr}"
        );
    }
    assert!(!results.exists());
    // A results file that cannot be created: 6, naming it and the OS error.
    let out = Command::new(BIN)
        .args(["run", "--results", "/dev/null/r.jsonl"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("creating the directory /dev/null of the results file")
            && stderr.contains("os error"),
        "{stderr}"
    );
}

/// `--public-url` and `--tls` are checked before anything listens, by `run` and `sweep` alike.
#[test]
fn bad_public_urls_are_refused_before_a_browser_starts() {
    let results = tempfile::tempdir().unwrap();
    let file = results.path().join("r.jsonl");
    for (args, says) in [
        (
            vec!["run", "--public-url", "https://192.0.2.7:8443/www/"],
            "path, query or fragment",
        ),
        (
            vec!["run", "--tls", "--public-url", "http://192.0.2.7:8000"],
            "write https://",
        ),
        (
            vec!["sweep", "--public-url", "ftp://192.0.2.7"],
            "allowed: http:// or https://",
        ),
    ] {
        let output = Command::new(BIN)
            .args(&args)
            .arg("--results")
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(
        !file.exists(),
        "nothing was launched, so nothing was recorded"
    );
}

#[test]
fn a_kept_profile_is_refused_where_it_cannot_be_kept() {
    let results = tempfile::tempdir().unwrap();
    let kept = results.path().join("profiles");
    // Exit 2 before any browser or session, and what was said.
    let refused = |args: &[&str]| {
        let output = Command::new(BIN)
            .args(args)
            .arg("--keep-profile")
            .arg(&kept)
            .arg("--results")
            .arg(results.path().join("r.jsonl"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    // Through WebDriver the endpoint makes the profile: refused before any session is asked.
    let stderr = refused(&["run", "--webdriver", "http://127.0.0.1:9"]);
    assert!(
        stderr.contains("--keep-profile") && stderr.contains("without --webdriver"),
        "{stderr}"
    );
    // Two local browsers at once would share one profile.
    let stderr = refused(&[
        "sweep",
        "--browser",
        "firefox",
        "--local-jobs",
        "2",
        "--jobs",
        "2",
        "--param",
        "maxTokens=1,2",
    ]);
    assert!(
        stderr.contains("--local-jobs 1 with --keep-profile"),
        "{stderr}"
    );
    assert!(!kept.exists() && !results.path().join("r.jsonl").exists());
}

#[test]
fn a_switch_or_pref_of_the_users_own_is_refused_where_it_cannot_apply() {
    let results = tempfile::tempdir().unwrap();
    // Exit 2 before any browser or session, and what was said.
    let refused = |args: &[&str]| {
        let output = Command::new(BIN)
            .args(args)
            .arg("--results")
            .arg(results.path().join("r.jsonl"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = refused(&[
        "run",
        "--browser",
        "firefox",
        "--chromium-switch=--enable-dawn-features=skip_validation",
    ]);
    assert!(
        stderr.contains("no Chromium is started here (only firefox)")
            && stderr.contains("--firefox-pref NAME=VALUE to Firefox"),
        "{stderr}"
    );
    let stderr = refused(&[
        "sweep",
        "--browser",
        "chromium",
        "--firefox-pref",
        "general.useragent.override=\"x\"",
    ]);
    assert!(stderr.contains("no Firefox is started here"), "{stderr}");
    let stderr = refused(&["run", "--chromium-switch", "--headless=new"]);
    assert!(
        stderr.contains("the harness sets --headless itself"),
        "{stderr}"
    );
    let stderr = refused(&["run", "--firefox-pref", "dom.webgpu.testing"]);
    assert!(stderr.contains("has no `=`"), "{stderr}");
    let stderr = refused(&[
        "run",
        "--webdriver",
        "http://127.0.0.1:9",
        "--capabilities",
        "{\"browserName\":\"chrome\"}",
        "--chromium-switch=--enable-dawn-features=skip_validation",
    ]);
    assert!(stderr.contains("goog:chromeOptions.args"), "{stderr}");
    assert!(!results.path().join("r.jsonl").exists());
}

/// A stand-in Chromium: answers `--version`, else writes its arguments, one a line, to the
/// file `ARGS` names and exits at once, as a browser that crashes at start does.
const RECORDING_CHROMIUM: &str = "#!/bin/sh
if [ \"$1\" = --version ]; then echo 'Chromium 1.0 stand-in'; exit 0; fi
printf '%s\\n' \"$@\" > \"$ARGS\"
";

#[test]
fn a_switch_of_the_users_own_reaches_chromiums_command_line_and_every_record() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let chromium = dir.path().join("chromium");
    std::fs::write(&chromium, RECORDING_CHROMIUM).unwrap();
    std::fs::set_permissions(&chromium, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = dir.path().join("args");
    let results = dir.path().join("r.jsonl");
    let switch = "--enable-dawn-features=skip_validation";
    let output = Command::new(BIN)
        .args(["run", "--browser", "chromium", "--gpu-route", "software"])
        .args(["--chromium-switch", switch, "--timeout", "60", "--results"])
        .arg(&results)
        .arg("cases=smoke1&maxTokens=2")
        .env("OCR_BENCH_CHROMIUM", &chromium)
        .env("ARGS", &args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("started with {switch} too")),
        "{stderr}"
    );
    let command_line = std::fs::read_to_string(&args).expect("the stand-in was started");
    let command_line: Vec<&str> = command_line.lines().collect();
    let at = |wanted: &str| command_line.iter().position(|a| a.starts_with(wanted));
    // After the harness's own switches, before the profile and the URL.
    assert!(
        at("--optimization-guide-performance-class") < at(switch)
            && at(switch) < at("--user-data-dir="),
        "{command_line:?}"
    );
    let records: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!records.is_empty());
    for record in &records {
        assert_eq!(
            record["browser"]["extra"],
            json!({ "chromiumSwitches": [switch] }),
            "{record}"
        );
    }
    // The record's GPU route keeps the route's switches: the user's are the browser's.
    let closing = records.iter().find(|r| r["kind"] == "run").unwrap();
    assert_eq!(closing["outcome"], "browser-exited", "{closing}");
    assert!(!closing["gpuRoute"]["flags"]
        .as_array()
        .unwrap()
        .contains(&json!(switch)));
}
