//! `ocr-bench import DIR`: an optimum export folder (`optimum-cli export onnx --task
//! image-to-text-with-past`) checked and made runnable. Every problem (a missing or
//! unsupported file, input or setting) is named at once, before any browser starts; otherwise
//! the manifest of the encoder-decoder family (`crate/src/manifest.rs`) is written beside the
//! files it names, with a variant per quantized copy found, and the page query that runs it.
//!
//! The graph facts (I/O names and shapes, operators, sizes, largest activation) come from the
//! project's Python tooling (`scripts/ocrmodel/import_export.py`, run with the `.venv` that
//! `scripts/setup` makes); the settings are read here ([`settings`]).

mod graphs;
mod settings;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use ocr_bench_core::config::MAX_TOKENS_LIMIT;
use ocr_bench_core::manifest::{
    Capability, DecoderEntry, EncoderDecoder, Family, Generation, Manifest, ModelShape, Tokens,
    VisionEntry,
};
use ocr_bench_core::vit_processor::VitSettings;

pub use graphs::venv_python;
use graphs::{decoder_numbers, graph, graph_facts, unfed};
pub use settings::TOKENIZER_MODELS;

/// The variant names of the files' suffixes, as optimum and transformers.js name the copies:
/// `encoder_model_q4.onnx` is the encoder `q4`.
pub const SUFFIXES: [(&str, &str); 8] = [
    ("", "fp32"),
    ("_fp16", "fp16"),
    ("_quantized", "quantized"),
    ("_int8", "int8"),
    ("_uint8", "uint8"),
    ("_q4", "q4"),
    ("_q4f16", "q4f16"),
    ("_bnb4", "bnb4"),
];

/// Where `import` writes a manifest by default, under the served root.
pub const IMPORTED_FOLDER: &str = "models/imported";

const ENCODER: &str = "encoder_model";
const MERGED: &str = "decoder_model_merged";
const FIRST_STEP: &str = "decoder_model";
const WITH_PAST: &str = "decoder_with_past_model";

/// What `import` was asked to do.
pub struct ImportRequest {
    /// The served root (the repository).
    pub root: PathBuf,
    pub folder: PathBuf,
    pub name: Option<String>,
    /// The manifest's folder (default `models/imported/NAME` under the root).
    pub out: Option<PathBuf>,
}

/// What `import` wrote.
#[derive(Debug)]
pub struct Imported {
    pub manifest_path: PathBuf,
    pub manifest: Manifest,
    /// The page query that runs it.
    pub query: String,
    /// Notes on what was chosen for the user (a token limit cut to the page's).
    pub notes: Vec<String>,
}

/// Why `import` refused: every problem found, or one that stopped it from looking further.
#[derive(Debug)]
pub struct Refusal(pub Vec<String>);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.join("\n"))
    }
}

/// The decoder files of one variant: the merged graph, or the pair.
enum DecoderFiles {
    Merged(String),
    Pair(String, String),
}

/// The files of the folder, by variant name: encoders and decoders.
struct Variants {
    encoders: BTreeMap<String, String>,
    decoders: BTreeMap<String, DecoderFiles>,
}

fn find_variants(names: &[String], problems: &mut Vec<String>) -> Variants {
    let has = |file: &str| names.iter().any(|n| n == file);
    let mut encoders = BTreeMap::new();
    let mut decoders = BTreeMap::new();
    for (suffix, variant) in SUFFIXES {
        let file = |stem: &str| format!("{stem}{suffix}.onnx");
        if has(&file(ENCODER)) {
            encoders.insert(variant.to_owned(), file(ENCODER));
        }
        if has(&file(MERGED)) {
            decoders.insert(variant.to_owned(), DecoderFiles::Merged(file(MERGED)));
        } else if has(&file(FIRST_STEP)) && has(&file(WITH_PAST)) {
            decoders.insert(
                variant.to_owned(),
                DecoderFiles::Pair(file(FIRST_STEP), file(WITH_PAST)),
            );
        }
    }
    let single = has("model.onnx");
    if encoders.is_empty() && decoders.is_empty() && single {
        problems.push(
            "encoder-only export: a single model.onnx and no encoder_model.onnx or decoder; \
             export a VisionEncoderDecoder with optimum-cli export onnx --task \
             image-to-text-with-past"
                .to_owned(),
        );
        return Variants { encoders, decoders };
    }
    if encoders.is_empty() {
        problems.push(
            "no encoder: encoder_model.onnx is missing (an export of --task \
             image-to-text-with-past has it)"
                .to_owned(),
        );
    }
    // A lone decoder_model.onnx is named from its inputs, once the graphs are read.
    if decoders.is_empty() && !has(&format!("{FIRST_STEP}.onnx")) {
        problems.push(
            "no decoder: decoder_model_merged.onnx, or decoder_model.onnx with \
             decoder_with_past_model.onnx, is missing"
                .to_owned(),
        );
    }
    Variants { encoders, decoders }
}

