//! `GpuTokenChooser` (and `GpuGenerationChooser`, below, an imported model's rule) for JavaScript: the seed's token choice as a compute shader on the
//! `GPUDevice` the page hands to onnxruntime-web, reading the decoder's logits where they
//! are (the `gpu-buffer` output) and writing the chosen id where the next step reads its
//! `token_ids`. The sequence (ids seen, the run) stays on the GPU; one readback returns the
//! last `k` choices.

use js_sys::{Int32Array, Object, Promise, Uint32Array};
use wasm_bindgen::prelude::*;
use web_sys::{
    gpu_buffer_usage, gpu_map_mode, GpuAutoLayoutMode, GpuBindGroupDescriptor, GpuBindGroupEntry,
    GpuBuffer, GpuBufferDescriptor, GpuComputePipeline, GpuComputePipelineDescriptor, GpuDevice,
    GpuErrorFilter, GpuProgrammableStage, GpuShaderModuleDescriptor,
};

use crate::{from_js, into_error, VocabularyJs};
use ocr_bench_core::gpu_choose::generation::{GenerationLayout, INPUT_IDS_BYTES};
use ocr_bench_core::gpu_choose::layout::{
    check_read, GpuChooserOptions, Layout, NO_CANDIDATE, RECORD_WORDS,
};
use ocr_bench_core::manifest::Generation;

// Each shader behind the float order both rank by (WGSL has no imports).
const SHADER: &str = concat!(
    include_str!("float_order.wgsl"),
    include_str!("choose.wgsl")
);
const GENERATION_SHADER: &str = concat!(
    include_str!("float_order.wgsl"),
    include_str!("generation_choose.wgsl")
);

#[wasm_bindgen(typescript_custom_section)]
const GPU_CHOOSER_TYPES: &'static str = r#"
export interface GpuTokenChooserOptions {
    /** Default 1. */
    bos?: number;
    /** Default 12: a content id that ends a run of this many equal decoded tokens is blocked. */
    maxRun?: number;
    /** Default 1: independent sequences, each reading its own vocabulary-sized slice of the logits. */
    sequences?: number;
}
"#;

#[wasm_bindgen(js_name = GpuTokenChooser)]
pub struct GpuTokenChooser {
    device: GpuDevice,
    pipeline: GpuComputePipeline,
    layout: Layout,
    content: GpuBuffer,
    seen: GpuBuffer,
    records: GpuBuffer,
    tokens: GpuBuffer,
    params: GpuBuffer,
    /// Dispatches since the last reset (every sequence takes one per dispatch).
    steps: u64,
}

fn buffer(device: &GpuDevice, label: &str, bytes: usize, usage: u32) -> Result<GpuBuffer, JsValue> {
    let descriptor = GpuBufferDescriptor::new_with_f64(bytes as f64, usage);
    descriptor.set_label(label);
    device.create_buffer(&descriptor)
}

fn write_words(device: &GpuDevice, target: &GpuBuffer, words: &[u32]) -> Result<(), JsValue> {
    device
        .queue()
        .write_buffer_with_u32_and_u8_slice(target, 0, bytemuck::cast_slice(words))
}

#[wasm_bindgen(js_class = GpuTokenChooser)]
impl GpuTokenChooser {
    /// A chooser on `device` for `vocabulary`, with the seed's penalty (1.2) and run block.
    /// Resolves once the shader compiled; a WebGPU validation error rejects with its message.
    #[wasm_bindgen(unchecked_return_type = "Promise<GpuTokenChooser>")]
    pub fn create(
        device: GpuDevice,
        vocabulary: &VocabularyJs,
        #[wasm_bindgen(unchecked_param_type = "GpuTokenChooserOptions")] options: Option<Object>,
    ) -> Result<Promise, JsError> {
        let options: GpuChooserOptions = from_js(
            "GpuTokenChooser options",
            options.into(),
            &["bos", "maxRun", "sequences"],
        )?;
        let layout = Layout::new(&vocabulary.inner, options)?;
        Ok(validated(device.clone(), "GpuTokenChooser", move || {
            Self::build(device, layout)
        }))
    }

