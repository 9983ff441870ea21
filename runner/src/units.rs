//! The units every table writes figures in, each written one way: bytes as MiB, and one figure
//! over another as a ratio. The medians and percentiles the tables take are the core's
//! (`ocr_bench_core::stats`).

/// Bytes in a MiB.
pub const MIB: f64 = 1024.0 * 1024.0;

/// A byte count as the records hold it: unsigned, or signed where it is a difference.
pub trait Bytes: Copy {
    fn as_f64(self) -> f64;
}

impl Bytes for u64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Bytes for i64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Bytes for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

/// `bytes` in MiB, for arithmetic (the memory model's constants are in MiB).
pub fn in_mib(bytes: impl Bytes) -> f64 {
    bytes.as_f64() / MIB
}

/// `bytes` in MiB with `places` decimals and no unit (`12.3`). A small negative difference
/// reads `0.0`, never `-0.0`.
pub fn mib(bytes: impl Bytes, places: usize) -> String {
    let text = format!("{:.*}", places, in_mib(bytes));
    match text.strip_prefix('-') {
        Some(digits) if digits.chars().all(|c| c == '0' || c == '.') => digits.to_owned(),
        _ => text,
    }
}

/// [`mib`] with its unit: `404 MiB`.
pub fn mib_with_unit(bytes: impl Bytes, places: usize) -> String {
    format!("{} MiB", mib(bytes, places))
}

/// [`mib`], or `-` where the figure is unknown.
pub fn mib_or_dash(bytes: Option<impl Bytes>, places: usize) -> String {
    bytes.map_or_else(|| "-".to_owned(), |b| mib(b, places))
}

/// `numerator / denominator` where both are known and the denominator is above zero.
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

/// [`ratio`] with `places` decimals and an `x` (`2.50x`), or `-` where there is none.
pub fn ratio_or_dash(numerator: Option<f64>, denominator: Option<f64>, places: usize) -> String {
    ratio(numerator, denominator).map_or_else(|| "-".to_owned(), |r| format!("{r:.places$}x"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mib_in_places_without_a_negative_zero() {
        assert_eq!(mib(3u64 << 20, 0), "3");
        assert_eq!(mib(3u64 << 19, 1), "1.5");
        assert_eq!(mib(-(5i64 << 20), 1), "-5.0");
        assert_eq!(mib(-1000i64, 1), "0.0");
        assert_eq!(mib(-1000i64, 0), "0");
        assert_eq!(mib_with_unit(404u64 << 20, 0), "404 MiB");
        assert_eq!(mib_or_dash(None::<u64>, 1), "-");
        assert_eq!(mib_or_dash(Some(1.5 * MIB), 2), "1.50");
    }

    #[test]
    fn a_ratio_needs_both_figures_and_a_denominator_above_zero() {
        assert_eq!(ratio(Some(10.0), Some(4.0)), Some(2.5));
        assert_eq!(ratio_or_dash(Some(10.0), Some(4.0), 2), "2.50x");
        assert_eq!(ratio_or_dash(Some(10.0), Some(4.0), 1), "2.5x");
        assert_eq!(ratio_or_dash(Some(10.0), None, 2), "-");
        assert_eq!(ratio_or_dash(None, Some(4.0), 2), "-");
        assert_eq!(ratio_or_dash(Some(10.0), Some(0.0), 2), "-");
        assert_eq!(ratio_or_dash(Some(10.0), Some(-1.0), 2), "-");
    }
}
