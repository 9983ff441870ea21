//! The benchmark configuration: the page's query string as a typed value.
//!
//! This is the one parser for the page (through the wasm build) and the runner (as an rlib),
//! so both reject the same mistakes with the same words. Every parameter is declared once, in
//! the table at the `parameters!` call below (field, type, default, name, rule, description);
//! the struct, `set`/`get`, the query strings, validation, serde and [`parameters`] are made
//! from it. The seed's six parameters keep their names, values and defaults; the additive
//! ones default to the seed's behaviour.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::{CoreError, Result};
use crate::parameter::choice;
use crate::parameter::parameters;
pub use crate::parameter::{
    Choice, Milliseconds, OneOf, ParameterDescription, ParameterKind, ParameterValue, Text,
};
pub use crate::runtime::OrtVersion;

// Sweeps moved to their own module; they stay reachable under their old path.
pub use crate::sweep_grid::{expand_sweep, expand_sweep_from};

pub const DEFAULT_CASES: &str = "hayai13";
pub const DEFAULT_MANIFEST: &str = "/models/manifest.json";
pub const MAX_TOKENS_LIMIT: u32 = 128;
/// The most decoder realms of `pool`: each holds a session and a device of its own.
pub const MAX_POOL: u32 = 8;
/// The GPU chooser keeps this many chosen ids per sequence for one readback.
pub const MAX_SYNC_STEPS: u32 = 64;
const CASES_NAME_MAX_LEN: usize = 64;
/// The longest tier or decoder name: the manifest's names are checked against it too.
pub const VARIANT_NAME_MAX_LEN: usize = 64;
/// The seed's vision tier and decoder, which the built-in manifest offers.
pub const DEFAULT_TIER: &str = "121";
pub const DEFAULT_DECODER: &str = "baseline";

parameters! {
    /// A vision tier of the manifest (`docs/model-contract.md`, "Variants").
    tier: String = DEFAULT_TIER.to_owned(), "tier", Text::Name { max_len: VARIANT_NAME_MAX_LEN },
        "vision encoder, a tier of the manifest: 121 = int4 MatMulNBits weights, 242 = fp16 in \
         the built-in one";
    memory: Memory = Memory::Lean, "memory", OneOf,
        "session options: lean = enableCpuMemArena and enableMemPattern off, default = ORT's";
    loader: Loader = Loader::Url, "loader", OneOf,
        "url = onnxruntime-web fetches the model, bytes = the page fetches it and passes bytes";
    schedule: Schedule = Schedule::Staged, "schedule", OneOf,
        "staged = vision in a worker that ends before the decoder loads, resident = both live together";
    /// A decoder variant of the manifest.
    decoder: String = DEFAULT_DECODER.to_owned(), "decoder", Text::Name { max_len: VARIANT_NAME_MAX_LEN },
        "decoder graph variant, a decoder of the manifest";
    scope: Scope = Scope::Full, "scope", OneOf,
        "full = vision and decoder on the evaluation set, decoder = synthetic embeddings, full 128-token path";
    /// Evaluation set name: `models/eval/<cases>/cases.json`.
    cases: String = DEFAULT_CASES.to_owned(), "cases", Text::Name { max_len: CASES_NAME_MAX_LEN },
        "evaluation set: models/eval/<cases>/cases.json";
    /// Manifest URL, relative to the page or absolute.
    manifest: String = DEFAULT_MANIFEST.to_owned(), "manifest", Text::Url, "model manifest URL";
    weights: Weights = Weights::Embedded, "weights", OneOf,
        "embedded = weights inside the .onnx, external = ONNX external data file";
    /// Most tokens to decode per case (the seed's fixed 128).
    max_tokens: u32 = MAX_TOKENS_LIMIT, "maxTokens", 1..=MAX_TOKENS_LIMIT,
        "most tokens decoded per case";
    poll: Poll = Poll::Plain, "poll", OneOf,
        "how the page waits for GPU work: none = plain awaits (Firefox completes them on a 100 ms \
         timer), kick = an empty queue submit at most every kickMs while a wait is pending";
    /// The kick interval of `poll=kick` (unused otherwise).
    kick_ms: Milliseconds = Milliseconds::from_micros(500), "kickMs",
        Milliseconds::from_micros(50)..=Milliseconds::from_micros(100_000),
        "milliseconds between kicks with poll=kick (unused otherwise)";
    warmup: u32 = 0, "warmup", 0..=32, "cases run first and not timed into the summary";
    repeat: u32 = 1, "repeat", 1..=100, "every case this many times";
    profile: Profile = Profile::Off, "profile", OneOf,
        "ops = per-operator GPU time and the nodes placed off the WebGPU device";
    choose: Choose = Choose::Cpu, "choose", OneOf,
        "token choice: cpu = the core's TokenChooser on logits read back every step, gpu = the \
         same choice as a WGSL shader on the logits' GPU buffer (browser/decoding/decode-gpu.js)";
    /// Decode steps queued per readback of their chosen ids (`choose=gpu` only).
    sync: u32 = 1, "sync", 1..=MAX_SYNC_STEPS,
        "with choose=gpu: decode steps queued before one readback of their chosen ids";
    verify: Verify = Verify::Off, "verify", OneOf,
        "wasm = after the timed cases, decode each case again on onnxruntime-web's WASM (CPU) \
         execution provider and compare tokens and logits step by step (not with nbits-int8, \
         nbits-int4, fixed-kv-fused: that build has no CPU GatherBlockQuantized)";
    capture: Capture = Capture::Off, "capture", OneOf,
        "on = the decode steps replay one recorded onnxruntime-web graph (enableGraphCapture) \
         instead of encoding each again; all = the prefill and the vision encoder too, each its \
         own recorded graph; both need choose=gpu and a static-shape decoder (fixed-kv-gpu, \
         fixed-kv-fused)";
    realm: Realm = Realm::Page, "realm", OneOf,
        "where the decoder session, its decode loop and the token choice run: page = in the page, \
         worker = in a dedicated worker of their own (worker/decoder-worker.js)";
    /// Decoder realms reading the set's cases at once from one queue.
    pool: u32 = 1, "pool", 1..=MAX_POOL,
        "decoder realms reading the cases at once from one queue: with realm=worker K dedicated \
         workers, each with its own onnxruntime-web and session; with realm=page K sessions in \
         the page's one onnxruntime-web (the isolation check)";
    ort: OrtVersion = OrtVersion::PINNED, "ort", OneOf,
        "the onnxruntime-web version every realm loads: 1.30.0 = the pinned one, 1.31.1 = the \
         current release (npm's latest); each imported from its own node_modules folder";
    release: Release = Release::All, "release", OneOf,
        "what the release phase lets go of, step by step, with a memory sample after each: \
         sessions = the onnxruntime sessions only, device = then the WebGPU devices too, realm = \
         then the decoder's workers too (needs realm=worker), all = everything at once; every \
         mode ends by letting go of the rest";
}