    fn build(device: GpuDevice, layout: Layout) -> Result<Self, JsValue> {
        let pipeline = choose_pipeline(&device, SHADER);
        use gpu_buffer_usage::{COPY_DST, COPY_SRC, STORAGE, UNIFORM};
        let n = layout.sequences as usize;
        let words = layout.words as usize;
        let mut chooser = Self {
            content: buffer(&device, "gpu-choose content", words * 4, STORAGE | COPY_DST)?,
            seen: buffer(
                &device,
                "gpu-choose seen",
                n * words * 4,
                STORAGE | COPY_DST,
            )?,
            records: buffer(
                &device,
                "gpu-choose records",
                n * RECORD_WORDS * 4,
                STORAGE | COPY_SRC | COPY_DST,
            )?,
            // What the next decoder step reads as token_ids (ort.Tensor.fromGpuBuffer); padded
            // to 16 bytes, the granule onnxruntime-web sizes its own buffers in.
            tokens: buffer(
                &device,
                "gpu-choose token ids",
                (n * 4).next_multiple_of(16),
                STORAGE | COPY_SRC | COPY_DST,
            )?,
            params: buffer(&device, "gpu-choose params", 16, UNIFORM | COPY_DST)?,
            device,
            pipeline,
            layout,
            steps: 0,
        };
        write_words(&chooser.device, &chooser.content, &chooser.layout.content)?;
        write_words(&chooser.device, &chooser.params, &chooser.layout.params())?;
        chooser.reset()?;
        Ok(chooser)
    }

    /// Starts every sequence again: only BOS is in it, nothing is decoded yet. Queued, so
    /// it applies to the dispatches after it.
    pub fn reset(&mut self) -> Result<(), JsValue> {
        write_words(&self.device, &self.seen, &self.layout.initial_seen())?;
        write_words(&self.device, &self.records, &self.layout.initial_records())?;
        self.steps = 0;
        Ok(())
    }

    /// Queues one choice per sequence from `logits` (a vocabulary of float32 per sequence,
    /// as the decoder's gpu-buffer output holds them) and pushes it into the sequence. The
    /// ids land in `tokenBuffer`; nothing is read back.
    pub fn choose(&mut self, logits: &GpuBuffer) -> Result<(), JsError> {
        let needed = self.layout.logits_bytes();
        if logits.size() < needed as f64 {
            return Err(ocr_bench_core::CoreError::LogitsLength {
                expected: needed as usize / 4,
                actual: (logits.size() / 4.0) as usize,
            }
            .into());
        }
        dispatch(
            &self.device,
            &self.pipeline,
            &[
                logits,
                &self.content,
                &self.seen,
                &self.records,
                &self.tokens,
                &self.params,
            ],
            self.layout.sequences,
        );
        self.steps += 1;
        Ok(())
    }

    /// The buffer of the chosen ids, one int32 per sequence: the next step's `token_ids`.
    #[wasm_bindgen(getter, js_name = tokenBuffer)]
    pub fn token_buffer(&self) -> GpuBuffer {
        self.tokens.clone()
    }

    /// Choices queued since the last reset.
    #[wasm_bindgen(getter)]
    pub fn steps(&self) -> f64 {
        self.steps as f64
    }

    /// What an id read back is where its step had no candidate (every score NaN or
    /// -Infinity, or only the blocked id left): the CPU chooser's error, as a value.
    #[wasm_bindgen(getter = NO_CANDIDATE)]
    pub fn no_candidate() -> i32 {
        NO_CANDIDATE
    }

