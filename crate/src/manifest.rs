//! The model manifest (`models/manifest.json`, written by `scripts/ocrmodel/manifest.py`;
//! `docs/model-contract.md`, "The manifest"): the one type the page (through the wasm
//! boundary), the runner's floor and its checks read. It holds every fact of a model and its
//! variants: the files, their sizes and largest activations, the capability numbers, each
//! graph's input and output names and operators, and each variant's properties (the adapter
//! features it requires, fixed-KV I/O, whether its decode step can be captured).
//!
//! Two model families read from it ([`Family`]): the built-in prefix decoder, whose vision
//! embeddings are prefilled as self-attention positions, and an encoder-decoder exported by
//! Hugging Face's exporter (`optimum-cli export onnx --task image-to-text-with-past`), whose
//! decoder attends to the encoder's output through cross-attention ([`EncoderDecoder`]).
//!
//! The `tier` and `decoder` parameters are open names: [`Manifest::check_config`] checks them
//! against the manifest in hand, so a manifest with a decoder of a new name runs without a
//! change to the code. Facts of the runtime rather than the model live in [`crate::runtime`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{Capture, Config, Scope, Verify, Weights};
use crate::error::{CoreError, Result};
use crate::runtime::{self, OrtVersion};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_info: Option<String>,
    /// Which decoding loop runs the model; absent for the built-in prefix decoder.
    #[serde(default, skip_serializing_if = "Family::is_prefix")]
    pub family: Family,
    /// The vocabulary file, relative to the manifest: the prefix family's characters (an
    /// encoder-decoder's tokenizer is named in `encoderDecoder` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<String>,
    pub tokens: Tokens,
    pub capability: Capability,
    /// The decoder's logits output: `[1, capability.vocabulary]` for the prefix family,
    /// `[1, 1, capability.vocabulary]` (one step's) for an encoder-decoder.
    pub logits_shape: Vec<u64>,
    /// The vision tiers (an encoder-decoder's encoders) by their `tier=` name.
    pub vision: BTreeMap<String, VisionEntry>,
    /// The decoder variants by their `decoder=` name.
    pub decoder: BTreeMap<String, DecoderEntry>,
    /// What an encoder-decoder adds: its tokenizer, preprocessor, cross-attention and token rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder_decoder: Option<EncoderDecoder>,
}

/// The decoding loop a model needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestFamily"))]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// The built-in model: vision embeddings prefilled as self-attention positions, int32
    /// token ids, one growing (or fixed) cache per layer.
    #[default]
    Prefix,
    /// A `VisionEncoderDecoder`: int64 `input_ids`, `encoder_hidden_states`, a self-attention
    /// cache that grows and a cross-attention cache fixed after the first step.
    EncoderDecoder,
}

impl Family {
    pub fn is_prefix(&self) -> bool {
        *self == Family::Prefix
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Family::Prefix => "prefix",
            Family::EncoderDecoder => "encoder-decoder",
        }
    }
}

/// The parts of an encoder-decoder model beside its graphs (paths relative to the manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestEncoderDecoder"))]
#[serde(rename_all = "camelCase")]
pub struct EncoderDecoder {
    /// The Hugging Face `tokenizer.json` that decodes ids to text.
    pub tokenizer: String,
    /// The `preprocessor_config.json` the core's `VitImageProcessor` reads.
    pub preprocessor: String,
    /// The encoder's hidden size (`last_hidden_state` dim 2).
    pub encoder_hidden: u32,
    /// Heads of the cross-attention cache `[1, heads, visionTokens, headDim]`.
    pub cross_attention_heads: u32,
    pub generation: Generation,
}

