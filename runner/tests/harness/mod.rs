//! What the fault tests share: one Firefox at a time, a scratch directory with a marker every
//! browser process inherits, a running `ocr-bench` read a stderr line at a time, and the
//! checks that nothing is left behind.
#![allow(dead_code)] // each test file uses its own part

pub mod drivers;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");
pub const LEGACY: &str = include_str!("../data/legacy-smoke2.jsonl");

/// One Firefox at a time.
pub static BROWSER: Mutex<()> = Mutex::new(());

/// Reports one mark through the endpoints, then waits for ever.
pub const WAITING_PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>waits</title>
<script type="module">
const runId = `wait-${Date.now()}`;
await fetch("/benchmark-mark", {
	method: "POST",
	headers: { "Content-Type": "application/json" },
	body: JSON.stringify({ runId, phase: "baseline" }),
});
</script>
"#;

/// Set to `1` to skip, with a note, the browser tests whose browser or built page is missing
/// instead of failing them. `scripts/test` never sets it.
pub const SKIP_VARIABLE: &str = "OCR_BENCH_SKIP_BROWSER_TESTS";

/// What installs each browser the runner can start (`scripts/setup` installs both).
const FIREFOX_INSTALL: &str =
    "./scripts/setup, or apt-get install -y --no-install-recommends firefox-esr mesa-vulkan-drivers";
const CHROMIUM_INSTALL: &str =
    "./scripts/setup, or apt-get install -y --no-install-recommends chromium";

/// A test that needs what is `missing`: under `OCR_BENCH_SKIP_BROWSER_TESTS=1` it is skipped
/// with a note (the caller returns); otherwise it fails, naming the command that installs it.
pub fn skip_or_fail(missing: &str, install: &str) {
    if std::env::var_os(SKIP_VARIABLE).is_some_and(|v| v == "1") {
        eprintln!("skipped ({SKIP_VARIABLE}=1): {missing}");
        return;
    }
    panic!("{missing}\ninstall it with: {install}\n(or set {SKIP_VARIABLE}=1 to skip the tests that need it)");
}

/// The browser the runner would start, found by the runner's own rule (`PATH`, or
/// `OCR_BENCH_FIREFOX` / `OCR_BENCH_CHROMIUM`); `None` only when skipping is allowed.
pub fn browser_or_fail(
    kind: ocr_bench::browser::BrowserKind,
) -> Option<ocr_bench::browser::BrowserInfo> {
    use ocr_bench::browser::BrowserKind;
    match ocr_bench::browser::probe(kind) {
        Ok(info) => Some(info),
        Err(e) => {
            let install = match kind {
                BrowserKind::Firefox => FIREFOX_INSTALL,
                BrowserKind::Chromium => CHROMIUM_INSTALL,
            };
            skip_or_fail(&format!("{e:#}"), install);
            None
        }
    }
}

/// One fault test at a time with Firefox (they share the machine's browser); `None` only when
/// Firefox is missing and skipping is allowed.
pub fn firefox_fault() -> Option<(std::sync::MutexGuard<'static, ()>, Fault)> {
    browser_or_fail(ocr_bench::browser::BrowserKind::Firefox)?;
    let one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    Some((one, Fault::new()))
}

/// A served root with the waiting page, a temporary directory for the browser's profile,
/// and a marker in the runner's environment that every browser process inherits.
pub struct Fault {
    pub dir: tempfile::TempDir,
    pub marker: String,
}

/// A running `ocr-bench run`, its stderr a line at a time.
pub struct Running {
    pub child: Child,
    pub lines: Receiver<String>,
    pub seen: Vec<String>,
}

impl Fault {
    pub fn new() -> Fault {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("wait.html"), WAITING_PAGE).unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let marker = format!(
            "{}-{}",
            std::process::id(),
            dir.path().file_name().unwrap().to_string_lossy()
        );
        Fault { dir, marker }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `ocr-bench run` of the waiting page, serving this fault's directory.
    pub fn run(&self, results: &Path, timeout_s: u64) -> Running {
        self.run_page("wait.html", results, timeout_s, &[])
    }

