//! The benchmark configuration: the page's query string as a typed value.
//!
//! This is the one parser for the page (through the wasm build) and the runner (as an rlib),
//! so both reject the same mistakes with the same words. The seed's six parameters keep their
//! names, values and defaults; the additive ones default to the seed's behaviour.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::{CoreError, Result};

/// The values of one choice parameter: its variants, their query spellings and its default.
pub trait Choice: Sized + Copy + Eq + 'static {
    /// The query-string name of the parameter.
    const PARAMETER: &'static str;
    /// Every variant, in the order the values are listed to a person.
    const ALL: &'static [Self];
    /// The query spelling of each variant, same order as [`Choice::ALL`].
    const VALUES: &'static [&'static str];

    fn as_str(self) -> &'static str {
        let index = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        Self::VALUES[index]
    }

    fn parse(value: &str) -> Result<Self> {
        Self::VALUES
            .iter()
            .position(|v| *v == value)
            .map(|index| Self::ALL[index])
            .ok_or_else(|| CoreError::InvalidValue {
                parameter: Self::PARAMETER,
                value: value.to_owned(),
                allowed: Self::VALUES.join(", "),
            })
    }
}

/// Declares a choice parameter: the enum, its [`Choice`] table, `Display`, and serde as the
/// query spelling (a JS number is accepted too, so `{ tier: 121 }` works from the page).
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $name:ident, $parameter:literal, default $default:ident,
        { $($(#[$vmeta:meta])* $variant:ident = $value:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl Choice for $name {
            const PARAMETER: &'static str = $parameter;
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            const VALUES: &'static [&'static str] = &[$($value),+];
        }

        impl Default for $name {
            fn default() -> Self {
                Self::$default
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                deserializer.deserialize_any(ChoiceVisitor::<$name>(std::marker::PhantomData))
            }
        }
    };
}

struct ChoiceVisitor<T>(std::marker::PhantomData<T>);

impl<T: Choice> Visitor<'_> for ChoiceVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: one of {}", T::PARAMETER, T::VALUES.join(", "))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> std::result::Result<T, E> {
        T::parse(value).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> std::result::Result<T, E> {
        self.visit_str(&value.to_string())
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> std::result::Result<T, E> {
        self.visit_str(&value.to_string())
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> std::result::Result<T, E> {
        // JS numbers arrive as f64; 121.0 means "121", 121.5 matches nothing and is reported.
        self.visit_str(&value.to_string())
    }
}

choice! {
    /// Which vision encoder: `121` int4 MatMulNBits weights, `242` fp16.
    Tier, "tier", default Int4, { Int4 = "121", Fp16 = "242" }
}

choice! {
    /// `lean` turns `enableCpuMemArena` and `enableMemPattern` off; `default` leaves ORT's own.
    Memory, "memory", default Lean, { Lean = "lean", Default = "default" }
}

choice! {
    /// `url`: ORT fetches the model itself; `bytes`: the page fetches and passes the bytes.
    Loader, "loader", default Url, { Url = "url", Bytes = "bytes" }
}

choice! {
    /// `staged`: vision in a worker terminated before the decoder loads; `resident`: both live.
    Schedule, "schedule", default Staged, { Staged = "staged", Resident = "resident" }
}

choice! {
    /// The decoder graph variant.
    Decoder, "decoder", default Baseline, {
        Baseline = "baseline",
        GatherOpt = "gather-opt",
        Fp16Matmul = "fp16-matmul",
        FixedKv = "fixed-kv",
    }
}

choice! {
    /// `full`: vision + decoder on the evaluation set; `decoder`: synthetic zero embeddings and
    /// a forced non-EOS token, so every run walks the full cache path.
    Scope, "scope", default Full, { Full = "full", Decoder = "decoder" }
}

choice! {
    /// Model files with weights inside the `.onnx` or in ONNX external data.
    Weights, "weights", default Embedded, { Embedded = "embedded", External = "external" }
}

pub const DEFAULT_CASES: &str = "hayai13";
pub const DEFAULT_MANIFEST: &str = "/models/manifest.json";
pub const MAX_TOKENS_LIMIT: u32 = 128;
const CASES_NAME_MAX_LEN: usize = 64;

/// One benchmark run's configuration. Serialized with camelCase field names; the choice values
/// serialize as their query spellings (`"121"`, `"gather-opt"`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "ConfigFields")]
pub struct Config {
    pub tier: Tier,
    pub memory: Memory,
    pub loader: Loader,
    pub schedule: Schedule,
    pub decoder: Decoder,
    pub scope: Scope,
    /// Evaluation set name: `models/eval/<cases>/cases.json`.
    pub cases: String,
    /// Manifest URL, relative to the page or absolute.
    pub manifest: String,
    pub weights: Weights,
    /// Most tokens to decode per case (the seed's fixed 128).
    pub max_tokens: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            tier: Tier::default(),
            memory: Memory::default(),
            loader: Loader::default(),
            schedule: Schedule::default(),
            decoder: Decoder::default(),
            scope: Scope::default(),
            cases: DEFAULT_CASES.to_owned(),
            manifest: DEFAULT_MANIFEST.to_owned(),
            weights: Weights::default(),
            max_tokens: MAX_TOKENS_LIMIT,
        }
    }
}

