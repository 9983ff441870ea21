//! What every finished run is held to: its records and phases, its cases, figures and fields
//! (`check_finished`), and the decode probe's figures (`check_probe`).

use super::*;

/// The phases of a configuration, from docs/benchmark-protocol.md ("Phases"), for the query
/// the runner sent, not for what the page says it ran.
pub(super) fn expected_phases(config: &Config) -> Vec<&'static str> {
    if config.scope == Scope::Decoder {
        vec![
            "baseline",
            "probe",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    } else if config.schedule == Schedule::Resident {
        vec![
            "baseline",
            "probe",
            "vision-load",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    } else {
        vec![
            "baseline",
            "probe",
            "vision-load",
            "vision-encode",
            "vision-release",
            "decoder-load",
            "decoder-run",
            "release",
        ]
    }
}

/// Everything a finished run must show. Returns the CPU oracle's reading of each case (none
/// with `scope=decoder`, whose tokens are forced).
pub(super) fn check_finished(run: &Run) -> Vec<oracle::Reading> {
    // Exit 9 is a failed verify=wasm: say which case left the reference and how far.
    let verification = run
        .record("result")
        .map(|r| &r["summary"]["verification"])
        .filter(|v| !v.is_null())
        .map_or_else(String::new, |v| format!("\nverification: {v}"));
    assert_eq!(run.exit_code, Some(0), "{}{verification}", run.describe());
    check_no_orphans(run);
    let config = &run.config;
    let root = repository_root();
    let result = run
        .record("result")
        .unwrap_or_else(|| panic!("no result record\n{}", run.describe()));
    let summary = &result["summary"];

    for field in SEED_FIELDS.iter().chain(ADDED_FIELDS.iter()) {
        assert!(
            summary.get(*field).is_some(),
            "summary lacks `{field}`: {summary}"
        );
    }
    for field in CAPABILITY_FIELDS {
        assert!(
            summary["capability"].get(field).is_some(),
            "capability lacks `{field}`"
        );
    }
    // Every record is of the configuration the runner was given (it writes the query in
    // the core's canonical order, so the parses are compared, not the strings).
    for record in &run.records {
        let query = record["query"]
            .as_str()
            .unwrap_or_else(|| panic!("a {} record without its query", record["kind"]));
        assert_eq!(
            parse_query(query).as_ref().ok(),
            Some(config),
            "a {} record of another query: {query:?}",
            record["kind"]
        );
    }
    let page_url = run
        .record("run")
        .and_then(|r| r["url"].as_str())
        .unwrap_or_else(|| panic!("the closing run record has no page url\n{}", run.describe()));
    let (manifest_path, manifest) = checks::check_configuration(&root, summary, config, page_url);
    let start = run
        .record("start")
        .unwrap_or_else(|| panic!("no start record\n{}", run.describe()));
    assert_eq!(
        start["body"]["config"], summary["config"],
        "the page started with the configuration it reported"
    );

    let vocabulary = summary["capability"]["vocabulary"]
        .as_u64()
        .expect("capability.vocabulary");
    let cases = checks::check_case_types(summary, config, vocabulary);
    assert!(!cases.is_empty(), "no case results");
    for case in &cases {
        for field in CASE_FIELDS {
            assert!(
                case.get(field).is_some(),
                "case {} lacks `{field}`",
                case["id"]
            );
        }
        eprintln!(
            "e2e: {} {:?} case {}: tokens {} text {:?} expected {:?}",
            result["browser"]["name"],
            run.query,
            case["id"],
            case["tokenIds"],
            case["actual"],
            case["expected"]
        );
    }
    checks::check_cases_are_the_set(&root, &cases, config);
    checks::check_readings(&manifest_path, &manifest, &cases);
    checks::check_statistics(summary, &cases);
    checks::check_accuracy(summary, &cases, config);
    checks::check_verification(summary, &cases, config);
    let readings = if config.scope == Scope::Full {
        oracle::check_tokens(&root, &manifest_path, config, &cases)
    } else {
        Vec::new()
    };
    if !run.recorded_before_sessions {
        checks::check_sessions(&root, summary, config, page_url);
    }
    check_probe(summary, config, !run.recorded_before_probe_phase);

    // The records carry who ran it where.
    assert!(
        result["browser"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        result["browser"]
    );
    // The environment is written once, in the start record: the onnxruntime-web that ran is
    // the one ort= named (the pinned one where the config leaves it out).
    let asked = result["summary"]["config"]["ort"].as_str().map_or_else(
        || ocr_bench_core::config::OrtVersion::PINNED.to_string(),
        str::to_owned,
    );
    assert_eq!(
        start["body"]["ortVersion"].as_str(),
        Some(asked.as_str()),
        "the record's onnxruntime-web is not the version ort= named"
    );
    assert!(start["body"]["adapter"].is_object(), "{}", start["body"]);
    // A WebDriver browser's machine is known by its endpoint only.
    let remote = result["target"].as_str().is_some_and(|t| t != "local");
    assert!(
        if remote {
            start["machine"]["webdriver"].is_string()
        } else {
            start["machine"]["cores"].as_u64().is_some_and(|c| c >= 1)
        },
        "{}",
        start["machine"]
    );

    // The page went through this configuration's phases, in order, and each has process
    // memory above zero.
    let phases: Vec<&str> = expected_phases(config)
        .into_iter()
        .filter(|phase| !(run.recorded_before_probe_phase && *phase == "probe"))
        .collect();
    let marked: Vec<&str> = run
        .records
        .iter()
        // A release step's mark (it names a `step`) falls within its phase.
        .filter(|r| r["kind"] == "mark" && r.get("step").is_none())
        .map(|r| r["phase"].as_str().expect("a mark names its phase"))
        .collect();
    assert_eq!(marked, phases, "the phases the page marked");
    let memory = &result["processMemory"];
    // A browser behind WebDriver has no processes here to sample, and says so.
    if remote {
        assert_eq!(memory["available"], false, "{memory}");
        assert!(
            memory["reason"]
                .as_str()
                .is_some_and(|r| r.contains("WebDriver")),
            "{memory}"
        );
        return readings;
    }
    assert_eq!(memory["available"], true, "{memory}");
    for phase in phases {
        let measured = &memory["phases"][phase];
        assert!(
            measured["samples"].as_u64().is_some_and(|n| n > 0),
            "phase {phase} has no samples: {memory}"
        );
        let peak = measured["total"]["peakRssBytes"].as_u64().unwrap_or(0);
        assert!(peak > 0, "phase {phase}: peak RSS {peak}");
        for kind in ["browser", "renderer"] {
            let bytes = measured["byType"][kind]["peakRssBytes"]
                .as_u64()
                .unwrap_or(0);
            assert!(
                bytes > 0,
                "phase {phase}: no {kind} memory: {}",
                measured["byType"]
            );
        }
    }
    check_recorded_prediction(memory);
    // The rate is a figure, not a pass mark: it falls when the machine is loaded.
    let hz = memory["sampler"]["achievedHz"]
        .as_f64()
        .expect("the sampler reports achievedHz as a number");
    println!("sampler rate: {hz:.1} Hz");
    readings
}

/// The memory the runner predicted before the page loaded anything (`processMemory.prediction`,
/// `ocr-bench predict`'s figures) is recorded beside the measurement: for every phase the floor
/// names, GPU bytes and the WebAssembly heaps at least, and nothing for a phase it does not.
/// Without a floor (a manifest the runner could not size) there is no prediction, and the
/// floor says why.
fn check_recorded_prediction(memory: &Value) {
    let floor = &memory["floor"];
    // A record written before the runner computed floors (the committed recorded run) has
    // neither; every run the runner makes now has a floor, or a reason for none.
    if floor.is_null() {
        assert!(
            memory.get("prediction").is_none(),
            "a prediction without a floor: {memory}"
        );
        return;
    }
    if floor["available"] != true {
        assert!(
            floor["reason"].as_str().is_some() && memory.get("prediction").is_none(),
            "no floor, so no prediction, and a reason: {memory}"
        );
        return;
    }
    let phases: Vec<&String> = floor["phases"]
        .as_object()
        .expect("floor.phases")
        .keys()
        .collect();
    let prediction = memory["prediction"]
        .as_object()
        .unwrap_or_else(|| panic!("no recorded prediction beside the floor: {memory}"));
    assert_eq!(
        prediction.keys().collect::<Vec<_>>(),
        phases,
        "a prediction for each phase of the floor"
    );
    for (phase, predicted) in prediction {
        assert!(
            predicted["gpuBytes"].as_u64().is_some()
                && predicted["wasm"]["page"].as_u64().is_some_and(|b| b > 0),
            "phase {phase}: {predicted}"
        );
    }
}

pub(super) fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// The decode probe (docs/benchmark-protocol.md): typed, consistent with the case times, and
/// with a completion floor per realm and a verdict in words.
pub(super) fn check_probe(summary: &Value, query: &Config, probed_in_its_own_phase: bool) {
    let poll = Value::from(query.get("poll").expect("poll is a parameter"));
    let cases = summary["results"].as_array().expect("results");
    let mut all_steps = Vec::new();
    for case in cases {
        let id = &case["id"];
        let probe = &case["decodeProbe"];
        let steps = case["decodeSteps"].as_u64().expect("decodeSteps") as usize;
        let column = |name: &str| -> Vec<f64> {
            probe[name]
                .as_array()
                .unwrap_or_else(|| panic!("case {id}: decodeProbe.{name} is not a list: {probe}"))
                .iter()
                .map(|v| number(v, name))
                .collect()
        };
        let (submit, sync, choose) = (column("submitMs"), column("syncMs"), column("chooseMs"));
        assert_eq!(
            submit.len(),
            steps,
            "case {id}: one submitMs per decode step"
        );
        assert_eq!(sync.len(), steps, "case {id}: one syncMs per decode step");
        assert_eq!(
            choose.len(),
            steps + 1,
            "case {id}: one chooseMs per chosen token"
        );
        let prefill = number(&probe["prefillSubmitMs"], "prefillSubmitMs")
            + number(&probe["prefillSyncMs"], "prefillSyncMs");
        assert!(
            (prefill - number(&case["prefillMs"], "prefillMs")).abs() < 1e-6,
            "case {id}: prefillMs is its submit + sync"
        );
        let ttft = number(&case["timeToFirstTokenMs"], "timeToFirstTokenMs");
        let expected_ttft = number(&case["visionMs"], "visionMs") + prefill + choose[0];
        assert!(
            (ttft - expected_ttft).abs() < 1e-6,
            "case {id}: time to first token"
        );
        let own: Vec<f64> = (0..steps)
            .map(|k| submit[k] + sync[k] + choose[k + 1])
            .collect();
        // With choose=gpu the steps of a batch of `sync` share its one readback wait.
        let batch = if query.choose == Choose::Gpu {
            query.sync as usize
        } else {
            1
        };
        let latencies: Vec<f64> = own
            .chunks(batch)
            .flat_map(|chunk| {
                let share = chunk.iter().sum::<f64>() / chunk.len() as f64;
                std::iter::repeat_n(share, chunk.len())
            })
            .collect();
        if let Some(max) = latencies.iter().copied().reduce(f64::max) {
            assert!(
                (number(&case["tokenLatency"]["maxMs"], "tokenLatency.maxMs") - max).abs() < 1e-6,
                "case {id}: tokenLatency recomputed"
            );
            assert!(
                number(&case["decodeMs"], "decodeMs") >= latencies.iter().sum::<f64>() - 1e-6,
                "case {id}: the steps fit in decodeMs"
            );
        }
        all_steps.extend(latencies);
    }
    let probe = &summary["decodeProbe"];
    if !all_steps.is_empty() {
        let mut sorted = all_steps.clone();
        sorted.sort_by(f64::total_cmp);
        let p50 = sorted[(sorted.len() as f64 * 0.5).ceil() as usize - 1];
        assert!(
            (number(&probe["tokenLatency"]["p50Ms"], "tokenLatency.p50Ms") - p50).abs() < 1e-6,
            "run tokenLatency p50 recomputed from the cases"
        );
        for name in ["submit", "sync", "choose", "timeToFirstToken"] {
            assert!(number(&probe[name]["p50Ms"], name) >= 0.0);
        }
        number(&probe["tokensPerSecond"], "tokensPerSecond");
    }

    // A completion floor in every realm that ran a session, and a verdict in words.
    let vision_in_a_worker = query.schedule == Schedule::Staged && query.scope == Scope::Full;
    let decoder_in_a_worker = query.realm == Realm::Worker;
    // The page makes a device only for a session of its own.
    let page_session = !decoder_in_a_worker || (query.scope == Scope::Full && !vision_in_a_worker);
    let realms: Vec<&str> = [
        (page_session, "page"),
        (vision_in_a_worker, "worker"),
        (decoder_in_a_worker, "decoderWorker"),
    ]
    .into_iter()
    .filter_map(|(ran, realm)| ran.then_some(realm))
    .collect();
    for realm in realms {
        let floor = &summary["completion"][realm];
        for kind in ["emptyQueue", "dispatchReadback"] {
            assert!(
                number(&floor[kind]["p50Ms"], kind) >= 0.0,
                "{realm} {kind}: {floor}"
            );
            let samples = floor[format!("{kind}Ms")]
                .as_array()
                .expect("samples")
                .len();
            assert_eq!(
                samples,
                floor["rounds"].as_u64().unwrap() as usize,
                "{realm} {kind}"
            );
            assert!(samples >= 20, "{realm} {kind}: at least 20 rounds");
        }
        // Measured in the probe phase, which the runner's sampler saw as a phase of its own.
        if probed_in_its_own_phase {
            let probe_ms = number(&floor["probeMs"], "probeMs");
            assert!(probe_ms > 0.0, "{realm}: probeMs {probe_ms}");
            println!("{realm}: completion-floor probe {probe_ms:.0} ms");
            // A run launched here has a results file of its own, so no floor was kept for
            // it: each was measured, and is kept under its realm's key with the run's poll.
            let source = &floor["source"];
            assert_eq!(source["origin"], "measured", "{realm}: {floor}");
            assert_eq!(source["key"]["realm"], realm, "{realm}: {source}");
            assert_eq!(source["key"]["poll"], poll, "{realm}: {source}");
        }
        assert_eq!(
            floor["poll"], poll,
            "{realm} floor measured with the run's poll mode"
        );
        if query.poll == Poll::Kick {
            assert!(
                floor["kicks"].as_u64().is_some_and(|k| k > 0),
                "{realm}: poll=kick kicked: {floor}"
            );
        }
    }
    let check = &summary["completion"]["check"];
    assert!(
        check["verdict"].as_str().is_some_and(|v| !v.is_empty()),
        "completion verdict: {check}"
    );
    assert_eq!(summary["completionBound"], check["bound"]);
    assert!(summary["completionBound"].is_boolean());
    assert_eq!(summary["poll"]["mode"], poll);

    // Warm-up runs kept apart, repeats summarised, the first run set against the steady state.
    let warmup = query.warmup as usize;
    let repeat = query.repeat as usize;
    assert_eq!(
        summary["warmupResults"]
            .as_array()
            .expect("warmupResults")
            .len(),
        warmup
    );
    let repeats = &summary["repeats"];
    assert_eq!(repeats["count"].as_u64(), Some(repeat as u64));
    assert_eq!(
        repeats["perRepeat"].as_array().expect("perRepeat").len(),
        repeat
    );
    assert_eq!(
        repeats["tokensAgree"], true,
        "greedy decoding repeats itself: {repeats}"
    );
    if repeat > 1 {
        let interval = &repeats["interval"]["tokenP50Ms"];
        assert!(
            number(&interval["halfWidth"], "halfWidth") >= 0.0,
            "{interval}"
        );
        assert_eq!(interval["n"].as_u64(), Some(repeat as u64));
    }
    assert_eq!(
        summary["pipelineCompilation"]["first"]["warmup"],
        Value::Bool(warmup > 0),
        "the first run is the warm-up when there is one"
    );
    if query.profile == Profile::Ops {
        let decoder = &summary["profile"]["decoder"];
        assert_eq!(decoder["available"], true, "decoder profile: {decoder}");
        assert!(
            decoder["ops"].as_array().is_some_and(|ops| !ops.is_empty()),
            "per-op figures: {decoder}"
        );
        assert!(
            decoder["placement"]["found"] == true,
            "the node placement was logged: {}",
            decoder["placement"]
        );
        eprintln!(
            "e2e: profile=ops: {} ops, GPU timestamps {}, nodes off WebGPU {}",
            decoder["ops"].as_array().map_or(0, Vec::len),
            decoder["gpuTimestamps"],
            decoder["placement"]["offDevice"]
                .as_array()
                .map_or(0, Vec::len)
        );
    }
}
