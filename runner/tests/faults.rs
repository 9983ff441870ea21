//! The fault matrix that needs no GPU work: a real `ocr-bench run` with headless Firefox on a
//! small page of its own that reports one mark and then waits, hit by a forged report, a
//! hang-up, a SIGKILL and a full disk. Each checks the message, the records, the exit status
//! (`runner/README.md`, "Exit status") and that no browser process or profile is left.
//!
//! The runs are serialised (2 cores are shared here) and each takes a few seconds.

mod harness;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::{agent, firefox_fault, post, records, Fault, BIN, LEGACY};

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

/// The watchdogs among the fault's processes (`/bin/sh -c … ocr-bench-watchdog …`).
fn watchdogs(fault: &Fault) -> Vec<u32> {
    fault
        .pids()
        .into_iter()
        .filter(|pid| {
            ocr_bench::procfs::read_cmdline(*pid)
                .is_some_and(|args| args.iter().any(|a| a == "ocr-bench-watchdog"))
        })
        .collect()
}

/// `ocr-bench run` of the waiting page with `OCR_BENCH_TEST_DISABLE=disable` (the guards to
/// leave out; empty: none), killed with SIGKILL once the page has marked its phase, after
/// checking that `watchdogs_expected` watchdogs ran.
fn kill_the_runner(fault: &Fault, disable: &str, watchdogs_expected: usize) {
    let results = fault.path("results.jsonl");
    let mut run = fault.run_page(
        "wait.html",
        &results,
        120,
        &[("OCR_BENCH_TEST_DISABLE", disable)],
    );
    run.wait_for("baseline", Duration::from_secs(60));
    assert_eq!(
        watchdogs(fault).len(),
        watchdogs_expected,
        "OCR_BENCH_TEST_DISABLE={disable:?}: {:?}",
        fault.processes()
    );
    assert!(
        fault.processes().len() > watchdogs_expected,
        "the browser runs: {:?}",
        fault.processes()
    );
    assert_eq!(fault.profiles().len(), 1);

    run.signal(libc::SIGKILL);
    let (code, _) = run.finish(Duration::from_secs(5));
    assert_eq!(code, None, "killed by a signal");
    // What was written stays: the page's mark, and no closing record (the runner had no
    // chance to write one).
    let kinds: Vec<String> = records(&results)
        .iter()
        .map(|r| r["kind"].to_string())
        .collect();
    assert_eq!(kinds, ["\"mark\""]);
}

/// SIGKILL cannot be caught: the parent-death signal kills the browser's main process and the
/// watchdog its whole process group and its profile, once the runner's pipe closes.
#[test]
fn a_killed_runner_leaves_no_browser_and_no_profile() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    kill_the_runner(&fault, "", 1);
    fault.assert_nothing_left();
}

/// The watchdog alone (no parent-death signal) stops the browser and removes its profile.
#[test]
fn the_watchdog_alone_stops_the_browser_of_a_killed_runner() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    kill_the_runner(&fault, "pdeathsig", 1);
    fault.assert_nothing_left();
}

/// The parent-death signal alone (no watchdog) stops the browser: Firefox's main process is
/// killed with the runner and its children follow it. Nothing removes the profile: that is
/// the watchdog's part.
#[test]
fn the_parent_death_signal_alone_stops_the_browser_of_a_killed_runner() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    kill_the_runner(&fault, "watchdog", 0);
    let profiles = fault.profiles();
    assert_eq!(profiles.len(), 1, "the profile stays: {profiles:?}");
    std::fs::remove_dir_all(fault.path("tmp").join(&profiles[0])).unwrap();
    fault.assert_nothing_left();
}

