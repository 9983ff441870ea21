use super::*;
use crate::config::parse_query;
use crate::parameter::Choice;

/// The manifest `scripts/ocrmodel/build_models.py` wrote.
const BUILT_IN: &str = include_str!("../../../models/manifest.json");

fn built_in() -> Manifest {
    Manifest::parse(BUILT_IN).unwrap()
}

fn refusal(manifest: &Manifest, query: &str) -> String {
    let config = parse_query(query).unwrap();
    manifest.check_config(&config).unwrap_err().to_string()
}

#[test]
fn the_type_reads_every_field_python_writes() {
    // Written back, the type gives the very JSON it read: no field the builder writes is
    // dropped, none it reads is missing.
    let written: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    assert_eq!(serde_json::to_value(built_in()).unwrap(), written);
}

#[test]
fn the_built_in_manifest_offers_the_defaults_and_the_variants_properties() {
    let manifest = built_in();
    manifest.check_config(&Config::default()).unwrap();
    let names = |property: &dyn Fn(&DecoderEntry) -> bool| -> Vec<&str> {
        let mut names: Vec<&str> = manifest
            .decoder
            .iter()
            .filter(|(_, d)| property(d))
            .map(|(n, _)| n.as_str())
            .collect();
        names.sort_unstable();
        names
    };
    assert_eq!(
        names(&|d| d.capturable),
        [
            "fixed-kv-fused",
            "fixed-kv-gpu",
            "fixed-kv-gqa",
            "fixed-kv-ops"
        ]
    );
    assert_eq!(names(&|d| d.kv_shared_in_place), ["fixed-kv-gqa"]);
    for version in OrtVersion::ALL {
        assert_eq!(
            names(&|d| !d.wasm_verifiable(*version)),
            [
                "fixed-kv-fused",
                "fixed-kv-gqa",
                "fixed-kv-ops",
                "nbits-int4",
                "nbits-int8"
            ],
            "{version}"
        );
    }
    assert_eq!(
        names(&|d| d.fixed_kv),
        [
            "fixed-kv",
            "fixed-kv-fused",
            "fixed-kv-gpu",
            "fixed-kv-gqa",
            "fixed-kv-ops"
        ]
    );
    let baseline = &manifest.decoder["baseline"].graph;
    assert_eq!(baseline.outputs[0], "logits");
    assert!(
        baseline.inputs.contains(&"past_k0".to_owned()),
        "{:?}",
        baseline.inputs
    );
    assert_eq!(manifest.vision["242"].graph.requires, ["shader-f16"]);
}

#[test]
fn a_decoder_of_a_new_name_runs_and_an_unknown_one_is_refused_with_the_names_offered() {
    let mut manifest = built_in();
    let copy = manifest.decoder["fixed-kv-gpu"].clone();
    manifest.decoder.insert("my-decoder".to_owned(), copy);
    manifest
        .check_config(&parse_query("decoder=my-decoder&choose=gpu&capture=on").unwrap())
        .unwrap();
    let err = refusal(&manifest, "decoder=fast");
    assert!(
        err.contains("`decoder`")
            && err.contains("has no decoder \"fast\"")
            && err.contains("my-decoder")
            && err.contains("baseline"),
        "{err}"
    );
    let err = refusal(&manifest, "tier=999");
    assert!(
        err.contains("`tier`") && err.contains("it offers: 121, 242"),
        "{err}"
    );
    // scope=decoder runs no vision, so its tier is not looked up.
    manifest
        .check_config(&parse_query("tier=999&scope=decoder").unwrap())
        .unwrap();
}

