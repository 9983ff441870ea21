//! The two order statistics every figure is made of, each defined once (the definitions are
//! written in `docs/benchmark-protocol.md`, "Medians and percentiles").
//!
//! - A *percentile* `pN` is by nearest rank: the smallest value with at least N % of the values
//!   at or below it, `sorted[⌈N/100 · n⌉ − 1]`. It is always a value that was measured, so the
//!   page's `p50Ms` and `p90Ms` are latencies that happened, and the e2e checks recompute the
//!   recorded figures with this formula.
//! - The *median* is the conventional one: the middle value of an odd count, the mean of the
//!   two middle values of an even count. The tables take it over rounds and cases, where a
//!   count of two is common and neither round should be preferred.
//!
//! So `p50` and the median differ only for an even count: p50 is the lower middle value.
//! Non-finite values (NaN, ±∞) are measuring errors, not figures: both leave them out, as
//! they leave out absent ones (`None`, a round without the figure), and give `None` when no
//! finite value is left.

/// The finite values, sorted ascending; the values may be `f64` or `Option<f64>`.
pub fn sorted_finite<V: Into<Option<f64>>>(values: impl IntoIterator<Item = V>) -> Vec<f64> {
    let mut sorted: Vec<f64> = values
        .into_iter()
        .filter_map(Into::into)
        .filter(|v: &f64| v.is_finite())
        .collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The nearest-rank percentile `p` (0 < p ≤ 100) of values already sorted ascending; `None`
/// for no values. A `p` at or below 0 gives the smallest value.
pub fn percentile_of_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// The nearest-rank percentile `p` (0 < p ≤ 100) of the finite values.
pub fn percentile<V: Into<Option<f64>>>(
    values: impl IntoIterator<Item = V>,
    p: f64,
) -> Option<f64> {
    percentile_of_sorted(&sorted_finite(values), p)
}

/// The median of the finite values: the mean of the two middle ones for an even count.
pub fn median<V: Into<Option<f64>>>(values: impl IntoIterator<Item = V>) -> Option<f64> {
    let sorted = sorted_finite(values);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[middle]),
        _ => Some((sorted[middle - 1] + sorted[middle]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_median_of_odd_even_one_and_none() {
        assert_eq!(median([5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median([5.0, 1.0, 3.0, 4.0]), Some(3.5));
        assert_eq!(median([10.0, 20.0]), Some(15.0));
        assert_eq!(median([7.0]), Some(7.0));
        assert_eq!(median(Vec::<f64>::new()), None);
    }

    #[test]
    fn percentiles_are_by_nearest_rank() {
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(ten.iter().copied(), 50.0), Some(5.0));
        assert_eq!(percentile(ten.iter().copied(), 90.0), Some(9.0));
        assert_eq!(percentile(ten.iter().copied(), 91.0), Some(10.0));
        assert_eq!(percentile(ten.iter().copied(), 100.0), Some(10.0));
        assert_eq!(percentile([3.5], 90.0), Some(3.5));
        assert_eq!(percentile_of_sorted(&[1.0, 2.0, 3.0], 90.0), Some(3.0));
        assert_eq!(percentile_of_sorted(&[1.0, 2.0, 3.0], 0.0), Some(1.0));
        assert_eq!(percentile(Vec::<f64>::new(), 50.0), None);
    }

    #[test]
    fn p50_is_the_lower_middle_where_the_median_is_the_mean_of_both() {
        assert_eq!(percentile([10.0, 20.0], 50.0), Some(10.0));
        assert_eq!(median([10.0, 20.0]), Some(15.0));
    }

    #[test]
    fn absent_and_non_finite_values_are_left_out() {
        assert_eq!(median([f64::NAN, 4.0, f64::INFINITY, 2.0]), Some(3.0));
        assert_eq!(
            percentile([f64::NAN, 4.0, f64::NEG_INFINITY, 2.0], 90.0),
            Some(4.0)
        );
        assert_eq!(median([f64::NAN]), None);
        assert_eq!(median([Some(5.0), None, Some(1.0), Some(3.0)]), Some(3.0));
        assert_eq!(median([None, Some(f64::NAN)]), None);
        assert_eq!(percentile([f64::NAN, f64::INFINITY], 50.0), None);
    }

    proptest! {
        #[test]
        fn the_percentile_has_its_share_at_or_below_it(
            values in prop::collection::vec(-1e6f64..1e6, 1..60),
            p in 1.0f64..=100.0,
        ) {
            let value = percentile(values.iter().copied(), p).unwrap();
            let at_or_below = values.iter().filter(|&&v| v <= value).count() as f64;
            let below = values.iter().filter(|&&v| v < value).count() as f64;
            let n = values.len() as f64;
            prop_assert!(at_or_below >= p / 100.0 * n - 1e-9);
            prop_assert!(below < p / 100.0 * n);
        }

        #[test]
        fn the_median_splits_the_values_in_half(values in prop::collection::vec(-1e6f64..1e6, 1..60)) {
            let m = median(values.iter().copied()).unwrap();
            let below = values.iter().filter(|&&v| v < m).count();
            let above = values.iter().filter(|&&v| v > m).count();
            prop_assert!(below * 2 <= values.len() && above * 2 <= values.len());
        }
    }
}
