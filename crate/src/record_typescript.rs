//! Checks `record.d.ts`, the TypeScript the page sees, against the Rust types: every interface
//! has a Rust type, and its fields are the names that type serializes (a `?` field is one the
//! type may leave out). Types are not compared: `number`, `string` and the unions are read.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::build_summary::tests::{input_of, legacy_summary, measured};
use crate::build_summary::CompletionFloors;
use crate::record::{
    Completion, Environment, ExternalDataFile, GpuBytes, GpuMemorySummary, LeakCheck,
    LiveAfterCase, LoadedFile, MemorySample, RealmMemory, SessionOptionsUsed, SessionRecord,
    WasmHeap,
};
use crate::verification::{verification, VerificationInput, VerifyCaseInput};

const RECORD_TYPES: &str = include_str!("record.d.ts");

/// Field names per interface, `true` where optional; an `extends` adds the base's fields.
fn interfaces(text: &str) -> BTreeMap<String, BTreeMap<String, bool>> {
    let mut found: BTreeMap<String, BTreeMap<String, bool>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(head) = line.strip_prefix("export interface ") {
            let mut words = head.trim_end_matches('{').split_whitespace();
            let name = words.next().unwrap().to_owned();
            let mut fields = BTreeMap::new();
            if words.next() == Some("extends") {
                fields = found[words.next().unwrap()].clone();
            }
            found.insert(name.clone(), fields);
            current = Some(name);
        } else if line == "}" {
            current = None;
        } else if let (Some(name), Some((field, _))) = (&current, line.split_once(':')) {
            if field.starts_with("/**") || field.starts_with('*') || field.starts_with("//") {
                continue;
            }
            let optional = field.ends_with('?');
            let field = field.trim_end_matches('?').to_owned();
            found.get_mut(name).unwrap().insert(field, optional);
        }
    }
    found
}