#[test]
fn capture_and_verify_follow_the_decoders_properties() {
    let manifest = built_in();
    for query in [
        "decoder=fixed-kv&choose=gpu&capture=on",
        "decoder=gpu-gather&choose=gpu&capture=on",
        "choose=gpu&capture=on",
        "choose=gpu&capture=all",
    ] {
        let err = refusal(&manifest, query);
        assert!(
            err.contains("`capture`")
                && err.contains("capturable in the manifest")
                && err.contains(&format!(
                    "capture={} needs",
                    query.rsplit('=').next().unwrap()
                ))
                && err.contains(
                    "one of: fixed-kv-fused, fixed-kv-gpu, fixed-kv-gqa, fixed-kv-ops, or leave capture at off"
                ),
            "{query}: {err}"
        );
    }
    for decoder in ["nbits-int8", "nbits-int4", "fixed-kv-fused", "fixed-kv-ops"] {
        let err = refusal(&manifest, &format!("decoder={decoder}&verify=wasm"));
        assert!(
            err.contains("`verify`")
                && err.contains(&format!(
                    "decoder={decoder} uses com.microsoft.GatherBlockQuantized"
                ))
                && err.contains(&runtime::OrtVersion::PINNED.to_string())
                && err.contains("baseline")
                && !err.contains("one of: baseline, einsum-int8, fixed-kv, fixed-kv-fused"),
            "{decoder}: {err}"
        );
    }
    for decoder in [
        "baseline",
        "gpu-gather",
        "gqa",
        "fixed-kv-gpu",
        "einsum-int8",
    ] {
        let config = parse_query(&format!("decoder={decoder}&verify=wasm")).unwrap();
        manifest.check_config(&config).unwrap();
    }
    let mut shorter = manifest.clone();
    shorter.capability.shape.max_tokens = 64;
    let err = refusal(&shorter, "maxTokens=128&manifest=/m.json");
    assert!(
        err.contains("`maxTokens`")
            && err.contains("capability.maxTokens (64)")
            && err.contains("/m.json"),
        "{err}"
    );
}

#[test]
fn a_manifest_the_core_cannot_read_is_refused_saying_why() {
    let mut value: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    value["decoder"] = serde_json::json!({});
    let err = Manifest::parse(&value.to_string()).unwrap_err().to_string();
    assert!(err.contains("lists no decoder"), "{err}");

    let mut value: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    let entry = value["decoder"]["baseline"].clone();
    value["decoder"]["my decoder"] = entry;
    let err = Manifest::parse(&value.to_string()).unwrap_err().to_string();
    assert!(
        err.contains("\"my decoder\" cannot be named in a query"),
        "{err}"
    );

    let mut value: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    value["logitsShape"] = serde_json::json!([1, 5]);
    let err = Manifest::parse(&value.to_string()).unwrap_err().to_string();
    assert!(
        err.contains("logitsShape is [1, 5]") && err.contains("14630"),
        "{err}"
    );

    let mut value: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    value["decoder"]["baseline"]
        .as_object_mut()
        .unwrap()
        .remove("operators");
    let err = Manifest::parse(&value.to_string()).unwrap_err().to_string();
    assert!(err.contains("missing field `operators`"), "{err}");
}

#[test]
fn a_manifest_for_another_image_size_is_refused_naming_the_size_the_core_preprocesses_to() {
    // The page checked this alone once; the core now refuses it for the page and the runner.
    let mut value: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
    value["capability"]["imageSize"] = serde_json::json!(256);
    let err = Manifest::parse(&value.to_string()).unwrap_err().to_string();
    assert!(
        err.contains("capability.imageSize is 256") && err.contains("allowed: 224"),
        "{err}"
    );
}

#[test]
fn every_built_in_variant_declares_the_device_limits_of_its_graph() {
    let manifest = built_in();
    let graphs = manifest.vision.values().map(|e| &e.graph);
    for graph in graphs.chain(manifest.decoder.values().map(|e| &e.graph)) {
        let limits = graph.limits.as_ref().expect("limits");
        let largest = graph.largest_activation.bytes.max(
            graph
                .largest_initializer
                .as_ref()
                .expect("largestInitializer")
                .bytes,
        );
        assert_eq!(limits.max_buffer_size, Some(largest), "{}", graph.embedded);
        assert_eq!(limits.max_storage_buffer_binding_size, Some(largest));
        // WebGPU's defaults are 8 storage buffers per stage and 16384 bytes of workgroup
        // storage; GroupQueryAttention is the one kernel here that binds more than 8.
        let buffers = limits.max_storage_buffers_per_shader_stage.unwrap();
        let gqa = graph
            .operators
            .contains(&"com.microsoft.GroupQueryAttention".to_owned());
        assert!(
            if gqa {
                buffers == 9
            } else {
                (1..=8).contains(&buffers)
            },
            "{}: {buffers}",
            graph.embedded
        );
        assert_eq!(limits.max_compute_workgroup_storage_size, Some(16384));
    }
}

