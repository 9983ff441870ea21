//! Firefox's own memory reports (the figures of `about:memory`), as the runner reads them from
//! the gzipped JSON Firefox writes on request (`firefox_report_dump`): per process type, the
//! sums of a few named parts of each process's explicit allocations, and its resident size.
//!
//! The file is `{version, hasMozMallocUsableSize, reports: [{process, path, kind, units,
//! amount, description}]}`. `units` 0 is bytes; `kind` 1 a heap allocation. Paths under
//! `explicit/` are the leaves of a tree that adds up to a process's explicit allocations; other
//! top-level paths (`resident`, `heap-allocated`, `js-main-runtime/…`, …) are totals beside
//! that tree. The file holds no `explicit/heap-unclassified`: `about:memory` computes it as
//! `heap-allocated` less the explicit heap reports, and so does this file.

use std::collections::BTreeMap;
use std::io::Read;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::process_type::ProcessType;

/// The named parts of one process type's explicit allocations, in bytes, summed over its
/// processes. `rest` is `explicit` less every other part, so the parts add up to `explicit`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportParts {
    pub processes: u32,
    pub explicit: u64,
    pub heap_unclassified: u64,
    /// WebAssembly memories: the buffers of `WebAssembly.Memory` objects (onnxruntime's heap),
    /// reported as array buffer elements marked `wasm` (`…/non-heap/elements/wasm`, and
    /// `…/elements/wasm-shared` for a shared memory). The reserved address space
    /// (`wasm-guard-pages`, gigabytes) is outside `explicit` and not counted.
    pub wasm_memory: u64,
    /// Compiled WebAssembly code.
    pub wasm_code: u64,
    /// The JS engine's other allocations: `js-non-window`, the JS parts of windows and of
    /// workers, less the two WebAssembly parts.
    pub js: u64,
    /// Graphics and WebGPU: `explicit/gfx/…` and any path naming `webgpu`.
    pub gfx: u64,
    /// The rest of `explicit`: images, network, DOM, layout and everything else.
    pub rest: u64,
    /// `resident` where the process reports it (absent on some platforms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident: Option<u64>,
}

/// One report in the record (`processMemory.reports`): taken when the page entered
/// `at_phase` (or at `end`, once the page posted its result after release), its parts per
/// process type, or why there are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseReport {
    pub at_phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_type: Option<BTreeMap<ProcessType, ReportParts>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `at_phase` of the report taken once the page posted its result.
pub const AT_END: &str = "end";

/// One report as Firefox writes it.
#[derive(Deserialize)]
struct Entry {
    process: String,
    path: String,
    kind: u32,
    units: u32,
    amount: i64,
}

#[derive(Deserialize)]
struct File {
    reports: Vec<Entry>,
}

/// Bytes, as `units` says.
const UNITS_BYTES: u32 = 0;
/// A heap allocation, as `kind` says.
const KIND_HEAP: u32 = 1;

/// Reads a `unified-memory-report-*.json.gz` into its parts per process type.
pub fn parse_gz(gz: &[u8]) -> Result<BTreeMap<ProcessType, ReportParts>> {
    let mut json = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut json)
        .context("the memory report is not gzipped text")?;
    parse_json(&json)
}

