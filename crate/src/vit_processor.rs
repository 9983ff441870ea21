//! The image processor of Hugging Face's ViT family (`ViTImageProcessor` and
//! `DeiTImageProcessor`, and their older `…FeatureExtractor` names), which TrOCR, DeiT and ViT
//! encoders are exported with: a `preprocessor_config.json` read into [`VitSettings`], and the
//! page's RGBA pixels turned into the encoder's `pixel_values`, `[1, 3, height, width]` f32,
//! as transformers 4.57's `ViTImageProcessor.preprocess` computes them from a PIL image:
//!
//! 1. RGB: the alpha channel is dropped, as PIL's `convert("RGB")` drops it (what
//!    `do_convert_rgb` runs, and what a caller does before a processor without it);
//! 2. resize to `size` with the named PIL filter, in u8 (`pil_resize.rs`): transformers'
//!    `resize` hands the uint8 array to PIL, so the rounding to bytes is PIL's;
//! 3. DeiT only: the centre crop to `crop_size`, the top left at `(size - crop) // 2`;
//! 4. `do_rescale`: `byte as f64 * rescale_factor`, stored as f32 (transformers' `rescale`);
//! 5. `do_normalize`: `(x - mean) / std` in f32, the mean and std made f32 first.
//!
//! A setting this cannot reproduce is refused by name, with what is allowed; so is any key the
//! family does not read, rather than ignored, so that an unknown processor option never goes
//! unnoticed.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{CoreError, Result};
use crate::pil_resize::{resize_rgb, Filter};
use crate::preprocess::{check_size, MAX_SIDE};

/// The processors of the family, by the names `image_processor_type` or
/// `feature_extractor_type` give them.
const VIT_NAMES: [&str; 2] = ["ViTImageProcessor", "ViTFeatureExtractor"];
const DEIT_NAMES: [&str; 2] = ["DeiTImageProcessor", "DeiTFeatureExtractor"];

/// Keys that name the files' classes, not a step.
const NAME_KEYS: [&str; 3] = [
    "image_processor_type",
    "feature_extractor_type",
    "processor_class",
];
/// The steps both processors read.
const VIT_KEYS: [&str; 9] = [
    "do_convert_rgb",
    "do_resize",
    "size",
    "resample",
    "do_rescale",
    "rescale_factor",
    "do_normalize",
    "image_mean",
    "image_std",
];
/// The steps only DeiT reads.
const DEIT_KEYS: [&str; 2] = ["do_center_crop", "crop_size"];

/// transformers' `IMAGENET_STANDARD_MEAN` and `_STD`, both processors' defaults.
const STANDARD_MEAN: [f64; 3] = [0.5, 0.5, 0.5];
const STANDARD_STD: [f64; 3] = [0.5, 0.5, 0.5];

/// What a `preprocessor_config.json` of the family asks for, with the class defaults filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "VitSettings"))]
#[serde(rename_all = "camelCase")]
pub struct VitSettings {
    /// The processor named by the file (`ViTImageProcessor`, `DeiTFeatureExtractor`, …).
    pub processor: String,
    /// The size the image is resized to.
    pub resize_width: u32,
    pub resize_height: u32,
    pub resample: Filter,
    /// DeiT's centre crop, `[width, height]`, where `do_center_crop` is on.
    pub center_crop: Option<[u32; 2]>,
    /// `rescale_factor` where `do_rescale` is on.
    pub rescale_factor: Option<f64>,
    /// `image_mean` and `image_std` where `do_normalize` is on.
    pub mean: Option<[f64; 3]>,
    pub std: Option<[f64; 3]>,
}

fn refuse(setting: &str, message: impl Into<String>) -> CoreError {
    CoreError::PreprocessorConfig {
        setting: setting.to_owned(),
        message: message.into(),
    }
}

fn boolean(config: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(value)) => Ok(*value),
        Some(other) => Err(refuse(
            key,
            format!("is {other}; allowed: true, false or null"),
        )),
    }
}

fn side(key: &str, value: &Value) -> Result<u32> {
    match value.as_u64() {
        Some(side) if (1..=u64::from(MAX_SIDE)).contains(&side) => Ok(side as u32),
        _ => Err(refuse(
            key,
            format!("has the side {value}; allowed: a whole number 1..={MAX_SIDE}"),
        )),
    }
}