/// Parameters left out of the JSON form while at their default, so that the `config` of a
/// record written before they existed reads and writes back unchanged (as the short query
/// leaves every default out). The query strings still list them.
pub const OMITTED_AT_DEFAULT: [&str; 7] = [
    "choose", "sync", "capture", "realm", "pool", "ort", "release",
];

choice! {
    /// `lean` turns `enableCpuMemArena` and `enableMemPattern` off; `default` leaves ORT's own.
    Memory { Lean = "lean", Default = "default" }
}

choice! {
    /// `url`: ORT fetches the model itself; `bytes`: the page fetches and passes the bytes.
    Loader { Url = "url", Bytes = "bytes" }
}

choice! {
    /// `staged`: vision in a worker terminated before the decoder loads; `resident`: both live.
    Schedule { Staged = "staged", Resident = "resident" }
}

choice! {
    /// `full`: vision + decoder on the evaluation set; `decoder`: synthetic zero embeddings and
    /// a forced non-EOS token, so every run walks the full cache path.
    Scope { Full = "full", Decoder = "decoder" }
}

choice! {
    /// Model files with weights inside the `.onnx` or in ONNX external data.
    Weights { Embedded = "embedded", External = "external" }
}

choice! {
    /// `none` (`Plain`): plain awaits; `kick`: an empty queue submit at most every `kickMs`
    /// while a wait is pending, because Firefox completes GPU promises on a 100 ms timer.
    Poll { Plain = "none", Kick = "kick" }
}

choice! {
    /// `ops`: per-operator GPU time and the nodes placed off the WebGPU device.
    Profile { Off = "none", Ops = "ops" }
}

choice! {
    /// `cpu`: the core's `TokenChooser` on logits read back every step; `gpu`: the same
    /// choice in a WGSL shader (`gpu_choose`), its ids read back every `sync` steps.
    Choose { Cpu = "cpu", Gpu = "gpu" }
}

choice! {
    /// `on`: the decode steps run as one graph that onnxruntime-web's WebGPU EP records once
    /// and replays (`enableGraphCapture`), every input and output bound to the same GPU buffers.
    /// `all`: the prefill and the vision encoder too, each on a session that records its own.
    Capture { Off = "off", On = "on", All = "all" }
}

choice! {
    /// `wasm`: every case decoded again on onnxruntime-web's WASM (CPU) execution provider after
    /// the timed cases, its tokens and logits compared step by step with the WebGPU run's.
    Verify { Off = "none", Wasm = "wasm" }
}