/// `DIR/onnx/` where transformers.js keeps its graphs, else `DIR`.
fn graph_folder(folder: &Path) -> PathBuf {
    let onnx = folder.join("onnx");
    if onnx.join(format!("{ENCODER}.onnx")).is_file() {
        onnx
    } else {
        folder.to_path_buf()
    }
}

fn onnx_names(folder: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".onnx"))
        .collect();
    names.sort();
    names
}

/// A JSON file of the folder; `None` with a problem pushed when `required` and absent or
/// unreadable.
fn read_json(
    folder: &Path,
    file: &str,
    required: bool,
    problems: &mut Vec<String>,
) -> Option<Value> {
    let path = folder.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(value) => Some(value),
            Err(e) => {
                problems.push(format!("{file} is not valid JSON: {e}"));
                None
            }
        },
        Err(_) if !required => None,
        Err(e) => {
            problems.push(format!(
                "{file} cannot be read ({e}); an optimum export has it"
            ));
            None
        }
    }
}

/// The square image size of the preprocessor (DeiT's crop where it crops), or the problem.
fn image_size(settings: &VitSettings, problems: &mut Vec<String>) -> Option<u32> {
    let [width, height] = settings
        .center_crop
        .unwrap_or([settings.resize_width, settings.resize_height]);
    if width != height {
        problems.push(format!(
            "preprocessor_config.json: the image size is {width}x{height}, not square; allowed: \
             height equal to width"
        ));
        return None;
    }
    Some(width)
}

/// A name a folder and a query can carry: the export folder's own name, cleaned.
fn default_name(folder: &Path) -> String {
    let name: String = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "model".to_owned()
    } else {
        name
    }
}

/// The relative path from folder `from` to file `to` (both absolute, real).
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// What a folder without problems holds: its variants, the graphs' facts and the numbers
/// the manifest is made of.
struct Examined {
    graphs_at: PathBuf,
    variants: Variants,
    facts: graphs::Facts,
    numbers: graphs::DecoderNumbers,
    image_size: u32,
    vision_tokens: u32,
    encoder_hidden: u32,
    generation: Generation,
    max_tokens: u32,
    notes: Vec<String>,
    config: Value,
}

