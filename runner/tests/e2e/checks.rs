//! Checks of a result record against sources other than the page and the core: the query
//! parsed again, `models/manifest.json` and the evaluation set read from disk, the scoring
//! and the statistics recomputed with code written here. Nothing here calls the core's
//! scoring or summary code, so a bug there cannot hide itself.

use std::path::Path;

use ocr_bench_core::config::{Capture, Config, Memory, Profile, Schedule, Scope, Verify, Weights};
use serde_json::{json, Value};

/// The text the seed's scoring compares, without an NFKC library: the runner's dependencies
/// have none, and the core's would not be independent. Each character either is left alone
/// by NFKC (listed ranges, checked against CPython's `unicodedata.normalize("NFKC", c) == c`
/// for every character in them), is a fullwidth ASCII form (U+FF01..=U+FF5E, whose NFKC is
/// the ASCII character 0xFEE0 below it, the `<wide>` decomposition), or is JS whitespace
/// NFKC keeps as whitespace (removed, as the seed's `replace(/\s+/g, "")` does). Any other
/// character is an error naming it, so a case is never scored by guesswork.
pub fn scoring_text(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let code = u32::from(c);
        match code {
            // ASCII whitespace; U+00A0 and U+3000 become U+0020 under NFKC.
            0x09..=0x0D | 0x20 | 0xA0 | 0x3000 => {}
            0x21..=0x7E => out.push(c),
            0xFF01..=0xFF5E => out.push(char::from_u32(code - 0xFEE0).expect("ASCII")),
            // CJK punctuation 、。〃々〆〇〈〉《》「」『』【】〒〓〔〕〖〗〘〙〚〛〜〝〞〟.
            0x3001..=0x301F
            // Hiragana (precomposed, so NFKC recomposes them to themselves) and ゝゞ.
            | 0x3041..=0x3096
            | 0x309D..=0x309E
            // Katakana, the middle dot, the prolonged sound mark and ヽヾ.
            | 0x30A1..=0x30FE
            // CJK Unified Ideographs, extension A and the main block.
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF => out.push(c),
            _ => {
                return Err(format!(
                    "U+{code:04X} {c:?} is outside the ranges this test normalises without an \
                     NFKC library (ASCII, fullwidth ASCII, CJK punctuation, kana, CJK ideographs)"
                ))
            }
        }
    }
    Ok(out)
}

/// Levenshtein distance over Unicode scalar values (insert, delete, substitute: 1 each),
/// one row at a time.
pub fn levenshtein(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut row: Vec<usize> = (0..=right.len()).collect();
    for (i, a) in left.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, b) in right.iter().enumerate() {
            let substitute = diagonal + usize::from(a != *b);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[right.len()]
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {value}"))
}

fn count(value: &Value, what: &str) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is not a non-negative integer: {value}"))
}

/// A number of milliseconds: a finite number, not null, not negative.
fn milliseconds(value: &Value, what: &str) -> f64 {
    let ms = value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"));
    assert!(ms.is_finite() && ms >= 0.0, "{what} is {ms}");
    ms
}

fn close(reported: f64, recomputed: f64, what: &str) {
    assert!(
        (reported - recomputed).abs() <= 1e-9 * recomputed.abs().max(1.0),
        "{what}: reported {reported}, recomputed {recomputed}"
    );
}

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

/// `reference` resolved against `base` as `new URL(reference, base)` does, for the forms a
/// manifest or its entries use: absolute, root-relative or path-relative (with `.`/`..`).
pub fn resolve_url(reference: &str, base: &str) -> String {
    if reference.contains("://") {
        return reference.to_owned();
    }
    let (scheme, rest) = base
        .split_once("://")
        .unwrap_or_else(|| panic!("base {base:?} is not an absolute URL"));
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if let Some(other) = reference.strip_prefix("//") {
        return format!("{scheme}://{other}");
    }
    let joined = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let directory = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        format!(
            "{}{reference}",
            if directory.is_empty() { "/" } else { directory }
        )
    };
    let mut segments: Vec<&str> = Vec::new();
    let pieces: Vec<&str> = joined.split('/').skip(1).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        match *piece {
            "." if last => segments.push(""),
            "." => {}
            ".." => {
                segments.pop();
                if last {
                    segments.push("");
                }
            }
            other => segments.push(other),
        }
    }
    format!("{scheme}://{authority}/{}", segments.join("/"))
}