#[test]
fn a_fallback_names_another_variant_of_the_same_role() {
    let with_fallback = |role: &str, name: &str, fallback: &str| {
        let mut manifest: serde_json::Value = serde_json::from_str(BUILT_IN).unwrap();
        manifest[role][name]["fallback"] = fallback.into();
        Manifest::parse(&manifest.to_string())
    };
    let taken = with_fallback("decoder", "gqa", "gpu-gather").unwrap();
    assert_eq!(
        taken.decoder["gqa"].graph.fallback.as_deref(),
        Some("gpu-gather")
    );
    let refusal =
        |role, name, fallback| with_fallback(role, name, fallback).unwrap_err().to_string();
    assert!(
        refusal("decoder", "gqa", "121").contains(
            "its decoder \"gqa\" falls back to \"121\", which is not one of its; name another decoder"
        ),
        "{}",
        refusal("decoder", "gqa", "121")
    );
    assert!(refusal("vision", "242", "242").contains("which is itself"));
}

/// An encoder-decoder manifest as `ocr-bench import` writes one (merged decoder, two layers).
fn encoder_decoder_value() -> serde_json::Value {
    let graph = |inputs: Vec<String>, outputs: &[&str]| {
        serde_json::json!({
            "requires": [],
            "embedded": "encoder_model.onnx",
            "bytes": { "embedded": 1000, "externalModel": 0, "externalData": 0 },
            "largestActivation": { "bytes": 100, "tensor": "t", "shape": [] },
            "inputs": inputs,
            "outputs": outputs,
            "operators": ["MatMul"],
        })
    };
    let mut decoder_inputs = vec!["input_ids".to_owned(), "encoder_hidden_states".to_owned()];
    decoder_inputs.extend(past_inputs(2));
    decoder_inputs.push("use_cache_branch".to_owned());
    let mut decoder = graph(decoder_inputs, &["logits"]);
    decoder["embedded"] = "decoder_model_merged.onnx".into();
    decoder["fixedKv"] = false.into();
    decoder["capturable"] = false.into();
    decoder["kvSharedInPlace"] = false.into();
    serde_json::json!({
        "name": "vit-bert-tiny",
        "family": "encoder-decoder",
        "tokens": { "bos": 2, "eos": 3, "vocabOffset": 0 },
        "capability": {
            "layers": 2, "hiddenSize": 128, "intermediateSize": 512, "attentionHeads": 4,
            "kvHeads": 4, "vocabulary": 3000, "maxTokens": 64, "headDim": 32,
            "imageSize": 32, "visionTokens": 5, "kvSlots": 0
        },
        "logitsShape": [1, 1, 3000],
        "vision": { "fp32": graph(vec!["pixel_values".to_owned()], &["last_hidden_state"]) },
        "decoder": { "fp32": decoder },
        "encoderDecoder": {
            "tokenizer": "tokenizer.json",
            "preprocessor": "preprocessor_config.json",
            "encoderHidden": 128,
            "crossAttentionHeads": 4,
            "generation": {
                "decoderStartTokenId": 2, "eosTokenIds": [3], "padTokenId": 0,
                "maxLength": 65, "repetitionPenalty": 1.0, "noRepeatNgramSize": 0
            }
        }
    })
}

fn parse_refusal(value: &serde_json::Value) -> String {
    Manifest::parse(&value.to_string()).unwrap_err().to_string()
}

#[test]
fn an_encoder_decoder_manifest_reads_back_and_runs_the_default_and_resident_paths() {
    let value = encoder_decoder_value();
    let manifest = Manifest::parse(&value.to_string()).unwrap();
    assert_eq!(manifest.family, Family::EncoderDecoder);
    assert_eq!(serde_json::to_value(&manifest).unwrap(), value);
    for query in [
        "tier=fp32&decoder=fp32&maxTokens=64",
        "tier=fp32&decoder=fp32&maxTokens=64&schedule=resident",
    ] {
        manifest.check_config(&parse_query(query).unwrap()).unwrap();
    }
    // Its pair form: the first step without pasts, every later one from withPast.
    let mut pair = value.clone();
    let mut first = pair["vision"]["fp32"].clone();
    first["inputs"] = serde_json::json!(["input_ids", "encoder_hidden_states"]);
    let mut later = first.clone();
    let mut later_inputs = vec!["input_ids".to_owned()];
    later_inputs.extend(past_inputs(2));
    later["inputs"] = serde_json::json!(later_inputs);
    first["withPast"] = later;
    pair["decoder"]["fp32"] = first;
    Manifest::parse(&pair.to_string()).unwrap();
}

