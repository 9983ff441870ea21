//! Bad bytes made from good ones, for the property tests of the readers and the server: real
//! records of the committed results files, cut, with bytes flipped, fields retyped or
//! removed, numbers at the edge of what JSON and `f64` hold, nesting deeper than serde_json
//! reads, and text spliced in.

use proptest::prelude::*;
use serde_json::{json, Value};

/// The committed results files the mutations start from: today's layout, an older one,
/// another page's result, a failed verification, and Firefox's memory reports.
pub const FILES: [&str; 5] = [
    include_str!("../data/smoke2.jsonl"),
    include_str!("../data/legacy-smoke2.jsonl"),
    include_str!("../data/other-page.jsonl"),
    include_str!("../data/verify-failed-smoke2.jsonl"),
    include_str!("../data/firefox-memory-reports-smoke1.jsonl"),
];

/// Every non-blank line of [`FILES`]: each a real record.
pub fn real_lines() -> Vec<&'static str> {
    FILES
        .iter()
        .flat_map(|file| file.lines())
        .filter(|line| !line.trim().is_empty())
        .collect()
}

/// Words the readers and the server look for, so that a mutation reaches past the first
/// check: record kinds, a run id, the page, browsers, phases, steps.
const WORDS: [&str; 16] = [
    "",
    "start",
    "mark",
    "progress",
    "error",
    "result",
    "run",
    "refused",
    "r1",
    "www/index.html",
    "chromium",
    "firefox",
    "baseline",
    "release",
    "sessions",
    "local",
];

/// A value nested `depth` arrays deep (serde_json reads 128 at most).
pub fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| Value::Array(vec![inner]))
}

/// A value put in place of a field: another type, a number at an edge, a word the readers
/// look for, any short text, or deep nesting.
pub fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        prop::sample::select(vec![1e308, -1e308, 5e-324, -0.0, 0.5, 4_294_967_296.0])
            .prop_map(Value::from),
        prop::sample::select(WORDS.to_vec()).prop_map(Value::from),
        ".{0,40}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        (100usize..200).prop_map(nested),
    ]
}

/// Text spliced into a line: numbers JSON allows but `f64` and `u64` do not hold, escapes of
/// no character, and the brackets and quotes that end or open a value.
const SPLICES: [&str; 12] = [
    "1e400",
    "-1e400",
    "99999999999999999999999",
    "\"\\ud800\"",
    "\\u0000",
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\n",
];

/// One change to a record: in its tree (the node counted in document order, modulo the
/// count) or in its text (the position modulo the length).
#[derive(Debug, Clone)]
pub enum Mutation {
    Replace(usize, Value),
    RemoveField(usize, usize),
    Truncate(usize),
    Flip(usize, u8),
    Splice(usize, &'static str),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), odd_value()).prop_map(|(node, value)| Mutation::Replace(node, value)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(node, key)| Mutation::RemoveField(node, key)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), 1u8..).prop_map(|(at, mask)| Mutation::Flip(at, mask)),
        1 => (any::<usize>(), prop::sample::select(SPLICES.to_vec()))
            .prop_map(|(at, text)| Mutation::Splice(at, text)),
    ]
}

fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Calls `change` on the node `*index` counts down to, in document order.
fn at_node(value: &mut Value, index: &mut usize, change: &mut dyn FnMut(&mut Value)) -> bool {
    if *index == 0 {
        change(value);
        return true;
    }
    *index -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|item| at_node(item, index, change)),
        Value::Object(map) => map.values_mut().any(|item| at_node(item, index, change)),
        _ => false,
    }
}

/// The text at `at` (modulo its length) moved back to a character boundary.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `line` with `mutations` applied: the tree's first, then the text's.
pub fn apply(line: &str, mutations: &[Mutation]) -> String {
    let mut value: Value = serde_json::from_str(line).expect("a committed record is JSON");
    for mutation in mutations {
        let mut index = match mutation {
            Mutation::Replace(node, _) | Mutation::RemoveField(node, _) => {
                node % count_nodes(&value)
            }
            _ => continue,
        };
        at_node(&mut value, &mut index, &mut |node| match mutation {
            Mutation::Replace(_, with) => *node = with.clone(),
            Mutation::RemoveField(_, key) => {
                if let Value::Object(map) = node {
                    if !map.is_empty() {
                        let name = map.keys().nth(key % map.len()).cloned();
                        if let Some(name) = name {
                            map.shift_remove(&name);
                        }
                    }
                }
            }
            _ => {}
        });
    }
    let mut bytes = serde_json::to_string(&value).unwrap().into_bytes();
    for mutation in mutations {
        match mutation {
            Mutation::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
            Mutation::Flip(at, mask) if !bytes.is_empty() => {
                let at = at % bytes.len();
                bytes[at] ^= mask;
            }
            Mutation::Splice(at, text) => {
                let lossy = String::from_utf8_lossy(&bytes).into_owned();
                let at = boundary(&lossy, *at);
                bytes = format!("{}{text}{}", &lossy[..at], &lossy[at..]).into_bytes();
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A real record with up to three mutations (none: the record as committed).
pub fn mutated_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(real_lines()),
        prop::collection::vec(mutation(), 0..4),
    )
        .prop_map(|(line, mutations)| apply(line, &mutations))
}

/// A whole file: real lines, mutated lines and arbitrary bytes, in any order.
pub fn mutated_file() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        2 => prop::sample::select(real_lines()).prop_map(str::to_owned),
        4 => mutated_line(),
        1 => prop::collection::vec(any::<u8>(), 0..200)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ];
    prop::collection::vec(line, 0..16).prop_map(|lines| lines.join("\n"))
}

/// A fixed number of cases, whatever `PROPTEST_CASES` says, so that the suite's time is
/// known; no regression files are written (a failing input becomes a plain test).
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