/// The control of the three above: without either guard the browser outlives a killed runner,
/// so it is they that stop it there (the test then kills it itself).
#[test]
fn without_either_guard_the_browser_outlives_a_killed_runner() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    kill_the_runner(&fault, "pdeathsig,watchdog", 0);
    let alive = fault.processes();
    assert!(
        alive.iter().any(|p| p.contains("firefox")),
        "nothing stopped the browser, so it still runs: {alive:?}"
    );
    for pid in fault.pids() {
        // SAFETY: kill on a pid of this test's own browser.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    for profile in fault.profiles() {
        std::fs::remove_dir_all(fault.path("tmp").join(profile)).unwrap();
    }
    fault.assert_nothing_left();
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
    // Past the run's own timeout: the runner, not this limit, says how the run ended (exit 3
    // if the write failure had not ended it).
    let (code, stderr) = run.finish(Duration::from_secs(330));
    assert_eq!(code, Some(6), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "appending to the results file {}",
            results.display()
        )) && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(stderr.contains("the browser was stopped"), "{stderr}");
    // Shown, not asserted: how soon the write failure ended the run.
    println!(
        "the write failure ended the run after {:.1} s (timeout 300 s)",
        started.elapsed().as_secs_f64()
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

/// The launch URL the runner gave the browser, from the browser's command line.
fn launch_url(fault: &Fault) -> String {
    let urls: Vec<String> = fault
        .pids()
        .into_iter()
        .filter_map(ocr_bench::procfs::read_cmdline)
        .flatten()
        .filter(|arg| arg.contains(ocr_bench::server::LAUNCH_PATH))
        .collect();
    assert_eq!(urls.len(), 1, "{urls:?} in {:?}", fault.processes());
    urls[0].clone()
}

/// The browser's own launch URL, opened again, is refused: it works once. With the run's own
/// cookie (the secret from that URL), a report naming another `runId` than the page's is
/// refused with 403 and written as a `refused` record, while the page's `runId` is taken.
#[test]
fn the_launch_url_works_once_and_the_runs_cookie_does_not_admit_another_run_id() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let results = fault.path("results.jsonl");
    let mut run = fault.run(&results, 120);
    let base = run.base();
    run.wait_for("baseline", Duration::from_secs(60));
    let url = launch_url(&fault);
    let secret = url
        .split(ocr_bench::server::LAUNCH_PATH)
        .nth(1)
        .unwrap()
        .to_owned();

    let mut again = agent().get(&url).call().unwrap();
    assert_eq!(again.status().as_u16(), 403);
    let answer = again.body_mut().read_to_string().unwrap();
    assert!(answer.contains("works once"), "{answer}");

    let page_run_id = records(&results)[0]["runId"].as_str().unwrap().to_owned();
    let cookie = format!("{}={secret}", ocr_bench::server::RUN_COOKIE);
    let mark = |run_id: &str| {
        post(
            &format!("{base}/benchmark-mark"),
            Some(&cookie),
            &serde_json::json!({ "runId": run_id, "phase": "baseline" }).to_string(),
        )
    };
    let (status, answer) = mark("another-run");
    assert_eq!(status, 403, "{answer}");
    let reason: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        reason["error"],
        format!("runId \"another-run\" is not this run's; its page reported runId {page_run_id:?}"),
        "{answer}"
    );
    // The same cookie with the page's runId is taken: the refusal was the runId's.
    let (status, answer) = mark(&page_run_id);
    assert_eq!(status, 200, "{answer}");

    run.signal(libc::SIGHUP);
    let (code, stderr) = run.finish(Duration::from_secs(15));
    assert_eq!(code, Some(130), "{stderr}");
    let all = records(&results);
    let kinds: Vec<&str> = all.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["mark", "refused", "mark", "run"], "{all:?}");
    let refused = &all[1];
    assert_eq!(refused["status"], 403);
    assert_eq!(refused["endpoint"], "/benchmark-mark");
    assert_eq!(refused["claimedRunId"], "another-run");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("is not this run's"),
        "{refused}"
    );
    assert_eq!(all[3]["runId"], page_run_id.as_str());
    fault.assert_nothing_left();
}

/// Reports a mark and then a result of its own (another page's figures, kept as posted), so
/// that a run of it finishes.
const REPORTING_PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<title>reports</title>
<script type="module">
const runId = `reports-${Date.now()}`;
const post = (endpoint, body) => fetch(endpoint, {
	method: "POST",
	headers: { "Content-Type": "application/json" },
	body: JSON.stringify(body),
});
await post("/benchmark-mark", { runId, phase: "baseline" });
await post("/benchmark-result", { runId, page: "reports.html" });
</script>
"#;

