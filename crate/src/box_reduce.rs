//! The box step of the resize: Pillow's `Image.reduce((fx, fy))`, bit for bit.
//!
//! Each output pixel is the mean of an `fx × fy` block of source pixels; where the width or
//! height is not a multiple of the factor, the last block is partial and averages what it
//! holds (Pillow's `ImagingReduceCorners`). The rounding is Pillow's too: `(sum + n/2)` times
//! a 24-bit reciprocal of `n`, so the training images (made with Pillow) and the harness agree
//! exactly up to the Lanczos step.

/// Pillow's `reducing_gap` for the model's resize: the box step shrinks by the largest whole
/// factor that still leaves `gap` source pixels per output pixel.
pub const REDUCING_GAP: f64 = 1.0;

/// The whole factor along one side resized to `target` pixels: `max(1, ⌊source / target /
/// gap⌋)`, as Pillow computes it. The caller names the target (the model's input side is
/// `preprocess`'s to know), so this step depends on nothing of the resize around it.
pub fn reduce_factor(source: u32, target: u32) -> u32 {
    ((f64::from(source) / f64::from(target) / REDUCING_GAP) as u32).max(1)
}

/// Pillow's `division_UINT32(n, 8)`: ⌊2³² / (256·n)⌋ computed in f32, as its C does.
fn multiplier(count: u32) -> u32 {
    (4_294_967_296.0f32 / (256 * count) as f32) as u32
}

/// Bytes summed per step of the vertical pass: one v128 of source bytes, two of u16 sums.
const CHUNK: usize = 16;

/// Sums `rows` rows of `block` (each `row_bytes` long) into u16 `lanes`, and returns the AND
/// of every source byte's 4-byte group (its top byte is the AND of all alphas).
///
/// Column chunks outside, rows inside: the sums stay in registers instead of being loaded
/// and stored once per row (measured faster in WASM).
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn sum_rows(block: &[u8], row_bytes: usize, rows: usize, lanes: &mut [u16]) -> u32 {
    let mut all = [u8::MAX; CHUNK];
    let whole = row_bytes / CHUNK * CHUNK;
    for (start, sums) in (0..whole).step_by(CHUNK).zip(lanes.chunks_exact_mut(CHUNK)) {
        let mut acc = [0u16; CHUNK];
        for row in 0..rows {
            let bytes: &[u8; CHUNK] = block[row * row_bytes + start..][..CHUNK]
                .try_into()
                .expect("CHUNK bytes");
            for k in 0..CHUNK {
                acc[k] += u16::from(bytes[k]);
                all[k] &= bytes[k];
            }
        }
        sums.copy_from_slice(&acc);
    }
    // The last few bytes of each row (fewer than CHUNK; whole pixels, as rows are).
    for k in whole..row_bytes {
        let mut sum = 0u16;
        for row in 0..rows {
            let byte = block[row * row_bytes + k];
            sum += u16::from(byte);
            all[k % 4] &= byte;
        }
        lanes[k] = sum;
    }
    all.chunks_exact(4).fold(u32::MAX, |and, group| {
        and & u32::from_le_bytes([group[0], group[1], group[2], group[3]])
    })
}

/// The four channel sums of a block of columns. While `n · 255 < 2¹⁶` (`lanes_fit`) the
/// block's sums still fit in 16 bits, so whole columns are added as u64s: four lanes at
/// once, no carries between them.
#[inline(always)]
fn block_sums(block: &[u64], lanes_fit: bool) -> [u32; 4] {
    if lanes_fit {
        let total: [u16; 4] = bytemuck::cast(block.iter().sum::<u64>());
        total.map(u32::from)
    } else {
        block.iter().fold([0u32; 4], |mut sums, &column| {
            let lanes: [u16; 4] = bytemuck::cast(column);
            for (sum, lane) in sums.iter_mut().zip(lanes) {
                *sum += u32::from(lane);
            }
            sums
        })
    }
}

