//! The sessions a run created, its verification against the WASM reference, and its readings
//! against the CPU oracle's to EOS.

use super::*;

/// The sessions this configuration's page realm creates, in order, as (role, graph): the
/// staged schedule's vision session is the worker's, not the page's.
fn expected_sessions(config: &Config) -> Vec<(&'static str, &'static str)> {
    let mut sessions = Vec::new();
    // The staged schedule's vision session is the worker's; the page records it all the same.
    if config.scope == Scope::Full {
        sessions.push(("vision", "vision"));
    }
    // pool=K: each decoder realm's, one after another.
    for _ in 0..config.pool {
        sessions.push(("decoder", "decoder"));
        // capture=on and all: the steps' own session of the same file, created with enableGraphCapture.
        if config.capture != Capture::Off {
            sessions.push(("decoder", "decoder"));
        }
    }
    if config.verify == Verify::Wasm {
        if config.scope == Scope::Full {
            sessions.push(("verify", "vision"));
        }
        sessions.push(("verify", "decoder"));
    }
    sessions
}

/// `summary.sessions` against the query and `models/manifest.json`: each session the page
/// created, the files the manifest names for this tier, decoder and weights (with their sizes
/// on disk), the execution provider, and the options the query asks for.
pub fn check_sessions(root: &Path, summary: &Value, config: &Config, page_url: &str) {
    let origin = resolve_url("/", page_url).trim_end_matches('/').to_owned();
    let manifest_url = resolve_url(&config.manifest, page_url);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(served_file(root, &manifest_url, &origin)).expect("the manifest"),
    )
    .expect("the manifest is JSON");
    let sessions = summary["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("summary.sessions is not a list: {}", summary["sessions"]));
    let roles: Vec<(&str, &str)> = sessions
        .iter()
        .map(|s| {
            (
                text(&s["role"], "session role"),
                text(&s["graph"], "session graph"),
            )
        })
        .collect();
    assert_eq!(
        roles,
        expected_sessions(config),
        "the sessions the page created"
    );
    let lean = config.memory == Memory::Lean;
    let layers = count(&manifest["capability"]["layers"], "capability.layers");
    let mut decoder_sessions = 0;
    for session in sessions {
        let (role, graph) = (
            text(&session["role"], "role"),
            text(&session["graph"], "graph"),
        );
        decoder_sessions += usize::from(role == "decoder");
        // With capture=on each realm's second decoder session is its captured steps'; with
        // capture=all every session but the WASM reference's records its graph.
        let verify = role == "verify";
        let captured = match config.capture {
            Capture::Off => false,
            Capture::On => role == "decoder" && decoder_sessions % 2 == 0,
            Capture::All => !verify,
        };
        let what = format!("session {role}/{graph}");
        let name = match graph {
            "vision" => config.get("tier").unwrap(),
            _ => config.get("decoder").unwrap(),
        };
        let expected = expected_model(
            &manifest[graph][&name],
            config.weights,
            &manifest_url,
            &name,
        );
        assert_eq!(
            session["model"]["url"], expected["url"],
            "{what}: model file"
        );
        let external = &session["externalData"];
        match config.weights {
            Weights::Embedded => assert_eq!(*external, Value::Null, "{what}: no external data"),
            Weights::External => {
                assert_eq!(external["path"], expected["external"]["path"], "{what}");
                assert_eq!(external["url"], expected["external"]["url"], "{what}");
            }
        }
        for file in [&session["model"], external]
            .into_iter()
            .filter(|f| !f.is_null())
        {
            let url = text(&file["url"], "file url");
            let on_disk = std::fs::metadata(served_file(root, url, &origin))
                .unwrap_or_else(|e| panic!("{what}: {url}: {e}"))
                .len();
            assert_eq!(file["bytes"], json!(on_disk), "{what}: bytes of {url}");
        }
        assert_eq!(
            session["loader"],
            json!(config.get("loader").unwrap()),
            "{what}"
        );
        assert_eq!(
            session["executionProviders"],
            json!([if verify { "wasm" } else { "webgpu" }]),
            "{what}"
        );
        let options = &session["options"];
        let profiled = !verify && config.profile == Profile::Ops;
        let on_gpu: serde_json::Map<String, Value> = match (role, graph) {
            ("verify", _) => serde_json::Map::new(),
            // The worker's embeddings leave it anyway, so they come out on the CPU, unless its
            // graph is captured: a captured graph's outputs are GPU buffers only.
            (_, "vision") => {
                let location =
                    if config.schedule == Schedule::Staged && config.capture != Capture::All {
                        "cpu"
                    } else {
                        "gpu-buffer"
                    };
                [("vision_embeds".to_owned(), json!(location))]
                    .into_iter()
                    .collect()
            }
            _ => std::iter::once("logits".to_owned())
                .chain((0..layers).flat_map(|l| [format!("present_k{l}"), format!("present_v{l}")]))
                .map(|name| (name, json!("gpu-buffer")))
                .collect(),
        };
        let expected_options = json!({
            "graphOptimizationLevel": "all",
            "preferredOutputLocation": on_gpu,
            "freeDimensionOverrides": {},
            "enableProfiling": profiled,
            "enableGraphCapture": captured,
            "enableCpuMemArena": if lean { json!(false) } else { Value::Null },
            // onnxruntime-web 1.30 turns it off itself when the WebGPU EP is listed.
            "enableMemPattern": if lean || !verify { json!(false) } else { Value::Null },
            "logSeverityLevel": if profiled { 0 } else { 3 },
        });
        assert_eq!(*options, expected_options, "{what}: options");
        milliseconds(&session["createMs"], &format!("{what}: createMs"));
    }
}