/// `size` or `crop_size` as transformers' `get_size_dict` reads it for this family: a number
/// is a square, `{"height", "width"}` a rectangle. `{"shortest_edge"}` (CLIP's form) is refused,
/// as the family's `resize` refuses it.
fn size(key: &str, value: &Value) -> Result<[u32; 2]> {
    const ALLOWED: &str = "a number (a square) or {\"height\": H, \"width\": W}";
    match value {
        Value::Number(_) => {
            let side = side(key, value)?;
            Ok([side, side])
        }
        Value::Object(fields) => {
            let mut keys: Vec<&str> = fields.keys().map(String::as_str).collect();
            keys.sort_unstable();
            if keys != ["height", "width"] {
                return Err(refuse(
                    key,
                    format!(
                        "has the keys {keys:?}; the ViT family resizes to a fixed height and \
                         width (shortest_edge or longest_edge keep the aspect ratio, which \
                         its resize does not); allowed: {ALLOWED}"
                    ),
                ));
            }
            Ok([side(key, &fields["width"])?, side(key, &fields["height"])?])
        }
        other => Err(refuse(key, format!("is {other}; allowed: {ALLOWED}"))),
    }
}

/// `image_mean` or `image_std`: three numbers, or one for every channel (as transformers
/// broadcasts it).
fn per_channel(config: &Map<String, Value>, key: &str, default: [f64; 3]) -> Result<[f64; 3]> {
    let allowed = "three numbers (red, green, blue) or one number for all";
    match config.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(number)) => {
            let value = number.as_f64().unwrap_or(f64::NAN);
            Ok([value; 3])
        }
        Some(Value::Array(values)) if values.len() == 3 => {
            let mut out = [0.0; 3];
            for (slot, value) in out.iter_mut().zip(values) {
                *slot = value
                    .as_f64()
                    .ok_or_else(|| refuse(key, format!("holds {value}; allowed: {allowed}")))?;
            }
            Ok(out)
        }
        Some(other) => Err(refuse(key, format!("is {other}; allowed: {allowed}"))),
    }
}

