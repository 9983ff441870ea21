//! What one parameter of the table in `config.rs` is: the kinds of value a field can hold,
//! how each is read from a query string and written back under its rule, its description,
//! and the two macros that turn the table and the choice types into code.

use std::fmt;
use std::ops::RangeInclusive;

use serde::{Serialize, Serializer};

use crate::error::{CoreError, Result};

/// How a parameter's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ParameterKind {
    /// One of a fixed list of values.
    Choice,
    /// A whole number in `min..=max`.
    Integer,
    /// A decimal number in `min..=max`, with at most three decimals.
    Decimal,
    /// A name of ASCII letters, digits, `_` and `-`.
    Name,
    /// A URL (relative to the page, or absolute).
    Url,
}

/// A description of one parameter, for the runner's `--help` and the page's error text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ParameterDescription {
    pub name: &'static str,
    pub kind: ParameterKind,
    /// The allowed values of a choice parameter (empty for the others).
    pub values: Vec<&'static str>,
    /// The bounds of a number parameter (`None` for the others).
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The default, as written in a query string.
    pub default: String,
    /// The allowed values in words, as error messages give them.
    pub allowed: String,
    pub description: &'static str,
}

/// A field type of `Config`: how its values are read from a query string and written back,
/// under the rule that the parameter's entry in the table gives.
pub trait ParameterValue: Sized + Serialize {
    /// What the table says beyond the type: a range, a kind of text.
    type Rule;
    fn kind(rule: &Self::Rule) -> ParameterKind;
    /// The allowed values in words, as error messages give them.
    fn allowed(rule: &Self::Rule) -> String;
    /// The value `text` spells, or `None` when the rule does not allow it.
    fn parse(rule: &Self::Rule, text: &str) -> Option<Self>;
    /// The value as written in a query string.
    fn to_query(&self) -> String;
    fn values(_rule: &Self::Rule) -> Vec<&'static str> {
        Vec::new()
    }
    fn bounds(_rule: &Self::Rule) -> Option<(f64, f64)> {
        None
    }
}

pub(crate) fn describe<T: ParameterValue>(
    name: &'static str,
    rule: &T::Rule,
    default: &T,
    description: &'static str,
) -> ParameterDescription {
    let bounds = T::bounds(rule);
    ParameterDescription {
        name,
        kind: T::kind(rule),
        values: T::values(rule),
        min: bounds.map(|(min, _)| min),
        max: bounds.map(|(_, max)| max),
        default: default.to_query(),
        allowed: T::allowed(rule),
        description,
    }
}

/// The value `text` spells, or the error that names the parameter and what it allows.
pub(crate) fn parse_value<T: ParameterValue>(
    parameter: &'static str,
    rule: &T::Rule,
    text: &str,
) -> Result<T> {
    T::parse(rule, text).ok_or_else(|| CoreError::InvalidValue {
        parameter,
        value: text.to_owned(),
        allowed: T::allowed(rule),
    })
}

/// The rule of a choice parameter: one of its type's values.
pub struct OneOf;

/// The values of one choice parameter's type, and their query spellings.
pub trait Choice: Sized + Copy + Eq + 'static {
    /// Every variant, in the order the values are listed to a person.
    const ALL: &'static [Self];
    /// The query spelling of each variant, same order as [`Choice::ALL`].
    const VALUES: &'static [&'static str];

    fn as_str(self) -> &'static str {
        let index = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        Self::VALUES[index]
    }

    fn from_query(text: &str) -> Option<Self> {
        let index = Self::VALUES.iter().position(|v| *v == text)?;
        Some(Self::ALL[index])
    }
}

/// Declares a choice parameter's type: the enum, its [`Choice`] table, `Display`, serde as
/// the query spelling, and its [`ParameterValue`] under the rule [`OneOf`].
macro_rules! choice {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident = $value:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $crate::parameter::Choice for $name {
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            const VALUES: &'static [&'static str] = &[$($value),+];
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::parameter::Choice::as_str(*self))
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str($crate::parameter::Choice::as_str(*self))
            }
        }

        impl $crate::parameter::ParameterValue for $name {
            type Rule = $crate::parameter::OneOf;
            fn kind(_: &Self::Rule) -> $crate::parameter::ParameterKind {
                $crate::parameter::ParameterKind::Choice
            }
            fn allowed(_: &Self::Rule) -> String {
                <Self as $crate::parameter::Choice>::VALUES.join(", ")
            }
            fn parse(_: &Self::Rule, text: &str) -> Option<Self> {
                <Self as $crate::parameter::Choice>::from_query(text)
            }
            fn to_query(&self) -> String {
                $crate::parameter::Choice::as_str(*self).to_owned()
            }
            fn values(_: &Self::Rule) -> Vec<&'static str> {
                <Self as $crate::parameter::Choice>::VALUES.to_vec()
            }
        }

        // The TypeScript type (crate/src/typescript.rs): the union of the query spellings.
        #[cfg(test)]
        impl ::ts_rs::TS for $name {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn name(_: &::ts_rs::Config) -> String {
                stringify!($name).to_owned()
            }
            fn inline(_: &::ts_rs::Config) -> String {
                let values: Vec<String> = <Self as $crate::parameter::Choice>::VALUES
                    .iter()
                    .map(|value| format!("{value:?}"))
                    .collect();
                values.join(" | ")
            }
            fn decl(cfg: &::ts_rs::Config) -> String {
                format!("type {} = {};", Self::name(cfg), Self::inline(cfg))
            }
            fn decl_concrete(cfg: &::ts_rs::Config) -> String {
                Self::decl(cfg)
            }
            fn output_path() -> Option<::std::path::PathBuf> {
                Some(concat!(stringify!($name), ".ts").into())
            }
        }
    };
}
pub(crate) use choice;