/// `verify=wasm`: every timed case was decoded again on the WASM (CPU) execution provider
/// and agreed. The reference's tokens are compared here with the run's, its steps counted
/// from the tokens, and every logit difference held to the tolerance the record states.
/// With `verify=none` the summary has no verification.
pub fn check_verification(summary: &Value, cases: &[Value], config: &Config) {
    let verification = &summary["verification"];
    if config.verify == Verify::Off {
        assert_eq!(*verification, Value::Null, "verify=none verifies nothing");
        return;
    }
    assert_eq!(verification["method"], "wasm", "{verification}");
    // The documented tolerance (docs/benchmark-protocol.md, "Verification").
    let fp16 =
        (config.scope == Scope::Full && config.tier == "242") || config.decoder == "fp16-matmul";
    let (tolerance, precision) = if fp16 { (1.0, "fp16") } else { (0.05, "fp32") };
    assert_eq!(
        verification["tolerance"],
        json!({ "maxAbsLogitDiff": tolerance, "precision": precision, "tokens": "equal" }),
        "the stated tolerance"
    );
    let verified = verification["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("verification.cases is not a list: {verification}"));
    assert_eq!(
        verified.len(),
        cases.len(),
        "one verified case per timed case"
    );
    let max_tokens = config.max_tokens as usize;
    let mut worst = 0.0_f64;
    for (case, check) in cases.iter().zip(verified) {
        let id = &case["id"];
        assert_eq!(check["id"], *id, "verification in the order of the results");
        assert_eq!(check["repeat"], case["repeat"], "case {id}");
        let tokens = case["tokenIds"].as_array().expect("tokenIds");
        assert_eq!(
            check["referenceTokenIds"], case["tokenIds"],
            "case {id}: the WASM reference decoded other tokens than WebGPU: {check}"
        );
        assert_eq!(check["tokensAgree"], true, "case {id}: {check}");
        assert_eq!(
            check["firstDivergingStep"],
            Value::Null,
            "case {id}: {check}"
        );
        // Step 0 is the prefill; a decode that ended on EOS chose it at one more step.
        let steps = if tokens.len() == max_tokens {
            max_tokens
        } else {
            tokens.len() + 1
        };
        assert_eq!(
            count(&check["stepsCompared"], "stepsCompared"),
            steps as u64,
            "case {id}: every step's logits compared: {check}"
        );
        let difference = check["maxAbsLogitDiff"]
            .as_f64()
            .unwrap_or_else(|| panic!("case {id}: maxAbsLogitDiff is not a number: {check}"));
        assert!(
            (0.0..=tolerance).contains(&difference),
            "case {id}: max |Δlogit| {difference} beyond the tolerance {tolerance}: {check}"
        );
        assert_eq!(check["withinTolerance"], true, "case {id}: {check}");
        worst = worst.max(difference);
    }
    assert_eq!(
        count(&verification["agreeing"], "agreeing"),
        cases.len() as u64
    );
    assert_eq!(count(&verification["total"], "total"), cases.len() as u64);
    assert_eq!(verification["passed"], true, "{verification}");
    milliseconds(&verification["wallMs"], "verification.wallMs");
    eprintln!(
        "e2e: verify=wasm: {} cases agree with the WASM reference, max |Δlogit| {worst:.3e} (tolerance {tolerance})",
        cases.len()
    );
}

/// Every case read to EOS before `maxTokens`, with exactly the token ids the CPU oracle read
/// for it, to EOS too (`readings`, from `oracle::check_tokens`, which follows a near tie the
/// page took), and nCER recomputed from the readings' distances to the expected texts. How
/// close a reading is to the expected text is the model's business and is printed, not
/// checked; that the page read what the model reads is checked.
pub fn check_read_to_eos(
    summary: &Value,
    cases: &[Value],
    config: &Config,
    readings: &[super::super::oracle::Reading],
) {
    assert_eq!(config.scope, Scope::Full, "a reading needs real images");
    assert_eq!(readings.len(), cases.len(), "one oracle reading per case");
    let mut distance = 0;
    let mut characters = 0;
    for (case, reading) in cases.iter().zip(readings) {
        let id = &case["id"];
        assert_eq!(
            *id,
            json!(reading.id),
            "the oracle's readings in the cases' order"
        );
        let tokens: Vec<u64> = case["tokenIds"]
            .as_array()
            .expect("tokenIds")
            .iter()
            .map(|t| count(t, "a token id"))
            .collect();
        assert!(
            tokens.len() < config.max_tokens as usize,
            "case {id}: {} tokens reached maxTokens={} without EOS",
            tokens.len(),
            config.max_tokens
        );
        assert!(
            reading.ended_on_eos && reading.token_ids == tokens,
            "case {id}: the page read {tokens:?} to EOS, the CPU oracle {:?} ({})",
            reading.token_ids,
            if reading.ended_on_eos {
                "to EOS"
            } else {
                "to maxTokens"
            }
        );
        let expected = scoring_text(text(&case["expected"], "expected")).expect("expected");
        let actual = scoring_text(text(&case["actual"], "actual")).expect("actual");
        let edits = levenshtein(&expected, &actual);
        eprintln!("e2e: case {id}: read {actual:?} for {expected:?}, {edits} edit(s)");
        distance += edits;
        characters += expected.chars().count();
    }
    assert!(characters > 0);
    close(
        summary["nCER"].as_f64().expect("nCER"),
        distance as f64 / characters as f64,
        "nCER",
    );
}
