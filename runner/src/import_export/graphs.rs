//! The graphs of an export folder: their facts, read by the project's Python tooling
//! (`scripts/ocrmodel/import_export.py`), the problems they show (a cache-less decoder, an
//! input the loop does not feed, a logits size that is not fixed) and the manifest's graph of
//! each.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

use ocr_bench_core::manifest::{Activation, ExternalFiles, FileBytes, Graph, Initializer, Limits};

/// The inputs the encoder-decoder loop feeds; a graph that needs another is refused.
const FED: [&str; 4] = [
    "pixel_values",
    "input_ids",
    "encoder_hidden_states",
    "use_cache_branch",
];

/// One input or output of a graph, as the Python tooling reads it.
#[derive(Debug, Deserialize)]
pub struct Io {
    pub name: String,
    pub shape: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalFact {
    pub file: String,
    pub bytes: u64,
}

/// One `.onnx` file's facts (`scripts/ocrmodel/import_export.py`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphFacts {
    pub bytes: u64,
    pub external: Option<ExternalFact>,
    pub inputs_typed: Vec<Io>,
    pub outputs_typed: Vec<Io>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub operators: Vec<String>,
    pub largest_initializer: Initializer,
    pub largest_activation: Option<Activation>,
    pub limits: Option<Limits>,
    pub activation_error: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncoderRun {
    pub vision_tokens: Option<u32>,
    pub hidden: Option<u32>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Facts {
    pub encoder: Option<EncoderRun>,
    pub graphs: BTreeMap<String, GraphFacts>,
}

/// The Python of the project's `.venv`, or why there is none.
pub fn venv_python(root: &Path) -> Result<PathBuf, String> {
    let python = root.join(".venv/bin/python");
    if python.is_file() {
        Ok(python)
    } else {
        Err(format!(
            "{} is missing: import reads the graphs with the project's Python tooling (onnx, \
             onnxruntime); run scripts/setup to make the .venv",
            python.display()
        ))
    }
}

pub fn graph_facts(
    root: &Path,
    folder: &Path,
    image_size: Option<u32>,
    max_tokens: u32,
) -> Result<Facts, String> {
    let python = venv_python(root)?;
    let mut command = Command::new(python);
    command
        .current_dir(root.join("scripts"))
        .args(["-m", "ocrmodel.import_export"])
        .arg(folder)
        .args(["--max-tokens", &max_tokens.to_string()]);
    if let Some(size) = image_size {
        command.args(["--image-size", &size.to_string()]);
    }
    let output = command
        .output()
        .map_err(|e| format!("running scripts/ocrmodel/import_export.py: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "scripts/ocrmodel/import_export.py could not read the graphs ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("scripts/ocrmodel/import_export.py printed no facts: {e}"))
}

pub fn dim(io: &Io, index: usize) -> Option<u32> {
    io.shape
        .get(index)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// The numbers the decoder's graphs give: layers, self- and cross-attention heads, head
/// dimension, logits size.
pub struct DecoderNumbers {
    pub layers: u32,
    pub heads: u32,
    pub cross_heads: u32,
    pub head_dim: u32,
    pub vocabulary: u32,
}

pub fn decoder_numbers(
    name: &str,
    facts: &GraphFacts,
    problems: &mut Vec<String>,
) -> Option<DecoderNumbers> {
    let layers = (0..)
        .take_while(|n| {
            facts
                .inputs
                .contains(&format!("past_key_values.{n}.decoder.key"))
        })
        .count() as u32;
    if layers == 0 {
        problems.push(format!(
            "cache-less decoder: {name} has no past_key_values inputs; export with --task \
             image-to-text-with-past"
        ));
        return None;
    }
    let input = |n: &str| facts.inputs_typed.iter().find(|i| i.name == n);
    let self_key = input("past_key_values.0.decoder.key")?;
    let cross_key = input("past_key_values.0.encoder.key");
    let logits = facts.outputs_typed.iter().find(|o| o.name == "logits");
    let vocabulary = logits.and_then(|l| dim(l, 2));
    if vocabulary.is_none() {
        problems.push(format!(
            "{name}: no logits output with a fixed vocabulary size (dim 2); the page reads one \
             step's [1, 1, vocabulary]"
        ));
    }
    let (heads, head_dim) = (dim(self_key, 1), dim(self_key, 3));
    if heads.is_none() || head_dim.is_none() {
        problems.push(format!(
            "{name}: past_key_values.0.decoder.key has the shape {:?}; allowed: [batch, heads, \
             past, head_dim] with heads and head_dim fixed",
            self_key.shape
        ));
    }
    Some(DecoderNumbers {
        layers,
        heads: heads?,
        cross_heads: cross_key.and_then(|k| dim(k, 1)).unwrap_or(heads?),
        head_dim: head_dim?,
        vocabulary: vocabulary?,
    })
}

/// Inputs the loop does not feed, named.
pub fn unfed(name: &str, facts: &GraphFacts, problems: &mut Vec<String>) {
    for input in &facts.inputs {
        if !FED.contains(&input.as_str()) && !input.starts_with("past_key_values.") {
            problems.push(format!(
                "{name}: input {input} is not one the encoder-decoder loop feeds; allowed: {}, \
                 past_key_values.N.{{decoder,encoder}}.{{key,value}}",
                FED.join(", ")
            ));
        }
    }
}

/// The manifest's graph of `file`, its paths relative to the manifest's folder.
pub fn graph(file: &str, facts: &GraphFacts, place: &dyn Fn(&str) -> String) -> Graph {
    let activation = facts.largest_activation.clone().unwrap_or(Activation {
        bytes: 0,
        tensor: String::new(),
        shape: Vec::new(),
        step: None,
    });
    let external = facts.external.as_ref();
    Graph {
        description: Some(file.to_owned()),
        requires: Vec::new(),
        embedded: place(file),
        external: external.map(|e| ExternalFiles {
            model: place(file),
            data: place(&e.file),
        }),
        bytes: FileBytes {
            embedded: facts.bytes,
            external_model: external.map_or(0, |_| facts.bytes),
            external_data: external.map_or(0, |e| e.bytes),
        },
        largest_activation: activation,
        largest_initializer: Some(facts.largest_initializer.clone()),
        limits: facts.limits.clone(),
        fallback: None,
        inputs: facts.inputs.clone(),
        outputs: facts.outputs.clone(),
        operators: facts.operators.clone(),
    }
}
