//! A smoke run in each browser through its WebDriver driver (started here on loopback):
//! `ocr-bench run --webdriver URL` records what a local run records and passes the same
//! checks, less the process memory, which a WebDriver browser cannot have; the record names
//! the endpoint and what the session reported; the driver is left with no session and no
//! browser.
//!
//! ```text
//! cargo test -p ocr-bench --test e2e webdriver:: -- --ignored --test-threads=1
//! ```

#[path = "../harness/mod.rs"]
mod harness;

use std::time::Duration;

use harness::drivers::{Driver, DriverKind, Grid};

use super::{check_finished, launch_with};

/// One case and two tokens: Chromium decodes on SwiftShader at seconds a step.
const QUERY: &str = "cases=smoke1&maxTokens=2";

/// Reaps every exited child of this test process (never one still running).
fn reap_exited_children() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only the local status; WNOHANG never blocks.
        if unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } <= 0 {
            break;
        }
    }
}

/// A smoke run through `kind`'s driver whose records pass a local run's checks. With `public`
/// (this machine's non-loopback IPv4 address), the browser opens the runner there over HTTPS,
/// as one on another machine would: `--host IP --public-url https://IP:PORT`, a certificate
/// made at start and `acceptInsecureCerts`. `http://IP:PORT` is no secure context, so an
/// adapter (and a result) means the page had one; the record names the public origin and
/// never the one-time launch URL that carries the run's secret.
fn smoke_through(kind: DriverKind, browser: &str, browser_name: &str, public: Option<&str>) {
    let Some(driver) = Driver::start(kind) else {
        return;
    };
    let url = driver.url();
    let origin = public.map(|ip| format!("https://{ip}:{}", harness::drivers::free_port()));
    let mut extra = vec!["--webdriver", url.as_str()];
    if let (Some(ip), Some(origin)) = (public, &origin) {
        extra.extend(["--host", ip, "--public-url", origin.as_str()]);
    }
    let mut run = launch_with(browser, QUERY, None, &extra);
    // The driver is this test's child and stays up; what it started must be gone. The
    // browser's processes that outlived its main one were handed to this test (a subreaper)
    // and have exited: zombies (`pid (name) Z …`) are reaped here, anything alive stays.
    let driver_pid = format!("{} ", driver.pid());
    run.orphans
        .retain(|line| !line.starts_with(&driver_pid) && !line.contains(") Z "));
    reap_exited_children();
    check_finished(&run);
    let target = format!("webdriver:{url}");
    for record in &run.records {
        assert_eq!(record["target"], target.as_str(), "{record}");
    }
    let closing = run.record("run").expect("a closing record");
    let reported = &closing["reportedCapabilities"];
    assert_eq!(reported["browserName"], browser_name, "{closing}");
    assert!(
        reported["browserVersion"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{closing}"
    );
    // Only the fields that identify the browser, never the whole echo.
    let keys: Vec<&str> = reported
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in &keys {
        assert!(
            [
                "browserName",
                "browserVersion",
                "platformName",
                "moz:geckodriverVersion"
            ]
            .contains(key),
            "reportedCapabilities keeps {key}: {reported}"
        );
    }
    if let Some(origin) = origin {
        let start = run.record("start").expect("a start record");
        assert!(
            start["body"]["adapter"].is_object(),
            "no WebGPU adapter, so no secure context: {start}"
        );
        let page = closing["url"].as_str().unwrap();
        assert!(
            page.starts_with(&format!("{origin}/www/index.html?")),
            "{closing}"
        );
        for record in &run.records {
            let text = record.to_string();
            assert!(
                !text.contains("__ocr-bench/launch"),
                "the launch URL in {text}"
            );
        }
    }
    driver.assert_nothing_left(Duration::from_secs(10));
}

#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn chromium_through_chromedriver() {
    smoke_through(DriverKind::Chromedriver, "chromium", "chrome", None);
}

/// Firefox through geckodriver, opened at this machine's public HTTPS origin where it has a
/// non-loopback address (one run for both: the smoke checks and the secure context).
#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn firefox_through_geckodriver_at_the_public_https_origin() {
    let ip = non_loopback_ipv4();
    if ip.is_none() {
        println!("this machine has no non-loopback IPv4 address: opened on loopback only");
    }
    smoke_through(DriverKind::Geckodriver, "firefox", "firefox", ip.as_deref());
}

/// This machine's first non-loopback IPv4 address (`ip -4 -o addr show scope global`).
fn non_loopback_ipv4() -> Option<String> {
    let output = std::process::Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            words.find(|w| *w == "inet")?;
            let address = words.next()?.split('/').next()?;
            address
                .parse::<std::net::Ipv4Addr>()
                .ok()
                .filter(|ip| !ip.is_loopback())
                .map(|ip| ip.to_string())
        })
}

