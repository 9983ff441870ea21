//! Checks of a result record against sources other than the page and the core: the query
//! parsed again, `models/manifest.json` and the evaluation set read from disk, the scoring
//! and the statistics recomputed with code written here. Nothing here calls the core's
//! scoring or summary code, so a bug there cannot hide itself.

#[path = "checks/cases.rs"]
mod cases;
#[path = "checks/configuration.rs"]
mod configuration;
#[path = "checks/sessions.rs"]
mod sessions;

use std::path::Path;

use ocr_bench_core::config::{Capture, Config, Memory, Profile, Schedule, Scope, Verify, Weights};
use serde_json::{json, Value};

pub use cases::*;
pub use configuration::*;
pub use sessions::*;

/// The text the seed's scoring compares, without an NFKC library: the runner's dependencies
/// have none, and the core's would not be independent. Each character either is left alone
/// by NFKC (listed ranges, checked against CPython's `unicodedata.normalize("NFKC", c) == c`
/// for every character in them), is a fullwidth ASCII form (U+FF01..=U+FF5E, whose NFKC is
/// the ASCII character 0xFEE0 below it, the `<wide>` decomposition), or is JS whitespace
/// NFKC keeps as whitespace (removed, as the seed's `replace(/\s+/g, "")` does). Any other
/// character is an error naming it, so a case is never scored by guesswork.
pub fn scoring_text(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let code = u32::from(c);
        match code {
            // ASCII whitespace; U+00A0 and U+3000 become U+0020 under NFKC.
            0x09..=0x0D | 0x20 | 0xA0 | 0x3000 => {}
            0x21..=0x7E => out.push(c),
            0xFF01..=0xFF5E => out.push(char::from_u32(code - 0xFEE0).expect("ASCII")),
            // CJK punctuation 、。〃々〆〇〈〉《》「」『』【】〒〓〔〕〖〗〘〙〚〛〜〝〞〟.
            0x3001..=0x301F
            // Hiragana (precomposed, so NFKC recomposes them to themselves) and ゝゞ.
            | 0x3041..=0x3096
            | 0x309D..=0x309E
            // Katakana, the middle dot, the prolonged sound mark and ヽヾ.
            | 0x30A1..=0x30FE
            // CJK Unified Ideographs, extension A and the main block.
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF => out.push(c),
            _ => {
                return Err(format!(
                    "U+{code:04X} {c:?} is outside the ranges this test normalises without an \
                     NFKC library (ASCII, fullwidth ASCII, CJK punctuation, kana, CJK ideographs)"
                ))
            }
        }
    }
    Ok(out)
}

/// Levenshtein distance over Unicode scalar values (insert, delete, substitute: 1 each),
/// one row at a time.
pub fn levenshtein(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut row: Vec<usize> = (0..=right.len()).collect();
    for (i, a) in left.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, b) in right.iter().enumerate() {
            let substitute = diagonal + usize::from(a != *b);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[right.len()]
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {value}"))
}

fn count(value: &Value, what: &str) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is not a non-negative integer: {value}"))
}

/// A number of milliseconds: a finite number, not null, not negative.
fn milliseconds(value: &Value, what: &str) -> f64 {
    let ms = value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"));
    assert!(ms.is_finite() && ms >= 0.0, "{what} is {ms}");
    ms
}

fn close(reported: f64, recomputed: f64, what: &str) {
    assert!(
        (reported - recomputed).abs() <= 1e-9 * recomputed.abs().max(1.0),
        "{what}: reported {reported}, recomputed {recomputed}"
    );
}

/// `reference` resolved against `base` as `new URL(reference, base)` does, for the forms a
/// manifest or its entries use: absolute, root-relative or path-relative (with `.`/`..`).
pub fn resolve_url(reference: &str, base: &str) -> String {
    if reference.contains("://") {
        return reference.to_owned();
    }
    let (scheme, rest) = base
        .split_once("://")
        .unwrap_or_else(|| panic!("base {base:?} is not an absolute URL"));
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if let Some(other) = reference.strip_prefix("//") {
        return format!("{scheme}://{other}");
    }
    let joined = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let directory = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        format!(
            "{}{reference}",
            if directory.is_empty() { "/" } else { directory }
        )
    };
    let mut segments: Vec<&str> = Vec::new();
    let pieces: Vec<&str> = joined.split('/').skip(1).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        match *piece {
            "." if last => segments.push(""),
            "." => {}
            ".." => {
                segments.pop();
                if last {
                    segments.push("");
                }
            }
            other => segments.push(other),
        }
    }
    format!("{scheme}://{authority}/{}", segments.join("/"))
}

/// The model files one manifest entry names for the chosen weights, as the page's
/// `modelEntry` must resolve them: `{ url }` or `{ url, external: { path, url } }`.
fn expected_model(entry: &Value, weights: Weights, manifest_url: &str, what: &str) -> Value {
    let file = |value: &Value| -> String {
        resolve_url(
            value
                .as_str()
                .unwrap_or_else(|| panic!("models/manifest.json: {what}: no file {value}")),
            manifest_url,
        )
    };
    match weights {
        Weights::Embedded => json!({ "url": file(&entry["embedded"]) }),
        Weights::External => {
            let data = file(&entry["external"]["data"]);
            json!({
                "url": file(&entry["external"]["model"]),
                "external": { "path": data.rsplit('/').next().unwrap(), "url": data },
            })
        }
    }
}

/// The file behind a URL the runner serves: its path under the repository root.
fn served_file(root: &Path, url: &str, origin: &str) -> std::path::PathBuf {
    let path = url
        .strip_prefix(origin)
        .unwrap_or_else(|| panic!("{url} is not on the page's origin {origin}"));
    root.join(path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits_over_characters() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("ありがとう", "あり"), 3);
        assert_eq!(levenshtein("", "ＯＫ"), 2);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
    }

    #[test]
    fn scoring_text_maps_fullwidth_and_drops_whitespace() {
        assert_eq!(scoring_text("ＯＫだよ！").unwrap(), "OKだよ!");
        assert_eq!(scoring_text(" 建設\u{3000}会社\n").unwrap(), "建設会社");
        assert!(scoring_text("①").is_err());
    }

    #[test]
    fn urls_resolve_as_the_page_resolves_them() {
        let page = "http://127.0.0.1:1/www/index.html?cases=smoke2";
        assert_eq!(
            resolve_url("/models/manifest.json", page),
            "http://127.0.0.1:1/models/manifest.json"
        );
        assert_eq!(
            resolve_url("../models/manifest.json", page),
            "http://127.0.0.1:1/models/manifest.json"
        );
        assert_eq!(
            resolve_url("generated/a.onnx", "http://h:2/models/manifest.json"),
            "http://h:2/models/generated/a.onnx"
        );
        assert_eq!(resolve_url("https://x/y", page), "https://x/y");
    }
}