#[test]
fn an_encoder_decoder_run_on_a_path_its_loop_does_not_take_is_refused_with_the_reason() {
    let manifest = Manifest::parse(&encoder_decoder_value().to_string()).unwrap();
    for (query, field) in [
        ("scope=decoder", "scope"),
        ("capture=on&choose=gpu", "capture"),
        ("verify=wasm", "verify"),
        ("realm=worker", "realm"),
        ("pool=2", "pool"),
    ] {
        let err = refusal(
            &manifest,
            &format!("tier=fp32&decoder=fp32&maxTokens=64&{query}"),
        );
        assert!(
            err.contains(&format!("`{field}`"))
                && err.contains("not available for the encoder-decoder model")
                && err.contains(&format!("leave {field} at")),
            "{query}: {err}"
        );
    }
    // The GPU token choice (under the model's own rule) and both schedules are its paths.
    for query in ["choose=gpu", "choose=gpu&sync=8&schedule=resident"] {
        manifest
            .check_config(
                &parse_query(&format!("tier=fp32&decoder=fp32&maxTokens=64&{query}")).unwrap(),
            )
            .unwrap_or_else(|e| panic!("{query}: {e}"));
    }
    // The default maxTokens (128) is more than this model's 64.
    let err = refusal(&manifest, "tier=fp32&decoder=fp32");
    assert!(err.contains("capability.maxTokens (64)"), "{err}");
}

#[test]
fn weights_external_is_refused_for_a_variant_without_that_form_naming_those_with_it() {
    let manifest = Manifest::parse(&encoder_decoder_value().to_string()).unwrap();
    let err = refusal(
        &manifest,
        "tier=fp32&decoder=fp32&maxTokens=64&weights=external",
    );
    assert!(
        err.contains("`weights`")
            && err.contains("tier=fp32")
            && err.contains("only the embedded form")
            && err.contains("(none in this manifest)"),
        "{err}"
    );
    let mut built_in = built_in();
    built_in.decoder.get_mut("gqa").unwrap().graph.external = None;
    let err = refusal(&built_in, "decoder=gqa&weights=external");
    assert!(
        err.contains("decoder=gqa") && err.contains("one of: baseline, einsum-int8"),
        "{err}"
    );
    built_in
        .check_config(&parse_query("decoder=gqa").unwrap())
        .unwrap();
}

#[test]
fn an_encoder_decoder_manifest_the_loop_cannot_run_is_refused_naming_what_is_wrong() {
    let mut value = encoder_decoder_value();
    value["logitsShape"] = serde_json::json!([1, 3000]);
    let err = parse_refusal(&value);
    assert!(err.contains("[1, 1, 3000]"), "{err}");

    let mut value = encoder_decoder_value();
    value["vocab"] = "vocab.json".into();
    assert!(parse_refusal(&value).contains("remove \"vocab\""));

    let mut value = encoder_decoder_value();
    value.as_object_mut().unwrap().remove("encoderDecoder");
    assert!(parse_refusal(&value).contains("no encoderDecoder section"));

    let mut value = encoder_decoder_value();
    value.as_object_mut().unwrap().remove("family");
    let err = parse_refusal(&value);
    assert!(err.contains("names no vocab file"), "{err}");

    for missing in [
        "use_cache_branch",
        "past_key_values.1.encoder.value",
        "encoder_hidden_states",
    ] {
        let mut value = encoder_decoder_value();
        let inputs = value["decoder"]["fp32"]["inputs"].as_array_mut().unwrap();
        inputs.retain(|i| i != missing);
        let err = parse_refusal(&value);
        assert!(
            err.contains(&format!("has no input {missing}"))
                && err.contains("decoder_model_merged.onnx"),
            "{missing}: {err}"
        );
    }

    let mut value = encoder_decoder_value();
    value["vision"]["fp32"]["inputs"] = serde_json::json!(["image"]);
    assert!(parse_refusal(&value).contains("has no input pixel_values"));
}
