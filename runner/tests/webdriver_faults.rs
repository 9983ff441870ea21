//! `ocr-bench run --webdriver` when things go wrong: an endpoint that is not there, one that
//! refuses the session, Ctrl-C, the runner killed, the browser crashing, a browser that cannot
//! reach the runner, a page that fails
//! (its console lines, read through WebDriver BiDi, in the message). Each ends with a clear
//! error and a closing record (where the runner lives to write one), no session on the
//! driver and no browser process; no credential from the URL or the capabilities appears in
//! any output. The drivers are started here on loopback (`harness/drivers.rs`).
//!
//! ```text
//! cargo test -p ocr-bench --test webdriver_faults -- --ignored --test-threads=2
//! ```
//! (the endpoint that is not there needs no browser and runs without `--ignored`).

mod harness;

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use harness::drivers::{free_port, Driver, DriverKind};
use harness::{records, Fault, Running};
use ocr_bench::run::REACH_LIMIT;

/// Written into URLs and capabilities; must appear in no output.
const PASSWORD: &str = "hunter2-pw-7781";
const ACCESS_KEY: &str = "AK-secret-5521";

/// A page that logs to its console, throws, then reports an error of its own.
const CONSOLE_PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>logs, throws, fails</title>
<script type="module">
const runId = `console-${Date.now()}`;
console.warn("console-check: logged by the page");
setTimeout(() => { throw new Error("console-check: thrown by the page"); });
await new Promise((resolve) => setTimeout(resolve, 10));
await fetch("/benchmark-error", {
	method: "POST",
	headers: { "Content-Type": "application/json" },
	body: JSON.stringify({ runId, phase: "baseline", error: { name: "Error", message: "console-check: failed on purpose" } }),
});
</script>
"#;

/// `run` of the waiting page in Firefox through the endpoint at `url`.
fn run_args(fault: &Fault, url: &str, results: &Path, extra: &[&str]) -> Vec<OsString> {
    page_run_args(fault, "firefox", "wait.html", url, results, extra)
}

/// `run` of `page` (in the fault's directory) in `browser` through the endpoint at `url`.
fn page_run_args(
    fault: &Fault,
    browser: &str,
    page: &str,
    url: &str,
    results: &Path,
    extra: &[&str],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--root".into(), fault.dir.path().into()];
    for arg in [
        "run",
        "--browser",
        browser,
        "--page",
        page,
        "--timeout",
        "120",
        "--webdriver",
        url,
    ]
    .iter()
    .chain(extra)
    {
        args.push((*arg).into());
    }
    args.push("--results".into());
    args.push(results.into());
    args
}

/// No credential in the runner's output or the results file.
fn assert_no_credentials(output: &str, results: &Path) {
    let written = std::fs::read_to_string(results).unwrap_or_default();
    for secret in [PASSWORD, ACCESS_KEY, "alice"] {
        assert!(
            !output.contains(secret),
            "{secret} in the output:\n{output}"
        );
        assert!(
            !written.contains(secret),
            "{secret} in the results:\n{written}"
        );
    }
}

/// The closing record: its outcome and message.
fn closing(results: &Path) -> serde_json::Value {
    records(results)
        .into_iter()
        .rev()
        .find(|r| r["kind"] == "run")
        .unwrap_or_else(|| panic!("no closing record in {}", results.display()))
}

#[test]
fn an_endpoint_that_is_not_there_is_named_without_its_credentials() {
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let port = free_port();
    let url = format!("http://alice:{PASSWORD}@127.0.0.1:{port}/wd/hub");
    let running = fault.start(&run_args(&fault, &url, &results, &[]), &[]);
    let (code, output) = running.finish(Duration::from_secs(60));
    assert_eq!(code, Some(7), "{output}");
    let shown = format!("http://127.0.0.1:{port}/wd/hub");
    assert!(
        output.contains(&format!("no WebDriver endpoint answered at {shown}")),
        "{output}"
    );
    let end = closing(&results);
    assert_eq!(end["outcome"], "not-started", "{end}");
    assert_eq!(end["target"], format!("webdriver:{shown}"), "{end}");
    assert!(end["message"].as_str().unwrap().contains(&shown), "{end}");
    assert_no_credentials(&output, &results);
}

