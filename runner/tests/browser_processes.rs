//! Two browsers of one runner (a sweep's two jobs) at the level of processes: stopping one
//! leaves the other running, and the other's exit is still its own to see.
//!
//! The "browser" is a shell script that behaves as the real ones do where it matters: a
//! child in its process group, and an orphan that leaves the group (Chromium's crash handler
//! double-forks into a session of its own) and is handed to the subreaper. Before the tag,
//! stopping the first killed the second's processes (every descendant of the runner was
//! taken for the first's), and its reaping took the second's exit status, so the second's
//! job never saw its browser end.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use ocr_bench::browser::{self, Browser, BrowserInfo, BrowserKind, LaunchOptions};
use ocr_bench::browser_processes::{BrowserTag, TAG_VARIABLE};
use ocr_bench::procfs;

const FAKE_BROWSER: &str = "#!/bin/sh
sleep 600 &
( setsid sleep 600 & )
wait
";

/// Live descendants of this process that carry `tag`, with their parents.
fn tagged_with_parents(tag: &BrowserTag) -> Vec<(u32, u32)> {
    procfs::descendants_with_parents(std::process::id())
        .into_iter()
        .filter(|(pid, _)| {
            procfs::is_alive(*pid)
                && procfs::environment_holds(*pid, TAG_VARIABLE, tag.value()) == Some(true)
        })
        .collect()
}

fn tagged(tag: &BrowserTag) -> Vec<u32> {
    tagged_with_parents(tag)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// The fake browser has settled: its script, its sleep, and the orphan, handed to this
/// process once the subshell that forked it has exited.
fn settled(tag: &BrowserTag, main: u32) -> bool {
    let processes = tagged_with_parents(tag);
    processes.len() == 3
        && processes
            .iter()
            .any(|(pid, parent)| *parent == std::process::id() && *pid != main)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stopping_one_browser_leaves_the_other_running_and_its_exit_seen() {
    procfs::become_subreaper().expect("becoming a subreaper");
    let dir = tempfile::tempdir().unwrap();
    let executable = dir.path().join("fake-browser");
    std::fs::write(&executable, FAKE_BROWSER).unwrap();
    std::fs::set_permissions(&executable, std::fs::Permissions::from_mode(0o755)).unwrap();
    let info = BrowserInfo {
        name: BrowserKind::Firefox,
        executable,
        version: "fake".to_owned(),
        extra: Default::default(),
    };
    let route = browser::gpu_route(Default::default(), BrowserKind::Firefox);
    let launch = |tag: &BrowserTag| {
        Browser::launch(&info, "about:blank", &route, &LaunchOptions::default(), tag)
            .expect("launching the fake browser")
    };
    let (tag_a, tag_b) = (BrowserTag::new(), BrowserTag::new());
    let mut a = launch(&tag_a);
    let mut b = launch(&tag_b);
    // Each: the script, its sleep, and the orphan that left the group.
    wait_for("three processes of each browser", || {
        settled(&tag_a, a.pid()) && settled(&tag_b, b.pid())
    });
    let b_processes = tagged(&tag_b);
    let b_main = b.pid();
    assert!(b_processes.contains(&b_main), "{b_processes:?}");

    // B's main process ends while A stops: a zombie that A's reaping must leave to B.
    // SAFETY: kill signals one pid, B's main process, a child of this test.
    unsafe { libc::kill(b_main as i32, libc::SIGKILL) };
    wait_for("B's main process to exit", || !procfs::is_alive(b_main));
    let report = a.stop();
    assert!(report.left.is_empty(), "A left {:?}", report.left);
    assert!(tagged(&tag_a).is_empty(), "A's processes outlived its stop");

    let b_rest: Vec<u32> = b_processes
        .iter()
        .copied()
        .filter(|p| *p != b_main)
        .collect();
    assert!(
        b_rest.iter().all(|pid| procfs::is_alive(*pid)),
        "stopping A killed B's processes: {b_rest:?} alive: {:?}",
        tagged(&tag_b)
    );
    let status = b.try_exit_status();
    assert!(
        status.is_some_and(|s| !s.success()),
        "B's exit was not seen by B: {status:?}"
    );
    let report = b.stop();
    assert!(report.left.is_empty(), "B left {:?}", report.left);
    assert!(tagged(&tag_b).is_empty(), "B's orphan outlived its stop");
}
