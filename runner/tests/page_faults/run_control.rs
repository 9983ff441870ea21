//! A run ended from outside: a page that stops reporting ended by the timeout, and Ctrl-C
//! during a sweep, then its resumption with what is missing.

use super::*;

/// The page stops reporting at its first case: `--timeout` ends the run with exit 3, and
/// nothing is left. (At its second case the test would wait out the first case's shader
/// compilation too, which took 12 s here idle and over 30 s at a load of 20.)
///
/// The timeout must outlast the page's way to the hang (decoder-run began 8 s idle to 19 s at
/// a load of 20 after the start here), which no fixed figure promises on a loaded machine: a
/// run that timed out before the hang is shown and run again with twice the timeout, so a
/// slow machine costs time, never the verdict. The first try allows about three times the
/// idle way there, since the whole wait is the test's cost.
#[test]
fn a_page_that_hangs_is_ended_by_the_timeout() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let spec = "hang@case:1";
    let mut timeout = 25;
    let (code, stderr) = loop {
        let run = run_page(
            &fault,
            &checkout(),
            "scope=decoder&maxTokens=1",
            Some(spec),
            timeout,
        );
        // Past the run's own timeout: the runner, not this limit, ends the run.
        let (code, stderr) = run.finish(Duration::from_secs(timeout + 30));
        let reached = stderr.contains("FAULT hang: case 1 never ends");
        if reached || timeout >= 360 {
            break (code, stderr);
        }
        println!(
            "the page had not reached the hang within {timeout} s; again with {} s:\n{stderr}",
            timeout * 2
        );
        std::fs::remove_file(fault.path("results.jsonl")).unwrap();
        timeout *= 2;
    };
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "timed out after {timeout} s in phase decoder-run with 0 case(s) finished"
        )),
        "{stderr}"
    );
    // The browser's log, shown on a timeout, has the page saying where it stopped.
    assert!(stderr.contains("FAULT hang: case 1 never ends"), "{stderr}");
    assert_failed_run(&fault, 0, "timeout");
    fault.assert_nothing_left();
}

/// The closing records' outcomes, in order.
fn outcomes(results: &Path) -> Vec<String> {
    records(results)
        .iter()
        .filter(|r| r["kind"] == "run")
        .map(|r| r["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// Ctrl-C while the second combination loads its decoder: exit 130, that combination marked
/// interrupted; the same command again runs only it.
#[test]
fn a_sweep_interrupted_by_ctrl_c_resumes_with_what_is_missing() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let results = fault.path("results.jsonl");
    // The first combination fails at once (a manifest whose decoder file is missing: the
    // page's own error, which a sweep counts as finished); the second does GPU work.
    let (_broken, broken_url) = manifest_without_its_decoder_file();
    let manifests = format!("manifest={broken_url},/models/manifest.json");
    let mut args: Vec<OsString> = vec!["--root".into(), checkout().into()];
    for arg in [
        "sweep",
        "--browser",
        "firefox",
        "--timeout",
        "300",
        "--param",
        "scope=decoder",
        "--param",
        "maxTokens=1",
        "--param",
        manifests.as_str(),
        "--results",
    ] {
        args.push(arg.into());
    }
    args.push(results.clone().into());
    let mut sweep = fault.start(&args, &[]);
    sweep.wait_for("FAIL  firefox", Duration::from_secs(120));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    // The broken combination marks decoder-load too, before it fails.
    while !records(&results).iter().any(|r| {
        r["phase"] == "decoder-load" && !r["query"].as_str().unwrap_or("").contains("broken")
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "the second combination did not load its decoder within 120 s; the records so far: {:?}",
            records(&results)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    sweep.signal(libc::SIGINT);
    let (code, stderr) = sweep.finish(Duration::from_secs(30));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted in phase decoder-load"),
        "{stderr}"
    );
    assert_eq!(outcomes(&results), ["error", "interrupted"]);
    assert!(!kinds(&records(&results)).contains(&"result"));
    fault.assert_nothing_left();

    let resumed = fault.start(&args, &[]);
    let (code, stderr) = resumed.finish(Duration::from_secs(300));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("2 combination(s) × 1 run(s), 1 already finished")
            && stderr.contains("1 to run"),
        "{stderr}"
    );
    assert_eq!(outcomes(&results), ["error", "interrupted", "result"]);
    // Everything the second sweep wrote is the interrupted combination's.
    let all = records(&results);
    let closings: Vec<usize> = (0..all.len())
        .filter(|i| all[*i]["kind"] == "run")
        .collect();
    let interrupted = &all[closings[1]];
    assert!(
        !interrupted["query"].as_str().unwrap().contains("broken"),
        "{interrupted}"
    );
    for record in &all[closings[1] + 1..] {
        assert_eq!(record["query"], interrupted["query"], "{record}");
    }
    fault.assert_nothing_left();
}

/// A manifest under the checkout (in the ignored `target/`) that the runner reads and accepts,
/// but whose `baseline` decoder file is not there, so the page fails loading it. Returns its
/// folder and its `manifest=` URL path.
fn manifest_without_its_decoder_file() -> (tempfile::TempDir, String) {
    let checkout = checkout().canonicalize().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("broken-manifest-")
        .tempdir_in(checkout.join("target"))
        .unwrap();
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(checkout.join("models/manifest.json")).unwrap(),
    )
    .unwrap();
    // From target/<dir>/ back to models/; the decoder's model file is beside the manifest.
    manifest["vocab"] = format!("../../models/{}", manifest["vocab"].as_str().unwrap()).into();
    manifest["decoder"]["baseline"]["embedded"] = "missing-decoder.onnx".into();
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let url = format!(
        "/target/{}/manifest.json",
        dir.path().file_name().unwrap().to_str().unwrap()
    );
    (dir, url)
}
