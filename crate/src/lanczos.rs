//! Lanczos3 along one axis of an RGBA image: fast_image_resize 6.1's convolution result for
//! result (the same f64 weights, the same i16 fixed point, the same rounding; a test checks
//! it against the library), with the weights computed once per geometry and kept.
//!
//! Why not the library itself: it recomputes the weights on every call (a `sin` per tap, the
//! bounds, the fixed-point conversion), a fifth of the resize's time in V8 (measured), and
//! has no way to keep them. The kernels here are the library's WASM SIMD kernels in shape
//! (`i32x4.dot_i16x8` over pairs of taps), with every window padded to a whole number of
//! SIMD steps so that no remainder paths are left.

/// Fixed-point bits the i16 weights may use: fast_image_resize's `MAX_COEFFS_PRECISION`.
const MAX_WEIGHT_PRECISION: u32 = 15;
/// fast_image_resize's `PRECISION_BITS` for 8-bit images: the bound of its precision search.
const PRECISION_BITS: u32 = 32 - 8 - 2;

/// Lanczos3, `sinc(x) · sinc(x/3)` on `|x| < 3`, with one `sin` where the library's own
/// takes two: with `s = sin(πx/3)`, `sin(πx) = s(3 − 4s²)`, so the product is
/// `3s²(3 − 4s²) / (πx)²`. The weights agree with the two-`sin` form within 1e-14 (test).
pub fn lanczos3(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    if !(-3.0..3.0).contains(&x) {
        return 0.0;
    }
    let s = (std::f64::consts::PI * x / 3.0).sin();
    let squared = s * s;
    let pi_x = std::f64::consts::PI * x;
    3.0 * squared * (3.0 - 4.0 * squared) / (pi_x * pi_x)
}

/// The weights of one pass: `out_size` windows of `window` taps over `in_size` source pixels,
/// for the source span `[0, span)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisWeights {
    in_size: u32,
    span: f64,
    out_size: u32,
    /// Fixed-point bits of the weights: a sum is rounded by `(sum + 2^(p-1)) >> p`.
    precision: u32,
    /// Taps per window, the same for all: the longest window rounded up to `step` taps.
    window: usize,
    /// First source pixel of each window; windows lie inside the source when it has at least
    /// `window` pixels (they are moved back from the end, with zeros in front).
    starts: Vec<u32>,
    /// `out_size × window` weights.
    values: Vec<i16>,
}

