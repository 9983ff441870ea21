//! Latency figures of the decode probe: distributions, whether the latencies are the browser's
//! GPU-completion timer rather than the model's, and the spread across repeats.
//!
//! - Percentiles are by nearest rank ([`crate::stats`]), as `p90Ms` in [`crate::summary`].
//! - A run is *completion-bound* when its GPU waits sit at whole multiples of the completion
//!   floor (the round trip of an empty GPU queue). Firefox reports GPU completion on a 100 ms
//!   timer (Mozilla bug 1870699): measured on an NVIDIA H200, an empty-queue
//!   `onSubmittedWorkDone()` took 100.1 ms and so did every decode step, while a throttled queue
//!   kick brought the step to 12.7 ms. Chrome's same empty wait takes about 0.07 ms.
//! - The interval across repeats is the mean ± Student's t (two-sided 95 %) × s / √n.

use serde::{Deserialize, Serialize};

use crate::stats::{percentile_of_sorted, sorted_finite};

/// A floor below this is GPU work or IPC, not a polling timer: the kicked Firefox floor measured
/// 0.5 ms and Chrome's 0.07 ms, the timer 100 ms. Below it nothing is called completion-bound.
pub const TIMER_FLOOR_MIN_MS: f64 = 5.0;
/// How far from a whole multiple of the floor a wait may be and still count as sitting on it,
/// as a share of the floor: 100.1 ms steps on a 100.1 ms floor are 0 % off; a 100 ms timer
/// with 14.9 ms of CPU work before the wait still lands on the tick.
pub const MULTIPLE_TOLERANCE: f64 = 0.15;
/// The share of waits that must sit on multiples for the verdict.
pub const BOUND_SHARE: f64 = 0.8;
/// Fewer waits than this say nothing either way.
pub const MIN_WAITS: usize = 3;

/// The distribution of one kind of latency, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LatencyStats {
    pub count: usize,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

/// Finite values only: a NaN or infinite latency is a measuring error, not a latency.
fn finite(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|v| v.is_finite()).collect()
}

/// `None` when there is no finite value.
pub fn latency_stats(values: &[f64]) -> Option<LatencyStats> {
    let sorted = sorted_finite(values.iter().copied());
    Some(LatencyStats {
        count: sorted.len(),
        min_ms: *sorted.first()?,
        p50_ms: percentile_of_sorted(&sorted, 50.0)?,
        p90_ms: percentile_of_sorted(&sorted, 90.0)?,
        max_ms: sorted[sorted.len() - 1],
        mean_ms: sorted.iter().sum::<f64>() / sorted.len() as f64,
    })
}

/// Whether a run's GPU waits are the browser's completion timer, and the words for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CompletionCheck {
    pub floor_ms: f64,
    pub waits: usize,
    pub at_multiples: usize,
    pub bound: bool,
    /// One sentence for the page, the summary and the runner's table.
    pub verdict: String,
}

fn sits_on_multiple(wait: f64, floor: f64) -> bool {
    let multiple = (wait / floor).round();
    multiple >= 1.0 && (wait - multiple * floor).abs() <= MULTIPLE_TOLERANCE * floor
}