/// Pillow's rounded mean: `(sum + n/2) · ⌊2²⁴/n⌋ >> 24`, per channel.
#[inline(always)]
fn store_mean(pixel: &mut [u8], sums: [u32; 4], count: u32, scale: u32) {
    for (byte, sum) in pixel.iter_mut().zip(sums) {
        *byte = (((sum + count / 2) * scale) >> 24) as u8;
    }
}

/// Block sums of `F` packed columns each, the first `whole` blocks, written over the start of
/// `columns`. A constant `F` unrolls the sum: with it the box step takes 0.64-0.86 of the time
/// it takes with a run-time `fx` loop (measured in V8 for 2-5 × 3-4 blocks), and whole
/// factors up to 8 cover images up to 2015 pixels across.
fn sum_blocks<const F: usize>(columns: &mut [u64], whole: usize) {
    for block in 0..whole {
        let sources: &[u64; F] = columns[block * F..][..F].try_into().expect("F columns");
        columns[block] = sources.iter().sum();
    }
}

/// Pillow's rounded mean of every u16 sum of `count` values into a byte. LLVM vectorises
/// this loop; explicit SIMD for it alone was slower in V8 (measured; the fused path of the
/// `simd` module gains by never storing the sums).
fn store_means(sums: &[u16], out: &mut [u8], count: u32, scale: u32) {
    for (byte, &sum) in out.iter_mut().zip(sums) {
        *byte = (((u32::from(sum) + count / 2) * scale) >> 24) as u8;
    }
}

/// Each block of `fx` column sums (over `rows` rows) → one RGBA pixel of `out_row`; the last
/// block may be partial. Overwrites the start of `columns` with the block sums.
fn average_blocks(columns: &mut [u64], fx: usize, rows: usize, out_row: &mut [u8]) {
    let whole = columns.len() / fx;
    let (full_pixels, last_pixel) = out_row.split_at_mut(whole * 4);
    let lanes_fit = fx * rows <= 257;
    let count = (fx * rows) as u32;
    let scale = multiplier(count);
    let rest = whole * fx..columns.len();
    if !rest.is_empty() {
        let count = (rest.len() * rows) as u32;
        let sums = block_sums(&columns[rest], lanes_fit);
        store_mean(last_pixel, sums, count, multiplier(count));
    }
    if lanes_fit {
        // Block sums first, written over the columns already read (block i ends at or after
        // column i), then every mean in one flat loop over u16 lanes, which vectorises.
        match fx {
            1 => {}
            2 => sum_blocks::<2>(columns, whole),
            3 => sum_blocks::<3>(columns, whole),
            4 => sum_blocks::<4>(columns, whole),
            5 => sum_blocks::<5>(columns, whole),
            6 => sum_blocks::<6>(columns, whole),
            7 => sum_blocks::<7>(columns, whole),
            8 => sum_blocks::<8>(columns, whole),
            _ => {
                for block in 0..whole {
                    columns[block] = columns[block * fx..(block + 1) * fx].iter().sum();
                }
            }
        }
        let lanes: &[u16] = bytemuck::cast_slice(&columns[..whole]);
        store_means(lanes, full_pixels, count, scale);
    } else {
        for (pixel, block) in full_pixels
            .chunks_exact_mut(4)
            .zip(columns.chunks_exact(fx))
        {
            store_mean(pixel, block_sums(block, false), count, scale);
        }
    }
}

