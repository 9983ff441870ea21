//! Inputs the page cannot use, on a served root of their own: a corrupt image and a manifest
//! naming a model file that is not there, each named in the message.

use super::*;

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A served root of its own: the page, the workers, the shared modules and the core copied (the
/// runner takes only a page under its root), the models and onnxruntime-web linked, the manifest
/// and vocabulary copied. Returns its `models/` folder.
fn own_root(root: &Path) -> PathBuf {
    let checkout = checkout().canonicalize().unwrap();
    for dir in ["www", "browser", "worker", "pkg"] {
        copy_dir(&checkout.join(dir), &root.join(dir));
    }
    std::os::unix::fs::symlink(checkout.join("node_modules"), root.join("node_modules")).unwrap();
    let models = root.join("models");
    std::fs::create_dir(&models).unwrap();
    std::os::unix::fs::symlink(checkout.join("models/generated"), models.join("generated"))
        .unwrap();
    for file in ["manifest.json", "vocab.json"] {
        std::fs::copy(checkout.join("models").join(file), models.join(file)).unwrap();
    }
    models
}

/// An evaluation set whose image is not a PNG: the page names the case, the set and the file.
#[test]
fn a_corrupt_image_is_named_with_its_case_and_file() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let root = fault.path("root");
    let models = own_root(&root);
    let set = models.join("eval/broken");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("cases.json"),
        r#"[{ "id": "torn", "image": "torn.png", "expected": "x" }]"#,
    )
    .unwrap();
    // A PNG signature and then nothing a decoder can read.
    std::fs::write(
        set.join("torn.png"),
        b"\x89PNG\r\n\x1a\nnot the rest of a png",
    )
    .unwrap();

    let run = run_page(&fault, &root, "cases=broken&maxTokens=1", None, 300);
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.contains("Case torn of the evaluation set \"broken\": the image http://")
            && message.contains("/models/eval/broken/torn.png could not be decoded as an image"),
        "{message}"
    );
    assert!(!message.contains("model file"), "{message}");
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}

/// A manifest naming a decoder file that is not there: the message names that file and its
/// status once, and says nothing of external data for an embedded model.
#[test]
fn a_missing_model_file_is_named_once() {
    let Some((_one, fault)) = firefox_fault().filter(|_| page_built()) else {
        return;
    };
    let root = fault.path("root");
    let models = own_root(&root);
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    manifest["decoder"]["baseline"]["embedded"] = "generated/missing-decoder.onnx".into();
    std::fs::write(models.join("broken-manifest.json"), manifest.to_string()).unwrap();

    let query = "scope=decoder&maxTokens=1&manifest=/models/broken-manifest.json";
    let run = run_page(&fault, &root, query, None, 300);
    let (code, stderr) = run.finish(Duration::from_secs(320));
    assert_eq!(code, Some(1), "{stderr}");
    let message = page_error(&fault);
    assert!(
        message.starts_with("Loading the decoder \"baseline\": the model file http://")
            && message.contains("/models/generated/missing-decoder.onnx could not be fetched (HTTP 404). Are the models built"),
        "{message}"
    );
    assert_eq!(
        message.matches("could not be fetched").count(),
        1,
        "{message}"
    );
    assert!(!message.contains("external data"), "{message}");
    assert!(
        stderr.contains("the page failed in phase decoder-load"),
        "{stderr}"
    );
    assert_failed_run(&fault, 0, "error");
    fault.assert_nothing_left();
}
