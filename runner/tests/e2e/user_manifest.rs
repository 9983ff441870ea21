//! A manifest of the user's own, beside the built-in one: its decoder `my-decoder` is a copy of
//! a built-in decoder file, its other files the built-in ones. No code knows the name; the
//! runner checks queries against the manifest in hand and the page reads the model through it.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{check_finished, launch, repository_root, BIN};

/// The built-in decoder the user's is a copy of.
const COPIED: &str = "baseline";
const NAME: &str = "my-decoder";
/// Copies of the user's decoder that declare more storage buffers per shader stage than any
/// adapter offers: the first names the user's decoder as its fallback, the second none.
const WIDE: &str = "my-wide-decoder";
const WIDE_ALONE: &str = "my-wide-decoder-alone";
const WIDE_NEED: u64 = 4096;
/// The decoders the user's manifest offers, as a refusal lists them.
const OFFERED: &str = "my-decoder, my-wide-decoder, my-wide-decoder-alone";

/// A folder under the served root (in the ignored `target/`, as a user's would be anywhere
/// under `--root`) holding `manifest.json` and `my-decoder.onnx`; the manifest's other paths
/// lead back to the built-in files. Returns the folder and the `manifest=` URL path.
fn user_manifest(root: &Path) -> (tempfile::TempDir, String) {
    let target = root.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("user-manifest-")
        .tempdir_in(&target)
        .unwrap();
    let models = root.join("models");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("manifest.json")).unwrap())
            .unwrap();
    // From target/<dir>/ back to models/.
    let built_in = |path: &Value| json!(format!("../../models/{}", path.as_str().unwrap()));
    manifest["vocab"] = built_in(&manifest["vocab"]);
    for entry in manifest["vision"].as_object_mut().unwrap().values_mut() {
        entry["embedded"] = built_in(&entry["embedded"]);
        for file in ["model", "data"] {
            entry["external"][file] = built_in(&entry["external"][file]);
        }
    }
    let mut mine = manifest["decoder"][COPIED].clone();
    let file = format!("{NAME}.onnx");
    std::fs::copy(
        models.join(mine["embedded"].as_str().unwrap()),
        dir.path().join(&file),
    )
    .unwrap();
    mine["embedded"] = json!(file);
    for file in ["model", "data"] {
        mine["external"][file] = built_in(&mine["external"][file]);
    }
    mine["description"] = json!(format!("a copy of the built-in {COPIED} decoder"));
    manifest["name"] = json!("user-manifest");
    let mut wide = mine.clone();
    wide["limits"]["maxStorageBuffersPerShaderStage"] = json!(WIDE_NEED);
    let mut wide_alone = wide.clone();
    wide["fallback"] = json!(NAME);
    wide_alone["description"] = json!("needs more storage buffers than an adapter has");
    manifest["decoder"] = json!({ NAME: mine, WIDE: wide, WIDE_ALONE: wide_alone });
    std::fs::write(
        dir.path().join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let url = format!(
        "/target/{}/manifest.json",
        dir.path().file_name().unwrap().to_str().unwrap()
    );
    (dir, url)
}

/// A user's manifest for another image size is refused before a browser starts, naming the size
/// the core preprocesses to: the check the page once made alone is the core's, for both.
#[test]
fn a_user_manifest_for_another_image_size_is_refused_naming_the_size_allowed() {
    let root = repository_root().canonicalize().unwrap();
    let (dir, url) = user_manifest(&root);
    let path = dir.path().join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["capability"]["imageSize"] = json!(256);
    std::fs::write(&path, manifest.to_string()).unwrap();
    let refused = Command::new(BIN)
        .arg("--root")
        .arg(&root)
        .args([
            "plan",
            "--base",
            &format!("manifest={url}"),
            &format!("decoder={NAME}"),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("capability.imageSize is 256") && stderr.contains("allowed: 224"),
        "{stderr}"
    );
}

/// `ocr-bench plan` reads the manifest each combination names: the user's decoder is planned,
/// the built-in names it does not list are refused with the names it offers.
#[test]
fn a_user_manifest_is_planned_by_its_own_decoder_names() {
    let root = repository_root().canonicalize().unwrap();
    let (_dir, url) = user_manifest(&root);
    let plan = |combination: &str| {
        Command::new(BIN)
            .arg("--root")
            .arg(&root)
            .args(["plan", "--base", &format!("manifest={url}"), combination])
            .output()
            .unwrap()
    };
    let planned = plan(&format!("decoder={NAME}"));
    assert!(
        planned.status.success(),
        "{}",
        String::from_utf8_lossy(&planned.stderr)
    );
    assert!(String::from_utf8_lossy(&planned.stdout).contains(&format!("decoder={NAME}")));
    let refused = plan(&format!("decoder={COPIED}"));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "has no decoder \"{COPIED}\"; it offers: {OFFERED}"
        )),
        "{stderr}"
    );
}

