//! A run's configuration against the query parsed again and `models/manifest.json` read from
//! disk, and its readings against the set's expected texts.

use super::*;

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
    for field in super::super::CAPABILITY_FIELDS
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