#[test]
fn a_bad_capabilities_argument_is_refused_before_any_session() {
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let bad = format!("{{\"accessKey\": \"{ACCESS_KEY}\"");
    let args = run_args(
        &fault,
        "http://127.0.0.1:9",
        &results,
        &["--capabilities", &bad],
    );
    let (code, output) = fault.start(&args, &[]).finish(Duration::from_secs(30));
    assert_eq!(code, Some(2), "{output}");
    assert!(
        output.contains("--capabilities: not valid JSON"),
        "{output}"
    );
    assert_no_credentials(&output, &results);
}

#[test]
#[ignore = "starts chromedriver: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn an_endpoint_that_refuses_the_session_says_so() {
    let Some(driver) = Driver::start(DriverKind::Chromedriver) else {
        return;
    };
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    // No browser at that path: chromedriver refuses the session.
    let capabilities = format!(
        r#"{{"browserName":"chrome","goog:chromeOptions":{{"binary":"/nonexistent/chrome"}},"sauce:options":{{"accessKey":"{ACCESS_KEY}"}}}}"#
    );
    let args = run_args(
        &fault,
        &driver.url(),
        &results,
        &["--capabilities", &capabilities],
    );
    let (code, output) = fault.start(&args, &[]).finish(Duration::from_secs(60));
    assert_eq!(code, Some(7), "{output}");
    assert!(
        output.contains(&format!(
            "the WebDriver endpoint {} refused the session",
            driver.url()
        )),
        "{output}"
    );
    assert_eq!(closing(&results)["outcome"], "not-started");
    assert_no_credentials(&output, &results);
    driver.assert_nothing_left(Duration::from_secs(10));
}

/// A run of the waiting page through geckodriver, once the page has marked its phase.
fn waiting_run(driver: &Driver, fault: &Fault, results: &Path) -> Running {
    let args = run_args(fault, &driver.url(), results, &[]);
    let mut running = fault.start(&args, &[]);
    running.wait_for("] baseline", Duration::from_secs(60));
    assert!(driver.has_session(), "no session while the page runs");
    running
}

#[test]
#[ignore = "starts geckodriver and Firefox: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn ctrl_c_deletes_the_session() {
    let Some(driver) = Driver::start(DriverKind::Geckodriver) else {
        return;
    };
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let running = waiting_run(&driver, &fault, &results);
    running.signal(libc::SIGINT);
    let (code, output) = running.finish(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{output}");
    let end = closing(&results);
    assert_eq!(end["outcome"], "interrupted", "{end}");
    assert_eq!(end["stop"]["left"], serde_json::json!([]), "{end}");
    driver.assert_nothing_left(Duration::from_secs(10));
}

#[test]
#[ignore = "starts geckodriver and Firefox: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn a_killed_runners_session_is_deleted_by_its_watchdog() {
    let Some(driver) = Driver::start(DriverKind::Geckodriver) else {
        return;
    };
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let running = waiting_run(&driver, &fault, &results);
    running.signal(libc::SIGKILL);
    let (code, output) = running.finish(Duration::from_secs(10));
    assert_eq!(code, None, "killed by a signal: {output}");
    // The watchdog (a process of its own) sends the DELETE.
    driver.assert_nothing_left(Duration::from_secs(30));
}

#[test]
#[ignore = "starts geckodriver and Firefox: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn a_browser_that_crashes_mid_run_ends_the_run() {
    let Some(driver) = Driver::start(DriverKind::Geckodriver) else {
        return;
    };
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let running = waiting_run(&driver, &fault, &results);
    for line in driver.browsers() {
        let pid: i32 = line.split_whitespace().next().unwrap().parse().unwrap();
        // SAFETY: kill on a pid the driver started for this test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let (code, output) = running.finish(Duration::from_secs(60));
    assert_eq!(code, Some(4), "{output}");
    assert!(output.contains("firefox exited"), "{output}");
    let end = closing(&results);
    assert_eq!(end["outcome"], "browser-exited", "{end}");
    driver.assert_nothing_left(Duration::from_secs(10));
}