impl AxisWeights {
    /// fast_image_resize's `precompute_coefficients` (adaptive kernel size, support 3) and
    /// `Normalizer16`, step for step: windows from `⌊center − r⌋` to `⌈center + r⌉`, zero
    /// weights trimmed at both ends, weights normalised to sum 1, then the precision search
    /// and `round()` to i16. `step` is the SIMD step the windows are padded to.
    pub fn new(in_size: u32, span: f64, out_size: u32, step: usize) -> Self {
        assert!(
            in_size > 0 && out_size > 0 && span > 0.0,
            "AxisWeights: empty axis"
        );
        let scale = span / f64::from(out_size);
        let filter_scale = scale.max(1.0);
        let radius = 3.0 * filter_scale;
        let recip_filter_scale = 1.0 / filter_scale;
        let mut bounds = Vec::with_capacity(out_size as usize);
        let mut weights: Vec<Vec<f64>> = Vec::with_capacity(out_size as usize);
        let mut max_weight = 0.0f64;
        for out_x in 0..out_size {
            let in_center = (f64::from(out_x) + 0.5) * scale;
            let x_min = (in_center - radius).floor().max(0.0) as u32;
            let x_max = (in_center + radius).ceil().min(f64::from(in_size)) as u32;
            let center = in_center - 0.5;
            let mut start = x_min;
            let mut taps = Vec::new();
            let mut total = 0.0;
            for x in x_min..x_max {
                let weight = lanczos3((f64::from(x) - center) * recip_filter_scale);
                if x == start && weight == 0.0 {
                    start += 1;
                } else {
                    taps.push(weight);
                    total += weight;
                }
            }
            let mut size = taps.len();
            while size > 0 && taps[size - 1] == 0.0 {
                size -= 1;
            }
            if total != 0.0 {
                taps.iter_mut().for_each(|weight| *weight /= total);
            }
            // The library takes the maximum over every stored value, the trimmed zeros and
            // the padding too; only positive weights can win.
            max_weight = taps.iter().copied().fold(max_weight, f64::max);
            taps.truncate(size);
            bounds.push(start);
            weights.push(taps);
        }
        let mut precision = 0;
        for candidate in 0..PRECISION_BITS {
            precision = candidate;
            let next = (max_weight * f64::from(1u32 << (precision + 1))).round() as i32;
            if next >= 1 << MAX_WEIGHT_PRECISION {
                break;
            }
        }
        let fixed = f64::from(1u32 << precision);
        let longest = weights.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let window = longest.div_ceil(step) * step;
        let mut starts = Vec::with_capacity(out_size as usize);
        let mut values = vec![0i16; out_size as usize * window];
        for ((start, taps), row) in bounds
            .iter()
            .zip(&weights)
            .zip(values.chunks_exact_mut(window))
        {
            // Move the window back so that it ends inside the source, where it can.
            let moved = (*start).min(in_size.saturating_sub(window as u32));
            let offset = (start - moved) as usize;
            for (value, weight) in row[offset..].iter_mut().zip(taps) {
                *value = (weight * fixed).round() as i16;
            }
            starts.push(moved);
        }
        Self {
            in_size,
            span,
            out_size,
            precision,
            window,
            starts,
            values,
        }
    }

    /// Whether these are the weights for this geometry.
    pub fn fits(&self, in_size: u32, span: f64, out_size: u32) -> bool {
        self.in_size == in_size
            && self.span.to_bits() == span.to_bits()
            && self.out_size == out_size
    }

    /// Every window lies inside the source (it has at least `window` pixels): the SIMD
    /// kernels read whole windows without bounds checks.
    #[cfg_attr(
        not(all(target_arch = "wasm32", target_feature = "simd128")),
        allow(dead_code)
    )]
    fn windows_inside(&self) -> bool {
        self.in_size as usize >= self.window
    }

    fn initial(&self) -> i32 {
        1 << (self.precision - 1)
    }

    /// The taps of window `index` that lie inside the source: a window over a source
    /// shorter than itself is cut at its end (the weights there are zero).
    fn taps(&self, index: usize) -> (usize, &[i16]) {
        let start = self.starts[index] as usize;
        let values = &self.values[index * self.window..(index + 1) * self.window];
        let inside = values.len().min(self.in_size as usize - start);
        (start, &values[..inside])
    }
}

/// A sum of products → its byte: rounded, shifted and clamped as the library's SIMD kernels
/// do (`i32x4.shr`, then saturating narrows).
#[inline(always)]
fn to_byte(sum: i32, precision: u32) -> u8 {
    (sum >> precision).clamp(0, 255) as u8
}

/// The horizontal pass: each of `height` rows of `src` (`weights.in_size` RGBA pixels) →
/// a row of `dst` (`weights.out_size` pixels).
pub fn horizontal(src: &[u8], height: usize, weights: &AxisWeights, dst: &mut [u8]) {
    let (in_row, out_row) = (weights.in_size as usize * 4, weights.out_size as usize * 4);
    assert!(src.len() >= height * in_row && dst.len() >= height * out_row);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let done = if weights.windows_inside() && weights.window.is_multiple_of(4) {
        let whole = height / 4 * 4;
        for y in (0..whole).step_by(4) {
            simd::horizontal_four_rows(
                &src[y * in_row..],
                in_row,
                &mut dst[y * out_row..],
                out_row,
                weights,
            );
        }
        whole
    } else {
        0
    };
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let done = 0;
    for y in done..height {
        horizontal_row(
            &src[y * in_row..(y + 1) * in_row],
            weights,
            &mut dst[y * out_row..(y + 1) * out_row],
        );
    }
}

