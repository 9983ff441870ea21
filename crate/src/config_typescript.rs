//! Checks the TypeScript `Config` that `lib.rs` declares for the page against the core's
//! parameter table: the same fields in the same order, `?` exactly on the fields the JSON form
//! leaves out at their default, and each choice's union of the same values.

use crate::config::{parameters, ParameterKind, OMITTED_AT_DEFAULT};

/// `lib.rs`'s `TYPES` section, read from the source: wasm-bindgen keeps the constant only in
/// the wasm build's custom section.
fn types() -> &'static str {
    let source = include_str!("lib.rs");
    let start = source
        .find("const TYPES: &'static str = r#\"")
        .expect("lib.rs has its TYPES section");
    let body = &source[start..];
    let open = body.find('"').unwrap() + 1;
    &body[open..body.find("\"#;").unwrap()]
}

/// The body of `export interface NAME { ... }` in `source`.
fn interface_body<'a>(source: &'a str, name: &str) -> &'a str {
    let start = source
        .find(&format!("export interface {name} {{"))
        .unwrap_or_else(|| panic!("lib.rs declares no interface {name}"));
    let body = &source[start..];
    let open = body.find('{').unwrap() + 1;
    let close = body.find("\n}").unwrap();
    &body[open..close]
}

/// The string literals of `export type NAME = "a" | "b";`.
fn union_values(source: &str, name: &str) -> Vec<String> {
    let line = source
        .lines()
        .find(|l| l.starts_with(&format!("export type {name} = ")))
        .unwrap_or_else(|| panic!("lib.rs declares no type {name}"));
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_typescript_config_has_every_parameter_with_its_values() {
    let fields: Vec<(String, bool, String)> = interface_body(types(), "Config")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("/**") && !l.starts_with('*'))
        .map(|l| {
            let (name, ty) = l.trim_end_matches(';').split_once(':').unwrap();
            let optional = name.ends_with('?');
            (
                name.trim_end_matches('?').to_owned(),
                optional,
                ty.trim().to_owned(),
            )
        })
        .collect();
    let params = parameters();
    let names: Vec<&str> = fields.iter().map(|(n, _, _)| n.as_str()).collect();
    let expected: Vec<&str> = params.iter().map(|p| p.name).collect();
    assert_eq!(names, expected, "the TypeScript Config's fields");
    for ((name, optional, ty), param) in fields.iter().zip(&params) {
        assert_eq!(
            *optional,
            OMITTED_AT_DEFAULT.contains(&param.name),
            "`{name}` is optional in TypeScript exactly when the JSON form leaves it out at its default"
        );
        match param.kind {
            ParameterKind::Choice => {
                assert_eq!(
                    union_values(types(), ty),
                    param.values,
                    "the values of `{name}` ({ty})"
                )
            }
            ParameterKind::Integer | ParameterKind::Decimal => assert_eq!(ty, "number", "`{name}`"),
            ParameterKind::Name | ParameterKind::Url => assert_eq!(ty, "string", "`{name}`"),
        }
    }
}
