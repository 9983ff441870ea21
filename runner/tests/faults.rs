//! The fault matrix that needs no GPU work: a real `ocr-bench run` with headless Firefox on a
//! small page of its own that reports one mark and then waits, hit by a forged report, a
//! hang-up, a SIGKILL and a full disk. Each checks the message, the records, the exit status
//! (`runner/README.md`, "Exit status") and that no browser process or profile is left.
//!
//! The runs are serialised (2 cores are shared here) and each takes a few seconds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");
const LEGACY: &str = include_str!("data/legacy-smoke2.jsonl");

/// One Firefox at a time.
static BROWSER: Mutex<()> = Mutex::new(());

/// Reports one mark through the endpoints, then waits for ever.
const WAITING_PAGE: &str = r#"<!doctype html>
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

/// One fault test at a time with Firefox (they share the machine's browser), or `None` with a
/// note where Firefox is missing.
fn firefox_fault() -> Option<(std::sync::MutexGuard<'static, ()>, Fault)> {
    if !firefox_installed() {
        eprintln!("skipped: Firefox is not installed");
        return None;
    }
    let one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    Some((one, Fault::new()))
}

fn firefox_installed() -> bool {
    ["firefox-esr", "firefox"].iter().any(|name| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
    })
}

/// A served root with the waiting page, a temporary directory for the browser's profile,
/// and a marker in the runner's environment that every browser process inherits.
struct Fault {
    dir: tempfile::TempDir,
    marker: String,
}

