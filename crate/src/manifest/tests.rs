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
        ["fixed-kv-fused", "fixed-kv-gpu", "fixed-kv-ops"]
    );
    for version in OrtVersion::ALL {
        assert_eq!(
            names(&|d| !d.wasm_verifiable(*version)),
            ["fixed-kv-fused", "fixed-kv-ops", "nbits-int4", "nbits-int8"],
            "{version}"
        );
    }
    assert_eq!(
        names(&|d| d.fixed_kv),
        ["fixed-kv", "fixed-kv-fused", "fixed-kv-gpu", "fixed-kv-ops"]
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
                    "one of: fixed-kv-fused, fixed-kv-gpu, fixed-kv-ops, or leave capture at off"
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