choice! {
    /// What the release phase lets go of before its samples (`docs/benchmark-protocol.md`,
    /// "Release"): cumulative steps, each followed by a settled sample; `all` lets go of
    /// everything at once.
    Release { All = "all", Sessions = "sessions", Device = "device", Realm = "realm" }
}

choice! {
    /// `page`: the decoder session and its decode loop in the page; `worker`: in a dedicated
    /// worker of their own, with the core's token choice there too (the page holds a proxy).
    Realm { Page = "page", Worker = "worker" }
}

pub(crate) fn unknown_parameter(name: &str) -> CoreError {
    CoreError::UnknownParameter {
        name: name.to_owned(),
        allowed: PARAMETER_NAMES.join(", "),
    }
}

/// The position of `name` in [`PARAMETER_NAMES`], or the error that lists them.
pub(crate) fn parameter_index(name: &str) -> Result<usize> {
    PARAMETER_NAMES
        .iter()
        .position(|known| *known == name)
        .ok_or_else(|| unknown_parameter(name))
}

impl Config {
    /// The rules between parameters, which no single value breaks (those between a config and
    /// its model are [`crate::manifest::Manifest::check_config`]'s): `sync` above 1 queues
    /// steps on the GPU, which only the GPU chooser can do (the CPU one reads every step's
    /// logits back before the next step can start).
    pub fn check_combination(&self) -> Result<()> {
        if self.sync > 1 && self.choose == Choose::Cpu {
            return Err(CoreError::InvalidConfig {
                field: "sync".to_owned(),
                message: format!(
                    "sync={} needs choose=gpu: with choose=cpu every step reads its logits \
                     back before the next one starts; give choose=gpu, or leave sync at 1",
                    self.sync
                ),
            });
        }
        if self.verify == Verify::Wasm && self.choose == Choose::Gpu {
            // The check compares each step's logits, which choose=gpu never reads back.
            return Err(CoreError::InvalidConfig {
                field: "verify".to_owned(),
                message: "verify=wasm compares every step's logits with the WASM reference, and \
                          choose=gpu keeps them on the GPU; verify with choose=cpu (the tokens of \
                          both choosers are the same), or leave verify at none"
                    .to_owned(),
            });
        }
        if self.capture != Capture::Off {
            self.check_capture()?;
        }
        if self.release == Release::Realm && self.realm != Realm::Worker {
            // The step terminates the workers that held the decoder; in the page there is none.
            return Err(CoreError::InvalidConfig {
                field: "release".to_owned(),
                message: "release=realm terminates the worker realms that held the decoder, and \
                          realm=page holds it in the page, which cannot be ended; give \
                          realm=worker, or release=device (sessions, then the devices)"
                    .to_owned(),
            });
        }
        if self.release != Release::All && self.ort.ends_the_device_with_its_last_session() {
            // Releasing the sessions would end the device with them: the steps after
            // sessions could not be told apart.
            return Err(CoreError::InvalidConfig {
                field: "release".to_owned(),
                message: format!(
                    "release={} samples the sessions' release apart from the device's, and \
                     onnxruntime-web {} destroys the realm's WebGPU device (its own context 0) \
                     with the realm's last session; give release=all, or ort={}",
                    self.release,
                    self.ort,
                    OrtVersion::PINNED
                ),
            });
        }
        if self.pool > 1 && self.profile == Profile::Ops {
            // The profile is one session's, of the first timed case; with a pool that case's
            // session is any of K, and the other sessions' cases would run profiled too.
            return Err(CoreError::InvalidConfig {
                field: "pool".to_owned(),
                message: format!(
                    "pool={} with profile=ops: the profile is one session's, and K sessions \
                     read the cases at once; profile with pool=1, or leave profile at none",
                    self.pool
                ),
            });
        }
        Ok(())
    }

    /// capture=on replays one recorded step, so every input of a step must be a GPU buffer
    /// that stays the same, the token id too: only the GPU chooser writes it there. Whether
    /// the decoder's steps can be captured is the manifest's to say
    /// ([`crate::manifest::Manifest::check_config`]).
    fn check_capture(&self) -> Result<()> {
        if self.choose != Choose::Gpu {
            return Err(CoreError::InvalidConfig {
                field: "capture".to_owned(),
                message: format!(
                    "capture={} needs choose=gpu: a captured step reads its token id from the \
                     same GPU buffer every time, which only the GPU chooser writes; give \
                     choose=gpu (and a decoder the manifest marks capturable), or leave capture \
                     at off",
                    self.capture
                ),
            });
        }
        Ok(())
    }

