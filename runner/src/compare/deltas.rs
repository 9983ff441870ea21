//! The timing and memory figures of a run, their run-to-run spread, and B−A and B/A of two
//! runs with a verdict: beyond the spread, within it, or no spread known.
//!
//! A side's spread of a figure is the width of its 95 % interval over the run's repeats
//! (`repeat=N`, N ≥ 2: the summary's `repeats.interval`), else the range of the figure over
//! the finished runs of the same configuration (browser and query) in its file, when it has
//! two or more. A difference is beyond the spread when it is larger than the wider of the two
//! sides' spreads.

use std::fmt::Write;

use ocr_bench_core::latency::MeanInterval;
use ocr_bench_core::record::PageSummary;

use crate::memory::ProcessMemory;
use crate::units::mib_with_unit;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    Bytes,
}

impl Unit {
    fn show(self, value: f64) -> String {
        match self {
            Unit::Ms => format!("{value:.2} ms"),
            Unit::Bytes => mib_with_unit(value, 1),
        }
    }
}

/// One figure of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub unit: Unit,
    pub value: f64,
}

/// How far a figure moves from run to run, and what says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub width: f64,
    /// `95% interval of 3 repeats`, `range of 2 runs of this configuration in a.jsonl`.
    pub source: String,
}

/// The figures compared: per-token p50, first token p50, median case, ms per decode step,
/// peak PSS per phase, peak GPU bytes per realm. Absent figures are left out.
pub fn figures(summary: &PageSummary, memory: Option<&ProcessMemory>) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut push = |name: String, unit: Unit, value: Option<f64>| {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            out.push(Figure { name, unit, value });
        }
    };
    let probe = &summary.decode_probe;
    push(
        "per-token p50".into(),
        Unit::Ms,
        probe.token_latency.as_ref().map(|s| s.p50_ms),
    );
    push("ms per decode step".into(), Unit::Ms, summary.ms_per_token);
    push(
        "first token p50".into(),
        Unit::Ms,
        probe.time_to_first_token.as_ref().map(|s| s.p50_ms),
    );
    push("median case".into(), Unit::Ms, summary.median_ms);
    for (phase, figures) in memory.map(|m| m.phases.as_slice()).unwrap_or_default() {
        push(
            format!("peak PSS {phase}"),
            Unit::Bytes,
            figures.total.peak_pss.map(|b| b as f64),
        );
    }
    let gpu = summary.gpu_memory.as_ref();
    for (realm, bytes) in [
        ("page", gpu.and_then(|g| g.page.as_ref())),
        ("vision worker", gpu.and_then(|g| g.worker.as_ref())),
        (
            "decoder worker",
            gpu.and_then(|g| g.decoder_worker.as_ref()),
        ),
    ] {
        push(
            format!("peak GPU bytes, {realm}"),
            Unit::Bytes,
            bytes.map(|b| b.peak_bytes as f64),
        );
    }
    out
}

/// The repeats' interval of a figure, where the summary has one for it.
fn repeat_interval<'a>(summary: &'a PageSummary, name: &str) -> Option<&'a MeanInterval> {
    let interval = &summary.repeats.interval;
    match name {
        "per-token p50" => interval.token_p50_ms.as_ref(),
        "first token p50" => interval.time_to_first_token_p50_ms.as_ref(),
        "median case" => interval.case_p50_ms.as_ref(),
        "ms per decode step" => interval.ms_per_token.as_ref(),
        _ => None,
    }
}

/// The spread of each of `own`'s figures: from the run's repeats, else from `peers` (the
/// figures of every finished run of the same configuration in the file, this one included).
pub fn spreads(
    summary: &PageSummary,
    own: &[Figure],
    peers: &[Vec<Figure>],
    file: &str,
) -> Vec<(String, Spread)> {
    let mut out = Vec::new();
    for figure in own {
        let from_repeats = repeat_interval(summary, &figure.name).and_then(|i| {
            let (low, high) = (i.ci95_low?, i.ci95_high?);
            Some(Spread {
                width: high - low,
                source: format!("95% interval of {} repeats", i.n),
            })
        });
        let values: Vec<f64> = peers
            .iter()
            .filter_map(|p| p.iter().find(|f| f.name == figure.name).map(|f| f.value))
            .collect();
        let from_runs = (values.len() >= 2).then(|| {
            let max = values.iter().copied().fold(f64::MIN, f64::max);
            let min = values.iter().copied().fold(f64::MAX, f64::min);
            Spread {
                width: max - min,
                source: format!(
                    "range of {} runs of this configuration in {file}",
                    values.len()
                ),
            }
        });
        if let Some(spread) = from_repeats.or(from_runs) {
            out.push((figure.name.clone(), spread));
        }
    }
    out
}

/// Whether a difference stands out from the run-to-run spread.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Beyond(Spread),
    Within(Spread),
    NoSpreadKnown,
}

/// B−A against the wider of the two sides' spreads.
pub fn verdict(difference: f64, a: Option<&Spread>, b: Option<&Spread>) -> Verdict {
    let wider = match (a, b) {
        (Some(a), Some(b)) => Some(if b.width > a.width { b } else { a }),
        (a, b) => a.or(b),
    };
    match wider {
        None => Verdict::NoSpreadKnown,
        Some(spread) if difference.abs() > spread.width => Verdict::Beyond(spread.clone()),
        Some(spread) => Verdict::Within(spread.clone()),
    }
}

/// A side's figures and their spreads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    pub figures: Vec<Figure>,
    pub spreads: Vec<(String, Spread)>,
}

impl Measured {
    fn spread(&self, name: &str) -> Option<&Spread> {
        self.spreads.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

/// One line per figure both sides have: A, B, B/A, B−A and the verdict, in A's order.
pub fn render(out: &mut String, a: &Measured, b: &Measured) {
    for fa in &a.figures {
        let Some(fb) = b.figures.iter().find(|f| f.name == fa.name) else {
            continue;
        };
        let (x, y) = (fa.value, fb.value);
        let ratio = if x > 0.0 {
            format!("{:.3}", y / x)
        } else {
            "-".to_owned()
        };
        let difference = y - x;
        let sign = if difference >= 0.0 { "+" } else { "-" };
        let delta = format!("{sign}{}", fa.unit.show(difference.abs()));
        let verdict = match verdict(difference, a.spread(&fa.name), b.spread(&fa.name)) {
            Verdict::Beyond(s) => format!(
                "beyond the spread ({}, {})",
                fa.unit.show(s.width),
                s.source
            ),
            Verdict::Within(s) => format!(
                "within the spread ({}, {})",
                fa.unit.show(s.width),
                s.source
            ),
            Verdict::NoSpreadKnown => "no spread known".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}: A {}, B {}, B/A {ratio}, B−A {delta}: {verdict}",
            fa.name,
            fa.unit.show(x),
            fa.unit.show(y)
        );
    }
}
