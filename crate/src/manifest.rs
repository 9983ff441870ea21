//! The model manifest (`models/manifest.json`, written by `scripts/ocrmodel/manifest.py`;
//! `docs/model-contract.md`, "The manifest"): the one type the page (through the wasm
//! boundary), the runner's floor and its checks read. It holds every fact of a model and its
//! variants: the files, their sizes and largest activations, the capability numbers, each
//! graph's input and output names and operators, and each variant's properties (the adapter
//! features it requires, fixed-KV I/O, whether its decode step can be captured).
//!
//! The `tier` and `decoder` parameters are open names: [`Manifest::check_config`] checks them
//! against the manifest in hand, so a manifest with a decoder of a new name runs without a
//! change to the code. Facts of the runtime rather than the model live in [`crate::runtime`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{Capture, Config, Scope, Verify};
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
    /// The vocabulary file, relative to the manifest.
    pub vocab: String,
    pub tokens: Tokens,
    pub capability: Capability,
    /// The decoder's logits output: `[1, capability.vocabulary]`.
    pub logits_shape: Vec<u64>,
    /// The vision tiers by their `tier=` name.
    pub vision: BTreeMap<String, VisionEntry>,
    /// The decoder variants by their `decoder=` name.
    pub decoder: BTreeMap<String, DecoderEntry>,
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
    /// The model and its ONNX external-data file.
    pub external: ExternalFiles,
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
    /// `maxTokens` is within the model's, `capture=on` has a capturable decoder and
    /// `verify=wasm` one the runtime's WASM execution provider can run.
    pub fn check_config(&self, config: &Config) -> Result<()> {
        self.vision_entry(config)?;
        let decoder = self.decoder_entry(config)?;
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