/// The token rule of `generation_config.json` that the page implements, recorded with each
/// result: greedy, with the repetition penalty and n-gram ban where set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestGeneration"))]
#[serde(rename_all = "camelCase")]
pub struct Generation {
    pub decoder_start_token_id: u32,
    /// Any of them ends the sequence.
    pub eos_token_ids: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_token_id: Option<u32>,
    /// Tokens of a sequence, the decoder start included.
    pub max_length: u32,
    /// 1.0: no penalty.
    pub repetition_penalty: f64,
    /// 0: no ban.
    pub no_repeat_ngram_size: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestTokens"))]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub bos: u32,
    pub eos: u32,
    /// The ids below it are special; vocabulary character `i` is id `i + vocabOffset`.
    pub vocab_offset: u32,
}

/// The model's shape: what every file of the manifest must agree with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestCapability"))]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// The numbers a run's record keeps too (`crate::record::Capability`).
    #[serde(flatten)]
    pub shape: ModelShape,
    pub head_dim: u32,
    pub image_size: u32,
    pub vision_tokens: u32,
    pub kv_slots: u32,
}

/// The numbers of the model's shape that a run's record carries (its `capability`), defined
/// here once for the manifest and the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelShape {
    pub layers: u32,
    pub hidden_size: u32,
    pub intermediate_size: u32,
    pub attention_heads: u32,
    pub kv_heads: u32,
    pub vocabulary: u32,
    pub max_tokens: u32,
}

