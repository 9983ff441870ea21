//! PNG file bytes → pixels the core's preprocess reads as RGBA, decoded in WASM by the `png`
//! crate, for the PNGs whose RGBA the browser's decode is known to give bit for bit; every
//! other file is left to the browser ([`PngDecode::Browser`] says why).
//!
//! The browser's path (`createImageBitmap` with no premultiplication and no colour conversion,
//! a 1:1 `drawImage`, `getImageData`) returns for an opaque 8-bit PNG exactly its samples, grey
//! repeated into R, G and B and alpha 255. That is what this decode gives. It is not the same
//! for:
//! - a pixel that is not opaque: the canvas stores premultiplied colour, so `getImageData`
//!   returns `c·a/255` rounded and divided back, not `c`;
//! - 16-bit samples: how the browser rounds them to 8 bits is its own;
//! - a colour space chunk (gAMA, cHRM, sRGB, iCCP, cICP, mDCV, cLLI), which a browser may apply
//!   even with `colorSpaceConversion: "none"`;
//! - an animation, whose first shown frame is the browser's choice.
//!
//! Grey stays one byte per pixel here and is spread into RGBA band by band as the preprocess
//! reads it, so the whole image is never held four times over.

use std::io::Cursor;

use png::{BitDepth, ColorType, Transformations};

use crate::preprocess::{RgbaSource, MAX_SIDE};

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// The samples of one pixel as decoded (after palette and low-bit-depth expansion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Grey,
    GreyAlpha,
    Rgb,
    Rgba,
}

impl Layout {
    fn samples(self) -> usize {
        match self {
            Layout::Grey => 1,
            Layout::GreyAlpha => 2,
            Layout::Rgb => 3,
            Layout::Rgba => 4,
        }
    }
}

/// A decoded opaque 8-bit image, read as RGBA through [`RgbaSource`].
#[derive(Debug)]
pub struct DecodedPng {
    pub width: u32,
    pub height: u32,
    pub layout: Layout,
    /// Rows of `width × samples` bytes, no padding.
    pub samples: Vec<u8>,
}

/// What to do with a file.
#[derive(Debug)]
pub enum PngDecode {
    /// Decoded here; the RGBA it gives is the browser's.
    Decoded(DecodedPng),
    /// For the browser to decode, and why (a PNG this decode does not reproduce bit for bit, a
    /// file that is no PNG, or one that fails to decode here: the browser's error says what is
    /// wrong with it in the words the page has always reported).
    Browser(String),
}

/// Decodes `bytes` when it is a PNG whose RGBA this decode gives bit for bit as the browser.
pub fn decode_png(bytes: &[u8]) -> PngDecode {
    if !bytes.starts_with(&PNG_SIGNATURE) {
        return PngDecode::Browser("not a PNG".to_owned());
    }
    match try_decode(bytes) {
        Ok(decoded) => PngDecode::Decoded(decoded),
        Err(reason) => PngDecode::Browser(reason),
    }
}

fn try_decode(bytes: &[u8]) -> Result<DecodedPng, String> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(Transformations::EXPAND);
    decoder.set_ignore_text_chunk(true);
    let mut reader = decoder.read_info().map_err(|e| format!("png: {e}"))?;
    let info = reader.info();
    if info.bit_depth == BitDepth::Sixteen {
        return Err("16-bit samples".to_owned());
    }
    let colour_chunk = info.gama_chunk.is_some()
        || info.chrm_chunk.is_some()
        || info.srgb.is_some()
        || info.icc_profile.is_some()
        || info.coding_independent_code_points.is_some()
        || info.mastering_display_color_volume.is_some()
        || info.content_light_level.is_some();
    if colour_chunk {
        return Err("a colour space chunk".to_owned());
    }
    if info.is_animated() {
        return Err("an animation".to_owned());
    }
    let (width, height) = info.size();
    if width > MAX_SIDE || height > MAX_SIDE {
        // The preprocess refuses it; the browser's path reports it as it always has.
        return Err(format!("{width}x{height} pixels"));
    }
    let layout = match reader.output_color_type() {
        (ColorType::Grayscale, BitDepth::Eight) => Layout::Grey,
        (ColorType::GrayscaleAlpha, BitDepth::Eight) => Layout::GreyAlpha,
        (ColorType::Rgb, BitDepth::Eight) => Layout::Rgb,
        (ColorType::Rgba, BitDepth::Eight) => Layout::Rgba,
        other => return Err(format!("output {other:?}")),
    };
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "too large".to_owned())?;
    let mut samples = vec![0; size];
    let frame = reader
        .next_frame(&mut samples)
        .map_err(|e| format!("png: {e}"))?;
    samples.truncate(frame.buffer_size());
    // The rest of the file must be sound too (the browser's decoder would reject it).
    reader.finish().map_err(|e| format!("png: {e}"))?;
    let decoded = DecodedPng {
        width,
        height,
        layout,
        samples,
    };
    if !decoded.is_opaque() {
        return Err("transparent pixels".to_owned());
    }
    Ok(decoded)
}

