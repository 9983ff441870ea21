//! The vision input: RGBA of any size → `[1, 3, 224, 224]` float32, CHW, `(x/255 - mean)/std`.
//!
//! The seed drew the image onto a 224×224 canvas with `imageSmoothingQuality = "high"`,
//! whose filter differs between browsers, so one image gave different tensors in Chromium and
//! Firefox. Here the resize is fixed and computed in integer arithmetic, so the same bytes give
//! the same floats everywhere. It is Pillow's `Image.resize((224, 224), Image.LANCZOS,
//! reducing_gap=1.0)` with the pass order fixed, the resize that makes the training images
//! (`scripts/ocrmodel/resize.py`, which pins the same order):
//! 1. a box average over whole blocks of `fx × fy` pixels, `fx = max(1, ⌊width / 224⌋)` and
//!    likewise `fy` (Pillow's `Image.reduce`; the last, partial block averages what it holds);
//! 2. Lanczos3 (`lanczos.rs`: fast_image_resize's fixed-point convolution, result for result)
//!    from the reduced image to 224×224, the source box mapped into reduced coordinates
//!    (`width / fx` by `height / fy`), horizontal pass first (Pillow 13 goes down first when
//!    the height shrinks more, which moves the rounding).
//!
//! Why the box step: a Lanczos3 that shrinks a 1024×768 page by 4.6× reads about 27 source
//! pixels per output pixel and row, some 25 multiply-adds per source pixel; in WASM that was
//! 2.4-4.4× slower than the seed's canvas (measured). The box average is one add per source
//! byte, and the Lanczos3 that follows shrinks by less than 2×. For text the box average is
//! an area filter, the classic choice for downscaling print.
//!
//! Differences from the seed, on purpose:
//! - Transparent pixels are composited over white. The seed's `clearRect` left transparent
//!   black, and its loop ignored alpha, so a transparent background read as black.
//! - The aspect ratio is not kept (as in the seed: `drawImage` stretched to 224×224).

use crate::box_reduce::{box_reduce, reduce_factor, reduced_side};
use crate::error::{CoreError, Result};
use crate::lanczos::{self, AxisWeights};

pub const IMAGE_SIZE: u32 = 224;
/// Floats in one preprocessed image: 3 × 224 × 224.
pub const TENSOR_LEN: usize = 3 * (IMAGE_SIZE as usize) * (IMAGE_SIZE as usize);
/// The largest width or height accepted (a WebGPU-era canvas limit; keeps sizes in u32 math).
pub const MAX_SIDE: u32 = 16384;
pub const MEAN: [f64; 3] = [0.485, 0.456, 0.406];
pub const STD: [f64; 3] = [0.229, 0.224, 0.225];

const PLANE: usize = (IMAGE_SIZE as usize) * (IMAGE_SIZE as usize);

/// The seed's `(rgba / 255 - mean[c]) / std[c]` in JS doubles, stored into a `Float32Array`:
/// one table entry per byte value and channel, so the floats are the seed's bit for bit.
fn normalization_table() -> [[f32; 256]; 3] {
    let mut table = [[0.0f32; 256]; 3];
    for (channel, row) in table.iter_mut().enumerate() {
        for (value, entry) in row.iter_mut().enumerate() {
            *entry = ((value as f64 / 255.0 - MEAN[channel]) / STD[channel]) as f32;
        }
    }
    table
}

/// `c` over white with alpha `a`, rounded: `(c·a + 255·(255 − a)) / 255`.
#[inline]
fn over_white(c: u8, a: u8) -> u8 {
    let a = u32::from(a);
    ((u32::from(c) * a + 255 * (255 - a) + 127) / 255) as u8
}

/// Composites every pixel over white in place and makes it opaque.
fn composite_over_white(rgba: &mut [u8]) {
    for pixel in rgba.chunks_exact_mut(4) {
        let a = pixel[3];
        if a != 255 {
            pixel[0] = over_white(pixel[0], a);
            pixel[1] = over_white(pixel[1], a);
            pixel[2] = over_white(pixel[2], a);
            pixel[3] = 255;
        }
    }
}

