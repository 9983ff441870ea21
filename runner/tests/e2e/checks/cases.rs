//! A run's cases and figures against the evaluation set on disk: each case's fields and types,
//! the statistics and the accuracy computed again here, and the cases being the set's.

use super::*;

/// The cases of the summary, every field typed: numbers are numbers, strings strings, and
/// `tokens` is the length of `tokenIds`.
pub fn check_case_types(summary: &Value, config: &Config, vocabulary: u64) -> Vec<Value> {
    let cases = summary["results"]
        .as_array()
        .unwrap_or_else(|| panic!("summary.results is not a list: {}", summary["results"]));
    let applicable = config.scope == Scope::Full;
    for case in cases {
        let id = text(&case["id"], "case id");
        for field in ["expected", "actual", "text"] {
            text(&case[field], &format!("case {id}: {field}"));
        }
        for field in [
            "visionMs",
            "prefillMs",
            "decodeMs",
            "totalMs",
            "timeToFirstTokenMs",
        ] {
            milliseconds(&case[field], &format!("case {id}: {field}"));
        }
        let ids: Vec<u64> = case["tokenIds"]
            .as_array()
            .unwrap_or_else(|| panic!("case {id}: tokenIds is not a list: {}", case["tokenIds"]))
            .iter()
            .map(|t| count(t, &format!("case {id}: a token id")))
            .collect();
        assert!(
            ids.iter().all(|&t| t < vocabulary),
            "case {id}: a token id at or above the vocabulary's {vocabulary}: {ids:?}"
        );
        assert_eq!(
            count(&case["tokens"], &format!("case {id}: tokens")),
            ids.len() as u64,
            "case {id}: tokens is the length of tokenIds {ids:?}"
        );
        let max = config.max_tokens as usize;
        assert!(
            ids.len() <= max,
            "case {id}: {} tokens with maxTokens={max}",
            ids.len()
        );
        // browser/decoding/decode.js: a step follows every token but the one that reaches
        // maxTokens; a shorter reading ended on EOS, chosen after as many steps as tokens.
        let steps = count(&case["decodeSteps"], &format!("case {id}: decodeSteps"));
        let expected_steps = if ids.len() == max { max - 1 } else { ids.len() };
        assert_eq!(
            steps,
            expected_steps as u64,
            "case {id}: decode steps for {} tokens with maxTokens={max}",
            ids.len()
        );
        if applicable {
            count(&case["distance"], &format!("case {id}: distance"));
            count(&case["characters"], &format!("case {id}: characters"));
            assert!(
                case["exact"].is_boolean(),
                "case {id}: exact {}",
                case["exact"]
            );
        } else {
            for field in ["distance", "exact"] {
                assert_eq!(
                    case[field],
                    Value::Null,
                    "case {id}: {field} with scope=decoder"
                );
            }
        }
    }
    cases.clone()
}

/// The seed's statistics recomputed from the cases: `medianMs` is `sorted[floor(n/2)]`,
/// `peakCaseMs` the largest `totalMs`, `p90Ms` the nearest rank, `meanMs` the mean and
/// `msPerToken` the decode time over the decode steps.
pub fn check_statistics(summary: &Value, cases: &[Value]) {
    assert_eq!(
        count(&summary["cases"], "summary.cases"),
        cases.len() as u64
    );
    let mut times: Vec<f64> = cases
        .iter()
        .map(|c| milliseconds(&c["totalMs"], "totalMs"))
        .collect();
    times.sort_by(f64::total_cmp);
    let n = times.len();
    let median = times[n / 2];
    close(
        milliseconds(&summary["medianMs"], "summary.medianMs"),
        median,
        "medianMs",
    );
    close(
        milliseconds(&summary["peakCaseMs"], "summary.peakCaseMs"),
        times[n - 1],
        "peakCaseMs",
    );
    let rank = ((0.9 * n as f64).ceil() as usize).clamp(1, n);
    close(
        milliseconds(&summary["p90Ms"], "summary.p90Ms"),
        times[rank - 1],
        "p90Ms",
    );
    close(
        milliseconds(&summary["meanMs"], "summary.meanMs"),
        times.iter().sum::<f64>() / n as f64,
        "meanMs",
    );
    let decode: f64 = cases
        .iter()
        .map(|c| milliseconds(&c["decodeMs"], "decodeMs"))
        .sum();
    let steps: u64 = cases
        .iter()
        .map(|c| count(&c["decodeSteps"], "decodeSteps"))
        .sum();
    if steps > 0 {
        close(
            milliseconds(&summary["msPerToken"], "summary.msPerToken"),
            decode / steps as f64,
            "msPerToken",
        );
    } else {
        assert_eq!(summary["msPerToken"], Value::Null, "no decode step ran");
    }
    milliseconds(&summary["wallMs"], "summary.wallMs");
    for (name, ms) in summary["sessionMs"]
        .as_object()
        .unwrap_or_else(|| panic!("sessionMs is not an object: {}", summary["sessionMs"]))
    {
        milliseconds(ms, &format!("sessionMs.{name}"));
    }
}