impl VitSettings {
    /// Reads the text of a `preprocessor_config.json`.
    pub fn parse(text: &str) -> Result<VitSettings> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| refuse("(the file)", format!("is not JSON: {e}")))?;
        let Value::Object(config) = value else {
            return Err(refuse("(the file)", "is not a JSON object"));
        };
        let processor = ["image_processor_type", "feature_extractor_type"]
            .iter()
            .find_map(|key| config.get(*key).and_then(Value::as_str))
            .ok_or_else(|| {
                refuse(
                    "image_processor_type",
                    "is missing (and so is feature_extractor_type); the processor must be named",
                )
            })?
            .to_owned();
        let deit = DEIT_NAMES.contains(&processor.as_str());
        if !deit && !VIT_NAMES.contains(&processor.as_str()) {
            let why = if processor.ends_with("Fast") {
                " (the fast processors resize with torchvision, not PIL)"
            } else {
                ""
            };
            return Err(refuse(
                "image_processor_type",
                format!(
                    "is {processor:?}{why}; allowed: {}",
                    VIT_NAMES
                        .iter()
                        .chain(&DEIT_NAMES)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let known: Vec<&str> = NAME_KEYS
            .iter()
            .chain(&VIT_KEYS)
            .chain(if deit { &DEIT_KEYS[..] } else { &[] })
            .copied()
            .collect();
        if let Some(unknown) = config.keys().find(|key| !known.contains(&key.as_str())) {
            return Err(refuse(
                unknown,
                format!(
                    "is not a setting {processor} reads here; the settings are: {}",
                    known.join(", ")
                ),
            ));
        }

        // Reading do_convert_rgb only checks its type: both ways the alpha channel is dropped.
        boolean(&config, "do_convert_rgb", false)?;
        if !boolean(&config, "do_resize", true)? {
            return Err(refuse(
                "do_resize",
                "is false; the encoder needs a fixed image size, so the image must be resized (allowed: true)",
            ));
        }
        let default_size = if deit { 256 } else { 224 };
        let [resize_width, resize_height] = match config.get("size") {
            None | Some(Value::Null) => [default_size; 2],
            Some(value) => size("size", value)?,
        };
        let resample = match config.get("resample") {
            None | Some(Value::Null) => {
                if deit {
                    Filter::Bicubic
                } else {
                    Filter::Bilinear
                }
            }
            Some(value) => value.as_i64().and_then(Filter::from_pil).ok_or_else(|| {
                refuse(
                    "resample",
                    format!("is {value}; allowed: {}", Filter::ALLOWED),
                )
            })?,
        };
        let center_crop = if deit && boolean(&config, "do_center_crop", true)? {
            let crop = match config.get("crop_size") {
                None | Some(Value::Null) => [224; 2],
                Some(value) => size("crop_size", value)?,
            };
            if crop[0] > resize_width || crop[1] > resize_height {
                return Err(refuse(
                    "crop_size",
                    format!(
                        "is {}x{}, larger than the resized {resize_width}x{resize_height}; \
                         allowed: at most the size",
                        crop[0], crop[1]
                    ),
                ));
            }
            Some(crop)
        } else {
            None
        };
        let rescale_factor = if boolean(&config, "do_rescale", true)? {
            match config.get("rescale_factor") {
                None | Some(Value::Null) => Some(1.0 / 255.0),
                Some(value) => match value.as_f64() {
                    Some(factor) if factor.is_finite() && factor > 0.0 => Some(factor),
                    _ => {
                        return Err(refuse(
                            "rescale_factor",
                            format!("is {value}; allowed: a number > 0"),
                        ))
                    }
                },
            }
        } else {
            None
        };
        let (mean, std) = if boolean(&config, "do_normalize", true)? {
            let mean = per_channel(&config, "image_mean", STANDARD_MEAN)?;
            let std = per_channel(&config, "image_std", STANDARD_STD)?;
            if let Some(bad) = std.iter().find(|s| !(s.is_finite() && **s != 0.0)) {
                return Err(refuse(
                    "image_std",
                    format!("holds {bad}; allowed: finite numbers other than 0"),
                ));
            }
            if let Some(bad) = mean.iter().find(|m| !m.is_finite()) {
                return Err(refuse(
                    "image_mean",
                    format!("holds {bad}; allowed: finite numbers"),
                ));
            }
            (Some(mean), Some(std))
        } else {
            (None, None)
        };
        Ok(VitSettings {
            processor,
            resize_width,
            resize_height,
            resample,
            center_crop,
            rescale_factor,
            mean,
            std,
        })
    }

    /// The `[width, height]` of `pixel_values`: the crop where there is one, else the size.
    pub fn output_size(&self) -> [u32; 2] {
        self.center_crop
            .unwrap_or([self.resize_width, self.resize_height])
    }

    /// RGBA bytes (`width × height × 4`, rows top down) → `pixel_values`, CHW, one image.
    pub fn pixel_values(&self, rgba: &[u8], width: u32, height: u32) -> Result<Vec<f32>> {
        check_size(rgba.len(), width, height)?;
        let rgb: Vec<u8> = rgba
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        let (resized_width, resized_height) =
            (self.resize_width as usize, self.resize_height as usize);
        let resized = resize_rgb(
            rgb,
            width as usize,
            height as usize,
            resized_width,
            resized_height,
            self.resample,
        );
        let [out_width, out_height] = self.output_size().map(|side| side as usize);
        // transformers' center_crop: top and left by floor division.
        let (top, left) = (
            (resized_height - out_height) / 2,
            (resized_width - out_width) / 2,
        );
        let plane = out_width * out_height;
        let mut values = vec![0.0f32; 3 * plane];
        // The value of each byte per channel, computed once (256 entries, the f32 steps above).
        let table: Vec<[f32; 256]> = (0..3).map(|c| self.channel_table(c)).collect();
        for y in 0..out_height {
            let row = &resized[((top + y) * resized_width + left) * 3..][..out_width * 3];
            for (x, pixel) in row.chunks_exact(3).enumerate() {
                for c in 0..3 {
                    values[c * plane + y * out_width + x] = table[c][usize::from(pixel[c])];
                }
            }
        }
        Ok(values)
    }

    fn channel_table(&self, channel: usize) -> [f32; 256] {
        let mut table = [0.0f32; 256];
        for (byte, entry) in table.iter_mut().enumerate() {
            let mut value = match self.rescale_factor {
                Some(factor) => (byte as f64 * factor) as f32,
                None => byte as f32,
            };
            if let (Some(mean), Some(std)) = (self.mean, self.std) {
                value = (value - mean[channel] as f32) / std[channel] as f32;
            }
            *entry = value;
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TROCR: &str = r#"{"do_normalize": true, "do_resize": true,
        "feature_extractor_type": "ViTFeatureExtractor", "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5], "resample": 2, "size": 384}"#;

    fn error(text: &str) -> String {
        VitSettings::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_trocr_config_reads_with_defaults_filled() {
        let settings = VitSettings::parse(TROCR).unwrap();
        assert_eq!(
            settings,
            VitSettings {
                processor: "ViTFeatureExtractor".into(),
                resize_width: 384,
                resize_height: 384,
                resample: Filter::Bilinear,
                center_crop: None,
                rescale_factor: Some(1.0 / 255.0),
                mean: Some([0.5; 3]),
                std: Some([0.5; 3]),
            }
        );
        let deit = VitSettings::parse(
            r#"{"image_processor_type": "DeiTImageProcessor",
            "size": {"height": 256, "width": 300}, "do_rescale": false}"#,
        )
        .unwrap();
        assert_eq!((deit.resize_width, deit.resize_height), (300, 256));
        assert_eq!(deit.resample, Filter::Bicubic);
        assert_eq!(deit.center_crop, Some([224, 224]));
        assert_eq!(deit.rescale_factor, None);
        assert_eq!(deit.output_size(), [224, 224]);
    }

    #[test]
    fn other_processors_and_settings_are_refused_by_name() {
        let donut = error(r#"{"image_processor_type": "DonutImageProcessor"}"#);
        assert!(
            donut.contains(
                "`image_processor_type` is \"DonutImageProcessor\"; allowed: ViTImageProcessor"
            ),
            "{donut}"
        );
        let fast = error(r#"{"image_processor_type": "ViTImageProcessorFast"}"#);
        assert!(fast.contains("torchvision"), "{fast}");
        assert!(error("{}").contains("`image_processor_type` is missing"));
        let shortest = error(
            r#"{"image_processor_type": "ViTImageProcessor", "size": {"shortest_edge": 224}}"#,
        );
        assert!(
            shortest.contains("`size` has the keys [\"shortest_edge\"]"),
            "{shortest}"
        );
        let resample = error(r#"{"image_processor_type": "ViTImageProcessor", "resample": 6}"#);
        assert!(
            resample.contains("`resample` is 6; allowed: 0 (nearest)"),
            "{resample}"
        );
        let crop =
            error(r#"{"image_processor_type": "ViTImageProcessor", "do_center_crop": true}"#);
        assert!(
            crop.contains("`do_center_crop` is not a setting ViTImageProcessor reads"),
            "{crop}"
        );
        let pad = error(r#"{"image_processor_type": "DeiTImageProcessor", "do_pad": true}"#);
        assert!(
            pad.contains("`do_pad`") && pad.contains("crop_size"),
            "{pad}"
        );
        let no_resize =
            error(r#"{"image_processor_type": "ViTImageProcessor", "do_resize": false}"#);
        assert!(no_resize.contains("fixed image size"), "{no_resize}");
        let big_crop = error(
            r#"{"image_processor_type": "DeiTImageProcessor", "size": 200, "crop_size": 224}"#,
        );
        assert!(
            big_crop.contains("larger than the resized 200x200"),
            "{big_crop}"
        );
        let std = error(r#"{"image_processor_type": "ViTImageProcessor", "image_std": [1, 0, 1]}"#);
        assert!(std.contains("`image_std` holds 0"), "{std}");
        assert!(error("[1]").contains("not a JSON object"));
    }

    #[test]
    fn pixel_values_drop_alpha_and_normalise_in_f32() {
        let settings = VitSettings::parse(
            r#"{"image_processor_type": "ViTImageProcessor", "size": 2,
                "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}"#,
        )
        .unwrap();
        // A 2x2 image needs no resize: the values are the table's. Alpha 0 changes nothing.
        let rgba = [255, 0, 10, 0, 1, 2, 3, 255, 4, 5, 6, 128, 7, 8, 9, 255];
        let values = settings.pixel_values(&rgba, 2, 2).unwrap();
        let expected = |byte: f64, c: usize| {
            let mean = [0.485f32, 0.456, 0.406][c];
            let std = [0.229f32, 0.224, 0.225][c];
            ((byte / 255.0) as f32 - mean) / std
        };
        assert_eq!(values[0], expected(255.0, 0));
        assert_eq!(values[4], expected(0.0, 1));
        assert_eq!(values[8 + 3], expected(9.0, 2));
        assert!(settings.pixel_values(&rgba[..15], 2, 2).is_err());
    }

    #[test]
    fn deit_crops_the_centre_of_the_resized_image() {
        let settings = VitSettings::parse(
            r#"{"image_processor_type": "DeiTImageProcessor", "size": {"height": 4, "width": 5},
                "crop_size": {"height": 1, "width": 2}, "do_normalize": false, "do_rescale": false}"#,
        )
        .unwrap();
        // Already 5x4: the crop starts at ((4 - 1) / 2, (5 - 2) / 2) = row 1, column 1.
        let rgba: Vec<u8> = (0..20u8).flat_map(|i| [i, i, i, 255]).collect();
        let values = settings.pixel_values(&rgba, 5, 4).unwrap();
        assert_eq!(values, [6.0, 7.0, 6.0, 7.0, 6.0, 7.0]);
    }
}