/// `kicked`: whether the waits were made with `poll=kick`, which changes the remedy named.
pub fn completion_check(floor_ms: f64, waits_ms: &[f64], kicked: bool) -> CompletionCheck {
    let waits = finite(waits_ms);
    let at_multiples = if floor_ms.is_finite() && floor_ms > 0.0 {
        waits
            .iter()
            .filter(|&&w| sits_on_multiple(w, floor_ms))
            .count()
    } else {
        0
    };
    let timer_like = floor_ms.is_finite() && floor_ms >= TIMER_FLOOR_MIN_MS;
    let bound = timer_like
        && waits.len() >= MIN_WAITS
        && at_multiples as f64 >= BOUND_SHARE * waits.len() as f64;
    let verdict = if bound {
        let remedy = if kicked {
            "the queue kick is not keeping up: lower kickMs"
        } else {
            "run with poll=kick (an empty queue submit at most every kickMs, default 0.5 ms, while a GPU wait is pending)"
        };
        format!(
            "completion-bound: {at_multiples} of {} GPU waits took a whole multiple of the {floor_ms:.1} ms \
             completion floor (an empty GPU queue's round trip), so these latencies are how often the \
             browser polls for GPU completion (Firefox: a 100 ms timer), not the model; remedy: {remedy}",
            waits.len()
        )
    } else if waits.len() < MIN_WAITS {
        format!(
            "not judged: {} GPU waits (at least {MIN_WAITS} are needed to tell a completion timer from the model)",
            waits.len()
        )
    } else if !timer_like {
        format!(
            "not completion-bound: the completion floor is {floor_ms:.2} ms (a polling timer would be \
             {TIMER_FLOOR_MIN_MS} ms or more), so the latencies are the model's"
        )
    } else {
        format!(
            "not completion-bound: {at_multiples} of {} GPU waits sit on multiples of the {floor_ms:.1} ms \
             floor (the verdict needs {:.0} %)",
            waits.len(),
            BOUND_SHARE * 100.0
        )
    };
    CompletionCheck {
        floor_ms,
        waits: waits.len(),
        at_multiples,
        bound,
        verdict,
    }
}