pub(crate) fn check_size(rgba_len: usize, width: u32, height: u32) -> Result<()> {
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(CoreError::ImageSize {
            width,
            height,
            max: MAX_SIDE,
        });
    }
    let expected = width as usize * height as usize * 4;
    if rgba_len != expected {
        return Err(CoreError::RgbaLength {
            width,
            height,
            expected,
            actual: rgba_len,
        });
    }
    Ok(())
}

/// 224×224 RGBA pixels → the three CHW planes, through the table. Zipped iterators, no
/// indexing: no bounds check in the loop.
fn normalize_pixels(
    table: &[[f32; 256]; 3],
    pixels: impl Iterator<Item = [u8; 4]>,
    out: &mut [f32],
) {
    let (red, rest) = out.split_at_mut(PLANE);
    let (green, blue) = rest.split_at_mut(PLANE);
    let [t_red, t_green, t_blue] = table;
    let planes = red.iter_mut().zip(green.iter_mut()).zip(blue.iter_mut());
    for (((r, g), b), pixel) in planes.zip(pixels) {
        *r = t_red[usize::from(pixel[0])];
        *g = t_green[usize::from(pixel[1])];
        *b = t_blue[usize::from(pixel[2])];
    }
}

/// Where the RGBA bytes are read from, one band of rows at a time: a slice, or at the wasm
/// boundary a JS array. Reading in bands means the whole image is never copied into wasm
/// memory: each band is copied into a small buffer that stays in cache for the box step
/// (measured: the 3 MB copy of a 1024×768 image was a fifth of the time).
pub trait RgbaSource {
    /// The number of bytes.
    fn byte_len(&self) -> usize;
    /// Copies `band.len()` bytes from `offset` into `band`.
    fn copy_band(&self, offset: usize, band: &mut [u8]);
}

impl RgbaSource for [u8] {
    fn byte_len(&self) -> usize {
        self.len()
    }

    fn copy_band(&self, offset: usize, band: &mut [u8]) {
        band.copy_from_slice(&self[offset..offset + band.len()]);
    }
}

/// Bytes of source per band: a multiple of `fy` rows that fits in a core's L2 cache.
const BAND_BYTES: usize = 64 * 1024;

/// Reusable state: the buffers, the Lanczos3 weights of the last geometry and the lookup table.
pub struct Preprocessor {
    /// One band of source rows, and the box step's scratch row of column sums.
    band: Vec<u8>,
    column_sums: Vec<u64>,
    /// The box step's output: the whole image, reduced.
    reduced: Vec<u8>,
    /// The horizontal pass's output, 224 × reduced height, and the vertical pass's, 224×224.
    across: Vec<u8>,
    resized: Vec<u8>,
    /// The weights of each pass, kept while the image size repeats (a sweep's images mostly
    /// share one): computing them was a fifth of the Lanczos3 step (measured).
    across_weights: Option<AxisWeights>,
    down_weights: Option<AxisWeights>,
    table: [[f32; 256]; 3],
    tensor: Vec<f32>,
}

impl Default for Preprocessor {
    fn default() -> Self {
        Self::new()
    }
}

impl Preprocessor {
    pub fn new() -> Self {
        Self {
            band: Vec::new(),
            column_sums: Vec::new(),
            reduced: Vec::new(),
            across: Vec::new(),
            resized: vec![0; PLANE * 4],
            across_weights: None,
            down_weights: None,
            table: normalization_table(),
            tensor: vec![0.0; TENSOR_LEN],
        }
    }

    /// The box step over the whole image, band by band, into `self.reduced`. A band with any
    /// transparent pixel (found on the way) is composited over white and reduced again.
    fn reduce_in_bands(
        &mut self,
        source: &(impl RgbaSource + ?Sized),
        width: u32,
        height: u32,
        fx: u32,
        fy: u32,
    ) {
        let row_bytes = width as usize * 4;
        let band_rows = fy * ((BAND_BYTES / (row_bytes * fy as usize)).max(1) as u32);
        let reduced_row_bytes = reduced_side(width, fx) as usize * 4;
        // No clearing: the bands write every byte.
        self.reduced
            .resize(reduced_row_bytes * reduced_side(height, fy) as usize, 0);
        let out_rows_per_band = (band_rows / fy) as usize;
        for (index, out_band) in self
            .reduced
            .chunks_mut(reduced_row_bytes * out_rows_per_band)
            .enumerate()
        {
            let first = index as u32 * band_rows;
            let rows = band_rows.min(height - first);
            self.band.resize(rows as usize * row_bytes, 0);
            source.copy_band(first as usize * row_bytes, &mut self.band);
            let sums = &mut self.column_sums;
            if !box_reduce(&self.band, width, rows, fx, fy, sums, out_band) {
                composite_over_white(&mut self.band);
                box_reduce(&self.band, width, rows, fx, fy, sums, out_band);
            }
        }
    }