/// The parameter table: `field: Type = default, "queryName", rule, "description";` in the
/// fixed order that query strings and sweeps use. Makes `Config`, its `Default` and `Serialize`,
/// `PARAMETER_NAMES`, `parameters()` and `Config::{set, get, validate, kind}`. The names it
/// leaves unqualified (`unknown_parameter`, `OMITTED_AT_DEFAULT`) are the table's module's, where
/// it is expanded, so this module takes nothing from the configuration it describes.
macro_rules! parameters {
    ($(
        $(#[$meta:meta])*
        $field:ident: $ty:ty = $default:expr, $name:literal, $rule:expr, $description:expr;
    )+) => {
        /// One benchmark run's configuration. Serialized with the query names (camelCase):
        /// choices as their query spellings (`"121"`, `"gather-opt"`), numbers as numbers.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct Config {
            $($(#[$meta])* pub $field: $ty,)+
        }

        impl Default for Config {
            fn default() -> Self {
                Self { $($field: $default,)+ }
            }
        }

        /// The parameters in their fixed order: query strings and sweeps list them in this order.
        pub const PARAMETER_NAMES: [&str; [$($name),+].len()] = [$($name),+];

        /// Every parameter: name, kind, allowed values, default and what it does.
        pub fn parameters() -> Vec<$crate::parameter::ParameterDescription> {
            let defaults = Config::default();
            vec![$($crate::parameter::describe::<$ty>(
                $name, &$rule, &defaults.$field, $description,
            )),+]
        }

        impl Config {
            /// Sets one parameter from its query-string spelling.
            pub fn set(&mut self, name: &str, value: &str) -> $crate::error::Result<()> {
                match name {
                    $($name => self.$field = $crate::parameter::parse_value::<$ty>(
                        $name, &$rule, value,
                    )?,)+
                    _ => return Err(unknown_parameter(name)),
                }
                Ok(())
            }

            /// One parameter's value as written in a query string.
            pub fn get(&self, name: &str) -> $crate::error::Result<String> {
                match name {
                    $($name => Ok($crate::parameter::ParameterValue::to_query(&self.$field)),)+
                    _ => Err(unknown_parameter(name)),
                }
            }

            /// Checks every field against its rule (a `Config` can be built field by field), then
            /// the rules between fields ([`Config::check_combination`]).
            pub fn validate(&self) -> $crate::error::Result<()> {
                $($crate::parameter::parse_value::<$ty>(
                    $name, &$rule, &$crate::parameter::ParameterValue::to_query(&self.$field),
                )?;)+
                self.check_combination()
            }

            /// How the parameter's values are written.
            pub fn kind(name: &str) -> $crate::error::Result<$crate::parameter::ParameterKind> {
                match name {
                    $($name => Ok(<$ty as $crate::parameter::ParameterValue>::kind(&$rule)),)+
                    _ => Err(unknown_parameter(name)),
                }
            }
        }

        impl ::serde::Serialize for Config {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeStruct;
                let defaults = Config::default();
                let mut fields = s.serialize_struct("Config", PARAMETER_NAMES.len())?;
                $(
                    if OMITTED_AT_DEFAULT.contains(&$name)
                        && self.$field == defaults.$field
                    {
                        fields.skip_field($name)?;
                    } else {
                        fields.serialize_field($name, &self.$field)?;
                    }
                )+
                fields.end()
            }
        }

        // The TypeScript type (crate/src/typescript.rs): each field under its query name with
        // its description, `?` where the JSON form leaves it out at its default.
        #[cfg(test)]
        impl ::ts_rs::TS for Config {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn docs() -> Option<String> {
                Some("/** One benchmark run's configuration: the query's parameters under their names. */".to_owned())
            }
            fn name(_: &::ts_rs::Config) -> String {
                "Config".to_owned()
            }
            fn inline(cfg: &::ts_rs::Config) -> String {
                let fields: Vec<String> = vec![$(format!(
                    "/** {} */ {}{}: {}",
                    $description,
                    $name,
                    if OMITTED_AT_DEFAULT.contains(&$name) { "?" } else { "" },
                    <$ty as ::ts_rs::TS>::name(cfg),
                )),+];
                format!("{{ {}, }}", fields.join(", "))
            }
            fn decl(cfg: &::ts_rs::Config) -> String {
                format!("type Config = {};", Self::inline(cfg))
            }
            fn decl_concrete(cfg: &::ts_rs::Config) -> String {
                Self::decl(cfg)
            }
            fn visit_dependencies(visitor: &mut impl ::ts_rs::TypeVisitor) {
                $(visitor.visit::<$ty>();)+
            }
            fn output_path() -> Option<::std::path::PathBuf> {
                Some("Config.ts".into())
            }
        }
    };
}
pub(crate) use parameters;

impl ParameterValue for u32 {
    type Rule = RangeInclusive<u32>;
    fn kind(_: &Self::Rule) -> ParameterKind {
        ParameterKind::Integer
    }
    fn allowed(range: &Self::Rule) -> String {
        format!("an integer {}..={}", range.start(), range.end())
    }
    fn parse(range: &Self::Rule, text: &str) -> Option<Self> {
        // Digits only: `u32::from_str` would also take a leading `+`.
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok().filter(|n| range.contains(n))
    }
    fn to_query(&self) -> String {
        self.to_string()
    }
    fn bounds(range: &Self::Rule) -> Option<(f64, f64)> {
        Some((f64::from(*range.start()), f64::from(*range.end())))
    }
}

/// A duration in whole microseconds, written in milliseconds with at most three decimals
/// (`0.5`, `2`, `0.25`): an integer, so `Config` keeps `Eq` and `Hash` and the query text
/// round-trips exactly. Serialized as a number of milliseconds (`0.5`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Milliseconds(u32);

impl Milliseconds {
    pub const fn from_micros(micros: u32) -> Self {
        Self(micros)
    }

    pub const fn as_micros(self) -> u32 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 1000.0
    }

    /// `digits` or `digits.digits` with 1 to 3 decimals; no sign, exponent or space.
    fn from_query(text: &str) -> Option<Self> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !digits(fraction) || fraction.len() > 3 {
            return None;
        }
        let thousandths: u32 = format!("{fraction:0<3}").parse().ok()?;
        let micros = whole.parse::<u32>().ok()?.checked_mul(1000)?;
        micros.checked_add(thousandths).map(Self)
    }
}