/// What every graph of the manifest has: its files (paths relative to the manifest), their
/// sizes, its largest activation, its I/O names and its operators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestGraph"))]
#[serde(rename_all = "camelCase")]
pub struct Graph {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// WebGPU features the adapter must offer (`shader-f16`).
    #[serde(default)]
    pub requires: Vec<String>,
    /// The model with its weights inside.
    pub embedded: String,
    /// The model and its ONNX external-data file, where the variant has that form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalFiles>,
    pub bytes: FileBytes,
    pub largest_activation: Activation,
    /// The largest stored tensor (onnxruntime uploads each as one GPU buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_initializer: Option<Initializer>,
    /// The adapter limits the graph needs, checked by the page before it creates the session
    /// (`docs/model-contract.md`, "Device limits").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The variant of the same role the page takes instead when the adapter falls short of
    /// `limits`; without one it refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The graph's input names, in the graph's order.
    pub inputs: Vec<String>,
    /// The graph's output names, in the graph's order.
    pub outputs: Vec<String>,
    /// The operator types its nodes use, sorted: `Type` in the default ONNX domain,
    /// `domain.Type` in another (`com.microsoft.MatMulNBits`).
    pub operators: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestVision"))]
pub struct VisionEntry {
    #[serde(flatten)]
    pub graph: Graph,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestDecoder"))]
#[serde(rename_all = "camelCase")]
pub struct DecoderEntry {
    #[serde(flatten)]
    pub graph: Graph,
    /// KV inputs of `capability.kvSlots` slots and a `past_length` input, rather than a cache
    /// that grows by one each step.
    #[serde(default)]
    pub fixed_kv: bool,
    /// Every decode step has the same input and output shapes and runs every node on WebGPU:
    /// what onnxruntime-web's graph capture (`capture=on`) needs.
    #[serde(default)]
    pub capturable: bool,
    /// Under graph capture each past and its present must be one buffer, which the step
    /// writes in place (`com.microsoft.GroupQueryAttention`'s static KV cache): the captured
    /// loop passes each past's buffer as its present's output and copies nothing back.
    #[serde(default)]
    pub kv_shared_in_place: bool,
    /// An encoder-decoder's pair form: this entry's graph is the first step
    /// (`decoder_model.onnx`) and `withPast` every later one (`decoder_with_past_model.onnx`).
    /// Absent for the merged form, whose `use_cache_branch` input picks the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_past: Option<Graph>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestExternalFiles"))]
pub struct ExternalFiles {
    pub model: String,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestFileBytes"))]
#[serde(rename_all = "camelCase")]
pub struct FileBytes {
    pub embedded: u64,
    pub external_model: u64,
    pub external_data: u64,
}

/// The largest single intermediate tensor of the graph's steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestActivation"))]
pub struct Activation {
    pub bytes: u64,
    pub tensor: String,
    #[serde(default)]
    pub shape: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// The largest initializer of a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestInitializer"))]
pub struct Initializer {
    pub bytes: u64,
    pub tensor: String,
    #[serde(default)]
    pub shape: Vec<u64>,
}

/// WebGPU adapter limits a graph needs, by their `GPUSupportedLimits` names: each at least
/// this much. `scripts/ocrmodel/manifest.py` derives them from the built graph and from
/// onnxruntime-web's kernels (`crate/src/runtime/ort-webgpu-kernels.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ManifestLimits"))]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_storage_buffers_per_shader_stage: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_buffer_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_storage_buffer_binding_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_compute_workgroup_storage_size: Option<u64>,
}

/// A variant name, as the `tier` and `decoder` parameters spell it.
fn is_variant_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= crate::config::VARIANT_NAME_MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn invalid(message: String) -> CoreError {
    CoreError::InvalidManifest { message }
}

/// The parameters an encoder-decoder run must leave at their default, each with the reason: the
/// paths of the harness its loop does not take (yet). `schedule` (staged, resident),
/// `choose` and `sync` (the GPU token choice under the model's rule) and the settings of
/// measurement apply to both families.
const ENCODER_DECODER_AT_DEFAULT: [(&str, &str); 7] = [
    (
        "scope",
        "its synthetic embeddings are the prefix decoder's vision positions",
    ),
    (
        "capture",
        "its decode steps change shape as the self-attention cache grows",
    ),
    (
        "verify",
        "the WASM re-decode follows the prefix decoder's tensors",
    ),
    ("realm", "the decoder worker runs the prefix decoder's loop"),
    ("pool", "the decoder realms run the prefix decoder's loop"),
    ("loader", "its sessions are created from URLs only"),
    ("profile", "its operator profile is not collected"),
];

/// The refusal of a config that takes a path the encoder-decoder loop does not.
fn encoder_decoder_paths(config: &Config) -> Result<()> {
    let default = Config::default();
    for (parameter, reason) in ENCODER_DECODER_AT_DEFAULT {
        let value = config.get(parameter)?;
        let default_value = default.get(parameter)?;
        if value != default_value {
            return Err(CoreError::InvalidConfig {
                field: parameter.to_owned(),
                message: format!(
                    "{parameter}={value} is not available for the encoder-decoder model of the \
                     manifest {}: {reason}; leave {parameter} at {default_value}",
                    config.manifest
                ),
            });
        }
    }
    Ok(())
}

/// The refusal of `weights=external` for the `role` variant `name`, which has no external form.
fn external_refusal<'a, T: 'a>(
    config: &Config,
    role: &str,
    name: &str,
    offered: impl Iterator<Item = (&'a String, &'a T)>,
) -> CoreError {
    let offered: Vec<&str> = offered.map(|(name, _)| name.as_str()).collect();
    CoreError::InvalidConfig {
        field: "weights".to_owned(),
        message: format!(
            "weights=external needs the model and its external-data file, and {role}={name} of \
             the manifest {} has only the embedded form; give {role}= one of: {}, or leave \
             weights at embedded",
            config.manifest,
            if offered.is_empty() {
                "(none in this manifest)".to_owned()
            } else {
                offered.join(", ")
            }
        ),
    }
}

/// The cache inputs of an encoder-decoder step with `layers` layers, in optimum's names.
pub fn past_inputs(layers: u32) -> Vec<String> {
    (0..layers)
        .flat_map(|n| {
            [
                "decoder.key",
                "decoder.value",
                "encoder.key",
                "encoder.value",
            ]
            .map(|part| format!("past_key_values.{n}.{part}"))
        })
        .collect()
}

/// The refusal naming the first of `needed` that `graph` (the `role` variant `name`) does not
/// take as an input.
fn lacks(role: &str, name: &str, graph: &Graph, needed: &[&str]) -> Result<()> {
    match needed
        .iter()
        .find(|n| !graph.inputs.iter().any(|i| i == *n))
    {
        None => Ok(()),
        Some(missing) => Err(invalid(format!(
            "its {role} {name:?} ({}) has no input {missing}, which the encoder-decoder loop \
             feeds; its inputs: {}",
            graph.embedded,
            graph.inputs.join(", ")
        ))),
    }
}

impl DecoderEntry {
    /// Whether `verify=wasm` can decode it again on the WASM execution provider of
    /// onnxruntime-web `version`.
    pub fn wasm_verifiable(&self, version: OrtVersion) -> bool {
        runtime::wasm_missing_operator(version, &self.graph.operators).is_none()
    }
}

impl Manifest {
    /// The manifest in `text` (JSON), checked: every variant name is one the `tier` and
    /// `decoder` parameters can spell, there is at least one decoder, each `fallback` names
    /// another variant of its role, `capability.imageSize` is the core's preprocessing size
    /// and `logitsShape` is `[1, capability.vocabulary]`.
    pub fn parse(text: &str) -> Result<Manifest> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        manifest.check()?;
        Ok(manifest)
    }

