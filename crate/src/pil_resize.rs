//! Pillow's `Image.resize(size, filter)` of an 8-bit RGB image, value for value: what Hugging
//! Face's `ViTImageProcessor` runs (transformers' `image_transforms.resize` converts the uint8
//! array to a PIL image and calls `resize` with `reducing_gap=None`, so no box reduction runs
//! first). Read from Pillow's `src/libImaging/Resample.c` and `Geometry.c`:
//!
//! - the convolution filters (box, bilinear, hamming, bicubic with a = -0.5, lanczos3) widen
//!   by the scale when they shrink, so every source pixel under an output pixel counts;
//! - each output pixel's weights are normalised to sum 1 in doubles, then made 22-bit fixed
//!   point (`PRECISION_BITS = 32 - 8 - 2`), rounded away from zero;
//! - two separable passes, each summed in integers from a half, shifted and clipped to 0..=255
//!   (so the image is rounded to u8 between the passes and at the end);
//! - the order of the passes: horizontal first, except that Pillow 13 (python-pillow/Pillow
//!   pull request 9549) goes down first when the height shrinks and
//!   `in_height - out_height > 2 * (in_width - out_width)`. The condition was read off
//!   Pillow 13.0.0's results (500 random geometries, each matching exactly one order);
//! - nearest is no convolution: it is the affine transform's nearest pixel, the source position
//!   stepped by a double `in / out` from half a step, truncated.
//!
//! An axis whose size does not change is copied, as Pillow skips its pass.

use std::f64::consts::PI;

/// A filter's weight at a distance, in source pixels at scale 1.
type Kernel = fn(f64) -> f64;

/// The PIL resampling filters by their `Image.Resampling` numbers, as `resample` in a
/// `preprocessor_config.json` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "PilFilter"))]
#[serde(rename_all = "lowercase")]
pub enum Filter {
    Nearest,
    Lanczos,
    Bilinear,
    Bicubic,
    Box,
    Hamming,
}

impl Filter {
    /// The filters by PIL number (0..=5), for error messages.
    pub const ALLOWED: &'static str =
        "0 (nearest), 1 (lanczos), 2 (bilinear), 3 (bicubic), 4 (box), 5 (hamming)";

    pub fn from_pil(number: i64) -> Option<Filter> {
        Some(match number {
            0 => Filter::Nearest,
            1 => Filter::Lanczos,
            2 => Filter::Bilinear,
            3 => Filter::Bicubic,
            4 => Filter::Box,
            5 => Filter::Hamming,
            _ => return None,
        })
    }

    /// The kernel and its support at scale 1; `None` for nearest.
    fn kernel(self) -> Option<(Kernel, f64)> {
        match self {
            Filter::Nearest => None,
            Filter::Box => Some((box_filter, 0.5)),
            Filter::Bilinear => Some((bilinear_filter, 1.0)),
            Filter::Hamming => Some((hamming_filter, 1.0)),
            Filter::Bicubic => Some((bicubic_filter, 2.0)),
            Filter::Lanczos => Some((lanczos_filter, 3.0)),
        }
    }
}

fn box_filter(x: f64) -> f64 {
    if x > -0.5 && x <= 0.5 {
        1.0
    } else {
        0.0
    }
}

fn bilinear_filter(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        1.0 - x
    } else {
        0.0
    }
}

fn hamming_filter(x: f64) -> f64 {
    let x = x.abs();
    if x == 0.0 {
        return 1.0;
    }
    if x >= 1.0 {
        return 0.0;
    }
    let x = x * PI;
    // Pillow writes the constants as C floats: 0.54f and 0.46f, widened to double.
    x.sin() / x * (f64::from(0.54f32) + f64::from(0.46f32) * x.cos())
}

fn bicubic_filter(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * A
    } else {
        0.0
    }
}

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    let x = x * PI;
    x.sin() / x
}