    /// The last `k` choices of every sequence, oldest first, sequence after sequence, with
    /// one `mapAsync`; `NO_CANDIDATE` marks a step without a candidate (and the steps after
    /// it until a reset). `k` is 1..=64 and at most the choices since the reset.
    #[wasm_bindgen(js_name = readChosen, unchecked_return_type = "Promise<Int32Array>")]
    pub fn read_chosen(&self, k: u32) -> Result<Promise, JsError> {
        // Checked before anything is queued (the records are the expected shape here).
        check_read(self.steps, k)?;
        let bytes = self.layout.sequences as usize * RECORD_WORDS * 4;
        let layout = self.layout.clone();
        let steps = self.steps;
        read_records(&self.device, &self.records, bytes, move |words| {
            layout.last_chosen(words, steps, k)
        })
    }

    /// Gives the chooser's GPU buffers back (the logits and the device are the caller's).
    pub fn destroy(&self) {
        for buffer in [
            &self.content,
            &self.seen,
            &self.records,
            &self.tokens,
            &self.params,
        ] {
            buffer.destroy();
        }
    }
}

/// An imported model's token rule (the core's `GenerationChooser`: greedy under
/// `repetition_penalty` and `no_repeat_ngram_size`) as a compute shader on the page's device:
/// it reads the decoder's logits where they are and writes the chosen id as the next step's
/// int64 `input_ids`. The decoder's input ids stay on the GPU; one readback returns the last
/// `k` choices.
#[wasm_bindgen(js_name = GpuGenerationChooser)]
pub struct GpuGenerationChooser {
    device: GpuDevice,
    pipeline: GpuComputePipeline,
    layout: GenerationLayout,
    seen: GpuBuffer,
    banned: GpuBuffer,
    record: GpuBuffer,
    ids: GpuBuffer,
    input_ids: GpuBuffer,
    params: GpuBuffer,
    /// Dispatches since the last reset.
    steps: u64,
}

#[wasm_bindgen(js_class = GpuGenerationChooser)]
impl GpuGenerationChooser {
    /// A chooser on `device` for logits of `vocabulary` ids under `generation` (the
    /// manifest's `encoderDecoder.generation`), making at most `max_tokens` choices per
    /// sequence (the run's maxTokens). Resolves once the shader compiled; a WebGPU
    /// validation error rejects with its message.
    #[wasm_bindgen(unchecked_return_type = "Promise<GpuGenerationChooser>")]
    pub fn create(
        device: GpuDevice,
        vocabulary: usize,
        #[wasm_bindgen(unchecked_param_type = "ManifestGeneration")] generation: JsValue,
        #[wasm_bindgen(js_name = maxTokens)] max_tokens: u32,
    ) -> Result<Promise, JsError> {
        let generation: Generation = serde_wasm_bindgen::from_value(generation)
            .map_err(|e| into_error(format!("GpuGenerationChooser generation: {e}")))?;
        let layout = GenerationLayout::new(vocabulary, (&generation).into(), max_tokens)?;
        Ok(validated(
            device.clone(),
            "GpuGenerationChooser",
            move || Self::build(device, layout),
        ))
    }

    fn build(device: GpuDevice, layout: GenerationLayout) -> Result<Self, JsValue> {
        let pipeline = choose_pipeline(&device, GENERATION_SHADER);
        use gpu_buffer_usage::{COPY_DST, COPY_SRC, STORAGE, UNIFORM};
        let words = layout.words as usize * 4;
        let chooser = Self {
            seen: buffer(&device, "gpu-generation seen", words, STORAGE | COPY_DST)?,
            banned: buffer(&device, "gpu-generation banned", words, STORAGE | COPY_DST)?,
            record: buffer(
                &device,
                "gpu-generation record",
                RECORD_WORDS * 4,
                STORAGE | COPY_SRC | COPY_DST,
            )?,
            ids: buffer(
                &device,
                "gpu-generation input ids so far",
                (layout.max_tokens as usize + 1) * 4,
                STORAGE | COPY_DST,
            )?,
            input_ids: buffer(
                &device,
                "gpu-generation input_ids",
                INPUT_IDS_BYTES,
                STORAGE | COPY_SRC | COPY_DST,
            )?,
            params: buffer(&device, "gpu-generation params", 16, UNIFORM | COPY_DST)?,
            device,
            pipeline,
            layout,
            steps: 0,
        };
        write_words(&chooser.device, &chooser.params, &chooser.layout.params())?;
        let mut chooser = chooser;
        chooser.reset()?;
        Ok(chooser)
    }

