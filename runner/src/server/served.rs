//! What the server hands out: an allow-list of the folders and files pages load, below the
//! served root. Everything else is 404: sources, build outputs, virtual environments, the
//! checkpoint, other results files, dot-files, and any path (encoded `..`, a symlink) whose
//! real location is outside what is allowed.

use std::path::{Component, Path, PathBuf};

use ocr_bench_core::config::{Choice, OrtVersion};
use ocr_bench_core::manifest::{Graph, Manifest};

/// Folders every page loads from, with everything below them; beside them, the distribution
/// folder of each onnxruntime-web version `ort=` names ([`OrtVersion::dist_folder`]).
const PAGE_FOLDERS: [&str; 9] = [
    // The benchmark page, its scripts, and the report page (`report.html`, `report/`).
    "www",
    // Code the page and its workers share.
    "browser",
    "worker",
    // The core, as wasm-pack builds it (`scripts/build-wasm`); the pages import `pkg/`, and
    // `pkg-hf/` (the Hugging Face tokenizer) for an imported encoder-decoder model.
    "pkg",
    "pkg-hf",
    // The evaluation sets the manifest's cases come from.
    "models/eval",
    // Only the distribution files of the packages the pages load: Chart.js here, each
    // onnxruntime-web version from the core's list.
    "node_modules/chart.js/dist",
    // The transformers.js peer page (`www/peers/`): the library's browser builds, and the
    // onnxruntime-web it depends on (its own version, not one `ort=` names), whose WASM it loads.
    "node_modules/@huggingface/transformers/dist",
    "node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist",
];

/// Files the pages that `run --page` opens import from outside their own folder
/// (`bench/core/`, `tests/gpu-choose/`, `tests/image-input/`).
const PAGE_IMPORTS: [&str; 4] = [
    "tests/standalone-page.mjs",
    "tests/parity/seed-reference.mjs",
    "bench/core/image-paths.mjs",
    "bench/core/workload.mjs",
];

/// Never handed out, whatever allows the folder above it: the training checkpoint.
const NEVER: [&str; 1] = ["models/checkpoint"];

/// The folder whose `.jsonl` files the report page (`www/report.js`, `?file=`) may show.
const RESULTS_FOLDER: &str = "results";

/// What one server hands out.
#[derive(Debug, Clone)]
pub struct Served {
    root: PathBuf,
    /// Served with everything below them.
    folders: Vec<PathBuf>,
    /// Served with the files directly in them only (a `--page`'s own folder).
    flat_folders: Vec<PathBuf>,
    files: Vec<PathBuf>,
    /// This server's own results file, for the report page.
    results: PathBuf,
}

impl Served {
    /// What every server hands out: the pages' folders and imports, the results files under
    /// `results/` and this server's own `results`.
    pub fn new(root: &Path, results: &Path) -> Served {
        let root = real(root);
        Served {
            folders: PAGE_FOLDERS
                .iter()
                .map(|f| (*f).to_owned())
                .chain(OrtVersion::ALL.iter().map(|v| v.dist_folder()))
                .map(|f| real(&root.join(f)))
                .collect(),
            flat_folders: Vec::new(),
            files: PAGE_IMPORTS.iter().map(|f| real(&root.join(f))).collect(),
            results: real(results),
            root,
        }
    }

    /// Adds `folder` (under the root) with everything below it.
    pub fn with_folder(mut self, folder: &Path) -> Served {
        self.folders.push(real(&self.root.join(folder)));
        self
    }

    /// Adds a folder the user named (`serve --serve-dir`), relative to the root; `Err` says
    /// what was wrong and what is allowed.
    pub fn with_given_folder(self, folder: &Path) -> Result<Served, String> {
        self.with_named_folder(
            folder,
            "--serve-dir",
            "a folder under the served root that is no dot-folder, such as my-models \
             (repeat --serve-dir for more)",
        )
    }

    /// Adds the export folder another page's query names (`model=`, the transformers.js peer
    /// page's), a path from the root; `Err` says what was wrong and what is allowed.
    pub fn with_model_folder(self, folder: &str) -> Result<Served, String> {
        self.with_named_folder(
            Path::new(folder.trim_start_matches('/')),
            "model=",
            "a folder under the served root that is no dot-folder, such as \
             /models/hf-test/vit-trocr-tiny/",
        )
    }