/// The model files one manifest entry names for the chosen weights, as the page's
/// `modelEntry` must resolve them: `{ url }` or `{ url, external: { path, url } }`.
fn expected_model(entry: &Value, weights: Weights, manifest_url: &str, what: &str) -> Value {
    let file = |value: &Value| -> String {
        resolve_url(
            value
                .as_str()
                .unwrap_or_else(|| panic!("models/manifest.json: {what}: no file {value}")),
            manifest_url,
        )
    };
    match weights {
        Weights::Embedded => json!({ "url": file(&entry["embedded"]) }),
        Weights::External => {
            let data = file(&entry["external"]["data"]);
            json!({
                "url": file(&entry["external"]["model"]),
                "external": { "path": data.rsplit('/').next().unwrap(), "url": data },
            })
        }
    }
}

/// The file behind a URL the runner serves: its path under the repository root.
fn served_file(root: &Path, url: &str, origin: &str) -> std::path::PathBuf {
    let path = url
        .strip_prefix(origin)
        .unwrap_or_else(|| panic!("{url} is not on the page's origin {origin}"));
    root.join(path.trim_start_matches('/'))
}

/// The configuration round trip: the summary's `config` is the core's parse of the query
/// the runner sent, the seed's fields spell the same values, and the model files and
/// capability are those `models/manifest.json` names for this tier, decoder and weights.
pub fn check_configuration(
    root: &Path,
    summary: &Value,
    config: &Config,
    page_url: &str,
) -> (std::path::PathBuf, Value) {
    let reported: Config = serde_json::from_value(summary["config"].clone()).unwrap_or_else(|e| {
        panic!(
            "summary.config is not a configuration ({e}): {}",
            summary["config"]
        )
    });
    assert_eq!(&reported, config, "summary.config against the query");
    assert_eq!(
        summary["config"],
        serde_json::to_value(config).unwrap(),
        "summary.config spelled as the core writes the query's configuration"
    );
    let get = |name: &str| json!(config.get(name).unwrap());
    for (field, parameter) in [
        ("tier", "tier"),
        ("memoryMode", "memory"),
        ("loaderMode", "loader"),
        ("scheduleMode", "schedule"),
        ("decoderMode", "decoder"),
        ("benchmarkScope", "scope"),
        ("weights", "weights"),
    ] {
        assert_eq!(
            summary[field],
            get(parameter),
            "summary.{field} against {parameter}="
        );
    }
    assert_eq!(summary["maxTokens"], json!(config.max_tokens));
    let cases_name = match config.scope {
        Scope::Full => config.cases.as_str(),
        Scope::Decoder => "synthetic",
    };
    assert_eq!(summary["casesName"], json!(cases_name));
    assert_eq!(summary["poll"]["mode"], get("poll"));

    // The runner serves the repository root, so a URL on the page's origin is a file there.
    let origin = resolve_url("/", page_url).trim_end_matches('/').to_owned();
    let manifest_url = resolve_url(&config.manifest, page_url);
    let manifest_path = served_file(root, &manifest_url, &origin);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(&manifest_path)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display()));
    let used = &summary["manifest"];
    assert_eq!(
        used["url"],
        json!(manifest_url),
        "the manifest the page read"
    );
    assert_eq!(used["name"], manifest["name"]);
    let tier = config.get("tier").unwrap();
    let decoder = config.get("decoder").unwrap();
    let vision_entry = &manifest["vision"][&tier];
    let decoder_entry = &manifest["decoder"][&decoder];
    let expected_vision = match config.scope {
        Scope::Full => expected_model(vision_entry, config.weights, &manifest_url, &tier),
        Scope::Decoder => Value::Null,
    };
    assert_eq!(used["vision"], expected_vision, "vision model files");
    assert_eq!(
        used["decoder"],
        expected_model(decoder_entry, config.weights, &manifest_url, &decoder),
        "decoder model files"
    );
    for model in [&used["vision"], &used["decoder"]] {
        for url in [&model["url"], &model["external"]["url"]] {
            if let Some(url) = url.as_str() {
                let file = served_file(root, url, &origin);
                assert!(file.is_file(), "{url}: no file {}", file.display());
            }
        }
    }

    // The capability is the manifest's, the descriptions those of the entries loaded.
    let capability = &summary["capability"];
    // The numbers of the capability; its two descriptions are checked below.
    for field in super::CAPABILITY_FIELDS
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "vision" | "decoder"))
    {
        assert_eq!(
            capability[field], manifest["capability"][field],
            "capability.{field} against models/manifest.json"
        );
    }
    assert_eq!(capability["decoder"], decoder_entry["description"]);
    match config.scope {
        Scope::Full => assert_eq!(capability["vision"], vision_entry["description"]),
        Scope::Decoder => assert!(capability["vision"].is_string()),
    }
    (manifest_path, manifest)
}

