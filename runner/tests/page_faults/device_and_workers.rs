//! Faults of the GPU device and the workers: the page's device lost while decoding, the vision
//! worker throwing, ending or losing its device during encode, and the process that holds the
//! WebGPU device killed.

use super::*;

/// The device destroyed after the prefill of the second case: the first case is kept, the
/// page names the lost device, exit 1.
#[test]
fn a_device_lost_in_the_middle_of_decoding_fails_the_run_and_keeps_the_cases_before() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "device-lost@decode:2";
    let run = run_page(
        &fault,
        &checkout(),
        "scope=decoder&repeat=2&maxTokens=2",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("The WebGPU device was lost (reason: destroyed")
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert!(
        stderr.contains("the page failed in phase decoder-run"),
        "{stderr}"
    );
    assert_failed_run(&fault, 1, "error");
    fault.assert_nothing_left();
}

/// The vision worker throws in the handler of the second encode: exit 1 with its message.
#[test]
fn a_worker_that_throws_during_encode_fails_the_run() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "worker-throw@encode:2";
    let run = run_page(
        &fault,
        &checkout(),
        "cases=smoke2&maxTokens=1",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("The vision worker threw during encode (injected fault worker-throw)")
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert!(
        stderr.contains("the page failed in phase vision-encode"),
        "{stderr}"
    );
    // Staged: every case is encoded before any is decoded, so none was finished.
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// A fault in the vision worker during the first encode: the run fails with exit 1 and a
/// message that says `expected` and names the injected fault, keeping no case.
fn a_worker_fault_during_encode_is_named(spec: &str, expected: &str) {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let run = run_page(
        &fault,
        &checkout(),
        "cases=smoke2&maxTokens=1",
        Some(spec),
        300,
    );
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains(expected)
            && message.contains(&format!("[after the injected fault inject={spec}]")),
        "{message}"
    );
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// The vision worker's own device is lost in the middle of an encode: the failure it causes is
/// reported as the loss, from the worker.
#[test]
fn a_worker_whose_device_is_lost_reports_the_loss() {
    a_worker_fault_during_encode_is_named(
        "worker-device-lost@encode:1",
        "The WebGPU device was lost (reason: destroyed",
    );
}

/// The vision worker closes itself in the middle of an encode, answering nothing: the page
/// learns it from the worker's lifetime lock at once, not from a call limit minutes later.
#[test]
fn a_worker_that_ends_during_encode_fails_the_run_at_once() {
    a_worker_fault_during_encode_is_named(
        "worker-terminate@encode:1",
        "The vision worker ended without answering \"encode\"",
    );
}

/// The ICD driver mapped into a process: it holds a Vulkan (hence WebGPU) device.
fn holds_a_vulkan_driver(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|maps| maps.lines().any(|l| l.contains("/libvulkan_")))
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The process that holds the WebGPU device, found by the Vulkan driver it maps and typed by
/// the runner's classification, killed with SIGKILL while the decoder runs. Firefox ESR on
/// Linux runs WebGPU in its parent process, so the browser is gone: exit 4.
#[test]
fn killing_the_process_that_holds_the_webgpu_device_ends_the_run() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let mut run = run_page(&fault, &checkout(), "scope=decoder&maxTokens=2", None, 300);
    run.wait_for("] decoder-run", Duration::from_secs(180));
    let runner = run.child.id();
    let holders: Vec<(u32, ocr_bench::process_type::ProcessType)> = fault
        .pids()
        .into_iter()
        .filter(|pid| holds_a_vulkan_driver(*pid))
        .filter_map(|pid| {
            let cmdline = ocr_bench::procfs::read_cmdline(pid)?;
            let main = parent_of(pid) == Some(runner);
            Some((pid, ocr_bench::process_type::classify(&cmdline, main).kind))
        })
        .collect();
    assert_eq!(
        holders.iter().map(|(_, kind)| *kind).collect::<Vec<_>>(),
        [ocr_bench::process_type::ProcessType::Browser],
        "one process, Firefox's parent, holds the device: {holders:?} of {:?}",
        fault.processes()
    );
    // SAFETY: kill on a pid of this test's own browser.
    assert_eq!(unsafe { libc::kill(holders[0].0 as i32, libc::SIGKILL) }, 0);
    let (code, stderr) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("firefox exited (signal: 9 (SIGKILL)) in phase decoder-run before the page reported a result"),
        "{stderr}"
    );
    assert_failed_run(&fault, 0, "browser-exited");
    fault.assert_nothing_left();
}