/// What deserialization reads before [`Config`] checks the free-form fields; missing fields
/// take their defaults so that `{ tier: "242" }` is a whole configuration.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct ConfigFields {
    tier: Tier,
    memory: Memory,
    loader: Loader,
    schedule: Schedule,
    decoder: Decoder,
    scope: Scope,
    cases: String,
    manifest: String,
    weights: Weights,
    max_tokens: u32,
}

impl Default for ConfigFields {
    fn default() -> Self {
        let c = Config::default();
        Self {
            tier: c.tier,
            memory: c.memory,
            loader: c.loader,
            schedule: c.schedule,
            decoder: c.decoder,
            scope: c.scope,
            cases: c.cases,
            manifest: c.manifest,
            weights: c.weights,
            max_tokens: c.max_tokens,
        }
    }
}

impl TryFrom<ConfigFields> for Config {
    type Error = CoreError;

    fn try_from(f: ConfigFields) -> Result<Self> {
        let config = Config {
            tier: f.tier,
            memory: f.memory,
            loader: f.loader,
            schedule: f.schedule,
            decoder: f.decoder,
            scope: f.scope,
            cases: f.cases,
            manifest: f.manifest,
            weights: f.weights,
            max_tokens: f.max_tokens,
        };
        config.validate()?;
        Ok(config)
    }
}

/// How a parameter's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ParameterKind {
    /// One of a fixed list of values.
    Choice,
    /// A whole number in `min..=max`.
    Integer,
    /// A name of ASCII letters, digits, `_` and `-`.
    Name,
    /// A URL (relative to the page, or absolute).
    Url,
}

/// A description of one parameter, for the runner's `--help` and the page's error text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterDescription {
    pub name: &'static str,
    pub kind: ParameterKind,
    /// The allowed values of a choice parameter (empty for the others).
    pub values: Vec<&'static str>,
    pub min: Option<u32>,
    pub max: Option<u32>,
    /// The default, as written in a query string.
    pub default: String,
    /// The allowed values in words, as error messages give them.
    pub allowed: String,
    pub description: &'static str,
}

/// The parameters in their fixed order: query strings and sweeps list them in this order.
pub const PARAMETER_NAMES: [&str; 10] = [
    "tier",
    "memory",
    "loader",
    "schedule",
    "decoder",
    "scope",
    "cases",
    "manifest",
    "weights",
    "maxTokens",
];

fn choice_description<T: Choice + Default>(description: &'static str) -> ParameterDescription {
    ParameterDescription {
        name: T::PARAMETER,
        kind: ParameterKind::Choice,
        values: T::VALUES.to_vec(),
        min: None,
        max: None,
        default: T::default().as_str().to_owned(),
        allowed: T::VALUES.join(", "),
        description,
    }
}

fn cases_allowed() -> String {
    format!("a name of 1 to {CASES_NAME_MAX_LEN} characters from A-Z a-z 0-9 _ -")
}

fn manifest_allowed() -> &'static str {
    "a non-empty URL without whitespace or control characters"
}

fn max_tokens_allowed() -> String {
    format!("an integer 1..={MAX_TOKENS_LIMIT}")
}