/// Reads the JSON of a memory report into its parts per process type.
pub fn parse_json(json: &str) -> Result<BTreeMap<ProcessType, ReportParts>> {
    let file: File = serde_json::from_str(json).context(
        "the memory report is not Firefox's JSON ({reports: [{process, path, units, amount}]})",
    )?;
    let mut by_type: BTreeMap<ProcessType, ReportParts> = BTreeMap::new();
    let mut seen_processes: BTreeMap<ProcessType, std::collections::BTreeSet<String>> =
        BTreeMap::new();
    // Per process: `heap-allocated` and the explicit heap reports, for heap-unclassified.
    let mut heap: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for entry in file.reports.iter().filter(|e| e.units == UNITS_BYTES) {
        let kind = process_type(&entry.process);
        seen_processes
            .entry(kind)
            .or_default()
            .insert(entry.process.clone());
        let parts = by_type.entry(kind).or_default();
        let amount = entry.amount.max(0) as u64;
        match entry.path.as_str() {
            "resident" => *parts.resident.get_or_insert(0) += amount,
            "heap-allocated" => heap.entry(&entry.process).or_default().0 += amount,
            _ => {}
        }
        let Some(part) = explicit_part(&entry.path) else {
            continue;
        };
        if entry.kind == KIND_HEAP {
            heap.entry(&entry.process).or_default().1 += amount;
        }
        parts.explicit += amount;
        *match part {
            Named::WasmMemory => &mut parts.wasm_memory,
            Named::WasmCode => &mut parts.wasm_code,
            Named::Js => &mut parts.js,
            Named::Gfx => &mut parts.gfx,
            Named::Rest => &mut parts.rest,
        } += amount;
    }
    for (process, (allocated, claimed)) in heap {
        let unclassified = allocated.saturating_sub(claimed);
        let parts = by_type.entry(process_type(process)).or_default();
        parts.heap_unclassified += unclassified;
        parts.explicit += unclassified;
    }
    for (kind, names) in seen_processes {
        if let Some(parts) = by_type.get_mut(&kind) {
            parts.processes = names.len() as u32;
        }
    }
    Ok(by_type)
}

/// The part an explicit path belongs to; `None` for paths outside `explicit/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    WasmMemory,
    WasmCode,
    Js,
    Gfx,
    Rest,
}

fn explicit_part(path: &str) -> Option<Named> {
    let below = path.strip_prefix("explicit/")?;
    let segments: Vec<&str> = below.split('/').collect();
    let lower = below.to_ascii_lowercase();
    // `…/code/wasm` (a zone's or the runtime's compiled code) and wasm compilation.
    if segments.windows(2).any(|w| w == ["code", "wasm"]) {
        return Some(Named::WasmCode);
    }
    // Array buffer elements of WebAssembly memories: `…/elements/wasm` (and its guard pages
    // where they are reported apart).
    if segments
        .windows(2)
        .any(|w| w[0] == "elements" && w[1].starts_with("wasm"))
    {
        return Some(Named::WasmMemory);
    }
    if lower.contains("webgpu") || segments[0] == "gfx" {
        return Some(Named::Gfx);
    }
    let js = segments[0] == "js-non-window"
        || segments[0] == "workers"
        || segments.iter().any(|s| s.starts_with("js-"));
    Some(if js { Named::Js } else { Named::Rest })
}

