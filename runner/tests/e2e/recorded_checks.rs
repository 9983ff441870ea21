//! The checks themselves checked: a recorded run they accept and each corruption of it they
//! reject, and a wrong token the CPU oracle catches.

use super::*;

/// A run recorded by `ocr-bench run` (Firefox, the default configuration on `smoke2`), as
/// the browser tests would see it.
pub(super) fn recorded_run() -> Run {
    let path = repository_root().join("runner/tests/data/smoke2.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    // Recorded before `verify` existed: its configs read as verify=none, spelled so here as
    // the core now writes them.
    for record in &mut records {
        for part in ["body", "summary"] {
            if let Some(config) = record[part]["config"].as_object_mut() {
                config.entry("verify").or_insert_with(|| "none".into());
            }
        }
    }
    let query = records[0]["query"].as_str().expect("query").to_owned();
    Run {
        config: parse_query(&query).expect("the recorded query"),
        query,
        exit_code: Some(0),
        stderr: String::new(),
        records,
        orphans: Vec::new(),
        seconds: 0.0,
        recorded_before_sessions: true,
        recorded_before_probe_phase: true,
    }
}

/// The checks pass a real recorded run, and each corruption a broken page could make fails
/// them: no browser needed, so this runs with the quick tests.
#[test]
fn the_checks_accept_a_recorded_run_and_reject_each_corruption() {
    check_finished(&recorded_run());

    type Corruption = fn(&mut Value);
    let corruptions: [(&str, Corruption); 12] = [
        ("a token more than tokenIds", |s| {
            s["results"][0]["tokens"] = 3.into()
        }),
        ("another token id", |s| {
            s["results"][1]["tokenIds"][1] = 14211.into()
        }),
        ("a reading the tokens do not spell", |s| {
            s["results"][0]["actual"] = "ありがとう".into()
        }),
        ("an nCER the distances do not give", |s| {
            s["nCER"] = (4.0 / 10.0).into()
        }),
        ("null where a number must be", |s| {
            s["medianMs"] = Value::Null
        }),
        ("the lower median", |s| {
            s["medianMs"] = s["results"][1]["totalMs"].clone()
        }),
        ("a peak that is not the largest case", |s| {
            s["peakCaseMs"] = s["results"][1]["totalMs"].clone()
        }),
        ("another maxTokens than asked", |s| {
            s["config"]["maxTokens"] = 3.into()
        }),
        ("a seed field that disagrees with the query", |s| {
            s["scheduleMode"] = "resident".into()
        }),
        ("another decoder file than the manifest's", |s| {
            s["manifest"]["decoder"]["url"] = s["manifest"]["decoder"]["url"]
                .as_str()
                .unwrap()
                .replace("unified_gather", "gather_before_dq")
                .into()
        }),
        (
            "external data where the query asks for embedded weights",
            |s| {
                s["manifest"]["vision"]["external"] = serde_json::json!({ "path": "x", "url": "y" })
            },
        ),
        ("a case the evaluation set does not have", |s| {
            s["results"][1]["expected"] = "ＯＫだよ".into()
        }),
    ];
    for (what, corrupt) in corruptions {
        let mut run = recorded_run();
        let result = run
            .records
            .iter_mut()
            .find(|r| r["kind"] == "result")
            .expect("a result record");
        corrupt(&mut result["summary"]);
        let caught = std::panic::catch_unwind(|| check_finished(&run));
        assert!(caught.is_err(), "the checks passed {what}");
    }

    // A phase the page skipped.
    let mut run = recorded_run();
    let skipped = run
        .records
        .iter()
        .position(|r| r["kind"] == "mark" && r["phase"] == "vision-release")
        .expect("a vision-release mark");
    run.records.remove(skipped);
    assert!(std::panic::catch_unwind(|| check_finished(&run)).is_err());
}

/// A page loop that chose `character` at `position` of case `case`, with everything the page
/// derives from the tokens made to agree (text, reading, distance, exact, the totals, nCER),
/// so that no check of the record's own consistency can see it.
pub(super) fn choose_another_token(
    summary: &mut Value,
    case: usize,
    position: usize,
    character: &str,
) {
    let root = repository_root();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("models/manifest.json")).unwrap())
            .unwrap();
    let vocab: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(
            root.join("models")
                .join(manifest["vocab"].as_str().unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    let offset = manifest["tokens"]["vocabOffset"].as_u64().unwrap();
    let spell = |ids: &[u64]| -> String {
        ids.iter()
            .filter_map(|&t| t.checked_sub(offset))
            .map(|index| vocab[index as usize].as_str())
            .collect()
    };
    let id = offset + vocab.iter().position(|c| c == character).unwrap() as u64;
    let entry = &mut summary["results"][case];
    let mut tokens = token_ids(entry);
    assert_ne!(tokens[position], id, "{character:?} is already there");
    tokens[position] = id;
    let reading = spell(&tokens);
    let expected = checks::scoring_text(entry["expected"].as_str().unwrap()).unwrap();
    let actual = checks::scoring_text(&reading).unwrap();
    entry["tokenIds"] = serde_json::json!(tokens);
    entry["text"] = reading.clone().into();
    entry["actual"] = reading.into();
    entry["distance"] = checks::levenshtein(&expected, &actual).into();
    entry["exact"] = (expected == actual).into();
    let results = summary["results"].as_array().unwrap();
    let total = |field: &str| {
        results
            .iter()
            .map(|c| c[field].as_u64().unwrap())
            .sum::<u64>()
    };
    let (distance, characters) = (total("distance"), total("characters"));
    let exact = results.iter().filter(|c| c["exact"] == true).count();
    summary["distance"] = distance.into();
    summary["exact"] = exact.into();
    summary["nCER"] = (distance as f64 / characters as f64).into();
}

/// A page whose loop chose another token than the model gives, in a record that is otherwise
/// consistent: every check of the record against itself and the evaluation set passes it, and
/// the CPU oracle fails it, naming the case and the position. No browser needed.
#[test]
fn a_wrong_token_fails_the_checks_through_the_cpu_oracle() {
    let mut run = recorded_run();
    let result = run
        .records
        .iter_mut()
        .find(|r| r["kind"] == "result")
        .expect("a result record");
    choose_another_token(&mut result["summary"], 0, 1, "い");
    let refused = std::panic::catch_unwind(|| check_finished(&run))
        .expect_err("the checks passed a token the CPU did not choose");
    let message = refused
        .downcast_ref::<String>()
        .map_or("(not a formatted message)", String::as_str);
    assert!(
        message.starts_with("CPU oracle (")
            && message.contains("case 1 position 1: the page chose"),
        "the record was refused for another reason than the oracle's: {message}"
    );
}

/// The same in a real browser: the test-only `diverge-token` fault (docs/benchmark-protocol.md,
/// "Fault injection") makes the page's loop take the runner-up at smoke1's first choice, and
/// without `verify=wasm` nothing in the page notices. The run finishes and its record agrees
/// with itself; the CPU oracle fails it at that choice.
#[test]
#[ignore = "drives real browsers for minutes: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_wrong_token_fails_the_checks_through_the_cpu_oracle() {
    let run = launch(
        "firefox",
        "cases=smoke1&maxTokens=2",
        Some("diverge-token@decode"),
    );
    let refused = std::panic::catch_unwind(|| check_finished(&run))
        .expect_err("the checks passed a page that took the runner-up");
    let message = refused
        .downcast_ref::<String>()
        .map_or("(not a formatted message)", String::as_str);
    assert!(
        message.starts_with("CPU oracle (")
            && message.contains("case 1 position 0: the page chose"),
        "the run was refused for another reason than the oracle's: {message}\n{}",
        run.describe()
    );
}