    /// Adds `folder` (relative to the root), which `named` gave; it must be a folder under the
    /// root that is no dot-folder.
    fn with_named_folder(
        self,
        folder: &Path,
        named: &str,
        allowed: &str,
    ) -> Result<Served, String> {
        let allowed = format!("allowed: {allowed}");
        let given = folder.display();
        let real = self
            .root
            .join(folder)
            .canonicalize()
            .map_err(|e| format!("{named} {given}: {e}; {allowed}"))?;
        let Ok(relative) = real.strip_prefix(&self.root) else {
            return Err(format!(
                "{named} {given} is outside the served root {}; {allowed}",
                self.root.display()
            ));
        };
        if !real.is_dir() || hidden(relative) {
            return Err(format!(
                "{named} {given} is not a folder, or is a dot-folder; {allowed}"
            ));
        }
        let relative = relative.to_path_buf();
        Ok(self.with_folder(&relative))
    }

    /// Adds the files directly in the folder of `page` (a path under the root).
    pub fn with_page(mut self, page: &str) -> Served {
        let page = self.root.join(page.trim_start_matches('/'));
        if let Some(folder) = page.parent() {
            self.flat_folders.push(real(folder));
        }
        self
    }

    /// Adds the folder of the manifest at `manifest` (a file under the root) and every file it
    /// names; an unreadable manifest adds its folder only (the run refuses it before any
    /// browser starts, the page with its own words).
    pub fn with_manifest(mut self, manifest: &Path) -> Served {
        let Some(folder) = manifest.parent() else {
            return self;
        };
        self.folders.push(real(folder));
        let named = std::fs::read_to_string(manifest)
            .ok()
            .and_then(|text| Manifest::parse(&text).ok())
            .map(|parsed| named_files(&parsed))
            .unwrap_or_default();
        for file in named {
            // As the page resolves a URL: from the root when absolute, else from the manifest.
            let file = match file.strip_prefix('/') {
                Some(absolute) => lexical_join(&self.root, absolute),
                None => lexical_join(folder, &file),
            };
            self.files.push(real(&file));
        }
        self
    }