/// A running `ocr-bench run`, its stderr a line at a time.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Fault {
    fn new() -> Fault {
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

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, results: &Path, timeout_s: u64) -> Running {
        let mut child = Command::new(BIN)
            .arg("--root")
            .arg(self.dir.path())
            .args(["run", "--browser", "firefox", "--page", "wait.html"])
            .args(["--timeout", &timeout_s.to_string(), "--results"])
            .arg(results)
            .env("TMPDIR", self.path("tmp"))
            .env("OCR_BENCH_FAULT_MARKER", &self.marker)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting ocr-bench run");
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
    fn processes(&self) -> Vec<String> {
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

    /// Profile directories left in the browser's temporary directory.
    fn profiles(&self) -> Vec<String> {
        std::fs::read_dir(self.path("tmp"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Waits (up to 10 s) for every browser process and profile to be gone.
    fn assert_nothing_left(&self) {
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
    fn wait_for(&mut self, text: &str, within: Duration) -> String {
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

    /// `http://127.0.0.1:PORT` from the "opening …" line.
    fn base(&mut self) -> String {
        let line = self.wait_for("opening http://", Duration::from_secs(30));
        let url = line.split_whitespace().last().unwrap();
        url.trim_end_matches("/wait.html").to_owned()
    }

    /// Exit status and the whole stderr.
    fn finish(mut self, within: Duration) -> (Option<i32>, String) {
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

    fn signal(&self, signal: i32) {
        // SAFETY: kill on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, signal) }, 0);
    }
}

fn records(results: &Path) -> Vec<Value> {
    std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

fn post(url: &str, cookie: Option<&str>, body: &str) -> (u16, String) {
    let mut request = agent().post(url).header("Content-Type", "application/json");
    if let Some(cookie) = cookie {
        request = request.header("Cookie", cookie);
    }
    let mut response = request.send(body).expect("POST");
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// A report from outside the page is refused with 403 and recorded as an attempt; the run
/// goes on, and a hang-up then stops it like Ctrl-C, leaving nothing behind.
#[test]
fn a_forged_result_is_refused_and_a_hangup_stops_the_run() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let results = fault.path("results.jsonl");
    let mut run = fault.run(&results, 120);
    let base = run.base();
    run.wait_for("baseline", Duration::from_secs(60));

    let forged = r#"{"runId":"forged-unknown-run"}"#;
    let (status, answer) = post(&format!("{base}/benchmark-result"), None, forged);
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer.contains("no `ocr-bench-run` cookie")
            && answer.contains("only from the page it opened"),
        "{answer}"
    );
    let guessed = Some("ocr-bench-run=00000000000000000000000000000000");
    let (status, answer) = post(&format!("{base}/benchmark-start"), guessed, forged);
    assert_eq!(status, 403, "{answer}");
    assert!(answer.contains("another run's"), "{answer}");
    // The launch URL works once and only with the secret.
    let mut launch = agent()
        .get(format!(
            "{base}/__ocr-bench/launch/00000000000000000000000000000000"
        ))
        .call()
        .unwrap();
    assert_eq!(launch.status().as_u16(), 403);
    assert!(launch
        .body_mut()
        .read_to_string()
        .unwrap()
        .contains("works once"));
    run.wait_for("/benchmark-start refused (403)", Duration::from_secs(5));

    run.signal(libc::SIGHUP);
    let (code, stderr) = run.finish(Duration::from_secs(15));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted in phase baseline; the browser was stopped"),
        "{stderr}"
    );

    let all = records(&results);
    let kinds: Vec<&str> = all.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["mark", "refused", "refused", "run"], "{all:?}");
    assert_eq!(all[1]["status"], 403);
    assert_eq!(all[1]["endpoint"], "/benchmark-result");
    assert_eq!(all[1]["claimedRunId"], "forged-unknown-run");
    let closing = &all[3];
    assert_eq!(closing["outcome"], "interrupted");
    // The closing record names the page's own run, and the secret is written nowhere.
    assert_eq!(closing["runId"], all[0]["runId"]);
    assert!(!std::fs::read_to_string(&results)
        .unwrap()
        .contains("/__ocr-bench/launch/"));
    // Never scored: compare finds no finished run.
    let compare = Command::new(BIN)
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&compare.stderr).contains("no finished run"));
    fault.assert_nothing_left();
}

/// SIGKILL cannot be caught: the watchdog kills the browser's process group and removes its
/// profile when the runner's pipe closes.
#[test]
fn a_killed_runner_leaves_no_browser_and_no_profile() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let results = fault.path("results.jsonl");
    let mut run = fault.run(&results, 120);
    run.wait_for("baseline", Duration::from_secs(60));
    let before = fault.processes();
    assert!(
        before.len() >= 2,
        "the browser and its watchdog run: {before:?}"
    );
    assert_eq!(fault.profiles().len(), 1);

    run.signal(libc::SIGKILL);
    let (code, _) = run.finish(Duration::from_secs(5));
    assert_eq!(code, None, "killed by a signal");
    fault.assert_nothing_left();
    // What was written stays: the page's mark, and no closing record (the runner had no
    // chance to write one).
    let kinds: Vec<String> = records(&results)
        .iter()
        .map(|r| r["kind"].to_string())
        .collect();
    assert_eq!(kinds, ["\"mark\""]);
}

/// A tiny tmpfs, unmounted on drop.
struct FullDisk {
    mount: PathBuf,
}

impl FullDisk {
    /// Mounts 64 KiB of tmpfs at `mount` (root only), or `None` when that is not allowed.
    fn mount(mount: &Path) -> Option<FullDisk> {
        std::fs::create_dir(mount).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(mount)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| FullDisk {
            mount: mount.to_owned(),
        })
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// The results file on a full disk: the page's first report fails, the server tells the
/// runner at once, and the run stops with exit 6 naming the file and the OS error; the
/// records already in the file stay readable.
#[test]
fn a_failed_write_stops_the_run_at_once() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    // A 64 KiB tmpfs holding a finished run, filled to the last byte; /dev/full where
    // mounting is not allowed (then there is nothing already written to keep).
    let disk = FullDisk::mount(&fault.path("disk"));
    let (results, before) = match &disk {
        Some(disk) => {
            let results = disk.mount.join("results.jsonl");
            // Blank lines (skipped by readers) pad the file to whole pages, so no append fits.
            let mut text = LEGACY.to_owned();
            while !text.len().is_multiple_of(4096) {
                text.push('\n');
            }
            std::fs::write(&results, &text).unwrap();
            let mut filler = std::fs::File::create(disk.mount.join("filler")).unwrap();
            while filler.write_all(&[0u8; 4096]).is_ok() {}
            (results, Some(text))
        }
        None => {
            eprintln!("cannot mount a tmpfs here: using /dev/full");
            (PathBuf::from("/dev/full"), None)
        }
    };
    let started = Instant::now();
    let run = fault.run(&results, 300);
    let (code, stderr) = run.finish(Duration::from_secs(90));
    assert_eq!(code, Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "appending to the results file {}",
            results.display()
        )) && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(stderr.contains("the browser was stopped"), "{stderr}");
    // Far below the 300 s timeout: the write failure ended the run.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    if let Some(before) = before {
        assert_eq!(std::fs::read_to_string(&results).unwrap(), before);
        let compare = Command::new(BIN)
            .arg("compare")
            .arg(&results)
            .arg(&results)
            .output()
            .unwrap();
        assert_eq!(
            compare.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&compare.stderr)
        );
    }
    fault.assert_nothing_left();
    drop(disk);
}