fn lanczos_filter(x: f64) -> f64 {
    if (-3.0..3.0).contains(&x) {
        sinc(x) * sinc(x / 3.0)
    } else {
        0.0
    }
}

const PRECISION_BITS: u32 = 32 - 8 - 2;

/// One axis's weights: for each output pixel the first source pixel and its fixed-point taps.
struct AxisWeights {
    first: Vec<usize>,
    taps: Vec<Vec<i32>>,
}

/// Pillow's `precompute_coeffs` and `normalize_coeffs_8bpc` for the whole source axis.
fn axis_weights(in_size: usize, out_size: usize, kernel: Kernel, support: f64) -> AxisWeights {
    // Pillow takes the box edge as a C float; sizes up to 2^24 are exact in it.
    let scale = f64::from(in_size as f32) / out_size as f64;
    let filter_scale = scale.max(1.0);
    let support = support * filter_scale;
    let inv_filter_scale = 1.0 / filter_scale;
    let mut first = Vec::with_capacity(out_size);
    let mut taps = Vec::with_capacity(out_size);
    for out in 0..out_size {
        let center = (out as f64 + 0.5) * scale;
        // C's (int) cast truncates toward zero, as `as` does.
        let min = ((center - support + 0.5) as i64).max(0) as usize;
        let max = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
        let weights: Vec<f64> = (min..max)
            .map(|x| kernel((x as f64 - center + 0.5) * inv_filter_scale))
            .collect();
        let total: f64 = weights.iter().sum();
        let one = f64::from(1u32 << PRECISION_BITS);
        let fixed = weights
            .iter()
            .map(|&w| {
                let w = if total != 0.0 { w / total } else { w };
                if w < 0.0 {
                    (-0.5 + w * one) as i32
                } else {
                    (0.5 + w * one) as i32
                }
            })
            .collect();
        first.push(min);
        taps.push(fixed);
    }
    AxisWeights { first, taps }
}

/// Pillow's `clip8`: the sum (which started at a half) shifted down and clipped to a byte.
fn clip8(sum: i64) -> u8 {
    (sum >> PRECISION_BITS).clamp(0, 255) as u8
}

/// An RGB image, three bytes a pixel, rows top down.
struct Image {
    pixels: Vec<u8>,
    width: usize,
    height: usize,
}

const CHANNELS: usize = 3;

fn horizontal(image: &Image, out_width: usize, weights: &AxisWeights) -> Image {
    let mut pixels = vec![0u8; out_width * image.height * CHANNELS];
    let in_row = image.width * CHANNELS;
    for (row_in, row_out) in image
        .pixels
        .chunks_exact(in_row)
        .zip(pixels.chunks_exact_mut(out_width * CHANNELS))
    {
        for (x, out) in row_out.chunks_exact_mut(CHANNELS).enumerate() {
            let start = weights.first[x] * CHANNELS;
            for (c, value) in out.iter_mut().enumerate() {
                let mut sum = 1i64 << (PRECISION_BITS - 1);
                for (k, &tap) in weights.taps[x].iter().enumerate() {
                    sum += i64::from(row_in[start + k * CHANNELS + c]) * i64::from(tap);
                }
                *value = clip8(sum);
            }
        }
    }
    Image {
        pixels,
        width: out_width,
        height: image.height,
    }
}

fn vertical(image: &Image, out_height: usize, weights: &AxisWeights) -> Image {
    let row = image.width * CHANNELS;
    let mut pixels = vec![0u8; row * out_height];
    for (y, row_out) in pixels.chunks_exact_mut(row).enumerate() {
        let start = weights.first[y];
        for (i, value) in row_out.iter_mut().enumerate() {
            let mut sum = 1i64 << (PRECISION_BITS - 1);
            for (k, &tap) in weights.taps[y].iter().enumerate() {
                sum += i64::from(image.pixels[(start + k) * row + i]) * i64::from(tap);
            }
            *value = clip8(sum);
        }
    }
    Image {
        pixels,
        width: image.width,
        height: out_height,
    }
}