/// Every parameter: name, kind, allowed values, default and what it does.
pub fn parameters() -> Vec<ParameterDescription> {
    vec![
        choice_description::<Tier>("vision encoder: 121 = int4 MatMulNBits weights, 242 = fp16"),
        choice_description::<Memory>(
            "session options: lean = enableCpuMemArena and enableMemPattern off, default = ORT's",
        ),
        choice_description::<Loader>(
            "url = onnxruntime-web fetches the model, bytes = the page fetches it and passes bytes",
        ),
        choice_description::<Schedule>(
            "staged = vision in a worker that ends before the decoder loads, resident = both live together",
        ),
        choice_description::<Decoder>("decoder graph variant"),
        choice_description::<Scope>(
            "full = vision and decoder on the evaluation set, decoder = synthetic embeddings, full 128-token path",
        ),
        ParameterDescription {
            name: "cases",
            kind: ParameterKind::Name,
            values: Vec::new(),
            min: None,
            max: None,
            default: DEFAULT_CASES.to_owned(),
            allowed: cases_allowed(),
            description: "evaluation set: models/eval/<cases>/cases.json",
        },
        ParameterDescription {
            name: "manifest",
            kind: ParameterKind::Url,
            values: Vec::new(),
            min: None,
            max: None,
            default: DEFAULT_MANIFEST.to_owned(),
            allowed: manifest_allowed().to_owned(),
            description: "model manifest URL",
        },
        choice_description::<Weights>(
            "embedded = weights inside the .onnx, external = ONNX external data file",
        ),
        ParameterDescription {
            name: "maxTokens",
            kind: ParameterKind::Integer,
            values: Vec::new(),
            min: Some(1),
            max: Some(MAX_TOKENS_LIMIT),
            default: MAX_TOKENS_LIMIT.to_string(),
            allowed: max_tokens_allowed(),
            description: "most tokens decoded per case",
        },
    ]
}

fn unknown_parameter(name: &str) -> CoreError {
    CoreError::UnknownParameter {
        name: name.to_owned(),
        allowed: PARAMETER_NAMES.join(", "),
    }
}

fn check_cases(value: &str) -> Result<()> {
    let valid = !value.is_empty()
        && value.len() <= CASES_NAME_MAX_LEN
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(CoreError::InvalidValue {
            parameter: "cases",
            value: value.to_owned(),
            allowed: cases_allowed(),
        })
    }
}

fn check_manifest(value: &str) -> Result<()> {
    if !value.is_empty() && !value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Ok(())
    } else {
        Err(CoreError::InvalidValue {
            parameter: "manifest",
            value: value.to_owned(),
            allowed: manifest_allowed().to_owned(),
        })
    }
}

fn parse_max_tokens(value: &str) -> Result<u32> {
    let invalid = || CoreError::InvalidValue {
        parameter: "maxTokens",
        value: value.to_owned(),
        allowed: max_tokens_allowed(),
    };
    // Digits only: `u32::from_str` would also take a leading `+`.
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    match value.parse::<u32>() {
        Ok(n) if (1..=MAX_TOKENS_LIMIT).contains(&n) => Ok(n),
        _ => Err(invalid()),
    }
}

impl Config {
    /// Checks the free-form fields (the choice fields are valid by type).
    pub fn validate(&self) -> Result<()> {
        check_cases(&self.cases)?;
        check_manifest(&self.manifest)?;
        if !(1..=MAX_TOKENS_LIMIT).contains(&self.max_tokens) {
            return Err(CoreError::InvalidValue {
                parameter: "maxTokens",
                value: self.max_tokens.to_string(),
                allowed: max_tokens_allowed(),
            });
        }
        Ok(())
    }