fn horizontal_row(src: &[u8], weights: &AxisWeights, dst: &mut [u8]) {
    for (index, pixel) in dst.chunks_exact_mut(4).enumerate() {
        let (start, taps) = weights.taps(index);
        let mut sums = [weights.initial(); 4];
        for (source, &weight) in src[start * 4..].chunks_exact(4).zip(taps) {
            for (sum, &byte) in sums.iter_mut().zip(source) {
                *sum += i32::from(byte) * i32::from(weight);
            }
        }
        for (byte, sum) in pixel.iter_mut().zip(sums) {
            *byte = to_byte(sum, weights.precision);
        }
    }
}

/// The vertical pass: `src` (`weights.in_size` rows of `row_bytes`) → `dst`
/// (`weights.out_size` rows).
pub fn vertical(src: &[u8], row_bytes: usize, weights: &AxisWeights, dst: &mut [u8]) {
    assert!(src.len() >= weights.in_size as usize * row_bytes);
    assert!(dst.len() >= weights.out_size as usize * row_bytes);
    for (index, out) in dst
        .chunks_exact_mut(row_bytes)
        .take(weights.out_size as usize)
        .enumerate()
    {
        let (start, taps) = weights.taps(index);
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let done = if weights.windows_inside() && weights.window.is_multiple_of(2) {
            let (initial, precision) = (weights.initial(), weights.precision);
            simd::vertical_row(
                &src[start * row_bytes..],
                row_bytes,
                taps,
                initial,
                precision,
                out,
            )
        } else {
            0
        };
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        let done = 0;
        for (column, byte) in out.iter_mut().enumerate().skip(done) {
            let mut sum = weights.initial();
            for (tap, &weight) in taps.iter().enumerate() {
                sum += i32::from(src[(start + tap) * row_bytes + column]) * i32::from(weight);
            }
            *byte = to_byte(sum, weights.precision);
        }
    }
}