    /// Preprocesses an image read from `source`. The tensor stays owned by the preprocessor
    /// (the wasm boundary copies it straight into a JS array).
    pub fn run_from(
        &mut self,
        source: &(impl RgbaSource + ?Sized),
        width: u32,
        height: u32,
    ) -> Result<&[f32]> {
        check_size(source.byte_len(), width, height)?;
        let (fx, fy) = (
            reduce_factor(width, IMAGE_SIZE),
            reduce_factor(height, IMAGE_SIZE),
        );
        self.reduce_in_bands(source, width, height, fx, fy);
        // A 224×224 source is already the model's size: the box step copied it as it is.
        let rgba = if width == IMAGE_SIZE && height == IMAGE_SIZE {
            &self.reduced
        } else {
            self.resize_reduced(width, height, fx, fy);
            &self.resized
        };
        let pixels = rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2], p[3]]);
        normalize_pixels(&self.table, pixels, &mut self.tensor);
        Ok(&self.tensor)
    }

    /// The Lanczos3 step: `self.reduced` (the box step's output for a `width × height`
    /// source reduced by `fx × fy`) → `self.resized`, 224×224. Horizontal pass, then
    /// vertical, each rounded to u8, as PIL does (fast_image_resize alone would go down first
    /// for u8 images, and the clipped Lanczos lobes then differed from PIL's by up to 46
    /// levels on noise, measured). A pass whose box is already 224 whole pixels is a copy.
    fn resize_reduced(&mut self, width: u32, height: u32, fx: u32, fy: u32) {
        let (reduced_width, reduced_height) = (reduced_side(width, fx), reduced_side(height, fy));
        // The source box in reduced pixels: a partial last block covers a fraction of a pixel.
        let box_width = f64::from(width) / f64::from(fx);
        let box_height = f64::from(height) / f64::from(fy);
        let size = f64::from(IMAGE_SIZE);
        let row_bytes = IMAGE_SIZE as usize * 4;
        self.across.resize(row_bytes * reduced_height as usize, 0);
        if box_width == size {
            self.across.copy_from_slice(&self.reduced);
        } else {
            // SIMD steps: four taps across (one 16-byte load), two rows down.
            let weights = kept(&mut self.across_weights, reduced_width, box_width, 4);
            lanczos::horizontal(
                &self.reduced,
                reduced_height as usize,
                weights,
                &mut self.across,
            );
        }
        if box_height == size {
            self.resized.copy_from_slice(&self.across);
        } else {
            let weights = kept(&mut self.down_weights, reduced_height, box_height, 2);
            lanczos::vertical(&self.across, row_bytes, weights, &mut self.resized);
        }
    }

    pub fn run(&mut self, rgba: &[u8], width: u32, height: u32) -> Result<Vec<f32>> {
        self.run_from(rgba, width, height).map(<[f32]>::to_vec)
    }
}

/// The weights for `in_size` source pixels over `span` → 224, from `slot` when they fit.
fn kept(slot: &mut Option<AxisWeights>, in_size: u32, span: f64, step: usize) -> &AxisWeights {
    match slot {
        Some(weights) if weights.fits(in_size, span, IMAGE_SIZE) => {}
        _ => *slot = Some(AxisWeights::new(in_size, span, IMAGE_SIZE, step)),
    }
    slot.as_ref().expect("just filled")
}

