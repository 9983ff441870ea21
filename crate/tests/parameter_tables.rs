//! The parameter tables a reader sees (`README.md`, "Parameters"; `docs/benchmark-protocol.md`,
//! "Page parameters") against the core's `parameters()`, which the page and the runner parse
//! with: the same names in the same order, each choice's values, each number's bounds and
//! every default.

use std::path::Path;

use ocr_bench_core::config::{parameters, ParameterDescription, ParameterKind};

/// One row of a parameter table: its name, values and default cells, backquotes kept.
struct Row {
    name: String,
    values: String,
    default: String,
}

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of the first `| parameter | values | default |` table after `heading`.
fn table_after(markdown: &str, heading: &str, file: &str) -> Vec<Row> {
    let lines: Vec<&str> = markdown.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("{file} has no heading {heading:?}"));
    let header = lines[at..]
        .iter()
        .position(|l| l.starts_with("| parameter | values | default |"))
        .map(|i| at + i)
        .unwrap_or_else(|| panic!("{file} has no parameter table after {heading:?}"));
    lines[header + 2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert!(cells.len() >= 3, "{file}: a row without three cells: {l}");
            Row {
                name: unquote(cells[0]),
                values: cells[1].to_owned(),
                default: unquote(cells[2]),
            }
        })
        .collect()
}

fn unquote(cell: &str) -> String {
    cell.trim_matches('`').to_owned()
}

/// The backquoted words of a cell, in order.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The bounds written `a..b` or `a..=b` in a cell.
fn bounds(cell: &str) -> Option<(f64, f64)> {
    let (before, after) = cell.split_once("..")?;
    let number = |s: &str| s.parse::<f64>().ok();
    let low: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let high: String = after
        .trim_start_matches('=')
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Some((number(&low)?, number(high.trim_end_matches('.'))?))
}

fn check(file: &str, heading: &str) {
    let rows = table_after(&read(file), heading, file);
    let params = parameters();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let expected: Vec<&str> = params.iter().map(|p| p.name).collect();
    assert_eq!(
        names, expected,
        "{file}: the table's parameters against parameters()"
    );
    for (row, param) in rows.iter().zip(&params) {
        check_row(file, row, param);
    }
}

fn check_row(file: &str, row: &Row, param: &ParameterDescription) {
    let name = param.name;
    assert_eq!(
        row.default, param.default,
        "{file}: the default of `{name}`"
    );
    match param.kind {
        ParameterKind::Choice => assert_eq!(
            quoted(&row.values),
            param.values,
            "{file}: the values of `{name}`"
        ),
        ParameterKind::Integer | ParameterKind::Decimal => assert_eq!(
            bounds(&row.values),
            param.min.zip(param.max),
            "{file}: the range of `{name}` ({:?})",
            row.values
        ),
        // Free text under a rule the table says in words.
        ParameterKind::Name | ParameterKind::Url => {}
    }
}

#[test]
fn the_readme_table_is_the_cores_parameters() {
    check("README.md", "## Parameters (the page's query string)");
}

#[test]
fn the_protocol_table_is_the_cores_parameters() {
    check("docs/benchmark-protocol.md", "## Page parameters");
}

#[test]
fn bounds_are_read_in_either_spelling() {
    assert_eq!(bounds("1..128"), Some((1.0, 128.0)));
    assert_eq!(
        bounds("an integer 1..=128, digits only"),
        Some((1.0, 128.0))
    );
    assert_eq!(
        bounds("a number of milliseconds 0.05..=100, at most 3 decimals"),
        Some((0.05, 100.0))
    );
    assert_eq!(bounds("`cpu`, `gpu`"), None);
}
