//! The phases of a page run, in order: the names the page marks (`www/main.js`,
//! `www/schedules.js`), the runner's server accepts, and the memory floor, the GPU-bytes model,
//! the report and `export` read. Records hold them as their kebab-case strings.
//!
//! The runner's sampler also has a phase of its own before the page's first mark, `startup`
//! (`runner/src/memory.rs`). It is not a [`Phase`]: the page never marks it, so the server
//! must refuse it at the mark endpoint, and it names the time the browser starts rather than
//! a step of the page's schedule. Records hold it beside these names as a plain string.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Baseline,
    Probe,
    VisionLoad,
    VisionEncode,
    VisionRelease,
    DecoderLoad,
    DecoderRun,
    Release,
}

/// The steps the release phase marks within itself, in the order a run takes them
/// (`docs/benchmark-protocol.md`, "Release"): after letting go of the sessions, of the WebGPU
/// devices, of the realms that held the decoder, and of everything (the last step of every
/// `release` mode). The runner samples process memory at each.
pub const RELEASE_STEPS: [&str; 4] = ["sessions", "device", "realm", "all"];

/// A name that is no phase; the message lists the phases.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown phase {name:?}; the phases are: {}", Phase::allowed())]
pub struct UnknownPhase {
    pub name: String,
}

impl Phase {
    /// Every phase, in the order of a run (a schedule may skip some).
    pub const ALL: [Phase; 8] = [
        Phase::Baseline,
        Phase::Probe,
        Phase::VisionLoad,
        Phase::VisionEncode,
        Phase::VisionRelease,
        Phase::DecoderLoad,
        Phase::DecoderRun,
        Phase::Release,
    ];

    /// The name records and the page use.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Baseline => "baseline",
            Phase::Probe => "probe",
            Phase::VisionLoad => "vision-load",
            Phase::VisionEncode => "vision-encode",
            Phase::VisionRelease => "vision-release",
            Phase::DecoderLoad => "decoder-load",
            Phase::DecoderRun => "decoder-run",
            Phase::Release => "release",
        }
    }

    /// The names of every phase, in order, comma-separated.
    pub fn allowed() -> String {
        Phase::ALL.map(Phase::as_str).join(", ")
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Phase {
    type Err = UnknownPhase;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Phase::ALL
            .into_iter()
            .find(|phase| phase.as_str() == name)
            .ok_or_else(|| UnknownPhase {
                name: name.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_serdes_and_parse_back() {
        for phase in Phase::ALL {
            let json = serde_json::to_string(&phase).unwrap();
            assert_eq!(json, format!("\"{}\"", phase.as_str()));
            assert_eq!(serde_json::from_str::<Phase>(&json).unwrap(), phase);
            assert_eq!(phase.as_str().parse::<Phase>().unwrap(), phase);
            assert_eq!(phase.to_string(), phase.as_str());
        }
    }

    #[test]
    fn the_order_is_the_runs() {
        let mut sorted = Phase::ALL;
        sorted.sort();
        assert_eq!(sorted, Phase::ALL);
        assert_eq!(Phase::ALL[0], Phase::Baseline);
        assert_eq!(Phase::ALL[7], Phase::Release);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_phases() {
        let message = "startup".parse::<Phase>().unwrap_err().to_string();
        assert_eq!(
            message,
            "unknown phase \"startup\"; the phases are: baseline, probe, vision-load, \
             vision-encode, vision-release, decoder-load, decoder-run, release"
        );
    }
}
