//! The static report in headless Chromium: `ocr-bench report --out DIR` on a committed results
//! file of two configurations (three real Firefox runs of smoke2), then DIR/index.html opened
//! from disk. Checked: no uncaught exception and no console error, every chart has data, the
//! run selector redraws, and a screenshot is not blank. A real `realm=worker` run (one Firefox
//! run of smoke1) checks that the timeline draws the decoder worker's series.
//!
//! Where Chromium is not installed each test fails naming what installs it (skipped instead
//! under `OCR_BENCH_SKIP_BROWSER_TESTS=1`, as the fault tests); each browser start takes a
//! second or two.

#[path = "report_html/served.rs"]
mod served;
#[path = "report_html/static_report.rs"]
mod static_report;

mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ocr_bench::browser::BrowserKind;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Records every uncaught exception, unhandled rejection and console error of the page in
/// `data-page-errors` on the root element, where `--dump-dom` shows it (Chromium's own log
/// gives every console message the same level).
const ERROR_PROBE: &str = r#"<script>
(() => {
	const errors = [];
	const note = (text) => {
		errors.push(String(text));
		document.documentElement.dataset.pageErrors = JSON.stringify(errors);
	};
	addEventListener("error", (event) => note(`uncaught: ${event.message ?? event.target?.src ?? "a resource failed to load"}`), true);
	addEventListener("unhandledrejection", (event) => note(`unhandled rejection: ${event.reason}`));
	const error = console.error.bind(console);
	console.error = (...args) => {
		note(`console.error: ${args.join(" ")}`);
		error(...args);
	};
})();
</script>"#;

/// Chromium on a file with a fresh profile, the page given `budget_ms` of virtual time.
fn chromium(executable: &Path, profile: &Path, args: &[String]) -> Output {
    let mut command = Command::new(executable);
    command.args([
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--window-size=1280,2200",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    // SAFETY: geteuid has no preconditions. Chromium refuses root without this switch.
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--no-sandbox");
    }
    command.args(args);
    let output = command.output().expect("starting Chromium");
    assert!(
        output.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The value of `attribute` in the element that has `marker` (`data-chart="ncer"`).
fn attribute<'a>(dom: &'a str, marker: &str, attribute: &str) -> Option<&'a str> {
    let start = dom.find(marker)?;
    let tag_end = start + dom[start..].find('>')?;
    let tag_start = dom[..start].rfind('<')?;
    let tag = &dom[tag_start..tag_end];
    let at = tag.find(&format!("{attribute}=\""))? + attribute.len() + 2;
    let end = at + tag[at..].find('"')?;
    Some(&tag[at..end])
}

fn png_is_plausible(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    bytes.len() as u64
}
