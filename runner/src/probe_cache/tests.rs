use ocr_bench_core::record::{FloorSource, ProbeAdapter, ProbeKey};

use super::*;
use crate::record::{parse_lines, Record};

/// A run with a vision worker and a decoder worker (Firefox, smoke1), as recorded.
fn recorded_summary() -> PageSummary {
    let text = include_str!("../../tests/data/realm-worker-smoke1.jsonl");
    parse_lines(text)
        .filter_map(|line| match line.unwrap().1.record {
            Record::Result { summary, .. } => summary.benchmark().cloned(),
            _ => None,
        })
        .next()
        .expect("the file holds a result")
}

fn runner(driver: Option<&str>) -> RunnerProbeKey {
    RunnerProbeKey {
        browser: "Mozilla Firefox 153.8.0esr".to_owned(),
        target: "local".to_owned(),
        driver: driver.map(str::to_owned),
    }
}

fn key(runner: RunnerProbeKey, realm: &str, kick_ms: Option<f64>) -> ProbeKey {
    ProbeKey {
        runner,
        user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"
            .to_owned(),
        adapter: ProbeAdapter {
            vendor: String::new(),
            architecture: String::new(),
            device: String::new(),
            description: String::new(),
        },
        poll: "none".to_owned(),
        kick_ms,
        realm: realm.to_owned(),
    }
}

/// The recorded summary with each floor's source as a page would now post it.
fn summary_with(origin: FloorOrigin, runner: &RunnerProbeKey) -> PageSummary {
    let mut summary = recorded_summary();
    let completion = &mut summary.completion;
    for (realm, floor) in [
        ("worker", &mut completion.worker),
        ("decoderWorker", &mut completion.decoder_worker),
    ] {
        floor
            .as_mut()
            .expect("both workers were probed")
            .rounds
            .source = Some(FloorSource {
            origin,
            key: Some(key(runner.clone(), realm, None)),
            measured_at: None,
            measured_run_id: None,
        });
    }
    summary
}

fn cache(dir: &tempfile::TempDir, mode: ProbeMode, runner: RunnerProbeKey) -> ProbeCache {
    ProbeCache::beside(&dir.path().join("out.jsonl"), mode, runner)
}

#[test]
fn the_cache_is_named_after_its_results_file() {
    assert_eq!(
        path_beside(Path::new("results/h100.jsonl")),
        PathBuf::from("results/h100.jsonl.probe-cache.json")
    );
}

#[test]
fn measured_floors_are_kept_with_their_rounds_and_offered_to_the_same_browser_and_driver() {
    let dir = tempfile::tempdir().unwrap();
    let here = runner(Some("nvidia 580.159.04"));
    let before = cache(&dir, ProbeMode::Reuse, here.clone()).offer();
    assert!(before.reuse && before.floors.is_empty(), "{before:?}");

    let summary = summary_with(FloorOrigin::Measured, &here);
    let kept = cache(&dir, ProbeMode::Reuse, here.clone())
        .keep(&summary)
        .unwrap();
    assert_eq!(kept, 2);
    let offer = cache(&dir, ProbeMode::Reuse, here.clone()).offer();
    assert!(offer.reuse && offer.reason.is_none(), "{offer:?}");
    assert_eq!(offer.runner.as_ref(), Some(&here));
    let worker = offer
        .floors
        .iter()
        .find(|kept| kept.key.realm == "worker")
        .expect("the vision worker's floor is kept");
    let recorded = &summary.completion.worker.as_ref().unwrap().rounds;
    assert_eq!(
        worker.rounds.dispatch_readback_ms,
        recorded.dispatch_readback_ms
    );
    assert_eq!(worker.rounds.empty_queue_ms, recorded.empty_queue_ms);
    assert_eq!(
        worker.rounds.source, None,
        "the cache keeps the rounds, not their origin"
    );
    assert_eq!(
        worker.measured_run_id.as_deref(),
        Some(summary.run_id.as_str())
    );

    // Another driver or another browser build is offered nothing: their key differs.
    for other in [
        runner(Some("nvidia 590.10")),
        runner(None),
        RunnerProbeKey {
            browser: "Mozilla Firefox 154.0esr".to_owned(),
            ..here.clone()
        },
    ] {
        let offer = cache(&dir, ProbeMode::Reuse, other.clone()).offer();
        assert!(
            offer.reuse && offer.floors.is_empty(),
            "{other:?}: {offer:?}"
        );
    }
}

