//! The TypeScript declarations of the values the wasm boundary passes that have a Rust type
//! (the `Config`, the result record, the manifest, the options and answers of `TokenChooser`
//! and `summarize`), generated from those types (ts-rs reads their serde attributes) into
//! `types.d.ts`, which the boundary crate (`wasm/src/lib.rs`) puts in the wasm package's
//! `.d.ts`. A test fails when the
//! committed file is not what the types generate;
//! `OCR_BENCH_WRITE_TYPES=1 cargo test -p ocr-bench-core typescript` writes it again.

use std::any::TypeId;
use std::collections::BTreeSet;

use ts_rs::TS;

use crate::build_summary::{CaseRun, CompletionFloors, PoolInput, SummaryInput};
use crate::choose::ChooserOptions;
use crate::config::{
    Capture, Choose, Config, Loader, Memory, OrtVersion, ParameterDescription, ParameterKind, Poll,
    Profile, Realm, Release, Schedule, Scope, Verify, Weights,
};
use crate::hf_tokenizer::TokenizerModel;
use crate::latency::{CompletionCheck, LatencyStats, MeanInterval};
use crate::manifest::{
    Activation, Capability as ManifestCapability, DecoderEntry, EncoderDecoder, ExternalFiles,
    Family, FileBytes, Generation, Graph, Initializer, Limits, Manifest, ModelShape, Tokens,
    VisionEntry,
};
use crate::per_style::StyleSummary;
use crate::pil_resize::Filter as PilFilter;
use crate::record::*;
use crate::special_ids::SpecialIds;
use crate::summary::{CaseInput, CaseSummary, Summary, SummaryOptions};
use crate::verification::{VerificationInput, VerifyCaseInput};
use crate::vit_processor::VitSettings;

const COMMITTED: &str = include_str!("types.d.ts");

/// The declared types, in the file's order: the configuration, what the page passes in, what
/// the core returns. A type one of them uses must be here too (a test checks).
macro_rules! declared {
    ($($ty:ty),+ $(,)?) => {
        /// Each type's TypeId and its `export type` declaration.
        fn declarations(cfg: &ts_rs::Config) -> Vec<(TypeId, String)> {
            vec![$((TypeId::of::<$ty>(), declaration::<$ty>(cfg))),+]
        }

        /// Every type a declared type refers to.
        fn dependencies(cfg: &ts_rs::Config) -> Vec<(TypeId, String)> {
            let mut found = Vec::new();
            $(found.extend(
                <$ty as TS>::dependencies(cfg).into_iter().map(|d| (d.type_id, d.ts_name)),
            );)+
            found
        }
    };
}

declared!(
    Memory,
    Loader,
    Schedule,
    Scope,
    Weights,
    Poll,
    Profile,
    Choose,
    Verify,
    Capture,
    Realm,
    OrtVersion,
    Release,
    Config,
    ParameterDescription,
    ParameterKind,
    // The manifest, as checkManifest returns it.
    Manifest,
    Family,
    EncoderDecoder,
    Generation,
    Tokens,
    ManifestCapability,
    ModelShape,
    VisionEntry,
    DecoderEntry,
    Graph,
    ExternalFiles,
    FileBytes,
    Activation,
    Initializer,
    Limits,
    // The settings of a ViT-family preprocessor_config.json, as VitImageProcessor reads them.
    VitSettings,
    PilFilter,
    // What HfTokenizer and specialIds read from a Hugging Face export's tokenizer and configs.
    TokenizerModel,
    SpecialIds,
    // The options and the answer of the TokenChooser and of summarize.
    ChooserOptions,
    CaseInput,
    SummaryOptions,
    CaseSummary,
    Summary,
    // The page's input to caseResult and buildSummary.
    CaseRun,
    CaseProbe,
    SummaryInput,
    VerificationInput,
    PoolInput,
    VerifyCaseInput,
    CompletionFloors,
    // The record.
    PageSummary,
    CaseResult,
    Capability,
    ManifestUse,
    StyleSummary,
    Environment,
    LimitFallback,
    PoolRun,
    MemorySample,
    GpuBytes,
    WasmHeap,
    RealmMemory,
    GpuMemorySummary,
    LeakCheck,
    LiveAfterCase,
    SessionRecord,
    LoadedFile,
    ExternalDataFile,
    SessionOptionsUsed,
    PollSetting,
    FloorRounds,
    FloorSource,
    FloorOrigin,
    ProbeKey,
    RunnerProbeKey,
    ProbeAdapter,
    CachedFloor,
    ProbeOffer,
    CompletionFloor,
    Completion,
    CompletionCheck,
    LatencyStats,
    MeanInterval,
    RunProbe,
    Repeats,
    RepeatFigures,
    RepeatIntervals,
    PipelineCompilation,
    FirstRun,
    SteadyState,
    CaseDispatches,
    DispatchMedians,
    Verification,
    VerificationTolerance,
    VerifiedCase,
);

/// u64 and i64 are JSON numbers here (byte counts, token ids), not BigInts.
fn config() -> ts_rs::Config {
    ts_rs::Config::new().with_large_int("number")
}