/// Reads the export folder and names every problem it has.
fn examine(root: &Path, folder: &Path) -> Result<Examined, Refusal> {
    let mut problems = Vec::new();
    let graphs_at = graph_folder(folder);
    let variants = find_variants(&onnx_names(&graphs_at), &mut problems);
    // A lone decoder_model.onnx: the cache-less export, named below from its inputs.
    let lone_first_step =
        variants.decoders.is_empty() && graphs_at.join(format!("{FIRST_STEP}.onnx")).is_file();

    let config = read_json(folder, "config.json", true, &mut problems);
    let generation_config = read_json(folder, "generation_config.json", false, &mut problems);
    let tokenizer = read_json(folder, "tokenizer.json", true, &mut problems);
    let settings = match std::fs::read_to_string(folder.join("preprocessor_config.json")) {
        Ok(text) => match VitSettings::parse(&text) {
            Ok(settings) => Some(settings),
            Err(e) => {
                problems.push(format!("preprocessor_config.json: {e}"));
                None
            }
        },
        Err(e) => {
            problems.push(format!(
                "preprocessor_config.json cannot be read ({e}); an optimum export has it"
            ));
            None
        }
    };
    let size = settings.as_ref().and_then(|s| image_size(s, &mut problems));
    let tokenizer_facts = tokenizer
        .as_ref()
        .and_then(|t| settings::tokenizer_facts(t, &mut problems));
    let empty = Value::Null;
    let config_value = config.as_ref().unwrap_or(&empty);
    let generation = config
        .as_ref()
        .and_then(|c| settings::generation(generation_config.as_ref(), c, &mut problems));
    if let Some(kind) = config_value["model_type"].as_str() {
        if kind != "vision-encoder-decoder" {
            problems.push(format!(
                "config.json: model_type is {kind:?}; allowed: \"vision-encoder-decoder\" (a \
                 VisionEncoderDecoderModel)"
            ));
        }
    }
    // The page decodes at most MAX_TOKENS_LIMIT tokens, the model at most its positions.
    let positions = settings::decoder_number(config_value, &["max_position_embeddings"]);
    let mut notes = Vec::new();
    let max_tokens = generation.as_ref().map_or(1, |g| {
        let wanted = g.max_length.saturating_sub(1).max(1);
        let cap = positions
            .map_or(MAX_TOKENS_LIMIT, |p| p.saturating_sub(1))
            .min(MAX_TOKENS_LIMIT);
        if wanted > cap {
            notes.push(format!(
                "max_length {} asks for {wanted} tokens; the manifest's maxTokens is {cap} (the \
                 page's limit {MAX_TOKENS_LIMIT} and the decoder's positions {})",
                g.max_length,
                positions.map_or("unknown".to_owned(), |p| p.to_string())
            ));
        }
        wanted.min(cap)
    });

    // Already refused: the graphs' interfaces are read for their own problems, but the encoder
    // is not run nor the activations sought (the slow part).
    let measured_at = size.filter(|_| problems.is_empty());
    let facts = match graph_facts(root, &graphs_at, measured_at, max_tokens) {
        Ok(facts) => facts,
        Err(e) => {
            problems.push(e);
            return Err(Refusal(problems));
        }
    };
    if lone_first_step {
        let file = format!("{FIRST_STEP}.onnx");
        if let Some(first) = facts.graphs.get(&file) {
            if !first
                .inputs
                .iter()
                .any(|i| i.starts_with("past_key_values."))
            {
                problems.push(format!(
                    "cache-less decoder: {file} alone, with no past inputs and no \
                     decoder_with_past_model.onnx; export with --task image-to-text-with-past"
                ));
            }
        }
    }
    let encoder_run = facts.encoder.as_ref();
    if let Some(error) = encoder_run.and_then(|e| e.error.as_ref()) {
        problems.push(format!(
            "encoder_model.onnx does not run on a {size:?} image: {error}"
        ));
    }
    let vision_tokens = encoder_run.and_then(|e| e.vision_tokens);
    let encoder_hidden = encoder_run.and_then(|e| e.hidden);

    // Every graph's inputs, and the decoder's numbers from the fp32 decoder (or the first).
    let mut numbers = None;
    for (variant, files) in &variants.decoders {
        let names: Vec<&String> = match files {
            DecoderFiles::Merged(file) => vec![file],
            DecoderFiles::Pair(first, later) => vec![first, later],
        };
        for file in &names {
            let Some(graph) = facts.graphs.get(*file) else {
                continue;
            };
            unfed(file, graph, &mut problems);
        }
        // The pair's later graph has the pasts; the merged one is both.
        let Some(stepping) = names.last() else {
            continue;
        };
        if let Some(graph) = facts.graphs.get(*stepping) {
            let found = decoder_numbers(stepping, graph, &mut problems);
            if numbers.is_none() || variant == "fp32" {
                numbers = found.or(numbers);
            }
        }
    }
    for file in variants.encoders.values() {
        if let Some(graph) = facts.graphs.get(file) {
            unfed(file, graph, &mut problems);
        }
    }
    for (file, graph) in &facts.graphs {
        if let Some(error) = &graph.activation_error {
            if size.is_some() && vision_tokens.is_some() {
                problems.push(format!(
                    "{file}: its largest activation could not be found ({error})"
                ));
            }
        }
    }
    if let (Some(numbers), Some(tokenizer)) = (&numbers, &tokenizer_facts) {
        if tokenizer.size != u64::from(numbers.vocabulary) {
            problems.push(format!(
                "vocabulary mismatch: tokenizer.json ({} model) decodes {} ids (its vocabulary \
                 and added tokens), but the decoder's logits have {}; the two must agree",
                tokenizer.model_type, tokenizer.size, numbers.vocabulary
            ));
        }
    }
    if let (Some(numbers), Some(configured)) = (
        &numbers,
        settings::decoder_number(config_value, &["vocab_size"]),
    ) {
        if configured != numbers.vocabulary {
            problems.push(format!(
                "vocabulary mismatch: config.json's decoder vocab_size is {configured}, but the \
                 decoder's logits have {}",
                numbers.vocabulary
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Refusal(problems));
    }
    // With no problem, every part was read.
    let (Some(numbers), Some(size), Some(vision_tokens), Some(encoder_hidden), Some(generation)) =
        (numbers, size, vision_tokens, encoder_hidden, generation)
    else {
        return Err(Refusal(vec![
            "the export's numbers could not all be read (layers, image size, encoder output, \
             token rule)"
                .to_owned(),
        ]));
    };
    Ok(Examined {
        graphs_at,
        variants,
        facts,
        numbers,
        image_size: size,
        vision_tokens,
        encoder_hidden,
        generation,
        max_tokens,
        notes,
        config: config.unwrap_or(Value::Null),
    })
}

/// Checks the export folder and writes its manifest, or names every problem.
pub fn import(request: &ImportRequest) -> Result<Imported, Refusal> {
    let root = request
        .root
        .canonicalize()
        .map_err(|e| Refusal(vec![format!("the root {}: {e}", request.root.display())]))?;
    let folder = request.folder.canonicalize().map_err(|e| {
        Refusal(vec![format!(
            "the export folder {} cannot be read: {e}",
            request.folder.display()
        )])
    })?;
    if !folder.is_dir() {
        return Err(Refusal(vec![format!(
            "{} is not a folder; give the folder optimum-cli export onnx wrote",
            folder.display()
        )]));
    }
    let Examined {
        graphs_at,
        variants,
        facts,
        numbers,
        image_size: size,
        vision_tokens,
        encoder_hidden,
        generation,
        max_tokens,
        mut notes,
        config,
    } = examine(&root, &folder)?;
    let config_value = &config;
    let name = request
        .name
        .clone()
        .unwrap_or_else(|| default_name(&folder));
    let out = match &request.out {
        Some(out) if out.is_absolute() => out.clone(),
        Some(out) => std::env::current_dir()
            .map(|cwd| cwd.join(out))
            .unwrap_or_else(|_| out.clone()),
        None => root.join(IMPORTED_FOLDER).join(&name),
    };
    let refuse = |e: std::io::Error, what: &Path| {
        Refusal(vec![format!("{} cannot be written: {e}", what.display())])
    };
    std::fs::create_dir_all(&out).map_err(|e| refuse(e, &out))?;
    let out = out.canonicalize().map_err(|e| refuse(e, &out))?;
    // The files stay where they are under the served root; from outside it they are linked
    // (or copied) beside the manifest, which is served.
    let inside = folder.starts_with(&root);
    let mut placed = Vec::new();
    let mut place_file = |source: &Path, file: &str| -> Result<String, Refusal> {
        if inside {
            return Ok(relative(&out, source));
        }
        let target = out.join(file);
        // An earlier import's link may be of an older export; --out may be the export itself.
        if target.canonicalize().ok().as_deref() != Some(source) {
            if target.exists() {
                std::fs::remove_file(&target).map_err(|e| refuse(e, &target))?;
            }
            std::fs::hard_link(source, &target)
                .or_else(|_| std::fs::copy(source, &target).map(|_| ()))
                .map_err(|e| refuse(e, &target))?;
        }
        placed.push(file.to_owned());
        Ok(file.to_owned())
    };
    let mut places = BTreeMap::new();
    let used = variants
        .encoders
        .values()
        .chain(variants.decoders.values().flat_map(|files| match files {
            DecoderFiles::Merged(file) => vec![file],
            DecoderFiles::Pair(first, later) => vec![first, later],
        }));
    let mut wanted: Vec<(PathBuf, String)> = Vec::new();
    for file in used {
        wanted.push((graphs_at.join(file), file.clone()));
        if let Some(external) = facts.graphs.get(file).and_then(|g| g.external.as_ref()) {
            wanted.push((graphs_at.join(&external.file), external.file.clone()));
        }
    }
    for file in ["tokenizer.json", "preprocessor_config.json"] {
        wanted.push((folder.join(file), file.to_owned()));
    }
    for (source, file) in wanted {
        places.insert(file.clone(), place_file(&source, &file)?);
    }
    let place = |file: &str| places.get(file).cloned().unwrap_or_else(|| file.to_owned());

    let vision = variants
        .encoders
        .iter()
        .filter_map(|(variant, file)| {
            let facts = facts.graphs.get(file)?;
            Some((
                variant.clone(),
                VisionEntry {
                    graph: graph(file, facts, &place),
                },
            ))
        })
        .collect();
    let decoder = variants
        .decoders
        .iter()
        .filter_map(|(variant, files)| {
            let (first, with_past) = match files {
                DecoderFiles::Merged(file) => (file, None),
                DecoderFiles::Pair(first, later) => (first, Some(later)),
            };
            let entry = DecoderEntry {
                graph: graph(first, facts.graphs.get(first)?, &place),
                fixed_kv: false,
                capturable: false,
                kv_shared_in_place: false,
                with_past: match with_past {
                    Some(later) => Some(graph(later, facts.graphs.get(later)?, &place)),
                    None => None,
                },
            };
            Some((variant.clone(), entry))
        })
        .collect();
    let hidden = settings::decoder_number(config_value, &["hidden_size", "d_model", "n_embd"]);
    let intermediate = settings::decoder_number(
        config_value,
        &["intermediate_size", "decoder_ffn_dim", "n_inner"],
    );
    let attention_heads = settings::decoder_number(
        config_value,
        &["num_attention_heads", "decoder_attention_heads", "n_head"],
    );
    let manifest = Manifest {
        name: Some(name.clone()),
        weights_source: Some(format!("optimum export at {}", shown(&root, &folder))),
        build_info: None,
        family: Family::EncoderDecoder,
        vocab: None,
        tokens: Tokens {
            bos: generation.decoder_start_token_id,
            eos: generation.eos_token_ids[0],
            vocab_offset: 0,
        },
        capability: Capability {
            shape: ModelShape {
                layers: numbers.layers,
                hidden_size: hidden.unwrap_or(numbers.heads * numbers.head_dim),
                intermediate_size: intermediate.unwrap_or(0),
                attention_heads: attention_heads.unwrap_or(numbers.heads),
                kv_heads: numbers.heads,
                vocabulary: numbers.vocabulary,
                max_tokens,
            },
            head_dim: numbers.head_dim,
            image_size: size,
            vision_tokens,
            kv_slots: 0,
        },
        logits_shape: vec![1, 1, u64::from(numbers.vocabulary)],
        vision,
        decoder,
        encoder_decoder: Some(EncoderDecoder {
            tokenizer: place("tokenizer.json"),
            preprocessor: place("preprocessor_config.json"),
            encoder_hidden,
            cross_attention_heads: numbers.cross_heads,
            generation,
        }),
    };
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
    // The manifest is read back by the core, as the page and the runner will read it.
    let manifest = Manifest::parse(&text)
        .map_err(|e| Refusal(vec![format!("the manifest written would be refused: {e}")]))?;
    let manifest_path = out.join("manifest.json");
    std::fs::write(&manifest_path, text + "\n").map_err(|e| refuse(e, &manifest_path))?;
    if !placed.is_empty() {
        notes.push(format!(
            "the export is outside the served root: {} linked or copied beside the manifest",
            placed.join(", ")
        ));
    }
    let url = match manifest_path.strip_prefix(&root) {
        Ok(inside) => format!("/{}", inside.display()),
        Err(_) => manifest_path.display().to_string(),
    };
    if !manifest_path.starts_with(&root) {
        notes.push(format!(
            "{} is outside the served root {}: the page cannot fetch it; give --out a folder \
             under the root",
            manifest_path.display(),
            root.display()
        ));
    }
    let tier = pick(&manifest.vision);
    let decoder = pick(&manifest.decoder);
    let mut query = format!("manifest={url}&tier={tier}&decoder={decoder}");
    if max_tokens < MAX_TOKENS_LIMIT {
        query.push_str(&format!("&maxTokens={max_tokens}"));
    }
    Ok(Imported {
        manifest_path,
        manifest,
        query,
        notes,
    })
}

/// `fp32` where the manifest has it, else its first variant.
fn pick<T>(variants: &BTreeMap<String, T>) -> String {
    if variants.contains_key("fp32") {
        "fp32".to_owned()
    } else {
        variants.keys().next().cloned().unwrap_or_default()
    }
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