    /// The query string (without `?`) that [`parse_query`] turns back into this config.
    /// Parameters at their default are left out, so the default config is `""`; the others
    /// come in [`PARAMETER_NAMES`] order, encoded as `URLSearchParams` does.
    pub fn to_query(&self) -> String {
        let defaults = Config::default();
        let mut query = form_urlencoded::Serializer::new(String::new());
        for name in PARAMETER_NAMES {
            // Both gets are over known names, so they cannot fail.
            let (Ok(value), Ok(default)) = (self.get(name), defaults.get(name)) else {
                continue;
            };
            if value != default {
                query.append_pair(name, &value);
            }
        }
        query.finish()
    }

    /// The same as [`Config::to_query`] but with every parameter, defaults included: the
    /// complete record of a run.
    pub fn to_full_query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for name in PARAMETER_NAMES {
            if let Ok(value) = self.get(name) {
                query.append_pair(name, &value);
            }
        }
        query.finish()
    }
}

/// Parses a query string the way the page's `new URLSearchParams(location.search)` reads it:
/// one leading `?` is dropped, `+` is a space, percent escapes are decoded (invalid UTF-8
/// becomes U+FFFD), empty `&&` pieces are skipped and `name` alone means `name=`.
/// An unknown parameter, an unknown value or a parameter given twice is an error.
pub fn parse_query(query: &str) -> Result<Config> {
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut config = Config::default();
    let mut seen = [false; PARAMETER_NAMES.len()];
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let index = parameter_index(&name)?;
        if std::mem::replace(&mut seen[index], true) {
            return Err(CoreError::DuplicateParameter {
                name: name.into_owned(),
            });
        }
        config.set(&name, &value)?;
    }
    config.check_combination()?;
    Ok(config)
}

/// A field's value as JSON or JS gives it. A number stands for the text `f64`'s `Display`
/// writes (`242.0` is `"242"`, `0.5` is `"0.5"`, never an exponent), then parsed as a query.
enum Given {
    Text(String),
    Number(String),
}

impl Given {
    /// Sets parameter `name` of `config` to this value, if the parameter's kind takes this
    /// form: choices and names take either (so `{ tier: 242 }` works from the page), numbers
    /// a number, URLs a string.
    fn set_on(self, config: &mut Config, name: &str) -> Result<()> {
        let (text, is_number) = match self {
            Given::Text(text) => (text, false),
            Given::Number(text) => (text, true),
        };
        let wants_number = match Config::kind(name)? {
            ParameterKind::Choice | ParameterKind::Name => is_number,
            ParameterKind::Integer | ParameterKind::Decimal => true,
            ParameterKind::Url => false,
        };
        if wants_number == is_number {
            return config.set(name, &text);
        }
        let (wanted, got) = if wants_number {
            (
                "a number",
                format!("the string {}", crate::error::quoted(&text)),
            )
        } else {
            ("a string", format!("the number {text}"))
        };
        Err(CoreError::InvalidConfig {
            field: name.to_owned(),
            message: format!("expected {wanted}, got {got}"),
        })
    }
}

impl<'de> Deserialize<'de> for Given {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct GivenVisitor;
        impl Visitor<'_> for GivenVisitor {
            type Value = Given;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> std::result::Result<Given, E> {
                Ok(Given::Text(value.to_owned()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> std::result::Result<Given, E> {
                Ok(Given::Number(value.to_string()))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> std::result::Result<Given, E> {
                Ok(Given::Number(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> std::result::Result<Given, E> {
                Ok(Given::Number(value.to_string()))
            }
        }
        deserializer.deserialize_any(GivenVisitor)
    }
}

/// An object of parameters by query name; missing ones take their defaults, an unknown or
/// repeated one is refused, and every value is checked as the query's would be.
impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct ConfigVisitor;
        impl<'de> Visitor<'de> for ConfigVisitor {
            type Value = Config;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "an object with the fields {}",
                    PARAMETER_NAMES.join(", ")
                )
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Config, A::Error> {
                let mut config = Config::default();
                let mut seen = [false; PARAMETER_NAMES.len()];
                while let Some(name) = map.next_key::<String>()? {
                    let index = parameter_index(&name).map_err(de::Error::custom)?;
                    if std::mem::replace(&mut seen[index], true) {
                        return Err(de::Error::custom(CoreError::DuplicateParameter { name }));
                    }
                    let given: Given = map.next_value()?;
                    given
                        .set_on(&mut config, &name)
                        .map_err(de::Error::custom)?;
                }
                config.check_combination().map_err(de::Error::custom)?;
                Ok(config)
            }
        }
        deserializer.deserialize_struct("Config", &PARAMETER_NAMES, ConfigVisitor)
    }
}

#[cfg(test)]
mod tests;
