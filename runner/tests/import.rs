//! `ocr-bench import`: the real binary on the committed test export (`models/hf-test/`), and on
//! doctored copies of it, one problem each, which must be named before any browser starts.
//! Each import runs the Python tooling on the graphs (a few seconds).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use ocr_bench_core::manifest::{Family, Manifest};

const BIN: &str = env!("CARGO_BIN_EXE_ocr-bench");
/// The test export (`scripts/hf_test_model/make.py`).
const EXPORT: &str = "models/hf-test/vit-trocr-tiny";
/// The files a doctored copy starts from.
const FILES: [&str; 6] = [
    "encoder_model.onnx",
    "decoder_model_merged.onnx",
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "tokenizer.json",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A scratch folder under the root's `target/` (git-ignored, and under the served root as an
/// import's manifest must be).
fn scratch() -> tempfile::TempDir {
    let target = root().join("target");
    std::fs::create_dir_all(&target).unwrap();
    tempfile::tempdir_in(target).unwrap()
}

fn import(folder: &Path, out: &Path) -> Output {
    Command::new(BIN)
        .arg("--root")
        .arg(root())
        .arg("import")
        .arg(folder)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// A copy of the test export, changed by `doctor`, imported: its refusal's stderr.
fn refusal(doctor: impl FnOnce(&Path)) -> String {
    let dir = scratch();
    let copy = dir.path().join("export");
    std::fs::create_dir(&copy).unwrap();
    for file in FILES {
        std::fs::copy(root().join(EXPORT).join(file), copy.join(file)).unwrap();
    }
    doctor(&copy);
    let output = import(&copy, &dir.path().join("out"));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        !dir.path().join("out/manifest.json").exists(),
        "a refused export got a manifest"
    );
    stderr
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value = read_json(path);
    edit(&mut value);
    std::fs::write(path, value.to_string()).unwrap();
}

#[test]
fn the_test_export_is_imported_and_its_query_is_one_plan_takes() {
    let dir = scratch();
    let out = dir.path().join("vit-trocr-tiny");
    let output = import(&root().join(EXPORT), &out);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest =
        Manifest::parse(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    // The numbers are the export's own, read here from its files.
    let config = read_json(&root().join(EXPORT).join("config.json"));
    let processor = read_json(&root().join(EXPORT).join("preprocessor_config.json"));
    assert_eq!(manifest.family, Family::EncoderDecoder);
    assert_eq!(
        u64::from(manifest.capability.shape.vocabulary),
        config["decoder"]["vocab_size"].as_u64().unwrap()
    );
    assert_eq!(
        u64::from(manifest.capability.image_size),
        processor["size"]["height"].as_u64().unwrap()
    );
    assert!(manifest.vision.contains_key("fp32") && manifest.decoder.contains_key("fp32"));
    let decoder = &manifest.decoder["fp32"].graph;
    assert!(decoder.largest_activation.bytes > 0);
    // The export is under the root: the manifest names its files where they are.
    assert!(
        decoder
            .embedded
            .ends_with("hf-test/vit-trocr-tiny/decoder_model_merged.onnx")
            && decoder.embedded.starts_with("../"),
        "{}",
        decoder.embedded
    );
    let query = stdout
        .lines()
        .find_map(|line| line.strip_prefix("query: "))
        .unwrap_or_else(|| panic!("no query printed:\n{stdout}"));
    let shown = out.strip_prefix(root()).unwrap().display().to_string();
    assert!(
        query.starts_with(&format!(
            "manifest=/{shown}/manifest.json&tier=fp32&decoder=fp32"
        )),
        "{query}"
    );
    // plan reads the manifest the query names, and takes the paths the loop implements.
    let plan = Command::new(BIN)
        .arg("--root")
        .arg(root())
        .args([
            "plan",
            "--base",
            query,
            "",
            "schedule=resident",
            "choose=gpu&sync=8",
        ])
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let refused = Command::new(BIN)
        .arg("--root")
        .arg(root())
        .args(["plan", "--base", query, "choose=gpu&capture=on"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        refused.status.code() == Some(2) && stderr.contains("capture=on is not available"),
        "{stderr}"
    );
    let predict = Command::new(BIN)
        .arg("--root")
        .arg(root())
        .args(["predict", "--base", query, ""])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&predict.stderr);
    assert!(
        predict.status.code() == Some(2) && stderr.contains("its family is encoder-decoder"),
        "{stderr}"
    );
}

#[test]
fn a_folder_without_a_decoder_is_refused() {
    let err = refusal(|dir| std::fs::remove_file(dir.join("decoder_model_merged.onnx")).unwrap());
    assert!(
        err.contains("no decoder: decoder_model_merged.onnx"),
        "{err}"
    );
}

#[test]
fn an_encoder_only_export_is_refused() {
    let err = refusal(|dir| {
        std::fs::rename(dir.join("encoder_model.onnx"), dir.join("model.onnx")).unwrap();
        std::fs::remove_file(dir.join("decoder_model_merged.onnx")).unwrap();
        edit_json(&dir.join("config.json"), |c| c["model_type"] = "vit".into());
    });
    assert!(
        err.contains("encoder-only export") && err.contains("model_type is \"vit\""),
        "{err}"
    );
}

#[test]
fn a_cache_less_decoder_is_refused_with_the_export_task_to_use() {
    // A decoder graph without past inputs: the encoder's file stands in for one.
    let err = refusal(|dir| {
        std::fs::remove_file(dir.join("decoder_model_merged.onnx")).unwrap();
        std::fs::copy(
            dir.join("encoder_model.onnx"),
            dir.join("decoder_model.onnx"),
        )
        .unwrap();
    });
    assert!(
        err.contains("cache-less decoder")
            && err.contains("--task image-to-text-with-past")
            && !err.contains("no decoder:"),
        "{err}"
    );
}

#[test]
fn an_unknown_tokenizer_model_is_refused_by_name() {
    let err = refusal(|dir| {
        edit_json(&dir.join("tokenizer.json"), |t| {
            t["model"]["type"] = "WordLevel".into()
        })
    });
    assert!(
        err.contains("unsupported tokenizer model \"WordLevel\"")
            && err.contains("WordPiece, BPE, Unigram"),
        "{err}"
    );
}

#[test]
fn an_unsupported_image_processor_is_refused_by_name() {
    let err = refusal(|dir| {
        edit_json(&dir.join("preprocessor_config.json"), |p| {
            p["image_processor_type"] = "DonutImageProcessor".into()
        })
    });
    assert!(
        err.contains("preprocessor_config.json") && err.contains("DonutImageProcessor"),
        "{err}"
    );
}

#[test]
fn a_dynamic_or_non_square_image_size_is_refused() {
    let err = refusal(|dir| {
        edit_json(&dir.join("preprocessor_config.json"), |p| {
            p["size"] = serde_json::json!({ "shortest_edge": 384 })
        })
    });
    assert!(
        err.contains("preprocessor_config.json") && err.contains("shortest_edge"),
        "{err}"
    );
    let err = refusal(|dir| {
        edit_json(&dir.join("preprocessor_config.json"), |p| {
            let height = p["size"]["height"].as_u64().unwrap();
            p["size"]["width"] = (height * 2).into();
        })
    });
    assert!(err.contains("not square"), "{err}");
}

#[test]
fn a_vocabulary_that_disagrees_with_the_logits_is_refused() {
    let err = refusal(|dir| {
        edit_json(&dir.join("tokenizer.json"), |t| {
            let added = t["added_tokens"].as_array_mut().unwrap();
            let mut extra = added[0].clone();
            extra["id"] = 100_000.into();
            extra["content"] = "<extra>".into();
            added.push(extra);
        })
    });
    assert!(
        err.contains("vocabulary mismatch") && err.contains("decodes 100001 ids"),
        "{err}"
    );
}

#[test]
fn a_generation_setting_the_page_lacks_is_refused_by_name() {
    let err = refusal(|dir| {
        edit_json(&dir.join("generation_config.json"), |g| {
            g["num_beams"] = 4.into();
        })
    });
    assert!(
        err.contains("generation_config.json: num_beams is 4")
            && err.contains("allowed: num_beams 1"),
        "{err}"
    );
}

#[test]
fn every_problem_is_named_at_once() {
    let err = refusal(|dir| {
        edit_json(&dir.join("generation_config.json"), |g| {
            g["do_sample"] = true.into()
        });
        edit_json(&dir.join("tokenizer.json"), |t| {
            t["model"]["type"] = "WordLevel".into()
        });
    });
    assert!(
        err.contains("2 problems") && err.contains("do_sample") && err.contains("WordLevel"),
        "{err}"
    );
}