/// A mean across repeats with its two-sided 95 % confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MeanInterval {
    pub n: usize,
    pub mean: f64,
    /// Null for a single repeat: one value has no spread.
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub half_width: Option<f64>,
}

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom (any table of the
/// distribution; they match `scipy.stats.t.ppf(0.975, df)` to three decimals).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

fn t_quantile(degrees: usize) -> f64 {
    match degrees {
        0 => f64::NAN,
        1..=30 => T_975[degrees - 1],
        // Beyond 30 the quantile is within 2 % of the normal's 1.96; interpolating in 1/df
        // between df = 30 (2.042) and infinity keeps it within 0.002 of the true value.
        _ => 1.96 + (2.042 - 1.96) * 30.0 / degrees as f64,
    }
}

/// `None` when there is no finite value.
pub fn mean_interval(values: &[f64]) -> Option<MeanInterval> {
    let values = finite(values);
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(MeanInterval {
            n,
            mean,
            ci95_low: None,
            ci95_high: None,
            half_width: None,
        });
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_quantile(n - 1) * (variance / n as f64).sqrt();
    Some(MeanInterval {
        n,
        mean,
        ci95_low: Some(mean - half),
        ci95_high: Some(mean + half),
        half_width: Some(half),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn percentiles_are_by_nearest_rank() {
        let stats = latency_stats(&[5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 6.0, 7.0, 8.0, 9.0]).unwrap();
        assert_eq!(stats.count, 10);
        assert_eq!(stats.min_ms, 1.0);
        assert_eq!(stats.p50_ms, 5.0);
        assert_eq!(stats.p90_ms, 9.0);
        assert_eq!(stats.max_ms, 10.0);
        assert_eq!(stats.mean_ms, 5.5);
        let one = latency_stats(&[3.5]).unwrap();
        assert_eq!((one.p50_ms, one.p90_ms, one.max_ms), (3.5, 3.5, 3.5));
    }

    #[test]
    fn non_finite_values_are_left_out_and_nothing_gives_none() {
        let stats = latency_stats(&[f64::NAN, 2.0, f64::INFINITY, 4.0]).unwrap();
        assert_eq!(stats.count, 2);
        assert_eq!(stats.max_ms, 4.0);
        assert_eq!(latency_stats(&[]), None);
        assert_eq!(latency_stats(&[f64::NAN]), None);
    }

    #[test]
    fn firefoxs_timer_is_completion_bound() {
        // As measured on the H200: a 100.1 ms floor, decode steps of 100.1 ms, one of 200.2 ms.
        let waits = [100.1, 100.2, 100.1, 200.2, 100.0, 99.9, 100.1];
        let check = completion_check(100.1, &waits, false);
        assert!(check.bound, "{}", check.verdict);
        assert_eq!((check.waits, check.at_multiples), (7, 7));
        assert!(check.verdict.starts_with("completion-bound"));
        assert!(check.verdict.contains("poll=kick"));
        let kicked = completion_check(100.1, &waits, true);
        assert!(kicked.verdict.contains("lower kickMs"));
    }

    #[test]
    fn a_small_floor_is_never_completion_bound() {
        // Kicked Firefox on the H200: 0.5 ms floor, 12.7 ms steps; Chrome: 0.07 ms.
        for floor in [0.5, 0.07] {
            let check = completion_check(floor, &[12.5, 13.0, 12.0, 14.5], false);
            assert!(!check.bound);
            assert!(
                check.verdict.contains("the latencies are the model's"),
                "{}",
                check.verdict
            );
        }
    }

    #[test]
    fn model_time_on_a_large_floor_is_not_bound() {
        // Software WebGPU: a slow floor, but steps of seconds that fall anywhere.
        let waits = [5230.0, 4975.0, 5012.0, 5391.0, 5150.0];
        let check = completion_check(31.0, &waits, false);
        assert!(!check.bound, "{}", check.verdict);
        assert!(check.verdict.contains("sit on multiples"));
    }

    #[test]
    fn too_few_waits_are_not_judged() {
        let check = completion_check(100.0, &[100.0, 100.0], false);
        assert!(!check.bound);
        assert!(check.verdict.starts_with("not judged"));
    }

    #[test]
    fn waits_shorter_than_the_floor_are_not_on_a_multiple() {
        assert!(!sits_on_multiple(40.0, 100.0));
        assert!(sits_on_multiple(86.0, 100.0));
        assert!(sits_on_multiple(300.0, 100.0));
        assert!(!sits_on_multiple(250.0, 100.0));
    }

    #[test]
    fn the_interval_uses_students_t() {
        let interval = mean_interval(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(interval.mean, 12.0);
        // s = 2, n = 3, t(2) = 4.303: half width 4.303 * 2 / sqrt(3).
        let half = interval.half_width.unwrap();
        assert!((half - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert!((interval.ci95_low.unwrap() - (12.0 - half)).abs() < 1e-12);
        let single = mean_interval(&[7.0]).unwrap();
        assert_eq!((single.n, single.mean, single.half_width), (1, 7.0, None));
        assert_eq!(mean_interval(&[]), None);
    }

    #[test]
    fn the_quantile_beyond_the_table_approaches_the_normal() {
        assert!((t_quantile(30) - 2.042).abs() < 1e-12);
        // scipy.stats.t.ppf(0.975, 60) = 2.000, (120) = 1.980.
        assert!((t_quantile(60) - 2.000).abs() < 0.002);
        assert!((t_quantile(120) - 1.980).abs() < 0.002);
    }

    proptest! {
        #[test]
        fn stats_are_ordered_and_within_the_values(values in proptest::collection::vec(0.0f64..1e6, 1..200)) {
            let s = latency_stats(&values).unwrap();
            prop_assert!(s.min_ms <= s.p50_ms && s.p50_ms <= s.p90_ms && s.p90_ms <= s.max_ms);
            prop_assert!(s.min_ms <= s.mean_ms && s.mean_ms <= s.max_ms * (1.0 + 1e-12));
            prop_assert!(values.contains(&s.p50_ms) && values.contains(&s.p90_ms));
        }

        #[test]
        fn the_interval_holds_the_mean(values in proptest::collection::vec(-1e6f64..1e6, 2..50)) {
            let i = mean_interval(&values).unwrap();
            prop_assert!(i.ci95_low.unwrap() <= i.mean && i.mean <= i.ci95_high.unwrap());
        }
    }
}