    fn check(&self) -> Result<()> {
        if self.decoder.is_empty() {
            return Err(invalid("it lists no decoder; give at least one".to_owned()));
        }
        let names = self.vision.keys().map(|n| ("vision", n));
        for (role, name) in names.chain(self.decoder.keys().map(|n| ("decoder", n))) {
            if !is_variant_name(name) {
                return Err(invalid(format!(
                    "its {role} {name:?} cannot be named in a query; allowed: 1 to {} \
                     characters from A-Z a-z 0-9 _ -",
                    crate::config::VARIANT_NAME_MAX_LEN
                )));
            }
        }
        let graphs = self.vision.iter().map(|(n, e)| ("vision", n, &e.graph));
        for (role, name, graph) in
            graphs.chain(self.decoder.iter().map(|(n, e)| ("decoder", n, &e.graph)))
        {
            let Some(fallback) = &graph.fallback else {
                continue;
            };
            let known = match role {
                "vision" => self.vision.contains_key(fallback),
                _ => self.decoder.contains_key(fallback),
            };
            if fallback == name || !known {
                return Err(invalid(format!(
                    "its {role} {name:?} falls back to {fallback:?}, which is {}; name another \
                     {role} of this manifest",
                    if fallback == name {
                        "itself"
                    } else {
                        "not one of its"
                    }
                )));
            }
        }
        match self.family {
            Family::Prefix => self.check_prefix(),
            Family::EncoderDecoder => self.check_encoder_decoder(),
        }
    }

    /// The built-in loop's needs: a vocabulary file, the core's image size, `[1, V]` logits.
    fn check_prefix(&self) -> Result<()> {
        if self.vocab.is_none() {
            return Err(invalid(
                "it names no vocab file, which the prefix family (the built-in loop) decodes \
                 ids with; give \"vocab\", or set \"family\": \"encoder-decoder\" with an \
                 encoderDecoder section"
                    .to_owned(),
            ));
        }
        if self.encoder_decoder.is_some() {
            return Err(invalid(
                "it has an encoderDecoder section but its family is prefix; set \"family\": \
                 \"encoder-decoder\" or remove the section"
                    .to_owned(),
            ));
        }
        let image_size = self.capability.image_size;
        if image_size != crate::preprocess::IMAGE_SIZE {
            return Err(invalid(format!(
                "its capability.imageSize is {image_size}, but the core preprocesses every \
                 image to {size}x{size}; allowed: {size}",
                size = crate::preprocess::IMAGE_SIZE
            )));
        }
        let vocabulary = u64::from(self.capability.shape.vocabulary);
        if self.logits_shape != [1, vocabulary] {
            return Err(invalid(format!(
                "its logitsShape is {:?}, but capability.vocabulary says [1, {vocabulary}]",
                self.logits_shape
            )));
        }
        Ok(())
    }