/// One image, with a fresh [`Preprocessor`].
pub fn preprocess(rgba: &[u8], width: u32, height: u32) -> Result<Vec<f32>> {
    Preprocessor::new().run(rgba, width, height)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The seed's loop over a 224×224 RGBA, transcribed: doubles, then stored as f32.
    fn seed_normalize(rgba: &[u8]) -> Vec<f32> {
        let mean = [0.485, 0.456, 0.406];
        let std = [0.229, 0.224, 0.225];
        let mut values = vec![0.0f32; 3 * 224 * 224];
        for pixel in 0..224 * 224 {
            for channel in 0..3 {
                values[channel * 224 * 224 + pixel] = ((rgba[pixel * 4 + channel] as f64 / 255.0
                    - mean[channel])
                    / std[channel]) as f32;
            }
        }
        values
    }

    /// A deterministic pattern with every byte value in every channel.
    fn pattern(width: u32, height: u32, alpha: impl Fn(usize) -> u8) -> Vec<u8> {
        let mut rgba = Vec::with_capacity((width * height * 4) as usize);
        for i in 0..(width * height) as usize {
            rgba.extend_from_slice(&[(i * 7) as u8, (i * 13 + 5) as u8, (i / 3) as u8, alpha(i)]);
        }
        rgba
    }

    #[test]
    fn opaque_224_matches_the_seed_bit_for_bit() {
        let rgba = pattern(224, 224, |_| 255);
        let ours = preprocess(&rgba, 224, 224).unwrap();
        let seed = seed_normalize(&rgba);
        assert_eq!(ours.len(), TENSOR_LEN);
        for (i, (a, b)) in ours.iter().zip(&seed).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "index {i}");
        }
        // Known values: white and black in the red channel.
        let table = normalization_table();
        assert_eq!(table[0][255], ((1.0 - 0.485) / 0.229) as f32);
        assert_eq!(table[0][0], (-0.485f64 / 0.229) as f32);
    }

    #[test]
    fn transparency_becomes_white() {
        let mut rgba = pattern(224, 224, |_| 0);
        rgba[3] = 128; // Half-transparent black over white: mid grey.
        rgba[0] = 0;
        rgba[1] = 0;
        rgba[2] = 0;
        let ours = preprocess(&rgba, 224, 224).unwrap();
        let table = normalization_table();
        assert_eq!(ours[0], table[0][127]);
        assert_eq!(ours[1], table[0][255]);
        assert_eq!(ours[PLANE + 1], table[1][255]);
        assert_eq!(ours[2 * PLANE + 5], table[2][255]);
    }

    #[test]
    fn transparent_images_are_composited_before_the_box_step() {
        // 700x500 reduces by 3x2. One transparent pixel is enough to take the second path.
        let mut rgba = pattern(700, 500, |_| 255);
        rgba[4 * 12_345 + 3] = 0;
        let mut composited = rgba.clone();
        composite_over_white(&mut composited);
        assert_ne!(rgba, composited);
        let ours = preprocess(&rgba, 700, 500).unwrap();
        assert_eq!(ours, preprocess(&composited, 700, 500).unwrap());
        // The white pixel shows: with it treated as black the result would differ.
        rgba[4 * 12_345 + 3] = 255;
        assert_ne!(ours, preprocess(&rgba, 700, 500).unwrap());
    }

    #[test]
    fn over_white_is_rounded_exactly() {
        for c in 0..=255u8 {
            for a in 0..=255u8 {
                let exact = (c as f64 * a as f64 + 255.0 * (255.0 - a as f64)) / 255.0;
                let ours = over_white(c, a) as f64;
                assert!(
                    (ours - exact).abs() <= 0.5,
                    "c {c} a {a}: {ours} vs {exact}"
                );
            }
        }
        assert_eq!(over_white(17, 255), 17);
        assert_eq!(over_white(17, 0), 255);
    }

    #[test]
    fn resizes_any_size_to_the_model_input() {
        // A flat colour stays that colour through Lanczos3 at any scale.
        for (w, h) in [(1, 1), (3, 500), (1024, 768), (224, 225), (640, 48)] {
            let rgba: Vec<u8> = [200u8, 100, 50, 255].repeat((w * h) as usize);
            let out = preprocess(&rgba, w, h).unwrap();
            let table = normalization_table();
            assert!(out[..PLANE].iter().all(|&v| v == table[0][200]), "{w}x{h}");
            assert!(
                out[PLANE..2 * PLANE].iter().all(|&v| v == table[1][100]),
                "{w}x{h}"
            );
            assert!(
                out[2 * PLANE..].iter().all(|&v| v == table[2][50]),
                "{w}x{h}"
            );
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(matches!(
            preprocess(&[], 0, 0),
            Err(CoreError::ImageSize { .. })
        ));
        assert!(matches!(
            preprocess(&[0; 4], 1, MAX_SIDE + 1),
            Err(CoreError::ImageSize { .. })
        ));
        let err = preprocess(&[0; 15], 2, 2).unwrap_err();
        assert_eq!(
            err,
            CoreError::RgbaLength {
                width: 2,
                height: 2,
                expected: 16,
                actual: 15
            }
        );
    }

    #[test]
    fn a_reused_preprocessor_gives_the_same_result() {
        let mut p = Preprocessor::new();
        let a = pattern(300, 200, |i| (i % 256) as u8);
        let b = pattern(50, 700, |_| 255);
        let first = p.run(&a, 300, 200).unwrap();
        p.run(&b, 50, 700).unwrap();
        assert_eq!(p.run(&a, 300, 200).unwrap(), first);
        assert_eq!(preprocess(&a, 300, 200).unwrap(), first);
    }

    /// Lanczos3 as PIL defines it (`ImagingResample`: support 3·scale when shrinking,
    /// weights normalised to sum 1, horizontal pass first, each pass rounded and clipped to
    /// u8), evaluated in f64, from the source box `(0, 0, span_x, span_y)`. Returns 224×224 RGB.
    fn naive_lanczos3(
        rgba: &[u8],
        width: usize,
        height: usize,
        span_x: f64,
        span_y: f64,
    ) -> Vec<[u8; 3]> {
        fn sinc(x: f64) -> f64 {
            if x == 0.0 {
                1.0
            } else {
                (std::f64::consts::PI * x).sin() / (std::f64::consts::PI * x)
            }
        }
        fn weights(in_size: usize, span: f64, out_size: usize) -> Vec<(usize, Vec<f64>)> {
            let scale = span / out_size as f64;
            let filter_scale = scale.max(1.0);
            let support = 3.0 * filter_scale;
            (0..out_size)
                .map(|x| {
                    let center = (x as f64 + 0.5) * scale;
                    let min = ((center - support + 0.5) as i64).max(0) as usize;
                    let max = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
                    let w: Vec<f64> = (min..max)
                        .map(|i| {
                            let t = ((i as f64 - center + 0.5) / filter_scale).abs();
                            if t < 3.0 {
                                sinc(t) * sinc(t / 3.0)
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    let total: f64 = w.iter().sum();
                    (min, w.into_iter().map(|v| v / total).collect())
                })
                .collect()
        }
        let to_u8 = |v: f64| v.round().clamp(0.0, 255.0);
        let n = IMAGE_SIZE as usize;
        let across = weights(width, span_x, n);
        let mut temp = vec![[0.0f64; 3]; n * height];
        for y in 0..height {
            for (x, (start, w)) in across.iter().enumerate() {
                for c in 0..3 {
                    let sum: f64 = w
                        .iter()
                        .enumerate()
                        .map(|(k, wk)| wk * rgba[(y * width + start + k) * 4 + c] as f64)
                        .sum();
                    temp[y * n + x][c] = to_u8(sum);
                }
            }
        }
        let down = weights(height, span_y, n);
        let mut out = vec![[0u8; 3]; n * n];
        for (y, (start, w)) in down.iter().enumerate() {
            for x in 0..n {
                for c in 0..3 {
                    let sum: f64 = w
                        .iter()
                        .enumerate()
                        .map(|(k, wk)| wk * temp[(start + k) * n + x][c])
                        .sum();
                    out[y * n + x][c] = to_u8(sum) as u8;
                }
            }
        }
        out
    }

    /// The byte each output float came from (the table rises with the byte value).
    fn bytes_of(tensor: &[f32]) -> Vec<[u8; 3]> {
        let table = normalization_table();
        (0..PLANE)
            .map(|i| {
                let mut rgb = [0u8; 3];
                for c in 0..3 {
                    let v = tensor[c * PLANE + i];
                    let index = table[c].partition_point(|&t| t < v);
                    assert_eq!(table[c][index], v, "not a table value");
                    rgb[c] = index as u8;
                }
                rgb
            })
            .collect()
    }

    /// The reference resize: Pillow's box step (`box_reduce`, checked against exact means in
    /// its own module), then the naive Lanczos3 over the mapped source box.
    fn reference_resize(rgba: &[u8], width: u32, height: u32) -> Vec<[u8; 3]> {
        let (fx, fy) = (
            reduce_factor(width, IMAGE_SIZE),
            reduce_factor(height, IMAGE_SIZE),
        );
        let (rw, rh) = (reduced_side(width, fx), reduced_side(height, fy));
        let (mut sums, mut reduced) = (Vec::new(), vec![0; (rw * rh * 4) as usize]);
        box_reduce(rgba, width, height, fx, fy, &mut sums, &mut reduced);
        naive_lanczos3(
            &reduced,
            width.div_ceil(fx) as usize,
            height.div_ceil(fy) as usize,
            f64::from(width) / f64::from(fx),
            f64::from(height) / f64::from(fy),
        )
    }

    /// Our output against the exact resize: an error where any value is more than two levels
    /// off, else the share of values that differ at all.
    fn compare_to_naive(rgba: &[u8], width: u32, height: u32) -> Result<f64, String> {
        let ours = bytes_of(&preprocess(rgba, width, height).unwrap());
        let reference = reference_resize(rgba, width, height);
        // Fixed-point weights vs exact ones: one level per pass. The second pass carries the
        // first's difference through weights whose magnitudes sum to more than 1 (Lanczos
        // lobes), so two levels at worst (seen: 2x15 → 224x224, 230x1000); but rarely.
        let mut differing = 0usize;
        for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
            for c in 0..3 {
                let difference = (a[c] as i32 - b[c] as i32).abs();
                if difference > 2 {
                    return Err(format!(
                        "{width}x{height} pixel {i} channel {c}: {a:?} vs {b:?}"
                    ));
                }
                differing += usize::from(difference > 0);
            }
        }
        Ok(differing as f64 / (3 * PLANE) as f64)
    }

    #[test]
    fn downscale_is_box_then_lanczos3_within_two_levels_of_exact() {
        // 700x300 reduces by 3x1 to a partial last column (700/3 = 233.3 pixels of box);
        // 1024x768 by 4x3 exactly; 300x250 not at all; 230x1000 by 1x4.
        for (w, h) in [(700, 300), (1024, 768), (300, 250), (230, 1000)] {
            let rgba = pattern(w, h, |_| 255);
            let share = compare_to_naive(&rgba, w, h).unwrap();
            assert!(
                share <= 0.02,
                "{w}x{h}: {:.1} % of values differ",
                100.0 * share
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The box step read in bands (about BAND_BYTES of rows each, or `fy` rows where one
        /// block row is larger) equals the box step over the whole image composited first.
        /// One transparent pixel, somewhere, makes exactly one band take the second path.
        #[test]
        fn bands_reduce_like_the_whole_image(
            w in 1u32..2400, h in 1u32..900, transparent in any::<Option<(usize, u8)>>()
        ) {
            let mut rgba = pattern(w, h, |_| 255);
            if let Some((pixel, alpha)) = transparent {
                rgba[(pixel % (w * h) as usize) * 4 + 3] = alpha;
            }
            let (fx, fy) = (reduce_factor(w, IMAGE_SIZE), reduce_factor(h, IMAGE_SIZE));
            let mut preprocessor = Preprocessor::new();
            preprocessor.reduce_in_bands(&rgba[..], w, h, fx, fy);
            let mut composited = rgba.clone();
            composite_over_white(&mut composited);
            let mut whole = vec![0; (reduced_side(w, fx) * reduced_side(h, fy) * 4) as usize];
            box_reduce(&composited, w, h, fx, fy, &mut Vec::new(), &mut whole);
            prop_assert!(preprocessor.reduced == whole, "{}x{} by {}x{}", w, h, fx, fy);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn any_size_is_within_two_levels_of_exact(w in 1u32..40, h in 1u32..40, k in any::<u8>()) {
            let rgba = pattern(w, h, |i| (i as u8).wrapping_mul(k));
            let mut composited = rgba.clone();
            composite_over_white(&mut composited);
            // Only the bound: from a source this small each rounding is copied to a whole
            // row or column of the 224x224 output (28x1: one pixel becomes 224 values), so
            // the share of values that differ measures the copying, not the rounding rate.
            let close = compare_to_naive(&composited, w, h);
            prop_assert!(close.is_ok(), "{}", close.unwrap_err());
            prop_assert_eq!(preprocess(&rgba, w, h).unwrap(), preprocess(&composited, w, h).unwrap());
        }
    }
}
