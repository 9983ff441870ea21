//! The run summary's accuracy and timing figures, with the seed's field names.
//!
//! - `nCER` = total edit distance / total reference characters (null when there are none),
//!   as the seed computed it.
//! - `medianMs` is the seed's `sorted[floor(n / 2)]` (the upper middle for even n, not
//!   [`crate::stats::median`]: a field the seed named keeps the seed's meaning, so that its
//!   figures and this page's compare) and `peakCaseMs` the largest case time.
//! - Added: `meanMs`, and `p90Ms` by nearest rank ([`crate::stats`]).
//! - Added: `msPerToken` = Σ decodeMs / Σ tokens over the cases that give both (null when
//!   there are no tokens).
//! - When accuracy does not apply (the decoder-only scope), `nCER`, `distance` and `exact`
//!   are null instead of the seed's "every case exact".

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::score::score_case;
use crate::stats::percentile_of_sorted;

/// One finished case as the page reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CaseInput {
    pub id: String,
    pub expected: String,
    pub actual: String,
    pub total_ms: f64,
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub tokens: Option<u32>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub decode_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SummaryOptions {
    /// Default true; false in the decoder-only scope: nCER, distance and exact become null.
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub accuracy_applicable: bool,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        Self {
            accuracy_applicable: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CaseSummary {
    pub id: String,
    pub distance: Option<usize>,
    pub characters: usize,
    pub exact: Option<bool>,
    /// The reading is the expected text followed by extra characters (`score::CaseScore`).
    pub trailing_extras: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub cases: usize,
    #[serde(rename = "nCER")]
    pub ncer: Option<f64>,
    pub distance: Option<usize>,
    pub characters: usize,
    pub exact: Option<usize>,
    /// Cases read as the expected text followed by extra characters.
    pub trailing_extras: Option<usize>,
    pub median_ms: Option<f64>,
    pub peak_case_ms: Option<f64>,
    pub mean_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub ms_per_token: Option<f64>,
    pub per_case: Vec<CaseSummary>,
}

fn check_ms(index: usize, case: &CaseInput, field: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(CoreError::InvalidCase {
            index,
            id: case.id.clone(),
            message: format!("`{field}` is {value}; allowed: a finite number >= 0"),
        })
    }
}

/// The seed's `medianMs`: the element at `floor(n / 2)` of the sorted times. Only that field
/// keeps it; every other median is [`crate::stats::median`].
pub fn seed_median(sorted: &[f64]) -> Option<f64> {
    sorted.get(sorted.len() / 2).copied()
}

pub fn summarize(cases: &[CaseInput], options: SummaryOptions) -> Result<Summary> {
    let applicable = options.accuracy_applicable;
    let mut per_case = Vec::with_capacity(cases.len());
    let (mut distance, mut characters, mut exact, mut extras) = (0usize, 0usize, 0usize, 0usize);
    let (mut decode_ms, mut tokens) = (0.0f64, 0u64);
    let mut times = Vec::with_capacity(cases.len());
    for (index, case) in cases.iter().enumerate() {
        check_ms(index, case, "totalMs", case.total_ms)?;
        times.push(case.total_ms);
        if let Some(ms) = case.decode_ms {
            check_ms(index, case, "decodeMs", ms)?;
            if let Some(n) = case.tokens {
                decode_ms += ms;
                tokens += u64::from(n);
            }
        }
        let score = score_case(&case.expected, &case.actual);
        distance += score.distance;
        characters += score.characters;
        exact += usize::from(score.exact);
        extras += usize::from(score.trailing_extras);
        per_case.push(CaseSummary {
            id: case.id.clone(),
            distance: applicable.then_some(score.distance),
            characters: score.characters,
            exact: applicable.then_some(score.exact),
            trailing_extras: applicable.then_some(score.trailing_extras),
        });
    }
    times.sort_by(f64::total_cmp);
    let mean_ms = (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64);
    Ok(Summary {
        cases: cases.len(),
        ncer: (applicable && characters > 0).then(|| distance as f64 / characters as f64),
        distance: applicable.then_some(distance),
        characters,
        exact: applicable.then_some(exact),
        trailing_extras: applicable.then_some(extras),
        median_ms: seed_median(&times),
        peak_case_ms: times.last().copied(),
        mean_ms,
        p90_ms: percentile_of_sorted(&times, 90.0),
        ms_per_token: (tokens > 0).then(|| decode_ms / tokens as f64),
        per_case,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn case(id: &str, expected: &str, actual: &str, total_ms: f64) -> CaseInput {
        CaseInput {
            id: id.into(),
            expected: expected.into(),
            actual: actual.into(),
            total_ms,
            tokens: None,
            decode_ms: None,
        }
    }

    #[test]
    fn seed_fields_and_additions() {
        let mut cases = vec![
            case("01", "パチパチパチパチ", "パチパチパチ", 30.0),
            case("02", "建設会社", "建設会社", 10.0),
            case("03", "ＡＢ", "AB", 20.0),
            case("04", "abcd", "", 40.0),
        ];
        cases[0].tokens = Some(6);
        cases[0].decode_ms = Some(12.0);
        cases[1].tokens = Some(4);
        cases[1].decode_ms = Some(8.0);
        let s = summarize(&cases, SummaryOptions::default()).unwrap();
        assert_eq!(s.cases, 4);
        assert_eq!(s.distance, Some(6));
        assert_eq!(s.characters, 18);
        assert_eq!(s.ncer, Some(6.0 / 18.0));
        assert_eq!(s.exact, Some(2));
        // sorted [10, 20, 30, 40]: the seed's median takes index 2.
        assert_eq!(s.median_ms, Some(30.0));
        assert_eq!(s.peak_case_ms, Some(40.0));
        assert_eq!(s.mean_ms, Some(25.0));
        assert_eq!(s.p90_ms, Some(40.0));
        assert_eq!(s.ms_per_token, Some(2.0));
        assert_eq!(
            s.per_case[0],
            CaseSummary {
                id: "01".into(),
                distance: Some(2),
                characters: 8,
                exact: Some(false),
                trailing_extras: Some(false)
            }
        );
        let json = serde_json::to_value(&s).unwrap();
        for field in [
            "nCER",
            "medianMs",
            "peakCaseMs",
            "meanMs",
            "p90Ms",
            "msPerToken",
            "perCase",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
    }

    #[test]
    fn not_applicable_accuracy_is_null() {
        let cases = vec![case("synthetic", "", "aaaa", 5.0)];
        let s = summarize(
            &cases,
            SummaryOptions {
                accuracy_applicable: false,
            },
        )
        .unwrap();
        assert_eq!((s.ncer, s.distance, s.exact), (None, None, None));
        assert_eq!(s.per_case[0].exact, None);
        assert_eq!(s.median_ms, Some(5.0));
        // Applicable but no reference characters: nCER null as in the seed.
        let s = summarize(&cases, SummaryOptions::default()).unwrap();
        assert_eq!(s.ncer, None);
        assert_eq!(s.distance, Some(4));
    }

    #[test]
    fn empty_and_invalid_inputs() {
        let s = summarize(&[], SummaryOptions::default()).unwrap();
        assert_eq!(
            (s.cases, s.median_ms, s.p90_ms, s.mean_ms),
            (0, None, None, None)
        );
        for bad in [f64::NAN, -1.0, f64::INFINITY] {
            let err =
                summarize(&[case("x", "a", "a", bad)], SummaryOptions::default()).unwrap_err();
            assert!(err.to_string().contains("totalMs"), "{err}");
        }
        let mut c = case("x", "a", "a", 1.0);
        c.decode_ms = Some(f64::NAN);
        assert!(summarize(&[c], SummaryOptions::default()).is_err());
    }

    #[test]
    fn percentiles_by_definition() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile_of_sorted(&sorted, 90.0), Some(9.0));
        assert_eq!(percentile_of_sorted(&sorted[..1], 90.0), Some(1.0));
        assert_eq!(percentile_of_sorted(&sorted[..3], 90.0), Some(3.0));
        assert_eq!(seed_median(&sorted[..3]), Some(2.0));
        assert_eq!(seed_median(&sorted[..2]), Some(2.0));
    }

    proptest! {
        #[test]
        fn p90_is_the_nearest_rank(times in prop::collection::vec(0.0f64..1e6, 1..50)) {
            let mut sorted = times.clone();
            sorted.sort_by(f64::total_cmp);
            let p90 = percentile_of_sorted(&sorted, 90.0).unwrap();
            // At least 90% of the cases are at or below it, and fewer below any smaller one.
            let at_or_below = times.iter().filter(|&&t| t <= p90).count();
            prop_assert!(at_or_below * 10 >= times.len() * 9);
            let below = times.iter().filter(|&&t| t < p90).count();
            prop_assert!(below * 10 < times.len() * 9);
            let median = seed_median(&sorted).unwrap();
            prop_assert_eq!(median, sorted[times.len() / 2]);
        }
    }
}