    /// An encoder-decoder's needs: its section, no vocab file, one step's logits, encoders of
    /// `pixel_values`, and decoders with the cross-attention loop's inputs for every layer.
    fn check_encoder_decoder(&self) -> Result<()> {
        let Some(section) = &self.encoder_decoder else {
            return Err(invalid(
                "its family is encoder-decoder but it has no encoderDecoder section (tokenizer, \
                 preprocessor, encoderHidden, crossAttentionHeads, generation); ocr-bench \
                 import writes one"
                    .to_owned(),
            ));
        };
        if self.vocab.is_some() {
            return Err(invalid(
                "its family is encoder-decoder, which decodes ids with encoderDecoder.tokenizer, \
                 but it names a vocab file too; remove \"vocab\""
                    .to_owned(),
            ));
        }
        let vocabulary = u64::from(self.capability.shape.vocabulary);
        if self.logits_shape != [1, 1, vocabulary] {
            return Err(invalid(format!(
                "its logitsShape is {:?}, but an encoder-decoder's step gives [1, 1, \
                 capability.vocabulary] = [1, 1, {vocabulary}]",
                self.logits_shape
            )));
        }
        if self.capability.image_size == 0 {
            return Err(invalid(
                "its capability.imageSize is 0; give the preprocessor's square size".to_owned(),
            ));
        }
        if section.generation.eos_token_ids.is_empty() {
            return Err(invalid(
                "its encoderDecoder.generation.eosTokenIds is empty; give at least one".to_owned(),
            ));
        }
        for (name, entry) in &self.vision {
            lacks("vision", name, &entry.graph, &["pixel_values"])?;
            if !entry.graph.outputs.iter().any(|o| o == "last_hidden_state") {
                return Err(invalid(format!(
                    "its vision {name:?} ({}) has no last_hidden_state output (it has {})",
                    entry.graph.embedded,
                    entry.graph.outputs.join(", ")
                )));
            }
        }
        let pasts = past_inputs(self.capability.shape.layers);
        let first_step = ["input_ids", "encoder_hidden_states"];
        for (name, entry) in &self.decoder {
            if entry.fixed_kv || entry.capturable {
                return Err(invalid(format!(
                    "its decoder {name:?} says fixedKv or capturable, which the encoder-decoder \
                     loop does not implement; set both to false"
                )));
            }
            match &entry.with_past {
                None => {
                    let mut needed: Vec<&str> = first_step.to_vec();
                    needed.extend(pasts.iter().map(String::as_str));
                    needed.push("use_cache_branch");
                    lacks("decoder", name, &entry.graph, &needed)?;
                }
                Some(with_past) => {
                    lacks("decoder", name, &entry.graph, &first_step)?;
                    let mut needed = vec!["input_ids"];
                    needed.extend(pasts.iter().map(String::as_str));
                    lacks("decoder", name, with_past, &needed)?;
                }
            }
        }
        Ok(())
    }

    /// The decoders' names, as a refusal offers them.
    fn decoders_where(&self, property: impl Fn(&DecoderEntry) -> bool) -> String {
        let names: Vec<&str> = self
            .decoder
            .iter()
            .filter(|(_, entry)| property(entry))
            .map(|(name, _)| name.as_str())
            .collect();
        if names.is_empty() {
            "(none in this manifest)".to_owned()
        } else {
            names.join(", ")
        }
    }

    /// The decoder `config` names, or the refusal that lists the manifest's decoders.
    pub fn decoder_entry(&self, config: &Config) -> Result<&DecoderEntry> {
        self.decoder
            .get(&config.decoder)
            .ok_or_else(|| CoreError::InvalidConfig {
                field: "decoder".to_owned(),
                message: format!(
                    "the manifest {} has no decoder {:?}; it offers: {}",
                    config.manifest,
                    config.decoder,
                    self.decoders_where(|_| true)
                ),
            })
    }