/// Pillow's nearest positions along one axis (`ImagingScaleAffine`): a double step of
/// `in / out` from half a step, truncated; a position past the edge reads as black (Pillow
/// fills the output with zeros first), which rounding can reach only in theory.
fn nearest_positions(in_size: usize, out_size: usize) -> Vec<Option<usize>> {
    let step = f64::from(in_size as f32) / out_size as f64;
    let mut position = step * 0.5;
    (0..out_size)
        .map(|_| {
            let index = position as usize;
            position += step;
            (index < in_size).then_some(index)
        })
        .collect()
}

fn nearest(image: &Image, out_width: usize, out_height: usize) -> Image {
    let columns = nearest_positions(image.width, out_width);
    let rows = nearest_positions(image.height, out_height);
    let mut pixels = vec![0u8; out_width * out_height * CHANNELS];
    for (row_out, y) in pixels.chunks_exact_mut(out_width * CHANNELS).zip(rows) {
        let Some(y) = y else { continue };
        for (out, x) in row_out.chunks_exact_mut(CHANNELS).zip(&columns) {
            if let Some(x) = x {
                let at = (y * image.width + x) * CHANNELS;
                out.copy_from_slice(&image.pixels[at..at + CHANNELS]);
            }
        }
    }
    Image {
        pixels,
        width: out_width,
        height: out_height,
    }
}