/// nCER, distance, characters and exact recomputed from each case's expected and actual
/// text with this file's normalisation and Levenshtein.
pub fn check_accuracy(summary: &Value, cases: &[Value], config: &Config) {
    if config.scope == Scope::Decoder {
        assert_eq!(summary["accuracyApplicable"], false);
        for field in ["nCER", "distance", "characters", "exact"] {
            assert_eq!(
                summary[field],
                Value::Null,
                "scope=decoder: {field} is not applicable"
            );
        }
        return;
    }
    assert_eq!(summary["accuracyApplicable"], true);
    let (mut distance, mut characters, mut exact) = (0u64, 0u64, 0u64);
    for case in cases {
        let id = &case["id"];
        let normal = |field: &str| {
            scoring_text(text(&case[field], field))
                .unwrap_or_else(|e| panic!("case {id}: {field} {}: {e}", case[field]))
        };
        let (expected, actual) = (normal("expected"), normal("actual"));
        let case_distance = levenshtein(&expected, &actual) as u64;
        let case_characters = expected.chars().count() as u64;
        assert_eq!(
            case["distance"].as_u64(),
            Some(case_distance),
            "case {id}: distance between {expected:?} and {actual:?}"
        );
        assert_eq!(
            case["characters"].as_u64(),
            Some(case_characters),
            "case {id}: characters of {expected:?}"
        );
        assert_eq!(
            case["exact"].as_bool(),
            Some(expected == actual),
            "case {id}: exact, {expected:?} vs {actual:?}"
        );
        distance += case_distance;
        characters += case_characters;
        exact += u64::from(expected == actual);
    }
    assert_eq!(count(&summary["distance"], "summary.distance"), distance);
    assert_eq!(
        count(&summary["characters"], "summary.characters"),
        characters
    );
    assert_eq!(count(&summary["exact"], "summary.exact"), exact);
    let ncer = summary["nCER"]
        .as_f64()
        .unwrap_or_else(|| panic!("nCER is not a number: {}", summary["nCER"]));
    close(ncer, distance as f64 / characters as f64, "nCER");
}

/// The evaluation set as the page reads it: an array or `{ "cases": [...] }`, `expected`
/// (else `text`), a missing `id` becoming the 1-based index.
fn evaluation_set(root: &Path, name: &str) -> Vec<(String, String)> {
    let path = root.join("models/eval").join(name).join("cases.json");
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let list = file
        .as_array()
        .or_else(|| file["cases"].as_array())
        .unwrap_or_else(|| panic!("{}: no list of cases", path.display()));
    list.iter()
        .enumerate()
        .map(|(index, case)| {
            let id = match &case["id"] {
                Value::Null => (index + 1).to_string(),
                Value::String(id) => id.clone(),
                other => other.to_string(),
            };
            let expected = case["expected"]
                .as_str()
                .or_else(|| case["text"].as_str())
                .unwrap_or_else(|| panic!("{}: case {id} has no expected text", path.display()));
            (id, expected.to_owned())
        })
        .collect()
}

/// Every case of the set in order, once per repeat, each with the set's expected text.
pub fn check_cases_are_the_set(root: &Path, cases: &[Value], config: &Config) {
    if config.scope == Scope::Decoder {
        let ids: Vec<&Value> = cases.iter().map(|c| &c["id"]).collect();
        assert_eq!(
            ids.len(),
            config.repeat as usize,
            "scope=decoder: one synthetic case per repeat: {ids:?}"
        );
        return;
    }
    let set = evaluation_set(root, &config.cases);
    assert_eq!(
        cases.len(),
        set.len() * config.repeat as usize,
        "{} cases of `{}` times repeat={}",
        set.len(),
        config.cases,
        config.repeat
    );
    for (index, case) in cases.iter().enumerate() {
        let (id, expected) = &set[index % set.len()];
        assert_eq!(case["id"], json!(id), "result {index}");
        assert_eq!(case["expected"], json!(expected), "case {id}");
        assert_eq!(
            case["repeat"],
            json!(index / set.len()),
            "case {id}: its pass over the set"
        );
    }
}