/// The blocks from pixel `first_pixel` to the end of the row (the last may be partial), one
/// at a time: what the fused SIMD path leaves, fewer than 8 pixels. Returns the AND of their
/// bytes.
#[cfg_attr(
    not(all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
fn reduce_tail(
    block: &[u8],
    row_bytes: usize,
    rows: usize,
    first_pixel: usize,
    fx: usize,
    out: &mut [u8],
) -> u32 {
    let width = row_bytes / 4;
    let mut and = u32::MAX;
    for (pixel, start) in out
        .chunks_exact_mut(4)
        .zip((first_pixel..width).step_by(fx))
    {
        let end = (start + fx).min(width);
        let mut sums = [0u32; 4];
        for row in 0..rows {
            for source in
                block[row * row_bytes + start * 4..row * row_bytes + end * 4].chunks_exact(4)
            {
                and &= u32::from_le_bytes([source[0], source[1], source[2], source[3]]);
                for (sum, &byte) in sums.iter_mut().zip(source) {
                    *sum += u32::from(byte);
                }
            }
        }
        let count = ((end - start) * rows) as u32;
        store_mean(pixel, sums, count, multiplier(count));
    }
    and
}

/// The reduced size of one side: `⌈source / factor⌉` (a partial last block counts).
pub fn reduced_side(source: u32, factor: u32) -> u32 {
    source.div_ceil(factor)
}

/// Whether every pixel of `rgba` is opaque: one branch-free AND over whole pixels (it
/// vectorises), the top byte of which is the AND of all alphas.
pub fn all_opaque(rgba: &[u8]) -> bool {
    let all = rgba.chunks_exact(4).fold(u32::MAX, |all, pixel| {
        all & u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]])
    });
    all >> 24 == 0xFF
}

/// Reduces RGBA `src` (`width × height`) by `fx × fy` into `out`, which holds
/// `⌈width/fx⌉ × ⌈height/fy⌉` pixels. `column_sums` is scratch space, kept between calls.
/// Returns whether every source pixel was opaque (alpha 255), found on the way.
pub fn box_reduce(
    src: &[u8],
    width: u32,
    height: u32,
    fx: u32,
    fy: u32,
    column_sums: &mut Vec<u64>,
    out: &mut [u8],
) -> bool {
    let out_width = reduced_side(width, fx) as usize;
    let out_height = reduced_side(height, fy) as usize;
    let (width, height, fx, fy) = (width as usize, height as usize, fx as usize, fy as usize);
    assert_eq!(src.len(), width * height * 4, "box_reduce: source size");
    assert_eq!(
        out.len(),
        out_width * out_height * 4,
        "box_reduce: output size"
    );
    if fx == 1 && fy == 1 {
        // Blocks of one pixel: their means are the pixels.
        out.copy_from_slice(src);
        return all_opaque(src);
    }
    let row_bytes = width * 4;
    // One u64 per column holds its four channel sums as 16-bit lanes: u16 lanes hold up to
    // 257 rows of 255, and MAX_SIDE / 224 keeps fy far below that.
    debug_assert!(fy <= 257);
    // No clearing: every lane is written before it is read.
    column_sums.resize(width, 0);
    let mut all = u32::MAX;

    for (out_y, out_row) in out.chunks_exact_mut(out_width * 4).enumerate() {
        let first = out_y * fy;
        let rows = fy.min(height - first);
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if matches!(fx, 1 | 2 | 4 | 8) && fx * rows <= 257 {
            let block = &src[first * row_bytes..(first + rows) * row_bytes];
            let (done, and) = match fx {
                1 => simd::reduce_groups::<1>(block, row_bytes, rows, out_row),
                2 => simd::reduce_groups::<2>(block, row_bytes, rows, out_row),
                4 => simd::reduce_groups::<4>(block, row_bytes, rows, out_row),
                _ => simd::reduce_groups::<8>(block, row_bytes, rows, out_row),
            };
            let tail = &mut out_row[done / fx * 4..];
            all &= and & reduce_tail(block, row_bytes, rows, done, fx, tail);
            continue;
        }
        // Vertical sums first, the lanes seen as u16s.
        let lanes: &mut [u16] = bytemuck::cast_slice_mut(column_sums.as_mut_slice());
        let block = &src[first * row_bytes..(first + rows) * row_bytes];
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            all &= simd::sum_rows(block, row_bytes, rows, lanes);
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            all &= sum_rows(block, row_bytes, rows, lanes);
        }
        average_blocks(column_sums, fx, rows, out_row);
    }
    all >> 24 == 0xFF
}