/// The runner's process type of a Firefox process name ("Main Process (pid N)", "web (pid N)",
/// "webIsolated=https://… (pid N)", "RDD (pid N)", …): the parent is the browser; every
/// content process (web, isolated, prealloc, extension, privilegedabout, file) the renderer,
/// as `process_type::classify` types a `-contentproc … tab`; RDD, socket and utility
/// processes utilities; the GPU process the GPU.
pub fn process_type(process: &str) -> ProcessType {
    let name = process.split(" (pid").next().unwrap_or(process);
    let name = name.split('=').next().unwrap_or(name);
    match name {
        "Main Process" => ProcessType::Browser,
        "web" | "webIsolated" | "webCOOP+COEP" | "webServiceWorker" | "prealloc" | "extension"
        | "privilegedabout" | "privilegedmozilla" | "file" | "withCoopCoep" | "inference" => {
            ProcessType::Renderer
        }
        "GPU" => ProcessType::Gpu,
        "RDD" | "Socket" | "Utility" => ProcessType::Utility,
        _ => ProcessType::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Firefox ESR's report of an idle browser on `about:blank`, cut to a few processes and
    /// paths (`testdata/README.md` says how).
    const FIXTURE: &[u8] = include_bytes!("../../testdata/firefox-memory-report.json.gz");

    /// The parent's explicit heap (`kind` 1) reports kept in the fixture.
    const HEAP_CLAIMED_IN_PARENT: u64 = 116_471_680;

    #[test]
    fn the_fixture_splits_per_process_type_into_parts_that_add_up_to_explicit() {
        let by_type = parse_gz(FIXTURE).unwrap();
        let browser = &by_type[&ProcessType::Browser];
        assert_eq!(browser.processes, 1);
        assert!(browser.explicit > 0 && browser.heap_unclassified > 0 && browser.js > 0);
        // The fixture's `heap-allocated` of the parent less its explicit heap reports kept.
        assert_eq!(
            browser.heap_unclassified,
            192_926_064 - HEAP_CLAIMED_IN_PARENT
        );
        assert!(browser
            .resident
            .is_some_and(|r| r > browser.heap_unclassified));
        for parts in by_type.values() {
            let named = parts.heap_unclassified
                + parts.wasm_memory
                + parts.wasm_code
                + parts.js
                + parts.gfx
                + parts.rest;
            assert_eq!(named, parts.explicit);
        }
        // web and webIsolated content processes both count as the renderer.
        assert_eq!(by_type[&ProcessType::Renderer].processes, 2);
        assert!(by_type.contains_key(&ProcessType::Utility));
    }

    #[test]
    fn wasm_memories_code_js_and_gfx_are_told_apart() {
        let path = |p: &str| explicit_part(p);
        let zone = "explicit/window-objects/top(http://127.0.0.1/, id=1)/js-zone(0x1)";
        assert_eq!(
            path(&format!(
                "{zone}/classes/class(WebAssembly.Memory)/objects/non-heap/elements/wasm"
            )),
            Some(Named::WasmMemory)
        );
        // onnxruntime's threaded heap: a shared memory.
        assert_eq!(
            path(&format!(
                "{zone}/classes/class(<non-notable classes>)/objects/non-heap/elements/wasm-shared"
            )),
            Some(Named::WasmMemory)
        );
        assert_eq!(
            path(&format!(
                "{zone}/classes/class(ArrayBuffer)/objects/malloc-heap/elements/array-buffer"
            )),
            Some(Named::Js)
        );
        assert_eq!(path(&format!("{zone}/code/wasm")), Some(Named::WasmCode));
        assert_eq!(path(&format!("{zone}/gc-heap/objects")), Some(Named::Js));
        assert_eq!(
            path("explicit/js-non-window/runtime/atoms-table"),
            Some(Named::Js)
        );
        assert_eq!(path("explicit/gfx/heap-textures"), Some(Named::Gfx));
        assert_eq!(path("explicit/dom/webgpu/buffers"), Some(Named::Gfx));
        assert_eq!(path("explicit/images/content"), Some(Named::Rest));
        assert_eq!(path("resident"), None);
        assert_eq!(path("js-main-runtime/gc-heap"), None);
    }

    #[test]
    fn process_names_map_onto_the_runners_types() {
        assert_eq!(process_type("Main Process (pid 7)"), ProcessType::Browser);
        assert_eq!(
            process_type("webIsolated=https://mozilla.org (pid 8)"),
            ProcessType::Renderer
        );
        assert_eq!(
            process_type("Utility (pid 9, sandboxingKind 0)"),
            ProcessType::Utility
        );
        assert_eq!(process_type("GPU (pid 10)"), ProcessType::Gpu);
        assert_eq!(process_type("forkserver (pid 11)"), ProcessType::Other);
    }

    #[test]
    fn a_file_that_is_not_a_report_says_what_was_expected() {
        let err = parse_json("{\"version\": 1}").unwrap_err();
        assert!(format!("{err:#}").contains("reports"), "{err:#}");
        assert!(parse_gz(b"not gzip").is_err());
    }
}