fn keys(sample: &impl Serialize) -> BTreeSet<String> {
    match serde_json::to_value(sample).unwrap() {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn every_interface_names_the_fields_of_its_rust_type() {
    let summary = legacy_summary();
    let case = &summary.results[0];
    let page_floor = summary.completion.page.clone().unwrap();
    // A floor measured in the probe phase says how long its probe took.
    let mut probed_floor = page_floor.clone();
    probed_floor.rounds.probe_ms = Some(2300.0);
    let compilation = summary.pipeline_compilation.clone().unwrap();
    let full_sample = MemorySample {
        label: "x".into(),
        at_ms: 1.0,
        js_heap_size_limit: Some(1),
        total_js_heap_size: Some(1),
        used_js_heap_size: Some(1),
        user_agent_bytes: Some(1),
        user_agent_memory_error: Some("e".into()),
        user_agent_ms: Some(1.0),
        gpu: None,
        wasm_heaps: None,
        worker: None,
        decoder_worker: None,
        sample_ms: 1.0,
    };
    let gpu = GpuBytes {
        live_bytes: 1,
        peak_bytes: 2,
        live_by_kind: [("storage".to_owned(), 1)].into(),
        created: 1,
        destroyed: 0,
        collected: 0,
        device_destroyed: false,
        measured_by: "m".into(),
        window_peak_bytes: Some(2),
    };
    let heap = WasmHeap {
        label: "core".into(),
        bytes: 1,
        shared: false,
    };
    let realm = RealmMemory {
        gpu: Some(gpu.clone()),
        wasm_heaps: vec![heap.clone()],
        total_js_heap_size: None,
        used_js_heap_size: None,
    };
    let realm_with_js_heap = RealmMemory {
        total_js_heap_size: Some(2),
        used_js_heap_size: Some(1),
        ..realm.clone()
    };
    let after = LiveAfterCase {
        label: "after-case-1".into(),
        live_bytes: 1,
    };
    let leak = LeakCheck {
        after_cases: vec![after.clone()],
        grows: false,
        grown_bytes: 0,
        repeat_grown_bytes: 0,
        verdict: "v".into(),
    };
    let gpu_summary = GpuMemorySummary {
        measured_by: "m".into(),
        page: Some(gpu.clone()),
        worker: None,
        decoder_worker: None,
        leak_check: leak.clone(),
    };
    let gpu_summary_of_decoder_worker = GpuMemorySummary {
        decoder_worker: Some(gpu.clone()),
        ..gpu_summary.clone()
    };
    let sample_with_gpu = MemorySample {
        gpu: Some(Some(gpu.clone())),
        wasm_heaps: Some(vec![heap.clone()]),
        worker: Some(realm.clone()),
        decoder_worker: Some(realm_with_js_heap.clone()),
        ..full_sample.clone()
    };
    let mut summary_with_gpu = summary.clone();
    summary_with_gpu.gpu_memory = Some(gpu_summary.clone());
    let session = SessionRecord {
        role: "decoder".into(),
        graph: "decoder".into(),
        loader: "url".into(),
        model: LoadedFile {
            url: "u".into(),
            bytes: Some(1),
        },
        external_data: Some(ExternalDataFile {
            path: "p".into(),
            url: "u".into(),
            bytes: Some(1),
        }),
        execution_providers: vec!["webgpu".into()],
        options: SessionOptionsUsed {
            graph_optimization_level: "all".into(),
            preferred_output_location: [("logits".to_owned(), "gpu-buffer".to_owned())].into(),
            free_dimension_overrides: [("batch".to_owned(), 1)].into(),
            enable_profiling: false,
            enable_graph_capture: false,
            enable_cpu_mem_arena: Some(false),
            enable_mem_pattern: None,
            log_severity_level: 3,
        },
        create_ms: 1.0,
    };
    let verify_case = VerifyCaseInput {
        id: case.id.clone(),
        repeat: case.repeat,
        token_ids: case.token_ids.clone(),
        reference_token_ids: case.token_ids.clone(),
        step_max_abs_diff: vec![0.0; case.token_ids.len()],
    };
    let verify_input = VerificationInput {
        method: "wasm".into(),
        wall_ms: 1.0,
        cases: summary
            .results
            .iter()
            .map(|_| verify_case.clone())
            .collect(),
    };
    let mut same_cases = summary.results.clone();
    for result in &mut same_cases {
        result.clone_from(case);
    }
    let verified = verification(verify_input.clone(), &same_cases, &summary.config).unwrap();
    summary_with_gpu.sessions = Some(vec![session.clone()]);
    summary_with_gpu.verification = Some(verified.clone());
    let mut input_with_all = input_of(&summary_with_gpu);
    input_with_all.verification = Some(verify_input.clone());
    let mut batched_probe = case.decode_probe.clone();
    batched_probe.steps_per_readback = Some(4);
    let mut resident_case = case.clone();
    resident_case.vision_call_ms = Some(1.0);
    let samples: Vec<(&str, Vec<BTreeSet<String>>)> = vec![
        ("CaseRun", vec![keys(&measured(case, true))]),
        (
            "CaseProbe",
            vec![keys(&case.decode_probe), keys(&batched_probe)],
        ),
        ("CaseResult", vec![keys(case), keys(&resident_case)]),
        (
            "SummaryInput",
            vec![keys(&input_of(&summary)), keys(&input_with_all)],
        ),
        ("VerificationInput", vec![keys(&verify_input)]),
        ("VerifyCaseInput", vec![keys(&verify_case)]),
        ("SessionRecord", vec![keys(&session)]),
        ("LoadedFile", vec![keys(&session.model)]),
        ("ExternalDataFile", vec![keys(&session.external_data)]),
        ("SessionOptionsUsed", vec![keys(&session.options)]),
        ("Verification", vec![keys(&verified)]),
        ("VerificationTolerance", vec![keys(&verified.tolerance)]),
        ("VerifiedCase", vec![keys(&verified.cases[0])]),
        (
            "CompletionFloors",
            vec![keys(&CompletionFloors {
                page: None,
                worker: None,
                decoder_worker: None,
            })],
        ),
        ("Capability", vec![keys(&summary.capability)]),
        (
            "Environment",
            vec![
                keys(&summary.environment),
                keys(&Environment {
                    decoder_worker_adapter: Some(Value::Null),
                    ..summary.environment.clone()
                }),
            ],
        ),
        (
            "MemorySample",
            vec![
                keys(&summary.memory_samples[0]),
                keys(&full_sample),
                keys(&sample_with_gpu),
            ],
        ),
        ("GpuBytes", vec![keys(&gpu)]),
        ("WasmHeap", vec![keys(&heap)]),
        ("RealmMemory", vec![keys(&realm), keys(&realm_with_js_heap)]),
        ("LiveAfterCase", vec![keys(&after)]),
        ("LeakCheck", vec![keys(&leak)]),
        (
            "GpuMemorySummary",
            vec![keys(&gpu_summary), keys(&gpu_summary_of_decoder_worker)],
        ),
        ("ManifestUse", vec![keys(&summary.manifest)]),
        ("PollSetting", vec![keys(&summary.poll)]),
        (
            "FloorRounds",
            vec![keys(&page_floor.rounds), keys(&probed_floor.rounds)],
        ),
        (
            "CompletionFloor",
            vec![keys(&page_floor), keys(&probed_floor)],
        ),
        (
            "Completion",
            vec![
                keys(&summary.completion),
                keys(&Completion {
                    decoder_worker: Some(page_floor.clone()),
                    ..summary.completion.clone()
                }),
            ],
        ),
        ("RunProbe", vec![keys(&summary.decode_probe)]),
        ("RepeatFigures", vec![keys(&summary.repeats.per_repeat[0])]),
        ("RepeatIntervals", vec![keys(&summary.repeats.interval)]),
        ("Repeats", vec![keys(&summary.repeats)]),
        ("FirstRun", vec![keys(&compilation.first)]),
        (
            "SteadyState",
            vec![keys(compilation.steady.as_ref().unwrap())],
        ),
        ("PipelineCompilation", vec![keys(&compilation)]),
        ("PageSummary", vec![keys(&summary), keys(&summary_with_gpu)]),
    ];
    let declared = interfaces(RECORD_TYPES);
    let checked: BTreeSet<&str> = samples.iter().map(|(name, _)| *name).collect();
    let unchecked: Vec<&String> = declared
        .keys()
        .filter(|name| !checked.contains(name.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "interfaces without a Rust sample: {unchecked:?}"
    );
    for (name, serialized) in samples {
        let fields = declared
            .get(name)
            .unwrap_or_else(|| panic!("record.d.ts has no interface {name}"));
        let mut seen = BTreeSet::new();
        for keys in serialized {
            for key in &keys {
                assert!(fields.contains_key(key), "{name}: `{key}` is not declared");
            }
            for (field, optional) in fields {
                assert!(
                    *optional || keys.contains(field),
                    "{name}: `{field}` is declared required but the Rust type left it out"
                );
            }
            seen.extend(keys);
        }
        for field in fields.keys() {
            assert!(
                seen.contains(field),
                "{name}: `{field}` is declared but no Rust field writes it"
            );
        }
    }
}

#[test]
fn the_parser_reads_optional_fields_and_extends() {
    let parsed = interfaces(
        "export interface A {\n    /** note: with a colon */\n    a: number;\n    b?: string;\n}\nexport interface B extends A {\n    c: A | null;\n}\n",
    );
    assert_eq!(
        parsed["A"],
        BTreeMap::from([("a".into(), false), ("b".into(), true)])
    );
    assert_eq!(parsed["B"].len(), 3);
}