/// The box step in explicit 128-bit WASM SIMD, for the build that ships: LLVM vectorised the
/// portable loop only in part (8-byte loads), and the box step was the largest share of
/// preprocessing (measured). For block widths 1, 2, 4 and 8 the whole step runs in registers
/// (`reduce_groups`); the others get SIMD vertical sums (`sum_rows`). Both must give exactly
/// the portable path's results (tests run as WASM: `scripts/test-core-wasm`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    /// The whole 16-byte chunks of each row: two u16x8 sums per chunk, and the AND of all
    /// bytes. Inlined into `sum_rows` with `rows` constant, which unrolls the row loop.
    #[inline(always)]
    fn sum_chunks(block: &[u8], row_bytes: usize, rows: usize, lanes: &mut [u16]) -> v128 {
        let whole = row_bytes / 16 * 16;
        assert!(block.len() >= rows * row_bytes && lanes.len() >= row_bytes);
        let (src, dst) = (block.as_ptr(), lanes.as_mut_ptr());
        let mut all = u8x16_splat(u8::MAX);
        for start in (0..whole).step_by(16) {
            let (mut low, mut high) = (u16x8_splat(0), u16x8_splat(0));
            for row in 0..rows {
                // SAFETY: row * row_bytes + start + 16 <= rows * row_bytes <= block.len().
                let bytes = unsafe {
                    src.add(row * row_bytes + start)
                        .cast::<v128>()
                        .read_unaligned()
                };
                low = u16x8_add(low, u16x8_extend_low_u8x16(bytes));
                high = u16x8_add(high, u16x8_extend_high_u8x16(bytes));
                all = v128_and(all, bytes);
            }
            // SAFETY: start + 16 <= whole <= lanes.len().
            unsafe {
                dst.add(start).cast::<v128>().write_unaligned(low);
                dst.add(start + 8).cast::<v128>().write_unaligned(high);
            }
        }
        all
    }

    /// `super::sum_rows`, 16 source bytes per step into two u16x8 sums. Block heights up to
    /// 8 (images up to 2015 pixels high) get a copy of the loop with the rows unrolled, which
    /// took the whole preprocess of a 1024×768 page to 0.89-0.94 of its time (measured in V8).
    pub fn sum_rows(block: &[u8], row_bytes: usize, rows: usize, lanes: &mut [u16]) -> u32 {
        let all = match rows {
            1 => sum_chunks(block, row_bytes, 1, lanes),
            2 => sum_chunks(block, row_bytes, 2, lanes),
            3 => sum_chunks(block, row_bytes, 3, lanes),
            4 => sum_chunks(block, row_bytes, 4, lanes),
            5 => sum_chunks(block, row_bytes, 5, lanes),
            6 => sum_chunks(block, row_bytes, 6, lanes),
            7 => sum_chunks(block, row_bytes, 7, lanes),
            8 => sum_chunks(block, row_bytes, 8, lanes),
            _ => sum_chunks(block, row_bytes, rows, lanes),
        };
        let whole = row_bytes / 16 * 16;
        let all = v128_and(all, u64x2_shuffle::<1, 0>(all, all));
        let mut and = u32x4_extract_lane::<0>(all) & u32x4_extract_lane::<1>(all);
        // The last few pixels of each row (fewer than four).
        for pixel in (whole..row_bytes).step_by(4) {
            for channel in 0..4 {
                let mut sum = 0u16;
                for row in 0..rows {
                    let byte = block[row * row_bytes + pixel + channel];
                    sum += u16::from(byte);
                    and &= u32::from(byte) << (8 * channel) | !(0xFF << (8 * channel));
                }
                lanes[pixel + channel] = sum;
            }
        }
        and
    }

    /// Pillow's rounded mean of eight u16 block sums (two pixels), in the low 8 bytes. The
    /// bytes are picked with one shuffle: LLVM knows the means fit a byte and would otherwise
    /// turn a saturating narrow into 16 lane extracts and inserts (seen in the wasm).
    #[inline(always)]
    fn means(sums: v128, bias: v128, scale: v128) -> v128 {
        let mean = |wide: v128| u32x4_shr(i32x4_mul(i32x4_add(wide, bias), scale), 24);
        let (low, high) = (
            mean(u32x4_extend_low_u16x8(sums)),
            mean(u32x4_extend_high_u16x8(sums)),
        );
        i8x16_shuffle::<0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28>(low, high)
    }

    /// The 64-bit halves of `a` and `b` added pairwise: `[a.lo + a.hi | b.lo + b.hi]`, each
    /// half one pixel's four u16 channel sums.
    #[inline(always)]
    fn add_halves(a: v128, b: v128) -> v128 {
        u16x8_add(u64x2_shuffle::<0, 2>(a, b), u64x2_shuffle::<1, 3>(a, b))
    }

    /// One output row for block widths `FX` of 1, 2, 4 or 8, whose blocks tile 8-pixel groups:
    /// vertical sums, block sums and means stay in registers, where the general path stores
    /// the column sums and reads them twice more. Returns the pixels done (whole groups) and
    /// the AND of their bytes. Needs `FX * rows <= 257` (u16 sums).
    #[inline(always)]
    fn fused_groups<const FX: usize>(
        block: &[u8],
        row_bytes: usize,
        rows: usize,
        out_row: &mut [u8],
    ) -> (usize, v128) {
        let groups = row_bytes / 32;
        assert!(block.len() >= rows * row_bytes && out_row.len() >= groups * 32 / FX);
        let count = (FX * rows) as u32;
        let bias = u32x4_splat(count / 2);
        let scale = u32x4_splat(super::multiplier(count));
        let (src, dst) = (block.as_ptr(), out_row.as_mut_ptr());
        let mut all = u8x16_splat(u8::MAX);
        for group in 0..groups {
            let start = group * 32;
            let mut sums = [u16x8_splat(0); 4];
            for row in 0..rows {
                // SAFETY: row * row_bytes + start + 32 <= rows * row_bytes <= block.len().
                let (first, second) = unsafe {
                    let at = src.add(row * row_bytes + start).cast::<v128>();
                    (at.read_unaligned(), at.add(1).read_unaligned())
                };
                sums[0] = u16x8_add(sums[0], u16x8_extend_low_u8x16(first));
                sums[1] = u16x8_add(sums[1], u16x8_extend_high_u8x16(first));
                sums[2] = u16x8_add(sums[2], u16x8_extend_low_u8x16(second));
                sums[3] = u16x8_add(sums[3], u16x8_extend_high_u8x16(second));
                all = v128_and(all, v128_and(first, second));
            }
            let out = group * 32 / FX;
            // SAFETY: out + 32 / FX <= groups * 32 / FX <= out_row.len().
            unsafe {
                match FX {
                    1 => {
                        let first = u64x2_shuffle::<0, 2>(
                            means(sums[0], bias, scale),
                            means(sums[1], bias, scale),
                        );
                        let second = u64x2_shuffle::<0, 2>(
                            means(sums[2], bias, scale),
                            means(sums[3], bias, scale),
                        );
                        dst.add(out).cast::<v128>().write_unaligned(first);
                        dst.add(out + 16).cast::<v128>().write_unaligned(second);
                    }
                    2 => {
                        let pixels = u64x2_shuffle::<0, 2>(
                            means(add_halves(sums[0], sums[1]), bias, scale),
                            means(add_halves(sums[2], sums[3]), bias, scale),
                        );
                        dst.add(out).cast::<v128>().write_unaligned(pixels);
                    }
                    4 => {
                        let blocks =
                            add_halves(u16x8_add(sums[0], sums[1]), u16x8_add(sums[2], sums[3]));
                        let pixels = means(blocks, bias, scale);
                        v128_store64_lane::<0>(pixels, dst.add(out).cast::<u64>());
                    }
                    _ => {
                        // One block: its two halves added once more.
                        let halves =
                            add_halves(u16x8_add(sums[0], sums[1]), u16x8_add(sums[2], sums[3]));
                        let pixel = means(add_halves(halves, halves), bias, scale);
                        v128_store32_lane::<0>(pixel, dst.add(out).cast::<u32>());
                    }
                }
            }
        }
        (groups * 8, all)
    }

    /// `fused_groups` with the row loop unrolled for block heights 1-8, as in `sum_rows`.
    pub fn reduce_groups<const FX: usize>(
        block: &[u8],
        row_bytes: usize,
        rows: usize,
        out_row: &mut [u8],
    ) -> (usize, u32) {
        let (pixels, all) = match rows {
            1 => fused_groups::<FX>(block, row_bytes, 1, out_row),
            2 => fused_groups::<FX>(block, row_bytes, 2, out_row),
            3 => fused_groups::<FX>(block, row_bytes, 3, out_row),
            4 => fused_groups::<FX>(block, row_bytes, 4, out_row),
            5 => fused_groups::<FX>(block, row_bytes, 5, out_row),
            6 => fused_groups::<FX>(block, row_bytes, 6, out_row),
            7 => fused_groups::<FX>(block, row_bytes, 7, out_row),
            8 => fused_groups::<FX>(block, row_bytes, 8, out_row),
            _ => fused_groups::<FX>(block, row_bytes, rows, out_row),
        };
        let all = v128_and(all, u64x2_shuffle::<1, 0>(all, all));
        (
            pixels,
            u32x4_extract_lane::<0>(all) & u32x4_extract_lane::<1>(all),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain definition: round(mean) of each (possibly partial) block, in exact arithmetic.
    fn exact_means(src: &[u8], width: usize, height: usize, fx: usize, fy: usize) -> Vec<f64> {
        let (ow, oh) = (width.div_ceil(fx), height.div_ceil(fy));
        let mut out = Vec::with_capacity(ow * oh * 4);
        for oy in 0..oh {
            for ox in 0..ow {
                for c in 0..4 {
                    let (mut sum, mut n) = (0.0, 0.0);
                    for y in oy * fy..((oy + 1) * fy).min(height) {
                        for x in ox * fx..((ox + 1) * fx).min(width) {
                            sum += f64::from(src[(y * width + x) * 4 + c]);
                            n += 1.0;
                        }
                    }
                    out.push(sum / n);
                }
            }
        }
        out
    }

    fn reduce(src: &[u8], w: u32, h: u32, fx: u32, fy: u32) -> Vec<u8> {
        let mut sums = Vec::new();
        let mut out = vec![0; (reduced_side(w, fx) * reduced_side(h, fy) * 4) as usize];
        let opaque = box_reduce(src, w, h, fx, fy, &mut sums, &mut out);
        assert_eq!(opaque, src.chunks_exact(4).all(|p| p[3] == 255));
        out
    }

    #[test]
    fn factors_follow_pillow() {
        // int(size / 224 / 1.0) or 1
        assert_eq!(reduce_factor(1024, 224), 4);
        assert_eq!(reduce_factor(768, 224), 3);
        assert_eq!(reduce_factor(447, 224), 1);
        assert_eq!(reduce_factor(448, 224), 2);
        assert_eq!(reduce_factor(224, 224), 1);
        assert_eq!(reduce_factor(1, 224), 1);
        assert_eq!(reduce_factor(16384, 224), 73);
    }

    #[test]
    fn pillow_multipliers() {
        // Pillow's f32 arithmetic: 2^32 / 256 / n, truncated.
        assert_eq!(multiplier(1), 1 << 24);
        assert_eq!(multiplier(3), 5_592_405);
        assert_eq!(multiplier(12), 1_398_101);
    }

    #[test]
    fn flat_colour_stays_flat_at_every_edge() {
        let src = [9u8, 99, 199, 255].repeat(7 * 5);
        assert_eq!(reduce(&src, 7, 5, 3, 2), [9u8, 99, 199, 255].repeat(3 * 3));
    }

    #[test]
    fn known_block() {
        // One 2x2 block of red values 0, 1, 2, 4: sum 7, n 4: (7 + 2) * 2^22 >> 24 = 2.
        let src = [0u8, 0, 0, 255, 1, 0, 0, 255, 2, 0, 0, 255, 4, 0, 0, 255];
        assert_eq!(reduce(&src, 2, 2, 2, 2), [2, 0, 0, 255]);
        // Three values summing to 5 (mean 1.67): Pillow's truncated reciprocal gives 1.
        let src = [2u8, 0, 0, 255, 2, 0, 0, 255, 1, 0, 0, 255];
        assert_eq!(reduce(&src, 3, 1, 3, 1), [1, 0, 0, 255]);
    }

    /// Pillow's `ImagingReduce` per block, as its C computes it: the u32 sum, then
    /// `(sum + n/2) · multiplier(n) >> 24`.
    fn pillow_reduce(src: &[u8], width: usize, height: usize, fx: usize, fy: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for oy in 0..height.div_ceil(fy) {
            for ox in 0..width.div_ceil(fx) {
                let (ys, xs) = (
                    oy * fy..((oy + 1) * fy).min(height),
                    ox * fx..((ox + 1) * fx).min(width),
                );
                let count = (ys.len() * xs.len()) as u32;
                for c in 0..4 {
                    let sum: u32 = ys
                        .clone()
                        .flat_map(|y| xs.clone().map(move |x| (y, x)))
                        .map(|(y, x)| u32::from(src[(y * width + x) * 4 + c]))
                        .sum();
                    out.push((((sum + count / 2) * multiplier(count)) >> 24) as u8);
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Bit for bit Pillow's formula, on every path: the fused SIMD rows (block widths 1,
        /// 2, 4 and 8, with their leftover pixels, and their fallback when `fx · rows > 257`),
        /// the packed u16 path and the u32 path.
        #[test]
        fn equals_pillows_formula(
            w in 1usize..80, h in 1usize..100, fx in 1usize..9, fy in 1usize..90,
            seed in any::<u32>()
        ) {
            let mut state = seed | 1;
            let src: Vec<u8> = (0..w * h * 4).map(|_| {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5;
                state as u8
            }).collect();
            prop_assert_eq!(reduce(&src, w as u32, h as u32, fx as u32, fy as u32),
                pillow_reduce(&src, w, h, fx, fy));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Pillow's rounding is round-half-up of the mean, except that its truncated
        /// reciprocal can land one below (e.g. three values summing to 5 give 1, not 2).
        /// Factors up to 23 × 23 take both the packed (n ≤ 257) and the u32 path; widths
        /// from 1 to 59 pixels, both whole 16-byte chunks and the leftover bytes. Half the
        /// images are opaque, with one pixel's alpha at 254 in some, for the opacity check.
        #[test]
        fn matches_the_rounded_mean(
            w in 1usize..60, h in 1usize..60, fx in 1usize..24, fy in 1usize..24,
            seed in any::<u32>(), opaque in any::<bool>(), dent in any::<Option<usize>>()
        ) {
            let mut state = seed | 1;
            let mut src: Vec<u8> = (0..w * h * 4).map(|i| {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5;
                if opaque && i % 4 == 3 { 255 } else { state as u8 }
            }).collect();
            if let (true, Some(pixel)) = (opaque, dent) {
                src[(pixel % (w * h)) * 4 + 3] = 254;
            }
            let ours = reduce(&src, w as u32, h as u32, fx as u32, fy as u32);
            let exact = exact_means(&src, w, h, fx, fy);
            prop_assert_eq!(ours.len(), exact.len());
            for (i, (&a, &e)) in ours.iter().zip(&exact).enumerate() {
                let rounded = (e + 0.5).floor();
                prop_assert!(f64::from(a) == rounded || f64::from(a) == rounded - 1.0,
                    "index {}: {} vs mean {}", i, a, e);
            }
        }
    }
}