/// The user's decoder runs end to end in Firefox and passes every check of a finished run,
/// its tokens those of the CPU oracle on the same manifest: asked for as `my-wide-decoder`,
/// whose limits the adapter falls short of, the page takes its fallback and records why. A
/// decoder with such limits and no fallback is refused by the page in words naming the limit,
/// the need and the adapter's value; the built-in default decoder, which the user's manifest
/// lacks, is refused before a browser starts.
#[test]
#[ignore = "drives real browsers: cargo test -p ocr-bench --test e2e -- --ignored"]
fn firefox_runs_a_user_manifest_with_a_decoder_of_its_own() {
    let root = repository_root().canonicalize().unwrap();
    let (_dir, url) = user_manifest(&root);
    let run = launch(
        "firefox",
        &format!("cases=smoke2&maxTokens=4&manifest={url}&decoder={WIDE}"),
        None,
    );
    let result = run
        .record("result")
        .unwrap_or_else(|| panic!("{}", run.describe()));
    let fallbacks = &result["summary"]["environment"]["limitFallbacks"];
    assert_eq!(fallbacks[0]["role"], "decoder", "{fallbacks}");
    assert_eq!(fallbacks[0]["asked"], WIDE, "{fallbacks}");
    assert_eq!(fallbacks[0]["used"], NAME, "{fallbacks}");
    let need = format!("maxStorageBuffersPerShaderStage: needs {WIDE_NEED}, the adapter offers ");
    assert!(
        fallbacks[0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with(&need)),
        "{fallbacks}"
    );
    // The record stays of the query asked; the files loaded are the fallback's, which are
    // the wide decoder's own (a copy), so every check of a finished run holds.
    assert_eq!(
        result["summary"]["capability"]["decoder"],
        "a copy of the built-in baseline decoder"
    );
    check_finished(&run);
    let summary = &run.record("result").unwrap()["summary"];
    assert_eq!(summary["decoderMode"], WIDE);
    assert_eq!(summary["manifest"]["name"], "user-manifest");
    assert!(
        summary["manifest"]["decoder"]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("{NAME}.onnx"))),
        "{}",
        summary["manifest"]
    );

    let too_wide = launch(
        "firefox",
        &format!("cases=smoke2&maxTokens=4&manifest={url}&decoder={WIDE_ALONE}"),
        None,
    );
    assert_eq!(too_wide.exit_code, Some(1), "{}", too_wide.describe());
    let error = too_wide
        .record("error")
        .unwrap_or_else(|| panic!("no error record\n{}", too_wide.describe()));
    let message = error["body"]["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains(&format!(
            "The decoder \"{WIDE_ALONE}\" needs more of this WebGPU adapter"
        )) && message.contains(&need),
        "{message}"
    );
    assert!(
        too_wide.record("result").is_none(),
        "{}",
        too_wide.describe()
    );

    let refused = launch("firefox", &format!("cases=smoke2&manifest={url}"), None);
    assert_eq!(refused.exit_code, Some(2), "{}", refused.describe());
    assert!(
        refused.stderr.contains(&format!("it offers: {OFFERED}")) && refused.records.is_empty(),
        "{}",
        refused.describe()
    );
}