    /// The vision tier `config` names (`None` with `scope=decoder`, which runs no vision),
    /// or the refusal that lists the manifest's tiers.
    pub fn vision_entry(&self, config: &Config) -> Result<Option<&VisionEntry>> {
        if config.scope == Scope::Decoder {
            return Ok(None);
        }
        match self.vision.get(&config.tier) {
            Some(entry) => Ok(Some(entry)),
            None => Err(CoreError::InvalidConfig {
                field: "tier".to_owned(),
                message: format!(
                    "the manifest {} has no vision tier {:?}; it offers: {}",
                    config.manifest,
                    config.tier,
                    if self.vision.is_empty() {
                        "none (run scope=decoder)".to_owned()
                    } else {
                        self.vision.keys().cloned().collect::<Vec<_>>().join(", ")
                    }
                ),
            }),
        }
    }

    /// The rules between `config` and this manifest: the tier and decoder are in it,
    /// `weights=external` has their external form, an encoder-decoder run takes only the paths
    /// its loop implements, `maxTokens` is within the model's, `capture=on` has a capturable
    /// decoder and `verify=wasm` one the runtime's WASM execution provider can run.
    pub fn check_config(&self, config: &Config) -> Result<()> {
        let vision = self.vision_entry(config)?;
        let decoder = self.decoder_entry(config)?;
        if config.weights == Weights::External {
            let external = |graph: &Graph| graph.external.is_some();
            let decoder_external =
                |d: &DecoderEntry| external(&d.graph) && d.with_past.as_ref().is_none_or(external);
            if vision.is_some_and(|v| !external(&v.graph)) {
                let offered = self.vision.iter().filter(|(_, v)| external(&v.graph));
                return Err(external_refusal(config, "tier", &config.tier, offered));
            }
            if !decoder_external(decoder) {
                let offered = self.decoder.iter().filter(|(_, d)| decoder_external(d));
                return Err(external_refusal(
                    config,
                    "decoder",
                    &config.decoder,
                    offered,
                ));
            }
        }
        if self.family == Family::EncoderDecoder {
            encoder_decoder_paths(config)?;
        }
        if config.max_tokens > self.capability.shape.max_tokens {
            return Err(CoreError::InvalidConfig {
                field: "maxTokens".to_owned(),
                message: format!(
                    "maxTokens={} exceeds the model's capability.maxTokens ({}) in the manifest {}",
                    config.max_tokens, self.capability.shape.max_tokens, config.manifest
                ),
            });
        }
        if config.capture != Capture::Off && !decoder.capturable {
            return Err(CoreError::InvalidConfig {
                field: "capture".to_owned(),
                message: format!(
                    "capture={} needs a decoder whose steps have static shapes and run every \
                     node on WebGPU (capturable in the manifest), and decoder={} is not; give \
                     decoder= one of: {}, or leave capture at off",
                    config.capture,
                    config.decoder,
                    self.decoders_where(|d| d.capturable)
                ),
            });
        }
        if config.verify == Verify::Wasm {
            if let Some(operator) =
                runtime::wasm_missing_operator(config.ort, &decoder.graph.operators)
            {
                return Err(CoreError::InvalidConfig {
                    field: "verify".to_owned(),
                    message: format!(
                        "verify=wasm decodes every case again on onnxruntime-web's WASM (CPU) \
                         execution provider, and decoder={} uses {operator}, which \
                         onnxruntime-web {}'s WebGPU build has no CPU kernel for; verify \
                         decoder= one of: {}, or leave verify at none",
                        config.decoder,
                        config.ort,
                        self.decoders_where(|d| d.wasm_verifiable(config.ort))
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