/// `rgb` (`width × height`, three bytes a pixel, rows top down) resized as Pillow 13's
/// `Image.fromarray(rgb).resize((out_width, out_height), filter)`. Sizes must be at least 1.
pub fn resize_rgb(
    rgb: Vec<u8>,
    width: usize,
    height: usize,
    out_width: usize,
    out_height: usize,
    filter: Filter,
) -> Vec<u8> {
    let image = Image {
        pixels: rgb,
        width,
        height,
    };
    if (width, height) == (out_width, out_height) {
        return image.pixels;
    }
    let Some((kernel, support)) = filter.kernel() else {
        return nearest(&image, out_width, out_height).pixels;
    };
    let across = |image: &Image| {
        if image.width == out_width {
            None
        } else {
            Some(horizontal(
                image,
                out_width,
                &axis_weights(width, out_width, kernel, support),
            ))
        }
    };
    let down = |image: &Image| {
        if image.height == out_height {
            None
        } else {
            Some(vertical(
                image,
                out_height,
                &axis_weights(height, out_height, kernel, support),
            ))
        }
    };
    let down_first =
        height > out_height && (height - out_height) as i64 > 2 * (width as i64 - out_width as i64);
    let image = if down_first {
        let image = down(&image).unwrap_or(image);
        across(&image).unwrap_or(image)
    } else {
        let image = across(&image).unwrap_or(image);
        down(&image).unwrap_or(image)
    };
    image.pixels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pattern with every byte value and sharp edges.
    fn pattern(width: usize, height: usize) -> Vec<u8> {
        (0..width * height * CHANNELS)
            .map(|i| ((i * 37 + i / 7 * 11) % 256) as u8)
            .collect()
    }

    #[test]
    fn weights_sum_to_one_in_fixed_point() {
        for filter in [
            Filter::Box,
            Filter::Bilinear,
            Filter::Hamming,
            Filter::Bicubic,
            Filter::Lanczos,
        ] {
            let (kernel, support) = filter.kernel().unwrap();
            for (input, output) in [(1000, 224), (37, 224), (224, 224), (300, 7)] {
                let weights = axis_weights(input, output, kernel, support);
                for taps in &weights.taps {
                    let sum: i64 = taps.iter().map(|&t| i64::from(t)).sum();
                    // One rounding per tap: the sum is within a tap count of 2^22.
                    assert!(
                        (sum - (1 << PRECISION_BITS)).abs() <= taps.len() as i64,
                        "{filter:?} {input}->{output}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_flat_colour_stays_flat_at_any_scale_and_filter() {
        for filter in [
            Filter::Nearest,
            Filter::Box,
            Filter::Bilinear,
            Filter::Hamming,
            Filter::Bicubic,
            Filter::Lanczos,
        ] {
            for (w, h, ow, oh) in [
                (1, 1, 224, 224),
                (37, 53, 224, 224),
                (1001, 333, 384, 384),
                (50, 900, 224, 224),
            ] {
                let rgb = [200u8, 100, 50].repeat(w * h);
                let out = resize_rgb(rgb, w, h, ow, oh, filter);
                assert_eq!(out, [200u8, 100, 50].repeat(ow * oh), "{filter:?} {w}x{h}");
            }
        }
    }

    #[test]
    fn the_same_size_is_a_copy_and_a_shrink_widens_the_filter() {
        let rgb = pattern(20, 10);
        assert_eq!(
            resize_rgb(rgb.clone(), 20, 10, 20, 10, Filter::Bicubic),
            rgb
        );
        // Halving with bilinear: the filter spans two source pixels each side, weights
        // 1/8 3/8 3/8 1/8 (not the plain 1/2 1/2 of an unwidened triangle).
        let row: Vec<u8> = [0u8, 0, 0, 80, 80, 80, 160, 160, 160, 240, 240, 240].to_vec();
        let out = resize_rgb(row, 4, 1, 2, 1, Filter::Bilinear);
        // Pixel 0: edge-clipped weights 3/8 3/8 1/8 renormalised over 7/8: (0*3 + 80*3 + 160)/7.
        assert_eq!(out[0], ((80.0 * 3.0 + 160.0) / 7.0_f64).round() as u8);
        assert_eq!(
            out[3],
            ((80.0 + 160.0 * 3.0 + 240.0 * 3.0) / 7.0_f64).round() as u8
        );
    }

    #[test]
    fn nearest_picks_the_pixel_under_each_centre() {
        let row: Vec<u8> = (0..5u8).flat_map(|v| [v * 50; 3]).collect();
        // 5 → 2: centres at 1.25 and 3.75.
        assert_eq!(
            resize_rgb(row.clone(), 5, 1, 2, 1, Filter::Nearest),
            [50, 50, 50, 150, 150, 150]
        );
        // 5 → 10: each pixel twice.
        let out = resize_rgb(row, 5, 1, 10, 1, Filter::Nearest);
        let firsts: Vec<u8> = out.chunks(3).map(|p| p[0]).collect();
        assert_eq!(firsts, [0, 0, 50, 50, 100, 100, 150, 150, 200, 200]);
    }

    #[test]
    fn the_pass_order_follows_pillow_13() {
        // 100x160 → 50x50: 110 > 2 * 50, down first; 100x150 → 50x50: 100 is not, across first.
        // The orders round differently on a pattern, so each must equal its own two passes.
        for (height, down_first) in [(160usize, true), (150, false)] {
            let rgb = pattern(100, height);
            let ours = resize_rgb(rgb.clone(), 100, height, 50, 50, Filter::Bicubic);
            let (kernel, support) = Filter::Bicubic.kernel().unwrap();
            let image = Image {
                pixels: rgb,
                width: 100,
                height,
            };
            let across_w = axis_weights(100, 50, kernel, support);
            let down_w = axis_weights(height, 50, kernel, support);
            let across_then_down = vertical(&horizontal(&image, 50, &across_w), 50, &down_w).pixels;
            let down_then_across = horizontal(&vertical(&image, 50, &down_w), 50, &across_w).pixels;
            assert_ne!(across_then_down, down_then_across);
            let expected = if down_first {
                down_then_across
            } else {
                across_then_down
            };
            assert_eq!(ours, expected, "height {height}");
        }
    }
}