    /// `ocr-bench run` of `page` (in this fault's directory) with `env` added.
    pub fn run_page(
        &self,
        page: &str,
        results: &Path,
        timeout_s: u64,
        env: &[(&str, &str)],
    ) -> Running {
        let timeout = timeout_s.to_string();
        let mut args = vec!["--root".into(), self.dir.path().as_os_str().to_owned()];
        for arg in [
            "run",
            "--browser",
            "firefox",
            "--page",
            page,
            "--timeout",
            &timeout,
            "--results",
        ] {
            args.push(arg.into());
        }
        args.push(results.as_os_str().to_owned());
        self.start(&args, env)
    }

    /// `ocr-bench ARGS` with `env` added, its browsers' temporary files in this fault's
    /// directory and the marker in their environment.
    pub fn start(&self, args: &[std::ffi::OsString], env: &[(&str, &str)]) -> Running {
        let mut child = Command::new(BIN)
            .args(args)
            .envs(env.iter().copied())
            .env("TMPDIR", self.path("tmp"))
            .env("OCR_BENCH_FAULT_MARKER", &self.marker)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting ocr-bench");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Live processes with this fault's marker in their environment: the browser's, and
    /// the watchdog's.
    pub fn processes(&self) -> Vec<String> {
        let needle = format!("OCR_BENCH_FAULT_MARKER={}", self.marker);
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // Zombies are gone in all but name; their environ reads empty anyway.
            if stat
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
            {
                continue;
            }
            if environ.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
                let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
                found.push(format!("{name} {}", comm.trim()));
            }
        }
        found
    }

    /// The pids of `processes`.
    pub fn pids(&self) -> Vec<u32> {
        self.processes()
            .iter()
            .filter_map(|p| p.split_whitespace().next()?.parse().ok())
            .collect()
    }

    /// Profile directories left in the browser's temporary directory.
    pub fn profiles(&self) -> Vec<String> {
        std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Waits (up to 10 s) for every browser process and profile to be gone.
    pub fn assert_nothing_left(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline
            && !(self.processes().is_empty() && self.profiles().is_empty())
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(self.processes().is_empty(), "left: {:?}", self.processes());
        assert!(
            self.profiles().is_empty(),
            "profiles left: {:?}",
            self.profiles()
        );
    }
}

impl Running {
    /// The first stderr line containing `text`, within `within`.
    pub fn wait_for(&mut self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        if let Some(line) = self.seen.iter().find(|l| l.contains(text)) {
            return line.clone();
        }
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!(
            "no line with {text:?} within {within:?}; stderr so far:\n{}",
            self.seen.join("\n")
        );
    }

    /// `http://127.0.0.1:PORT` from the "opening URL (listening on ADDRESS)" line.
    pub fn base(&mut self) -> String {
        let line = self.wait_for("opening http://", Duration::from_secs(30));
        let url = line
            .split_whitespace()
            .skip_while(|word| *word != "opening")
            .nth(1)
            .unwrap_or_else(|| panic!("no URL after \"opening\" in {line:?}"));
        url.trim_end_matches("/wait.html").to_owned()
    }

    /// Exit status and the whole stderr.
    pub fn finish(mut self, within: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the runner did not exit within {within:?}:\n{}",
                    self.seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // The reader thread ends with the pipe.
        std::thread::sleep(Duration::from_millis(100));
        self.seen.extend(self.lines.try_iter());
        (status.code(), self.seen.join("\n"))
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, signal) }, 0);
    }
}

pub fn records(results: &Path) -> Vec<Value> {
    std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

pub fn post(url: &str, cookie: Option<&str>, body: &str) -> (u16, String) {
    let mut request = agent().post(url).header("Content-Type", "application/json");
    if let Some(cookie) = cookie {
        request = request.header("Cookie", cookie);
    }
    let mut response = request.send(body).expect("POST");
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}