/// A browser that cannot reach the runner: `--public-url` names a port where nothing listens
/// (as a node would see an address it has no route to), so no request reaches the server. The
/// run ends at the reach limit (`REACH_LIMIT`, 60 s) naming the origin and what to check, with a closing
/// record and no session or browser left.
#[test]
#[ignore = "starts geckodriver and Firefox: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn a_browser_that_cannot_reach_the_runner_fails_at_the_reach_limit() {
    let Some(driver) = Driver::start(DriverKind::Geckodriver) else {
        return;
    };
    let fault = Fault::new();
    let results = fault.path("results.jsonl");
    let listening = free_port();
    let unreached = std::iter::repeat_with(free_port)
        .find(|&p| p != listening)
        .unwrap();
    let origin = format!("http://127.0.0.1:{unreached}");
    let port = listening.to_string();
    let args = run_args(
        &fault,
        &driver.url(),
        &results,
        &["--port", &port, "--public-url", &origin],
    );
    let (code, output) = fault.start(&args, &[]).finish(Duration::from_secs(150));
    assert_eq!(code, Some(3), "{output}");
    assert!(
        output.contains(&format!(
            "the browser did not open the page at {origin} within {} s: no request reached the runner",
            REACH_LIMIT.as_secs()
        )) && output.contains("--public-url")
            && output.contains("--host"),
        "{output}"
    );
    let end = closing(&results);
    assert_eq!(end["outcome"], "not-reached", "{end}");
    assert_eq!(end["stop"]["left"], serde_json::json!([]), "{end}");
    driver.assert_nothing_left(Duration::from_secs(10));
}

/// A page that fails: the runner's message has the page's console lines (a `console.warn` and
/// an uncaught error, read through WebDriver BiDi) and the closing record counts them.
fn a_page_error_shows_the_pages_console(kind: DriverKind, browser: &str) {
    let Some(driver) = Driver::start(kind) else {
        return;
    };
    let fault = Fault::new();
    std::fs::write(fault.path("console.html"), CONSOLE_PAGE).unwrap();
    let results = fault.path("results.jsonl");
    let args = page_run_args(
        &fault,
        browser,
        "console.html",
        &driver.url(),
        &results,
        &[],
    );
    let (code, output) = fault.start(&args, &[]).finish(Duration::from_secs(120));
    assert_eq!(code, Some(1), "{output}");
    assert!(
        output.contains("console-check: failed on purpose")
            && output.contains("last lines of the page's console (WebDriver BiDi):"),
        "{output}"
    );
    let console: Vec<&str> = output
        .lines()
        .skip_while(|line| !line.contains("last lines of the page's console"))
        .collect();
    assert!(
        console
            .iter()
            .any(|line| line.contains("warn  console-check: logged by the page (http")),
        "{output}"
    );
    assert!(
        console.iter().any(|line| line.contains("error uncaught")
            && line.contains("console-check: thrown by the page")),
        "{output}"
    );
    let end = closing(&results);
    assert_eq!(end["outcome"], "error", "{end}");
    assert!(end["consoleLines"].as_u64() >= Some(2), "{end}");
    driver.assert_nothing_left(Duration::from_secs(10));
}

#[test]
#[ignore = "starts geckodriver and Firefox: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn a_page_error_through_geckodriver_shows_the_pages_console() {
    a_page_error_shows_the_pages_console(DriverKind::Geckodriver, "firefox");
}

#[test]
#[ignore = "starts chromedriver and Chromium: cargo test -p ocr-bench --test webdriver_faults -- --ignored"]
fn a_page_error_through_chromedriver_shows_the_pages_console() {
    a_page_error_shows_the_pages_console(DriverKind::Chromedriver, "chromium");
}