/// The two kernels in 128-bit WASM SIMD, the build that ships: `i32x4.dot_i16x8` multiplies
/// eight bytes, widened to i16, by i16 weights and adds neighbouring pairs, so each step
/// takes two taps at once. Exactly the portable loops' sums (tests run as WASM).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use super::AxisWeights;
    use core::arch::wasm32::*;

    /// Four rows at once, sharing each window's weights. A window of 4 taps is one 16-byte
    /// load per row; two swizzles put the same channel of two neighbouring pixels side by
    /// side (`r0 r1 g0 g1 …` widened), against weights `k0 k1 k0 k1 …`.
    ///
    /// The swizzle masks pass through `black_box`. As constants, LLVM turns the swizzles into
    /// `i8x16.shuffle`s, and V8 rebuilds a shuffle's mask from the constant pool at every use
    /// (four instructions, seen in V8's code); masks in registers cost it one `paddusb`. With
    /// them the whole Lanczos3 step took 0.78-0.86 of its time (measured in V8).
    pub fn horizontal_four_rows(
        src: &[u8],
        in_row: usize,
        dst: &mut [u8],
        out_row: usize,
        weights: &AxisWeights,
    ) {
        let window = weights.window;
        assert!(src.len() >= 3 * in_row + weights.in_size as usize * 4);
        assert!(dst.len() >= 3 * out_row + weights.out_size as usize * 4);
        assert!(weights.windows_inside() && window.is_multiple_of(4));
        let initial = i32x4_splat(weights.initial());
        let (src, dst) = (src.as_ptr(), dst.as_mut_ptr());
        let (first_pair, second_pair) = core::hint::black_box((
            i8x16(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1),
            i8x16(8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1),
        ));
        for (index, &start) in weights.starts.iter().enumerate() {
            let taps = &weights.values[index * window..(index + 1) * window];
            let mut sums = [initial; 4];
            for (group, pair) in taps.chunks_exact(4).enumerate() {
                // SAFETY: 4-byte reads inside `taps`.
                let (low, high) = unsafe {
                    (
                        v128_load32_splat(pair.as_ptr().cast()),
                        v128_load32_splat(pair.as_ptr().add(2).cast()),
                    )
                };
                let offset = (start as usize + group * 4) * 4;
                for (row, sum) in sums.iter_mut().enumerate() {
                    // SAFETY: the window lies inside the row (`windows_inside`), so
                    // offset + 16 <= in_size * 4, and rows 0-3 are in `src` (asserted).
                    let pixels = unsafe {
                        src.add(row * in_row + offset)
                            .cast::<v128>()
                            .read_unaligned()
                    };
                    let first = i8x16_swizzle(pixels, first_pair);
                    let second = i8x16_swizzle(pixels, second_pair);
                    *sum = i32x4_add(
                        *sum,
                        i32x4_add(i32x4_dot_i16x8(first, low), i32x4_dot_i16x8(second, high)),
                    );
                }
            }
            // The four rows' pixels, clamped, in one vector: three narrows for four rows.
            let [first, second, third, fourth] = sums.map(|sum| i32x4_shr(sum, weights.precision));
            let pixels = u8x16_narrow_i16x8(
                i16x8_narrow_i32x4(first, second),
                i16x8_narrow_i32x4(third, fourth),
            );
            // SAFETY: pixel `index` of rows 0-3 is inside `dst` (asserted).
            unsafe {
                let at = dst.add(index * 4);
                v128_store32_lane::<0>(pixels, at.cast());
                v128_store32_lane::<1>(pixels, at.add(out_row).cast());
                v128_store32_lane::<2>(pixels, at.add(2 * out_row).cast());
                v128_store32_lane::<3>(pixels, at.add(3 * out_row).cast());
            }
        }
    }

    /// One output row, 16 bytes at a time: rows are taken in pairs, their bytes interleaved
    /// (`a0 b0 a1 b1 …` widened) against weights `ka kb ka kb …`. Returns the bytes done.
    pub fn vertical_row(
        src: &[u8],
        row_bytes: usize,
        taps: &[i16],
        initial: i32,
        precision: u32,
        out: &mut [u8],
    ) -> usize {
        let whole = row_bytes / 16 * 16;
        assert!(
            taps.len().is_multiple_of(2)
                && src.len() >= taps.len() * row_bytes
                && out.len() >= whole
        );
        let initial = i32x4_splat(initial);
        let (src, dst) = (src.as_ptr(), out.as_mut_ptr());
        for column in (0..whole).step_by(16) {
            let mut sums = [initial; 4];
            for (pair, weights) in taps.chunks_exact(2).enumerate() {
                // SAFETY: a 4-byte read inside `taps`; rows 2·pair and 2·pair + 1 are inside
                // `src` (asserted), and column + 16 <= row_bytes.
                let (weights, upper, lower) = unsafe {
                    let at = src.add(2 * pair * row_bytes + column);
                    (
                        v128_load32_splat(weights.as_ptr().cast()),
                        at.cast::<v128>().read_unaligned(),
                        at.add(row_bytes).cast::<v128>().read_unaligned(),
                    )
                };
                let low = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(
                    upper, lower,
                );
                let high =
                    i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                        upper, lower,
                    );
                let columns = [
                    u16x8_extend_low_u8x16(low),
                    u16x8_extend_high_u8x16(low),
                    u16x8_extend_low_u8x16(high),
                    u16x8_extend_high_u8x16(high),
                ];
                for (sum, column) in sums.iter_mut().zip(columns) {
                    *sum = i32x4_add(*sum, i32x4_dot_i16x8(column, weights));
                }
            }
            let shifted = sums.map(|sum| i32x4_shr(sum, precision));
            let bytes = u8x16_narrow_i16x8(
                i16x8_narrow_i32x4(shifted[0], shifted[1]),
                i16x8_narrow_i32x4(shifted[2], shifted[3]),
            );
            // SAFETY: column + 16 <= whole <= out.len().
            unsafe { dst.add(column).cast::<v128>().write_unaligned(bytes) };
        }
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fast_image_resize::images::{TypedImage, TypedImageRef};
    use fast_image_resize::pixels::U8x4;
    use fast_image_resize::{Filter, FilterType, ResizeAlg, ResizeOptions, Resizer};
    use proptest::prelude::*;

    #[test]
    fn one_sin_lanczos3_is_the_two_sin_product() {
        let sinc = |x: f64| {
            let pi_x = std::f64::consts::PI * x;
            if x == 0.0 {
                1.0
            } else {
                pi_x.sin() / pi_x
            }
        };
        for step in -3200..=3200 {
            let x = f64::from(step) / 1000.0;
            let expected = if x.abs() < 3.0 {
                sinc(x) * sinc(x / 3.0)
            } else {
                0.0
            };
            assert!((lanczos3(x) - expected).abs() < 1e-14, "x = {x}");
        }
    }

    /// fast_image_resize with the same filter: the horizontal pass over the box
    /// `(0, 0, span, height)`, or the vertical one over `(0, 0, width, span)`.
    fn library(rgba: &[u8], width: u32, height: u32, span: f64, out: u32, across: bool) -> Vec<u8> {
        let filter = Filter::new("Lanczos3", lanczos3, 3.0).unwrap();
        let options = ResizeOptions::new()
            .resize_alg(ResizeAlg::Convolution(FilterType::Custom(filter)))
            .use_alpha(false);
        let source = TypedImageRef::<U8x4>::from_buffer(width, height, rgba).unwrap();
        let (options, (w, h)) = if across {
            (
                options.crop(0.0, 0.0, span, f64::from(height)),
                (out, height),
            )
        } else {
            (options.crop(0.0, 0.0, f64::from(width), span), (width, out))
        };
        let mut target = TypedImage::<U8x4>::new(w, h);
        Resizer::new()
            .resize_typed(&source, &mut target, &options)
            .unwrap();
        target.pixels().iter().flat_map(|pixel| pixel.0).collect()
    }

    fn noise(len: usize, seed: u32) -> Vec<u8> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect()
    }

    fn ours(
        rgba: &[u8],
        width: u32,
        height: u32,
        span: f64,
        out: u32,
        across: bool,
        step: usize,
    ) -> Vec<u8> {
        if across {
            let weights = AxisWeights::new(width, span, out, step);
            let mut target = vec![0; (out * height * 4) as usize];
            horizontal(rgba, height as usize, &weights, &mut target);
            target
        } else {
            let weights = AxisWeights::new(height, span, out, step);
            let mut target = vec![0; (width * out * 4) as usize];
            vertical(rgba, width as usize * 4, &weights, &mut target);
            target
        }
    }

    #[test]
    fn the_model_geometry_matches_the_library() {
        // A 1024×768 page reduced by 4×3: 256×256 → 224 across, then down.
        let rgba = noise(256 * 256 * 4, 7);
        assert_eq!(
            ours(&rgba, 256, 256, 256.0, 224, true, 4),
            library(&rgba, 256, 256, 256.0, 224, true)
        );
        let rgba = noise(224 * 256 * 4, 8);
        assert_eq!(
            ours(&rgba, 224, 256, 256.0, 224, false, 2),
            library(&rgba, 224, 256, 256.0, 224, false)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any source length (1 to 600, shorter than a window too), any fractional span up to
        /// it (a partial last box block), any output length: the library's bytes exactly,
        /// across and down, with the windows padded to 4 and 2 taps.
        #[test]
        fn matches_the_library(
            size in 1u32..600, other in 1u32..24, out in 1u32..300, cut in 0.0f64..1.0,
            seed in any::<u32>(), across in any::<bool>()
        ) {
            let span = (f64::from(size) - cut).max(0.5);
            let (width, height) = if across { (size, other) } else { (other, size) };
            let rgba = noise((width * height * 4) as usize, seed);
            let step = if across { 4 } else { 2 };
            prop_assert_eq!(
                ours(&rgba, width, height, span, out, across, step),
                library(&rgba, width, height, span, out, across)
            );
        }
    }
}
