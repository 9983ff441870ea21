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

use harness::{agent, firefox_fault, post, records, BIN, LEGACY};

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