    /// Sets one parameter from its query-string spelling.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        match name {
            "tier" => self.tier = Tier::parse(value)?,
            "memory" => self.memory = Memory::parse(value)?,
            "loader" => self.loader = Loader::parse(value)?,
            "schedule" => self.schedule = Schedule::parse(value)?,
            "decoder" => self.decoder = Decoder::parse(value)?,
            "scope" => self.scope = Scope::parse(value)?,
            "cases" => {
                check_cases(value)?;
                value.clone_into(&mut self.cases);
            }
            "manifest" => {
                check_manifest(value)?;
                value.clone_into(&mut self.manifest);
            }
            "weights" => self.weights = Weights::parse(value)?,
            "maxTokens" => self.max_tokens = parse_max_tokens(value)?,
            _ => return Err(unknown_parameter(name)),
        }
        Ok(())
    }

    /// One parameter's value as written in a query string.
    pub fn get(&self, name: &str) -> Result<String> {
        Ok(match name {
            "tier" => self.tier.as_str().to_owned(),
            "memory" => self.memory.as_str().to_owned(),
            "loader" => self.loader.as_str().to_owned(),
            "schedule" => self.schedule.as_str().to_owned(),
            "decoder" => self.decoder.as_str().to_owned(),
            "scope" => self.scope.as_str().to_owned(),
            "cases" => self.cases.clone(),
            "manifest" => self.manifest.clone(),
            "weights" => self.weights.as_str().to_owned(),
            "maxTokens" => self.max_tokens.to_string(),
            _ => return Err(unknown_parameter(name)),
        })
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
        let index = PARAMETER_NAMES
            .iter()
            .position(|known| *known == name)
            .ok_or_else(|| unknown_parameter(&name))?;
        if std::mem::replace(&mut seen[index], true) {
            return Err(CoreError::DuplicateParameter {
                name: name.into_owned(),
            });
        }
        config.set(&name, &value)?;
    }
    Ok(config)
}

/// Expands a sweep from the default configuration: see [`expand_sweep_from`].
pub fn expand_sweep<N, V>(axes: &[(N, Vec<V>)]) -> Result<Vec<Config>>
where
    N: AsRef<str>,
    V: AsRef<str>,
{
    expand_sweep_from(&Config::default(), axes)
}