/// Writes the reporting page and a Firefox that starts, beside itself, a process that ignores
/// SIGTERM (an ignored signal stays ignored across `exec`). Returns the wrapper's path.
fn firefox_with_a_stubborn_process(fault: &Fault) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(fault.path("reports.html"), REPORTING_PAGE).unwrap();
    let firefox = ocr_bench::browser::probe(ocr_bench::browser::BrowserKind::Firefox)
        .unwrap()
        .executable;
    let wrapper = fault.path("firefox-with-a-stubborn-process");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" != --version ]; then (trap '' TERM; exec sleep 600) & fi\nexec '{}' \"$@\"\n",
            firefox.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// A browser process that ignores SIGTERM: stopping the browser kills it with SIGKILL (exit 0,
/// counted in the closing record's `stop.killed`). With that SIGKILL left out
/// (`OCR_BENCH_TEST_DISABLE=sigkill`) it survives the stop, and the finished run exits 5,
/// naming it in the message and in `stop.left`.
#[test]
fn a_process_that_survives_the_stop_is_reported_and_exits_5() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let wrapper = firefox_with_a_stubborn_process(&fault);
    let wrapper = wrapper.to_str().unwrap();

    let killed = fault.path("killed.jsonl");
    let run = fault.run_page(
        "reports.html",
        &killed,
        120,
        &[("OCR_BENCH_FIREFOX", wrapper)],
    );
    let (code, stderr) = run.finish(Duration::from_secs(150));
    assert_eq!(code, Some(0), "{stderr}");
    let closing = records(&killed).pop().unwrap();
    assert_eq!(closing["outcome"], "result", "{closing}");
    assert!(
        closing["stop"]["killed"].as_u64().unwrap() >= 1,
        "{closing}"
    );
    assert_eq!(closing["stop"]["left"], serde_json::json!([]), "{closing}");
    fault.assert_nothing_left();

    let left = fault.path("left.jsonl");
    let env = [
        ("OCR_BENCH_FIREFOX", wrapper),
        ("OCR_BENCH_TEST_DISABLE", "sigkill"),
    ];
    let run = fault.run_page("reports.html", &left, 120, &env);
    let (code, stderr) = run.finish(Duration::from_secs(150));
    let stubborn = fault.processes();
    for pid in fault.pids() {
        // SAFETY: kill on a pid of this test's own browser.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("1 browser process(es) were left after stopping it")
            && stderr.contains(" sleep"),
        "{stderr}"
    );
    assert_eq!(stubborn.len(), 1, "{stubborn:?}");
    assert!(stubborn[0].ends_with(" sleep"), "{stubborn:?}");
    let closing = records(&left).pop().unwrap();
    assert_eq!(closing["outcome"], "result", "{closing}");
    assert_eq!(closing["stop"]["killed"], 0, "{closing}");
    let listed = closing["stop"]["left"].as_array().unwrap();
    assert!(
        listed.len() == 1 && listed[0].as_str().unwrap().contains("sleep"),
        "{closing}"
    );
    fault.assert_nothing_left();
}

/// A guard name the runner does not know: exit 2 before a browser starts, naming the allowed.
#[test]
fn an_unknown_test_switch_exits_2_before_a_browser_starts() {
    let Some((_one, fault)) = firefox_fault() else {
        return;
    };
    let results = fault.path("results.jsonl");
    let run = fault.run_page(
        "wait.html",
        &results,
        120,
        &[("OCR_BENCH_TEST_DISABLE", "seatbelt")],
    );
    let (code, stderr) = run.finish(Duration::from_secs(60));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("OCR_BENCH_TEST_DISABLE names \"seatbelt\"")
            && stderr
                .contains("allowed (test-only, comma-separated): pdeathsig, watchdog, sigkill"),
        "{stderr}"
    );
    fault.assert_nothing_left();
}