    /// The folders served, relative to the root where they are under it, for the printout.
    pub fn folders(&self) -> Vec<String> {
        let shown = |path: &PathBuf, suffix: &str| {
            let relative = path.strip_prefix(&self.root).unwrap_or(path);
            format!("{}/{suffix}", relative.display())
        };
        let mut folders: Vec<String> = self.folders.iter().map(|f| shown(f, "")).collect();
        folders.extend(self.flat_folders.iter().map(|f| shown(f, "*")));
        folders.push(format!("{RESULTS_FOLDER}/*.jsonl"));
        // A folder two sources add (a manifest's and the model folder around it) is said once.
        let mut said = std::collections::HashSet::new();
        folders.retain(|folder| said.insert(folder.clone()));
        folders
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the request path `url_path` (as sent, percent-encoded) names a file this server
    /// hands out. A folder stands for its `index.html`, which is what is served for it.
    pub fn allows(&self, url_path: &str) -> bool {
        let Ok(decoded) = percent_encoding::percent_decode_str(url_path).decode_utf8() else {
            return false;
        };
        let mut path = self.root.clone();
        for part in decoded.split('/').filter(|p| !p.is_empty()) {
            // `..`, `.` and every dot-file or dot-folder, however it was encoded.
            if part.starts_with('.') || part.contains(['\\', '\0']) {
                return false;
            }
            path.push(part);
        }
        let Ok(mut file) = path.canonicalize() else {
            return false;
        };
        if file.is_dir() {
            file.push("index.html");
        }
        self.allows_file(&file)
    }

    /// Whether `file` (a real path: no symlinks, no `..`) is handed out.
    fn allows_file(&self, file: &Path) -> bool {
        if let Ok(relative) = file.strip_prefix(&self.root) {
            if hidden(relative) || NEVER.iter().any(|never| relative.starts_with(never)) {
                return false;
            }
        }
        let results_file = file == self.results
            || (file.starts_with(self.root.join(RESULTS_FOLDER))
                && file.extension().is_some_and(|e| e == "jsonl"));
        results_file
            || self.files.iter().any(|f| f == file)
            || self.folders.iter().any(|folder| file.starts_with(folder))
            || file
                .parent()
                .is_some_and(|parent| self.flat_folders.iter().any(|f| f == parent))
    }
}

/// The files a manifest names, relative to it: its vocabulary or an encoder-decoder's
/// tokenizer and preprocessor configuration, build information and every graph's files.
fn named_files(manifest: &Manifest) -> Vec<String> {
    let with_past = manifest
        .decoder
        .values()
        .filter_map(|entry| entry.with_past.as_ref());
    let graphs = manifest
        .vision
        .values()
        .map(|entry| &entry.graph)
        .chain(manifest.decoder.values().map(|entry| &entry.graph))
        .chain(with_past);
    let graph_files = |graph: &Graph| {
        let mut files = vec![graph.embedded.clone()];
        if let Some(external) = &graph.external {
            files.extend([external.model.clone(), external.data.clone()]);
        }
        files
    };
    let mut files: Vec<String> = manifest.vocab.iter().cloned().collect();
    if let Some(section) = &manifest.encoder_decoder {
        files.extend([section.tokenizer.clone(), section.preprocessor.clone()]);
    }
    files.extend(manifest.build_info.clone());
    files.extend(graphs.flat_map(graph_files));
    files
}

/// Whether a part of `path` is a dot-file or dot-folder (`.git`, `.venv`, `.env`).
fn hidden(path: &Path) -> bool {
    path.components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// `base` joined with `relative`, its `..` taken away by name (the file may not exist yet).
fn lexical_join(base: &Path, relative: &str) -> PathBuf {
    let mut joined = base.to_path_buf();
    for part in Path::new(relative).components() {
        match part {
            Component::ParentDir => {
                joined.pop();
            }
            Component::Normal(name) => joined.push(name),
            _ => {}
        }
    }
    joined
}

/// The real path of `path` (symlinks followed), through its nearest folder that exists: a
/// results file or a `pkg/` made after the start is still matched below a real root.
fn real(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => real(parent).join(name),
        _ => std::env::current_dir().map_or_else(|_| path.to_path_buf(), |dir| dir.join(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root with the repository's manifest moved to `target/user-manifest/`, naming the
    /// built-in files as `../../models/…`, as `runner/tests/e2e/user_manifest.rs` keeps one.
    fn root_with_a_user_manifest() -> tempfile::TempDir {
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(repository.join("models/manifest.json")).unwrap();
        let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        manifest["vocab"] = "../../models/vocab.json".into();
        let root = tempfile::tempdir().unwrap();
        for file in [
            "target/user-manifest/notes.txt",
            "target/debug/ocr-bench",
            "models/vocab.json",
            "models/secret.txt",
            "tests/gpu-choose/index.html",
            "tests/gpu-choose/logits.mjs",
            "tests/gpu-choose/old/page.mjs",
            "tests/standalone-page.mjs",
            "tests/parity/load-core.mjs",
        ] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file).unwrap();
        }
        std::fs::write(
            root.path().join("target/user-manifest/manifest.json"),
            manifest.to_string(),
        )
        .unwrap();
        root
    }

    #[test]
    fn a_model_folder_is_served_whole_and_one_outside_the_root_or_hidden_is_refused() {
        let root = root_with_a_user_manifest();
        for file in [
            "models/hf-test/tiny/encoder_model.onnx",
            "models/hf-test/tiny/.cache/x",
            "node_modules/@huggingface/transformers/dist/transformers.js",
            "node_modules/@huggingface/transformers/src/env.js",
        ] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file).unwrap();
        }
        let served = Served::new(root.path(), &root.path().join("out.jsonl"))
            .with_model_folder("/models/hf-test/tiny/")
            .unwrap();
        for (path, allowed) in [
            ("/models/hf-test/tiny/encoder_model.onnx", true),
            ("/models/hf-test/tiny/.cache/x", false),
            ("/models/vocab.json", false),
            (
                "/node_modules/@huggingface/transformers/dist/transformers.js",
                true,
            ),
            ("/node_modules/@huggingface/transformers/src/env.js", false),
        ] {
            assert_eq!(served.allows(path), allowed, "{path}");
        }
        let refused = |folder: &str| {
            Served::new(root.path(), &root.path().join("out.jsonl"))
                .with_model_folder(folder)
                .unwrap_err()
        };
        assert!(refused("/models/hf-test/tiny/.cache").contains("is a dot-folder"));
        assert!(refused("/models/hf-test/tiny/encoder_model.onnx").contains("is not a folder"));
        let outside = refused("../..");
        assert!(
            outside.contains("model= ../.. is outside the served root")
                && outside.contains("allowed: a folder under the served root"),
            "{outside}"
        );
    }