/// The cartesian product of a list of values per parameter, starting from `base` for the
/// parameters not listed. Every value is validated as a query value would be. The order is
/// stable and independent of the order of `axes`: parameters nest in [`PARAMETER_NAMES`]
/// order (the first varies slowest), values in the order given.
pub fn expand_sweep_from<N, V>(base: &Config, axes: &[(N, Vec<V>)]) -> Result<Vec<Config>>
where
    N: AsRef<str>,
    V: AsRef<str>,
{
    let mut ordered: Vec<(usize, &'static str, &[V])> = Vec::with_capacity(axes.len());
    for (name, values) in axes {
        let name = name.as_ref();
        let index = PARAMETER_NAMES
            .iter()
            .position(|known| *known == name)
            .ok_or_else(|| unknown_parameter(name))?;
        let parameter = PARAMETER_NAMES[index];
        if ordered.iter().any(|(i, _, _)| *i == index) {
            return Err(CoreError::DuplicateParameter {
                name: name.to_owned(),
            });
        }
        if values.is_empty() {
            return Err(CoreError::EmptySweepAxis { parameter });
        }
        let mut probe = base.clone();
        for (position, value) in values.iter().enumerate() {
            let value = value.as_ref();
            probe.set(parameter, value)?;
            if values[..position].iter().any(|v| v.as_ref() == value) {
                return Err(CoreError::DuplicateSweepValue {
                    parameter,
                    value: value.to_owned(),
                });
            }
        }
        ordered.push((index, parameter, values));
    }
    ordered.sort_by_key(|(index, _, _)| *index);

    let mut configs = vec![base.clone()];
    for (_, parameter, values) in ordered {
        let mut next = Vec::with_capacity(configs.len() * values.len());
        for config in &configs {
            for value in values {
                let mut c = config.clone();
                c.set(parameter, value.as_ref())?;
                next.push(c);
            }
        }
        configs = next;
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_query_is_the_seed_default() {
        let c = parse_query("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.tier, Tier::Int4);
        assert_eq!(c.memory, Memory::Lean);
        assert_eq!(c.loader, Loader::Url);
        assert_eq!(c.schedule, Schedule::Staged);
        assert_eq!(c.decoder, Decoder::Baseline);
        assert_eq!(c.scope, Scope::Full);
        assert_eq!(c.cases, "hayai13");
        assert_eq!(c.manifest, "/models/manifest.json");
        assert_eq!(c.weights, Weights::Embedded);
        assert_eq!(c.max_tokens, 128);
        assert_eq!(parse_query("?").unwrap(), Config::default());
        assert_eq!(c.to_query(), "");
    }

    #[test]
    fn parses_every_parameter() {
        let c = parse_query(
            "?tier=242&memory=default&loader=bytes&schedule=resident&decoder=fixed-kv\
             &scope=decoder&cases=short_3&manifest=%2Fm%2Fx.json&weights=external&maxTokens=8",
        )
        .unwrap();
        assert_eq!(c.tier, Tier::Fp16);
        assert_eq!(c.memory, Memory::Default);
        assert_eq!(c.loader, Loader::Bytes);
        assert_eq!(c.schedule, Schedule::Resident);
        assert_eq!(c.decoder, Decoder::FixedKv);
        assert_eq!(c.scope, Scope::Decoder);
        assert_eq!(c.cases, "short_3");
        assert_eq!(c.manifest, "/m/x.json");
        assert_eq!(c.weights, Weights::External);
        assert_eq!(c.max_tokens, 8);
    }

    #[test]
    fn decodes_like_url_search_params() {
        // `+` is a space, so a manifest URL with `+` must be sent as %2B.
        let c = parse_query("manifest=a%2Bb.json&decoder=gather%2Dopt").unwrap();
        assert_eq!(c.manifest, "a+b.json");
        assert_eq!(c.decoder, Decoder::GatherOpt);
        let err = parse_query("manifest=a+b.json").unwrap_err();
        assert!(err.to_string().contains("manifest"), "{err}");
        // Empty pieces are skipped, as URLSearchParams does.
        assert_eq!(parse_query("&&tier=242&").unwrap().tier, Tier::Fp16);
    }

    #[test]
    fn errors_name_the_parameter_and_the_allowed_values() {
        let err = parse_query("tier=999").unwrap_err().to_string();
        assert!(err.contains("`tier`") && err.contains("121, 242"), "{err}");
        let err = parse_query("decoder=fast").unwrap_err().to_string();
        assert!(
            err.contains("baseline, gather-opt, fp16-matmul, fixed-kv"),
            "{err}"
        );
        let err = parse_query("colour=red").unwrap_err().to_string();
        assert!(
            err.contains("`colour`") && err.contains("maxTokens"),
            "{err}"
        );
        let err = parse_query("tier=121&tier=242").unwrap_err();
        assert_eq!(
            err,
            CoreError::DuplicateParameter {
                name: "tier".into()
            }
        );
        for bad in ["0", "129", "-1", "+5", " 5", "5.0", "", "99999999999"] {
            let err = parse_query(&format!("maxTokens={bad}"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("maxTokens") && err.contains("1..=128"),
                "{bad}: {err}"
            );
        }
        for bad in ["", "a/b", "..", "a b", "é"] {
            let query = format!("cases={}", urlencode(bad));
            let err = parse_query(&query).unwrap_err().to_string();
            assert!(err.contains("`cases`"), "{bad}: {err}");
        }
        // Case matters, as in the seed's Set lookups.
        assert!(parse_query("scope=Full").is_err());
        assert!(parse_query("Tier=121").is_err());
    }

    fn urlencode(s: &str) -> String {
        form_urlencoded::byte_serialize(s.as_bytes()).collect()
    }

    #[test]
    fn full_query_lists_everything_and_parses_back() {
        let c = Config::default();
        let q = c.to_full_query();
        assert!(q.starts_with("tier=121&memory=lean"), "{q}");
        assert!(q.ends_with("maxTokens=128"), "{q}");
        assert_eq!(parse_query(&q).unwrap(), c);
    }

    #[test]
    fn serde_uses_camel_case_and_query_spellings() {
        let c = parse_query("tier=242&maxTokens=16&decoder=fp16-matmul").unwrap();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["tier"], "242");
        assert_eq!(json["maxTokens"], 16);
        assert_eq!(json["decoder"], "fp16-matmul");
        let back: Config = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
        // Partial objects fill in defaults; a numeric tier is accepted.
        let partial: Config = serde_json::from_str(r#"{"tier": 242}"#).unwrap();
        assert_eq!(partial.tier, Tier::Fp16);
        assert_eq!(partial.max_tokens, 128);
        for bad in [
            r#"{"tier": "7"}"#,
            r#"{"maxTokens": 0}"#,
            r#"{"cases": "../x"}"#,
            r#"{"colour": "red"}"#,
        ] {
            assert!(serde_json::from_str::<Config>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parameter_descriptions_cover_every_parameter() {
        let params = parameters();
        let names: Vec<_> = params.iter().map(|p| p.name).collect();
        assert_eq!(names, PARAMETER_NAMES);
        let defaults = Config::default();
        for p in &params {
            assert_eq!(p.default, defaults.get(p.name).unwrap(), "{}", p.name);
            let mut c = Config::default();
            c.set(p.name, &p.default).unwrap();
            for v in &p.values {
                c.set(p.name, v).unwrap();
            }
        }
        let decoder = &params[4];
        assert_eq!(
            decoder.values,
            ["baseline", "gather-opt", "fp16-matmul", "fixed-kv"]
        );
    }

    #[test]
    fn sweep_is_the_ordered_cartesian_product() {
        let axes = vec![
            ("maxTokens", vec!["8", "16"]),
            ("tier", vec!["242", "121"]),
            ("decoder", vec!["baseline", "fixed-kv", "gather-opt"]),
        ];
        let configs = expand_sweep(&axes).unwrap();
        assert_eq!(configs.len(), 12);
        // tier varies slowest (first in PARAMETER_NAMES), maxTokens fastest.
        let keys: Vec<_> = configs
            .iter()
            .map(|c| (c.tier.as_str(), c.decoder.as_str(), c.max_tokens))
            .collect();
        assert_eq!(keys[0], ("242", "baseline", 8));
        assert_eq!(keys[1], ("242", "baseline", 16));
        assert_eq!(keys[2], ("242", "fixed-kv", 8));
        assert_eq!(keys[11], ("121", "gather-opt", 16));
        // The order of the axes does not matter.
        let mut reversed = axes.clone();
        reversed.reverse();
        assert_eq!(expand_sweep(&reversed).unwrap(), configs);
        // No axes: the one base config.
        let none: Vec<(&str, Vec<&str>)> = Vec::new();
        assert_eq!(expand_sweep(&none).unwrap(), vec![Config::default()]);
    }

    #[test]
    fn sweep_rejects_bad_axes() {
        let err = expand_sweep(&[("tier", vec!["121", "300"])])
            .unwrap_err()
            .to_string();
        assert!(err.contains("`tier`") && err.contains("121, 242"), "{err}");
        let err = expand_sweep(&[("tier", Vec::<&str>::new())]).unwrap_err();
        assert_eq!(err, CoreError::EmptySweepAxis { parameter: "tier" });
        let err = expand_sweep(&[("tier", vec!["121", "121"])]).unwrap_err();
        assert!(matches!(err, CoreError::DuplicateSweepValue { .. }));
        let err = expand_sweep(&[("tier", vec!["121"]), ("tier", vec!["242"])]).unwrap_err();
        assert!(matches!(err, CoreError::DuplicateParameter { .. }));
        assert!(expand_sweep(&[("speed", vec!["1"])]).is_err());
    }

    fn any_config() -> impl Strategy<Value = Config> {
        (
            (
                prop::sample::select(Tier::ALL),
                prop::sample::select(Memory::ALL),
                prop::sample::select(Loader::ALL),
                prop::sample::select(Schedule::ALL),
                prop::sample::select(Decoder::ALL),
            ),
            (
                prop::sample::select(Scope::ALL),
                "[A-Za-z0-9_-]{1,64}",
                // Any non-blank URL-ish text, including `+`, `&`, `=`, `%` and non-ASCII.
                "[/a-z0-9.+&=%?#é日]{1,30}",
                prop::sample::select(Weights::ALL),
                1u32..=128,
            ),
        )
            .prop_map(
                |(
                    (tier, memory, loader, schedule, decoder),
                    (scope, cases, manifest, weights, max_tokens),
                )| Config {
                    tier,
                    memory,
                    loader,
                    schedule,
                    decoder,
                    scope,
                    cases,
                    manifest,
                    weights,
                    max_tokens,
                },
            )
    }

    proptest! {
        #[test]
        fn query_round_trips(c in any_config()) {
            prop_assert_eq!(parse_query(&c.to_query()).unwrap(), c.clone());
            prop_assert_eq!(parse_query(&format!("?{}", c.to_full_query())).unwrap(), c);
        }

        #[test]
        fn parse_never_panics(q in ".{0,80}") {
            let _ = parse_query(&q);
        }
    }
}
