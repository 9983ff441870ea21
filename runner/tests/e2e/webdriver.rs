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

use harness::drivers::{Driver, DriverKind};

use super::{check_finished, launch_with};

/// One case and two tokens: Chromium decodes on SwiftShader at seconds a step.
const QUERY: &str = "cases=smoke1&maxTokens=2";

fn smoke_through(kind: DriverKind, browser: &str, browser_name: &str) {
    let Some(driver) = Driver::start(kind) else {
        return;
    };
    let url = driver.url();
    let run = launch_with(browser, QUERY, None, &["--webdriver", &url]);
    let mut run = run;
    // The driver is this test's child and stays up; what it started must be gone.
    let driver_pid = format!("{} ", driver.pid());
    run.orphans.retain(|line| !line.starts_with(&driver_pid));
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
    driver.assert_nothing_left(Duration::from_secs(10));
}

#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn chromium_through_chromedriver() {
    smoke_through(DriverKind::Chromedriver, "chromium", "chrome");
}

#[test]
#[ignore = "drives real browsers through their drivers: cargo test -p ocr-bench --test e2e webdriver:: -- --ignored"]
fn firefox_through_geckodriver() {
    smoke_through(DriverKind::Geckodriver, "firefox", "firefox");
}