    /// Starts the sequence again: its input ids are the decoder start only. Queued, so it
    /// applies to the dispatches after it.
    pub fn reset(&mut self) -> Result<(), JsValue> {
        let layout = &self.layout;
        write_words(&self.device, &self.seen, &layout.initial_seen())?;
        write_words(&self.device, &self.banned, &layout.initial_banned())?;
        write_words(&self.device, &self.record, &layout.initial_record())?;
        write_words(&self.device, &self.ids, &layout.initial_ids())?;
        self.steps = 0;
        Ok(())
    }

    /// Queues one choice from `logits` (a vocabulary of float32, as the decoder's gpu-buffer
    /// output holds them) and appends it to the input ids. The id lands in `inputIdsBuffer`;
    /// nothing is read back.
    pub fn choose(&mut self, logits: &GpuBuffer) -> Result<(), JsError> {
        let needed = self.layout.logits_bytes();
        if logits.size() < needed as f64 {
            return Err(ocr_bench_core::CoreError::LogitsLength {
                expected: needed as usize / 4,
                actual: (logits.size() / 4.0) as usize,
            }
            .into());
        }
        self.layout.check_choose(self.steps)?;
        dispatch(
            &self.device,
            &self.pipeline,
            &[
                logits,
                &self.seen,
                &self.banned,
                &self.record,
                &self.ids,
                &self.input_ids,
                &self.params,
            ],
            1,
        );
        self.steps += 1;
        Ok(())
    }

    /// The chosen id as int64 `[1, 1]` (two words, -1 where the step had no candidate):
    /// the next decoder step's `input_ids`.
    #[wasm_bindgen(getter, js_name = inputIdsBuffer)]
    pub fn input_ids_buffer(&self) -> GpuBuffer {
        self.input_ids.clone()
    }

    /// Choices queued since the last reset.
    #[wasm_bindgen(getter)]
    pub fn steps(&self) -> f64 {
        self.steps as f64
    }

    /// What an id read back is where its step had no candidate (every score NaN or
    /// -Infinity or banned): the CPU chooser's error, as a value.
    #[wasm_bindgen(getter = NO_CANDIDATE)]
    pub fn no_candidate() -> i32 {
        NO_CANDIDATE
    }

    /// The last `k` choices, oldest first, with one `mapAsync`; `NO_CANDIDATE` marks a step
    /// without a candidate (and the steps after it until a reset). `k` is 1..=64 and at most
    /// the choices since the reset.
    #[wasm_bindgen(js_name = readChosen, unchecked_return_type = "Promise<Int32Array>")]
    pub fn read_chosen(&self, k: u32) -> Result<Promise, JsError> {
        check_read(self.steps, k)?;
        let layout = self.layout.clone();
        let steps = self.steps;
        read_records(&self.device, &self.record, RECORD_WORDS * 4, move |words| {
            layout.last_chosen(words, steps, k)
        })
    }

    /// Gives the chooser's GPU buffers back (the logits and the device are the caller's).
    pub fn destroy(&self) {
        for buffer in [
            &self.seen,
            &self.banned,
            &self.record,
            &self.ids,
            &self.input_ids,
            &self.params,
        ] {
            buffer.destroy();
        }
    }
}