impl fmt::Display for Milliseconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, thousandths) = (self.0 / 1000, self.0 % 1000);
        if thousandths == 0 {
            write!(f, "{whole}")
        } else {
            let fraction = format!("{thousandths:03}");
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

impl Serialize for Milliseconds {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

/// A number of milliseconds in TypeScript, as it is serialized.
#[cfg(test)]
impl ts_rs::TS for Milliseconds {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "number".to_owned()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

impl ParameterValue for Milliseconds {
    type Rule = RangeInclusive<Milliseconds>;
    fn kind(_: &Self::Rule) -> ParameterKind {
        ParameterKind::Decimal
    }
    fn allowed(range: &Self::Rule) -> String {
        format!(
            "a number of milliseconds {}..={} with at most 3 decimals, like 0.5",
            range.start(),
            range.end()
        )
    }
    fn parse(range: &Self::Rule, text: &str) -> Option<Self> {
        Milliseconds::from_query(text).filter(|ms| range.contains(ms))
    }
    fn to_query(&self) -> String {
        self.to_string()
    }
    fn bounds(range: &Self::Rule) -> Option<(f64, f64)> {
        Some((range.start().as_f64(), range.end().as_f64()))
    }
}

/// The rule of a text parameter.
pub enum Text {
    /// 1 to `max_len` characters from A-Z a-z 0-9 _ -.
    Name { max_len: usize },
    /// Non-empty, without whitespace or control characters.
    Url,
}

impl ParameterValue for String {
    type Rule = Text;
    fn kind(rule: &Text) -> ParameterKind {
        match rule {
            Text::Name { .. } => ParameterKind::Name,
            Text::Url => ParameterKind::Url,
        }
    }
    fn allowed(rule: &Text) -> String {
        match rule {
            Text::Name { max_len } => {
                format!("a name of 1 to {max_len} characters from A-Z a-z 0-9 _ -")
            }
            Text::Url => "a non-empty URL without whitespace or control characters".to_owned(),
        }
    }
    fn parse(rule: &Text, text: &str) -> Option<Self> {
        let valid = match rule {
            Text::Name { max_len } => {
                text.len() <= *max_len
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            }
            Text::Url => !text.chars().any(|c| c.is_whitespace() || c.is_control()),
        };
        (valid && !text.is_empty()).then(|| text.to_owned())
    }
    fn to_query(&self) -> String {
        self.clone()
    }
}