/// Each case's `text` and `actual` are its `tokenIds` looked up in the manifest's
/// `vocab.json` (entry `i` is id `i + tokens.vocabOffset`; the ids below are special and
/// read as nothing), so the reading scored is the one the tokens spell.
pub fn check_readings(manifest_path: &Path, manifest: &Value, cases: &[Value]) {
    let vocab_path = manifest_path
        .parent()
        .expect("the manifest's directory")
        .join(text(&manifest["vocab"], "manifest vocab"));
    let entries: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(&vocab_path)
            .unwrap_or_else(|e| panic!("{}: {e}", vocab_path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", vocab_path.display()));
    let offset = count(&manifest["tokens"]["vocabOffset"], "tokens.vocabOffset");
    for case in cases {
        let id = &case["id"];
        let spelled: String = case["tokenIds"]
            .as_array()
            .expect("tokenIds")
            .iter()
            .map(|t| {
                let t = count(t, "a token id");
                match t.checked_sub(offset) {
                    None => "",
                    Some(index) => entries
                        .get(index as usize)
                        .unwrap_or_else(|| panic!("case {id}: token {t} outside vocab.json")),
                }
            })
            .collect();
        assert_eq!(
            case["text"],
            json!(spelled),
            "case {id}: text of {}",
            case["tokenIds"]
        );
        assert_eq!(
            case["actual"],
            json!(spelled),
            "case {id}: actual of {}",
            case["tokenIds"]
        );
    }
}

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
        // capture=on: the steps' own session of the same file, created with enableGraphCapture.
        if config.capture == Capture::On {
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
        // With capture=on the second decoder session is the one whose steps are captured.
        // Each realm's second decoder session is its captured steps'.
        let captured =
            config.capture == Capture::On && role == "decoder" && decoder_sessions % 2 == 0;
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
        let verify = role == "verify";
        assert_eq!(
            session["executionProviders"],
            json!([if verify { "wasm" } else { "webgpu" }]),
            "{what}"
        );
        let options = &session["options"];
        let profiled = !verify && config.profile == Profile::Ops;
        let on_gpu: serde_json::Map<String, Value> = match (role, graph) {
            ("verify", _) => serde_json::Map::new(),
            // The worker's embeddings leave it anyway, so they come out on the CPU.
            (_, "vision") => {
                let location = if config.schedule == Schedule::Staged {
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
    readings: &[super::oracle::Reading],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits_over_characters() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("ありがとう", "あり"), 3);
        assert_eq!(levenshtein("", "ＯＫ"), 2);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
    }

    #[test]
    fn scoring_text_maps_fullwidth_and_drops_whitespace() {
        assert_eq!(scoring_text("ＯＫだよ！").unwrap(), "OKだよ!");
        assert_eq!(scoring_text(" 建設\u{3000}会社\n").unwrap(), "建設会社");
        assert!(scoring_text("①").is_err());
    }

    #[test]
    fn urls_resolve_as_the_page_resolves_them() {
        let page = "http://127.0.0.1:1/www/index.html?cases=smoke2";
        assert_eq!(
            resolve_url("/models/manifest.json", page),
            "http://127.0.0.1:1/models/manifest.json"
        );
        assert_eq!(
            resolve_url("../models/manifest.json", page),
            "http://127.0.0.1:1/models/manifest.json"
        );
        assert_eq!(
            resolve_url("generated/a.onnx", "http://h:2/models/manifest.json"),
            "http://h:2/models/generated/a.onnx"
        );
        assert_eq!(resolve_url("https://x/y", page), "https://x/y");
    }
}