/// Builds a chooser inside a validation error scope: resolves to it once the shader compiled,
/// or rejects with the device's message (its buffers given back).
fn validated<T: Into<JsValue> + 'static>(
    device: GpuDevice,
    what: &'static str,
    build: impl FnOnce() -> Result<T, JsValue>,
) -> Promise
where
    T: Destroy,
{
    device.push_error_scope(GpuErrorFilter::Validation);
    let chooser = build();
    let scope = device.pop_error_scope();
    wasm_bindgen_futures::future_to_promise(async move {
        let error =
            wasm_bindgen_futures::JsFuture::from(Promise::from(JsValue::from(scope))).await?;
        let chooser = chooser?;
        if !error.is_null() && !error.is_undefined() {
            chooser.destroy();
            let message = js_sys::Reflect::get(&error, &"message".into())?
                .as_string()
                .unwrap_or_default();
            return Err(into_error(format!(
                "{what}: the device refused the chooser's shader or buffers: {message}"
            ))
            .into());
        }
        Ok(chooser.into())
    })
}

/// What a chooser that failed validation gives back.
trait Destroy {
    fn destroy(&self);
}

impl Destroy for GpuTokenChooser {
    fn destroy(&self) {
        GpuTokenChooser::destroy(self);
    }
}

impl Destroy for GpuGenerationChooser {
    fn destroy(&self) {
        GpuGenerationChooser::destroy(self);
    }
}

/// A compute pipeline of `source`'s `choose` entry point, its bind group laid out by the shader.
fn choose_pipeline(device: &GpuDevice, source: &str) -> GpuComputePipeline {
    let module = device.create_shader_module(&GpuShaderModuleDescriptor::new(source));
    let stage = GpuProgrammableStage::new(&module);
    stage.set_entry_point("choose");
    device.create_compute_pipeline(
        &GpuComputePipelineDescriptor::new_with_gpu_auto_layout_mode(
            GpuAutoLayoutMode::Auto,
            &stage,
        ),
    )
}

/// One dispatch of `pipeline` over `buffers` (bindings 0, 1, … in order), `groups` workgroups.
fn dispatch(
    device: &GpuDevice,
    pipeline: &GpuComputePipeline,
    buffers: &[&GpuBuffer],
    groups: u32,
) {
    let entries: Vec<GpuBindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(binding, buffer)| GpuBindGroupEntry::new_with_gpu_buffer(binding as u32, buffer))
        .collect();
    let bind_group = device.create_bind_group(&GpuBindGroupDescriptor::new(
        &entries,
        &pipeline.get_bind_group_layout(0),
    ));
    let encoder = device.create_command_encoder();
    let pass = encoder.begin_compute_pass();
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, Some(&bind_group));
    pass.dispatch_workgroups(groups);
    pass.end();
    device.queue().submit(&[encoder.finish()]);
}

/// Copies `bytes` of `records` to a staging buffer, maps it once and resolves to the ids
/// `ids_of` finds in the words.
fn read_records(
    device: &GpuDevice,
    records: &GpuBuffer,
    bytes: usize,
    ids_of: impl FnOnce(&[u32]) -> ocr_bench_core::error::Result<Vec<i32>> + 'static,
) -> Result<Promise, JsError> {
    let staging = buffer(
        device,
        "gpu-choose readback",
        bytes,
        gpu_buffer_usage::MAP_READ | gpu_buffer_usage::COPY_DST,
    )
    .map_err(js_error)?;
    let encoder = device.create_command_encoder();
    encoder
        .copy_buffer_to_buffer_with_u32_and_u32_and_u32(records, 0, &staging, 0, bytes as u32)
        .map_err(js_error)?;
    device.queue().submit(&[encoder.finish()]);
    let mapped = staging.map_async(gpu_map_mode::READ);
    Ok(wasm_bindgen_futures::future_to_promise(async move {
        let result = async {
            wasm_bindgen_futures::JsFuture::from(Promise::from(JsValue::from(mapped))).await?;
            let words = Uint32Array::new(&staging.get_mapped_range()?.into()).to_vec();
            staging.unmap();
            let ids = ids_of(&words).map_err(into_error)?;
            Ok::<JsValue, JsValue>(Int32Array::from(ids.as_slice()).into())
        }
        .await;
        staging.destroy();
        result
    }))
}

fn js_error(value: JsValue) -> JsError {
    let message = js_sys::Reflect::get(&value, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{value:?}"));
    JsError::new(&message)
}