impl DecodedPng {
    fn is_opaque(&self) -> bool {
        match self.layout {
            Layout::Grey | Layout::Rgb => true,
            Layout::GreyAlpha => self.samples.chunks_exact(2).all(|p| p[1] == 255),
            Layout::Rgba => self.samples.chunks_exact(4).all(|p| p[3] == 255),
        }
    }
}

impl RgbaSource for DecodedPng {
    fn byte_len(&self) -> usize {
        self.width as usize * self.height as usize * 4
    }

    /// The RGBA bytes `offset..offset + band.len()`, spread from the samples on the way.
    fn copy_band(&self, offset: usize, band: &mut [u8]) {
        let samples = self.layout.samples();
        let first = offset / 4;
        let source = &self.samples[first * samples..(first + band.len() / 4) * samples];
        let pixels = band.chunks_exact_mut(4);
        match self.layout {
            Layout::Grey => {
                for (out, &grey) in pixels.zip(source) {
                    out.copy_from_slice(&[grey, grey, grey, 255]);
                }
            }
            Layout::GreyAlpha => {
                for (out, pixel) in pixels.zip(source.chunks_exact(2)) {
                    out.copy_from_slice(&[pixel[0], pixel[0], pixel[0], pixel[1]]);
                }
            }
            Layout::Rgb => {
                for (out, pixel) in pixels.zip(source.chunks_exact(3)) {
                    out.copy_from_slice(&[pixel[0], pixel[1], pixel[2], 255]);
                }
            }
            Layout::Rgba => band.copy_from_slice(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preprocess::Preprocessor;

    /// A PNG of `samples` (rows of `width × channels`) made by the `png` crate's encoder.
    fn encode(
        width: u32,
        height: u32,
        colour: ColorType,
        depth: BitDepth,
        samples: &[u8],
    ) -> Vec<u8> {
        encode_with(width, height, colour, depth, samples, |_| {})
    }

    fn encode_with(
        width: u32,
        height: u32,
        colour: ColorType,
        depth: BitDepth,
        samples: &[u8],
        extra: impl FnOnce(&mut png::Encoder<'_, &mut Vec<u8>>),
    ) -> Vec<u8> {
        let mut file = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut file, width, height);
            encoder.set_color(colour);
            encoder.set_depth(depth);
            extra(&mut encoder);
            let mut writer = encoder.write_header().unwrap();
            writer.write_image_data(samples).unwrap();
        }
        file
    }

    /// Page-like noise: every byte value, deterministic.
    fn noise(len: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_u32;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state >> 24) as u8
            })
            .collect()
    }

    fn rgba_of(decoded: &DecodedPng) -> Vec<u8> {
        let mut rgba = vec![0; decoded.byte_len()];
        decoded.copy_band(0, &mut rgba);
        rgba
    }

    fn decoded(file: &[u8]) -> DecodedPng {
        match decode_png(file) {
            PngDecode::Decoded(decoded) => decoded,
            PngDecode::Browser(why) => panic!("left to the browser: {why}"),
        }
    }

    fn browser_reason(file: &[u8]) -> String {
        match decode_png(file) {
            PngDecode::Browser(why) => why,
            PngDecode::Decoded(d) => panic!("decoded here as {:?}", d.layout),
        }
    }

    #[test]
    fn grey_is_spread_into_rgb_with_opaque_alpha() {
        let grey = noise(7 * 5);
        let rgba = rgba_of(&decoded(&encode(
            7,
            5,
            ColorType::Grayscale,
            BitDepth::Eight,
            &grey,
        )));
        let expected: Vec<u8> = grey.iter().flat_map(|&g| [g, g, g, 255]).collect();
        assert_eq!(rgba, expected);
    }

    #[test]
    fn rgb_and_opaque_rgba_keep_their_samples() {
        let rgb = noise(6 * 4 * 3);
        let rgba = rgba_of(&decoded(&encode(
            6,
            4,
            ColorType::Rgb,
            BitDepth::Eight,
            &rgb,
        )));
        let expected: Vec<u8> = rgb
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        assert_eq!(rgba, expected);
        let opaque: Vec<u8> = expected.clone();
        assert_eq!(
            rgba_of(&decoded(&encode(
                6,
                4,
                ColorType::Rgba,
                BitDepth::Eight,
                &opaque
            ))),
            expected
        );
        let grey_alpha: Vec<u8> = noise(6 * 4).iter().flat_map(|&g| [g, 255]).collect();
        let spread: Vec<u8> = grey_alpha
            .chunks(2)
            .flat_map(|p| [p[0], p[0], p[0], 255])
            .collect();
        assert_eq!(
            rgba_of(&decoded(&encode(
                6,
                4,
                ColorType::GrayscaleAlpha,
                BitDepth::Eight,
                &grey_alpha
            ))),
            spread
        );
    }

    #[test]
    fn palette_and_one_bit_grey_expand_to_eight_bits() {
        // Two rows of 8 one-bit pixels: 0 → 0, 1 → 255.
        let rgba = rgba_of(&decoded(&encode(
            8,
            2,
            ColorType::Grayscale,
            BitDepth::One,
            &[0b1010_0000, 0b0000_0001],
        )));
        let bits = [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let expected: Vec<u8> = bits
            .iter()
            .flat_map(|&b| {
                let g = b * 255;
                [g, g, g, 255]
            })
            .collect();
        assert_eq!(rgba, expected);
        let palette = vec![10, 20, 30, 200, 100, 0];
        let file = encode_with(3, 1, ColorType::Indexed, BitDepth::Eight, &[1, 0, 1], |e| {
            e.set_palette(palette)
        });
        assert_eq!(
            rgba_of(&decoded(&file)),
            [200, 100, 0, 255, 10, 20, 30, 255, 200, 100, 0, 255]
        );
    }

    #[test]
    fn bands_at_any_offset_read_the_same_bytes() {
        let grey = noise(9 * 6);
        let image = decoded(&encode(9, 6, ColorType::Grayscale, BitDepth::Eight, &grey));
        let whole = rgba_of(&image);
        let row = 9 * 4;
        let mut band = vec![0; 2 * row];
        image.copy_band(3 * row, &mut band);
        assert_eq!(band, whole[3 * row..5 * row]);
    }

    #[test]
    fn the_tensor_is_preprocess_of_the_expanded_rgba() {
        let grey = noise(1024 * 768);
        let image = decoded(&encode(
            1024,
            768,
            ColorType::Grayscale,
            BitDepth::Eight,
            &grey,
        ));
        let rgba = rgba_of(&image);
        let mut from_png = Preprocessor::new();
        let mut from_rgba = Preprocessor::new();
        let ours = from_png.run_from(&image, 1024, 768).unwrap().to_vec();
        assert_eq!(
            ours,
            from_rgba.run_from(rgba.as_slice(), 1024, 768).unwrap()
        );
    }

    #[test]
    fn what_the_browser_decodes_differently_is_left_to_it() {
        let transparent: Vec<u8> = [[1, 2, 3, 255], [4, 5, 6, 128]].concat();
        assert_eq!(
            browser_reason(&encode(
                2,
                1,
                ColorType::Rgba,
                BitDepth::Eight,
                &transparent
            )),
            "transparent pixels"
        );
        assert_eq!(
            browser_reason(&encode(
                2,
                1,
                ColorType::GrayscaleAlpha,
                BitDepth::Eight,
                &[9, 255, 9, 0]
            )),
            "transparent pixels"
        );
        let palette_alpha = encode_with(2, 1, ColorType::Indexed, BitDepth::Eight, &[0, 1], |e| {
            e.set_palette(vec![0, 0, 0, 255, 255, 255]);
            e.set_trns(vec![255, 0]);
        });
        assert_eq!(browser_reason(&palette_alpha), "transparent pixels");
        assert_eq!(
            browser_reason(&encode(
                1,
                1,
                ColorType::Grayscale,
                BitDepth::Sixteen,
                &[1, 2]
            )),
            "16-bit samples"
        );
        let gamma = encode_with(1, 1, ColorType::Grayscale, BitDepth::Eight, &[7], |e| {
            e.set_source_gamma(png::ScaledFloat::new(1.0 / 2.2));
        });
        assert_eq!(browser_reason(&gamma), "a colour space chunk");
        let srgb = encode_with(1, 1, ColorType::Grayscale, BitDepth::Eight, &[7], |e| {
            e.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        });
        assert_eq!(browser_reason(&srgb), "a colour space chunk");
    }

    #[test]
    fn a_file_that_is_no_sound_png_is_left_to_the_browser() {
        assert_eq!(
            browser_reason(&[0xff, 0xd8, 0xff, 0xe0, 0, 0x10]),
            "not a PNG"
        );
        assert_eq!(browser_reason(b""), "not a PNG");
        let file = encode(16, 16, ColorType::Grayscale, BitDepth::Eight, &noise(256));
        let torn = &file[..file.len() - 20];
        assert!(
            browser_reason(torn).starts_with("png: "),
            "{}",
            browser_reason(torn)
        );
        let mut corrupt = file.clone();
        let last_idat_byte = corrupt.len() - 13;
        corrupt[last_idat_byte] ^= 0x55;
        assert!(
            browser_reason(&corrupt).starts_with("png: "),
            "{}",
            browser_reason(&corrupt)
        );
    }
}