    #[test]
    fn a_run_serves_its_manifests_folder_and_files_and_its_pages_own_folder() {
        let root = root_with_a_user_manifest();
        let served = Served::new(root.path(), &root.path().join("out.jsonl"))
            .with_page("tests/gpu-choose/index.html")
            .with_manifest(&root.path().join("target/user-manifest/manifest.json"));
        for (path, allowed) in [
            ("/target/user-manifest/manifest.json", true),
            ("/target/user-manifest/notes.txt", true),
            ("/models/vocab.json", true),
            ("/tests/gpu-choose/index.html", true),
            ("/tests/gpu-choose/logits.mjs", true),
            ("/tests/standalone-page.mjs", true),
            ("/target/debug/ocr-bench", false),
            ("/models/secret.txt", false),
            ("/tests/gpu-choose/old/page.mjs", false),
            ("/tests/parity/load-core.mjs", false),
            ("/target/user-manifest/%2e%2e/debug/ocr-bench", false),
        ] {
            assert_eq!(served.allows(path), allowed, "{path}");
        }
    }

    #[test]
    fn an_imported_manifest_serves_its_tokenizer_preprocessor_and_graphs_where_they_are() {
        let root = tempfile::tempdir().unwrap();
        let export = "models/hf-test/export";
        let files = [
            "encoder_model.onnx",
            "decoder_model.onnx",
            "decoder_with_past_model.onnx",
            "tokenizer.json",
            "preprocessor_config.json",
            "config.json",
        ];
        for file in files {
            let path = root.path().join(export).join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file).unwrap();
        }
        let at = |file: &str| format!("../../hf-test/export/{file}");
        let graph = |file: &str, inputs: Vec<String>| {
            serde_json::json!({
                "embedded": at(file),
                "bytes": { "embedded": 1, "externalModel": 0, "externalData": 0 },
                "largestActivation": { "bytes": 1, "tensor": "t" },
                "inputs": inputs, "outputs": ["logits", "last_hidden_state"], "operators": [],
            })
        };
        let mut later = vec!["input_ids".to_owned()];
        later.extend(ocr_bench_core::manifest::past_inputs(1));
        let mut decoder = graph(
            "decoder_model.onnx",
            vec!["input_ids".into(), "encoder_hidden_states".into()],
        );
        decoder["withPast"] = graph("decoder_with_past_model.onnx", later);
        let manifest = serde_json::json!({
            "family": "encoder-decoder",
            "tokens": { "bos": 2, "eos": 3, "vocabOffset": 0 },
            "capability": { "layers": 1, "hiddenSize": 8, "intermediateSize": 16,
                "attentionHeads": 2, "kvHeads": 2, "vocabulary": 10, "maxTokens": 8,
                "headDim": 4, "imageSize": 32, "visionTokens": 5, "kvSlots": 0 },
            "logitsShape": [1, 1, 10],
            "vision": { "fp32": graph("encoder_model.onnx", vec!["pixel_values".into()]) },
            "decoder": { "fp32": decoder },
            "encoderDecoder": {
                "tokenizer": at("tokenizer.json"),
                "preprocessor": at("preprocessor_config.json"),
                "encoderHidden": 8, "crossAttentionHeads": 2,
                "generation": { "decoderStartTokenId": 2, "eosTokenIds": [3], "maxLength": 9,
                    "repetitionPenalty": 1.0, "noRepeatNgramSize": 0 }
            }
        });
        let text = manifest.to_string();
        Manifest::parse(&text).unwrap();
        let manifest_path = root.path().join("models/imported/export/manifest.json");
        std::fs::create_dir_all(manifest_path.parent().unwrap()).unwrap();
        std::fs::write(&manifest_path, text).unwrap();
        let served =
            Served::new(root.path(), &root.path().join("out.jsonl")).with_manifest(&manifest_path);
        for file in files {
            let allowed = file != "config.json";
            assert_eq!(
                served.allows(&format!("/{export}/{file}")),
                allowed,
                "{file}"
            );
        }
    }
}