#[test]
fn a_floor_measured_again_replaces_the_kept_one_and_a_reused_one_is_not_kept_again() {
    let dir = tempfile::tempdir().unwrap();
    let here = runner(None);
    let cache = cache(&dir, ProbeMode::Reuse, here.clone());
    cache
        .keep(&summary_with(FloorOrigin::Measured, &here))
        .unwrap();
    let first = std::fs::read_to_string(cache.path()).unwrap();

    assert_eq!(
        cache
            .keep(&summary_with(FloorOrigin::Reused, &here))
            .unwrap(),
        0
    );
    assert_eq!(std::fs::read_to_string(cache.path()).unwrap(), first);

    let mut again = summary_with(FloorOrigin::Measured, &here);
    let worker = &mut again.completion.worker.as_mut().unwrap().rounds;
    worker.dispatch_readback_ms = vec![3.0; 20];
    again.run_id = "the-second-run".to_owned();
    cache.keep(&again).unwrap();
    let offer = cache.offer();
    assert_eq!(offer.floors.len(), 2, "one floor per key: {offer:?}");
    let worker = offer
        .floors
        .iter()
        .find(|k| k.key.realm == "worker")
        .unwrap();
    assert_eq!(worker.rounds.dispatch_readback_ms, vec![3.0; 20]);
    assert_eq!(worker.measured_run_id.as_deref(), Some("the-second-run"));
}

#[test]
fn every_input_of_the_key_tells_floors_apart() {
    let base = key(runner(None), "page", Some(0.5));
    let mut changed = Vec::new();
    let mut k = base.clone();
    k.user_agent.push_str(" rv:154");
    changed.push(k);
    let mut k = base.clone();
    k.adapter.description = "llvmpipe (LLVM 19.1.7, 256 bits)".to_owned();
    changed.push(k);
    let mut k = base.clone();
    k.poll = "kick".to_owned();
    changed.push(k);
    let mut k = base.clone();
    k.kick_ms = Some(1.0);
    changed.push(k);
    let mut k = base.clone();
    k.realm = "decoderWorker".to_owned();
    changed.push(k);
    let mut k = base.clone();
    k.runner.target = "webdriver:http://127.0.0.1:4444".to_owned();
    changed.push(k);
    for other in changed {
        assert_ne!(base, other);
    }
    // The page compares the JSON: the runner's part sits beside its own, camelCase.
    let json = serde_json::to_value(&base).unwrap();
    for field in [
        "browser",
        "target",
        "driver",
        "userAgent",
        "adapter",
        "poll",
        "kickMs",
        "realm",
    ] {
        assert!(json.get(field).is_some(), "{field}: {json}");
    }
}

#[test]
fn probe_always_offers_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let here = runner(None);
    cache(&dir, ProbeMode::Reuse, here.clone())
        .keep(&summary_with(FloorOrigin::Measured, &here))
        .unwrap();
    let offer = cache(&dir, ProbeMode::Always, here).offer();
    assert!(!offer.reuse && offer.floors.is_empty(), "{offer:?}");
    assert!(offer.reason.unwrap().contains("--probe always"));
}

#[test]
fn a_corrupt_cache_is_set_aside_whole_and_every_floor_is_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    let here = runner(None);
    let cache = cache(&dir, ProbeMode::Reuse, here.clone());
    for corrupt in [
        "{\"version\": 1, \"floors\": [{\"key\": ",
        "{\"version\": 7, \"floors\": []}",
        "[1, 2, 3]",
    ] {
        std::fs::write(cache.path(), corrupt).unwrap();
        let offer = cache.offer();
        assert!(!offer.reuse && offer.floors.is_empty(), "{offer:?}");
        let reason = offer.reason.unwrap();
        assert!(
            reason.contains(&cache.path().display().to_string())
                && reason.contains("cannot be read")
                && reason.contains("measured again"),
            "{reason}"
        );
        let aside = corrupt_path(cache.path());
        assert_eq!(
            std::fs::read_to_string(&aside).unwrap(),
            corrupt,
            "kept whole"
        );
        assert!(!cache.path().exists());
        std::fs::remove_file(aside).unwrap();
    }

    // Keeping over a corrupt cache sets it aside and writes a cache of this run's floors.
    std::fs::write(cache.path(), "not json").unwrap();
    assert_eq!(
        cache
            .keep(&summary_with(FloorOrigin::Measured, &here))
            .unwrap(),
        2
    );
    assert_eq!(cache.offer().floors.len(), 2);
    assert_eq!(
        std::fs::read_to_string(corrupt_path(cache.path())).unwrap(),
        "not json"
    );
}

#[test]
fn an_unknown_probe_mode_names_the_allowed_ones() {
    assert_eq!("always".parse::<ProbeMode>(), Ok(ProbeMode::Always));
    assert_eq!("reuse".parse::<ProbeMode>(), Ok(ProbeMode::Reuse));
    let err = "sometimes".parse::<ProbeMode>().unwrap_err();
    assert!(
        err.contains("\"sometimes\"") && err.contains("reuse") && err.contains("always"),
        "{err}"
    );
}
