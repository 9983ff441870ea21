//! The floor of each phase: the bytes the model cannot do without, from the manifest the run
//! used. `docs/benchmark-protocol.md` ("The floor") defines it; in short, per phase, the
//! weights of the sessions alive in it (the manifest's file sizes for the chosen weights
//! layout), one KV cache where the decoder runs, and the largest single activation of the
//! graphs that run in it. One function of (manifest, config, phase): [`phase_floor`].

use std::collections::BTreeMap;
use std::path::Path;

pub use crate::memory_expected::{FloorAnswer, PhaseFloor, STARTUP_PHASE};
use ocr_bench_core::manifest::{Graph, Manifest};
use ocr_bench_core::phase::Phase;
use ocr_bench_core::Config;

/// fp32 keys and values.
const KV_BYTES_PER_VALUE: u64 = 4;

/// Which sessions are alive in `phase`, and which of them run there (their activation counts).
fn sessions(
    config: &Config,
    phase: &str,
) -> Option<(&'static [&'static str], &'static [&'static str])> {
    let scope = config.get("scope").ok()?;
    let schedule = config.get("schedule").ok()?;
    const NONE: &[&str] = &[];
    const V: &[&str] = &["vision"];
    const D: &[&str] = &["decoder"];
    const VD: &[&str] = &["vision", "decoder"];
    // The sampler's own `startup` comes before the page's first mark: no session yet.
    if phase == STARTUP_PHASE {
        return Some((NONE, NONE));
    }
    let phase: Phase = phase.parse().ok()?;
    use Phase::*;
    Some(match (scope.as_str(), schedule.as_str(), phase) {
        // The probe phase holds the harness's own devices, no session.
        (_, _, Baseline | Probe) => (NONE, NONE),
        ("decoder", _, DecoderLoad | Release) => (D, NONE),
        ("decoder", _, DecoderRun) => (D, D),
        ("decoder", _, _) => return None,
        (_, _, VisionLoad | VisionRelease) => (V, NONE),
        (_, _, VisionEncode) => (V, V),
        ("full", "staged", DecoderLoad | Release) => (D, NONE),
        ("full", "staged", DecoderRun) => (D, D),
        // Resident: the vision session stays loaded and encodes each case in decoder-run.
        (_, _, DecoderLoad | Release) => (VD, NONE),
        (_, _, DecoderRun) => (VD, VD),
    })
}

/// The phases of a run of `config`, in order.
fn phases(config: &Config) -> Vec<Phase> {
    use Phase::*;
    let decoder_only = config.get("scope").is_ok_and(|s| s == "decoder");
    let staged = config.get("schedule").is_ok_and(|s| s == "staged");
    // Every phase in the order `Phase::ALL` gives, less those the schedule skips.
    let skipped: &[Phase] = match (decoder_only, staged) {
        (true, _) => &[VisionLoad, VisionEncode, VisionRelease],
        (false, true) => &[],
        (false, false) => &[VisionEncode, VisionRelease],
    };
    Phase::ALL
        .into_iter()
        .filter(|phase| !skipped.contains(phase))
        .collect()
}

/// The floor of `phase` for a run of `config` on `manifest`; `None` for a phase the run's
/// schedule does not have; `Err` when the manifest lacks the config's entry.
pub fn phase_floor(
    manifest: &Manifest,
    config: &Config,
    phase: &str,
) -> Result<Option<PhaseFloor>, String> {
    let Some((alive, running)) = sessions(config, phase) else {
        return Ok(None);
    };
    let entry = |role: &str| -> Result<&Graph, String> {
        match role {
            "vision" => match manifest.vision_entry(config) {
                Ok(Some(vision)) => Ok(&vision.graph),
                Ok(None) => Err("scope=decoder runs no vision".to_owned()),
                Err(e) => Err(e.to_string()),
            },
            _ => manifest
                .decoder_entry(config)
                .map(|decoder| &decoder.graph)
                .map_err(|e| e.to_string()),
        }
    };
    let external = config.get("weights").is_ok_and(|w| w == "external");
    let mut weights_bytes = 0;
    for role in alive {
        let bytes = &entry(role)?.bytes;
        weights_bytes += if external {
            bytes.external_model + bytes.external_data
        } else {
            bytes.embedded
        };
    }
    let mut activation_bytes = 0;
    for role in running {
        activation_bytes = activation_bytes.max(entry(role)?.largest_activation.bytes);
    }
    let kv_cache_bytes = if running.contains(&"decoder") {
        let c = &manifest.capability;
        let max_tokens: u64 = config
            .get("maxTokens")
            .map_err(|e| e.to_string())?
            .parse()
            .map_err(|e| format!("maxTokens: {e}"))?;
        // A dynamic cache grows to the vision tokens, BOS and every decoded token but the
        // last; a fixed one is allocated whole.
        let fixed_kv = manifest
            .decoder_entry(config)
            .map_err(|e| e.to_string())?
            .fixed_kv;
        // An encoder-decoder's self-attention cache grows to every decoded token but the
        // last; its cross-attention cache holds the vision tokens with its own heads.
        let (slots, cross_slots) = match &manifest.encoder_decoder {
            Some(section) => (
                max_tokens,
                u64::from(c.vision_tokens) * u64::from(section.cross_attention_heads),
            ),
            None if fixed_kv => (u64::from(c.kv_slots), 0),
            None => (u64::from(c.vision_tokens) + max_tokens, 0),
        };
        2 * u64::from(c.shape.layers)
            * (u64::from(c.shape.kv_heads) * slots + cross_slots)
            * u64::from(c.head_dim)
            * KV_BYTES_PER_VALUE
    } else {
        0
    };
    Ok(Some(PhaseFloor {
        bytes: weights_bytes + kv_cache_bytes + activation_bytes,
        weights_bytes,
        kv_cache_bytes,
        activation_bytes,
        sessions: alive.iter().map(|s| (*s).to_owned()).collect(),
    }))
}