/// The records of a results file (none when it is not there yet).
fn records_of(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// `sweep --target local:firefox --target webdriver:URL#chromium` (chromedriver) over two
/// configurations (one and two tokens), each on both targets in turn: Ctrl-C during the first
/// configuration's WebDriver run, then the same command again runs that one and the second
/// configuration's two, never the finished local run; each target ends with one result per
/// configuration, and `report` shows the targets side by side. The decoder alone, one case
/// and at most two tokens: Chromium decodes on SwiftShader at seconds a step.
#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn a_sweep_over_a_local_and_a_webdriver_target_resumes_and_reports_both() {
    use std::process::{Command, Stdio};
    use std::time::Instant;
    let Some(driver) = Driver::start(DriverKind::Chromedriver) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("sweep.jsonl");
    let remote = format!("webdriver:{}", driver.url());
    let sweep = || {
        Command::new(super::BIN)
            .arg("--root")
            .arg(super::repository_root())
            .args(["sweep", "--target", "local:firefox", "--target"])
            .arg(format!("{remote}#chromium"))
            .args([
                "--param",
                "cases=smoke1",
                "--param",
                "scope=decoder",
                "--param",
                "maxTokens=1,2",
                "--results",
            ])
            .arg(&results)
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting ocr-bench sweep")
    };
    let mut first = sweep();
    // Once the local run has closed and the WebDriver one has started, interrupt.
    let limit = Duration::from_secs(super::run_timeout());
    let started = Instant::now();
    loop {
        let records = records_of(&results);
        let closed_local = records
            .iter()
            .any(|r| r["kind"] == "run" && r["target"] == "local");
        let remote_started = records
            .iter()
            .any(|r| r["kind"] == "start" && r["target"] == remote.as_str());
        if closed_local && remote_started {
            break;
        }
        assert!(
            first.try_wait().unwrap().is_none(),
            "the sweep ended before its second run started: {records:?}"
        );
        assert!(
            started.elapsed() < limit,
            "no second run within {limit:?}: {records:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    driver.assert_nothing_left(Duration::from_secs(10));

    let second = sweep().wait_with_output().unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let records = records_of(&results);
    let outcomes: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["kind"] == "run")
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("local".to_owned(), "result".to_owned()),
        (remote.clone(), "interrupted".to_owned()),
        (remote.clone(), "result".to_owned()),
        ("local".to_owned(), "result".to_owned()),
        (remote.clone(), "result".to_owned()),
    ];
    assert_eq!(
        outcomes, expected,
        "the finished local run is not run again"
    );
    let queries: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "run" && r["outcome"] == "result")
        .map(|r| r["query"].as_str().unwrap())
        .collect();
    let one_token = queries
        .iter()
        .filter(|q| q.split('&').any(|p| p == "maxTokens=1"))
        .count();
    assert_eq!(
        (one_token, queries.len()),
        (2, 4),
        "each configuration once on each target: {queries:?}"
    );
    driver.assert_nothing_left(Duration::from_secs(10));

    let report = Command::new(super::BIN)
        .arg("report")
        .arg(&results)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert_eq!(report.status.code(), Some(0), "{text}");
    // The decoder alone on synthetic embeddings: the vision phases are not what this tests.
    assert!(text.contains("firefox · scope=decoder"), "{text}");
    assert!(
        text.contains(&format!("chromium @ {remote} · scope=decoder")),
        "{text}"
    );
}

/// Each closing record's target, outcome, and span: from `wallSeconds` before its time to it.
fn run_spans(results: &std::path::Path) -> Vec<(String, String, f64, f64)> {
    records_of(results)
        .iter()
        .filter(|r| r["kind"] == "run")
        .map(|r| {
            let end = humantime::parse_rfc3339(r["time"].as_str().unwrap())
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64();
            let wall = r["wallSeconds"].as_f64().unwrap();
            (
                r["target"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
                end - wall,
                end,
            )
        })
        .collect()
}

/// Through a real Selenium Grid 4 started here (`standalone`: the hub and one node in one
/// server, the node driving Firefox through geckodriver): a sweep of two configurations with
/// `--jobs 2` finishes both, under way at once, each recorded with the grid as its target, and
/// the grid is left with no session, driver or browser.
#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn a_sweep_through_a_selenium_grid_runs_two_jobs_at_once() {
    use std::process::Command;
    let Some(grid) = Grid::start(&super::repository_root()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("grid.jsonl");
    let out = Command::new(super::BIN)
        .arg("--root")
        .arg(super::repository_root())
        .args([
            "sweep",
            "--jobs",
            "2",
            "--browser",
            "firefox",
            "--webdriver",
        ])
        .arg(grid.url())
        .args([
            "--param",
            "scope=decoder",
            "--param",
            "maxTokens=1,2",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let spans = run_spans(&results);
    eprintln!("e2e: grid --jobs 2 spans {spans:?}");
    let target = format!("webdriver:{}", grid.url());
    assert_eq!(spans.len(), 2, "{spans:?}\n{stderr}");
    assert!(
        spans
            .iter()
            .all(|(t, outcome, _, _)| *t == target && outcome == "result"),
        "{spans:?}"
    );
    let (a, b) = (&spans[0], &spans[1]);
    assert!(
        a.2 < b.3 && b.2 < a.3,
        "the two runs were not under way at once on the grid: {spans:?}"
    );
    grid.assert_nothing_left(Duration::from_secs(20));
}