/// `export type NAME = ...;` with the type's doc comment above it.
fn declaration<T: TS + 'static>(cfg: &ts_rs::Config) -> String {
    let docs = T::docs().map(|d| doc_comment(&d, "")).unwrap_or_default();
    format!("{docs}export {}", layout(&T::decl(cfg)))
}

/// ts-rs writes an object type on one line (`type X = { a: A, /** doc */ b?: B, };`); here
/// each field gets a line of its own, so the file reads and diffs line by line.
fn layout(decl: &str) -> String {
    let Some((head, body)) = decl.split_once("= {") else {
        return decl.to_owned();
    };
    let body = body
        .trim_end()
        .strip_suffix("};")
        .unwrap_or_else(|| panic!("an object type ends in `}};`: {decl}"));
    let mut text = format!("{head}= {{\n");
    for field in top_level_fields(body) {
        let mut field = field.trim();
        if let Some(rest) = field.strip_prefix("/**") {
            let (doc, after) = rest.split_once("*/").expect("a doc comment ends");
            text.push_str(&doc_comment(&format!("/**{doc}*/"), "    "));
            field = after.trim();
        }
        text.push_str(&format!("    {field};\n"));
    }
    text.push_str("};");
    text
}

/// The fields of an object type's body: split at its own commas, not at those inside a
/// nested type, a string or a comment.
fn top_level_fields(body: &str) -> Vec<&str> {
    let (mut fields, mut start, mut depth) = (Vec::new(), 0, 0i32);
    let (mut in_comment, mut in_string) = (false, false);
    let bytes = body.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if in_comment {
            in_comment = !(b == b'/' && i > 0 && bytes[i - 1] == b'*');
        } else if in_string {
            in_string = b != b'"';
        } else {
            match b {
                b'/' if bytes.get(i + 1) == Some(&b'*') => in_comment = true,
                b'"' => in_string = true,
                b'{' | b'[' | b'(' | b'<' => depth += 1,
                b'}' | b']' | b')' | b'>' => depth -= 1,
                b',' if depth == 0 => {
                    fields.push(&body[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
    }
    fields.push(&body[start..]);
    fields.retain(|f| !f.trim().is_empty());
    fields
}

/// A `/** ... */` comment at `indent`: on one line when its text is one line.
fn doc_comment(comment: &str, indent: &str) -> String {
    let inner = comment
        .trim()
        .trim_start_matches("/**")
        .trim_end_matches("*/");
    let lines: Vec<&str> = inner
        .lines()
        .map(|line| line.trim().trim_start_matches('*').trim())
        .collect();
    let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
    let last = lines.iter().rposition(|l| !l.is_empty()).unwrap_or(0);
    let lines = &lines[first..=last];
    if let [line] = lines {
        return format!("{indent}/** {line} */\n");
    }
    let mut text = format!("{indent}/**\n");
    for line in lines {
        text.push_str(format!("{indent} * {line}").trim_end());
        text.push('\n');
    }
    text.push_str(&format!("{indent} */\n"));
    text
}

fn generated() -> String {
    let mut text = String::from(
        "// Generated from the Rust types by crate/src/typescript.rs; do not edit. After changing\n\
         // a type: OCR_BENCH_WRITE_TYPES=1 cargo test -p ocr-bench-core typescript\n",
    );
    for (_, declaration) in declarations(&config()) {
        text.push('\n');
        text.push_str(&declaration);
        text.push('\n');
    }
    text
}

#[test]
fn the_committed_declarations_are_what_the_types_generate() {
    let generated = generated();
    if std::env::var_os("OCR_BENCH_WRITE_TYPES").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/types.d.ts");
        std::fs::write(path, &generated).unwrap();
        return;
    }
    let differs = COMMITTED
        .lines()
        .zip(generated.lines())
        .position(|(committed, generated)| committed != generated)
        .or((COMMITTED.lines().count() != generated.lines().count())
            .then(|| COMMITTED.lines().count().min(generated.lines().count())));
    if let Some(index) = differs {
        panic!(
            "crate/src/types.d.ts is not what the Rust types generate; write it again with \
             OCR_BENCH_WRITE_TYPES=1 cargo test -p ocr-bench-core typescript\n\
             line {}: committed {:?}, generated {:?}",
            index + 1,
            COMMITTED.lines().nth(index).unwrap_or("(end of file)"),
            generated.lines().nth(index).unwrap_or("(end of file)"),
        );
    }
}

#[test]
fn no_two_declared_types_share_a_name() {
    let mut seen = BTreeSet::new();
    for (_, declaration) in declarations(&config()) {
        let name = declaration
            .split("export type ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("a declaration names its type")
            .to_owned();
        assert!(
            seen.insert(name.clone()),
            "two Rust types are declared as `{name}`: give one a `ts(rename = ...)`"
        );
    }
}

#[test]
fn every_type_a_declaration_uses_is_declared() {
    let cfg = config();
    let declared: BTreeSet<TypeId> = declarations(&cfg).into_iter().map(|(id, _)| id).collect();
    let missing: BTreeSet<String> = dependencies(&cfg)
        .into_iter()
        .filter(|(id, _)| !declared.contains(id))
        .map(|(_, name)| name)
        .collect();
    assert!(
        missing.is_empty(),
        "add to typescript.rs's declared list: {missing:?}"
    );
}