/// Every phase's floor of a run of `config`.
pub fn floor(manifest: &Manifest, config: &Config) -> Result<BTreeMap<String, PhaseFloor>, String> {
    let mut floors = BTreeMap::new();
    for phase in phases(config) {
        if let Some(floor) = phase_floor(manifest, config, phase.as_str())? {
            floors.insert(phase.as_str().to_owned(), floor);
        }
    }
    Ok(floors)
}

/// The floor of a run: the query's config (the one the page parses with the same core) on
/// the manifest it names, read from under the served root; or why there is none.
pub fn for_run(root: &Path, page: &str, query: &str) -> FloorAnswer {
    let config = match ocr_bench_core::parse_query(query) {
        Ok(config) => config,
        Err(e) => return FloorAnswer::unavailable(format!("the query: {e}")),
    };
    let (shown, manifest) = match crate::model_manifest::read(root, page, &config.manifest) {
        Ok(read) => read,
        Err(e) => return FloorAnswer::unavailable(e),
    };
    match floor(&manifest, &config) {
        Ok(phases) => FloorAnswer {
            available: true,
            reason: None,
            manifest: Some(shown),
            phases,
        },
        Err(e) => FloorAnswer::unavailable(format!("the manifest {shown}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .unwrap()
    }

    fn committed() -> Manifest {
        let text = std::fs::read_to_string(root().join("models/manifest.json")).unwrap();
        Manifest::parse(&text).unwrap()
    }

    fn config(query: &str) -> Config {
        ocr_bench_core::parse_query(query).unwrap()
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn staged_phases_hold_one_session_and_the_decoder_run_adds_a_cache_and_an_activation() {
        let manifest = committed();
        let config = config("cases=smoke2&maxTokens=2");
        let floors = floor(&manifest, &config).unwrap();
        let names: Vec<&str> = floors.keys().map(String::as_str).collect();
        assert_eq!(names.len(), 8, "{names:?}");
        let vision = &manifest.vision["121"];
        let decoder = &manifest.decoder["baseline"];
        assert_eq!(floors["baseline"].bytes, 0);
        // The probe phase runs before any session exists.
        assert_eq!(floors["probe"].bytes, 0);
        assert!(floors["probe"].sessions.is_empty());
        assert_eq!(floors["vision-load"].bytes, vision.graph.bytes.embedded);
        assert_eq!(
            floors["vision-encode"].bytes,
            vision.graph.bytes.embedded + vision.graph.largest_activation.bytes
        );
        assert_eq!(floors["decoder-load"].sessions, ["decoder"]);
        // 2 (k, v) x 6 layers x 2 KV heads x (256 vision + 2 tokens) slots x 64 x 4 bytes.
        let run = &floors["decoder-run"];
        assert_eq!(run.kv_cache_bytes, 2 * 6 * 2 * 258 * 64 * 4);
        assert_eq!(run.activation_bytes, 14630 * 512 * 4);
        assert_eq!(
            run.bytes,
            decoder.graph.bytes.embedded + run.kv_cache_bytes + run.activation_bytes
        );
        assert!(run.bytes > 50 * MIB && run.bytes < 60 * MIB, "{run:?}");
    }

    #[test]
    fn resident_external_fixed_kv_holds_both_and_the_whole_cache() {
        let manifest = committed();
        let config = config("schedule=resident&weights=external&decoder=fixed-kv&maxTokens=2");
        let floors = floor(&manifest, &config).unwrap();
        assert!(!floors.contains_key("vision-encode"));
        let (vision, decoder) = (&manifest.vision["121"], &manifest.decoder["fixed-kv"]);
        let weights = vision.graph.bytes.external_model
            + vision.graph.bytes.external_data
            + decoder.graph.bytes.external_model
            + decoder.graph.bytes.external_data;
        let run = &floors["decoder-run"];
        assert_eq!(run.sessions, ["vision", "decoder"]);
        assert_eq!(run.weights_bytes, weights);
        // Fixed: all 384 slots whatever maxTokens says.
        assert_eq!(run.kv_cache_bytes, 2 * 6 * 2 * 384 * 64 * 4);
        assert_eq!(floors["release"].weights_bytes, weights);
        // The decoder-only scope has no vision at all.
        let floors = floor(&manifest, &super::tests::config("scope=decoder")).unwrap();
        assert_eq!(
            floors.keys().collect::<Vec<_>>(),
            // By name, as the map orders them.
            [
                "baseline",
                "decoder-load",
                "decoder-run",
                "probe",
                "release"
            ]
        );
        assert_eq!(floors["probe"].bytes, 0);
        assert_eq!(floors["decoder-run"].sessions, ["decoder"]);
    }

    #[test]
    fn a_run_reads_the_manifest_it_names_under_the_root_or_says_why_not() {
        let answer = for_run(&root(), "www/index.html", "cases=smoke2");
        assert!(answer.available, "{answer:?}");
        assert_eq!(answer.manifest.as_deref(), Some("models/manifest.json"));
        let relative = for_run(
            &root(),
            "www/index.html",
            "manifest=../models/manifest.json",
        );
        assert_eq!(relative.phases, answer.phases);
        let missing = for_run(&root(), "www/index.html", "manifest=/models/none.json");
        assert!(!missing.available);
        assert!(
            missing
                .reason
                .as_deref()
                .unwrap()
                .contains("models/none.json"),
            "{missing:?}"
        );
        let json = serde_json::to_value(&answer).unwrap();
        assert_eq!(json["phases"]["decoder-run"]["sessions"][0], "decoder");
    }
}
