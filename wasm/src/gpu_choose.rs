//! `GpuTokenChooser` for JavaScript: the seed's token choice as a compute shader on the
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
use ocr_bench_core::gpu_choose::layout::{
    check_read, GpuChooserOptions, Layout, NO_CANDIDATE, RECORD_WORDS,
};

const SHADER: &str = include_str!("choose.wgsl");

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
        device.push_error_scope(GpuErrorFilter::Validation);
        let chooser = Self::build(device.clone(), layout);
        let scope = device.pop_error_scope();
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let error =
                wasm_bindgen_futures::JsFuture::from(Promise::from(JsValue::from(scope))).await?;
            let chooser = chooser?;
            if !error.is_null() && !error.is_undefined() {
                chooser.destroy();
                let message = js_sys::Reflect::get(&error, &"message".into())?
                    .as_string()
                    .unwrap_or_default();
                return Err(into_error(format!(
                    "GpuTokenChooser: the device refused the chooser's shader or buffers: {message}"
                ))
                .into());
            }
            Ok(chooser.into())
        }))
    }

    fn build(device: GpuDevice, layout: Layout) -> Result<Self, JsValue> {
        let module = device.create_shader_module(&GpuShaderModuleDescriptor::new(SHADER));
        let stage = GpuProgrammableStage::new(&module);
        stage.set_entry_point("choose");
        let pipeline = device.create_compute_pipeline(
            &GpuComputePipelineDescriptor::new_with_gpu_auto_layout_mode(
                GpuAutoLayoutMode::Auto,
                &stage,
            ),
        );
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
        let entries = [
            GpuBindGroupEntry::new_with_gpu_buffer(0, logits),
            GpuBindGroupEntry::new_with_gpu_buffer(1, &self.content),
            GpuBindGroupEntry::new_with_gpu_buffer(2, &self.seen),
            GpuBindGroupEntry::new_with_gpu_buffer(3, &self.records),
            GpuBindGroupEntry::new_with_gpu_buffer(4, &self.tokens),
            GpuBindGroupEntry::new_with_gpu_buffer(5, &self.params),
        ];
        let bind_group = self.device.create_bind_group(&GpuBindGroupDescriptor::new(
            &entries,
            &self.pipeline.get_bind_group_layout(0),
        ));
        let encoder = self.device.create_command_encoder();
        let pass = encoder.begin_compute_pass();
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, Some(&bind_group));
        pass.dispatch_workgroups(self.layout.sequences);
        pass.end();
        self.device.queue().submit(&[encoder.finish()]);
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
        let staging = buffer(
            &self.device,
            "gpu-choose readback",
            bytes,
            gpu_buffer_usage::MAP_READ | gpu_buffer_usage::COPY_DST,
        )
        .map_err(js_error)?;
        let encoder = self.device.create_command_encoder();
        encoder
            .copy_buffer_to_buffer_with_u32_and_u32_and_u32(
                &self.records,
                0,
                &staging,
                0,
                bytes as u32,
            )
            .map_err(js_error)?;
        self.device.queue().submit(&[encoder.finish()]);
        let layout = self.layout.clone();
        let steps = self.steps;
        let mapped = staging.map_async(gpu_map_mode::READ);
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let result = async {
                wasm_bindgen_futures::JsFuture::from(Promise::from(JsValue::from(mapped))).await?;
                let words = Uint32Array::new(&staging.get_mapped_range()?.into()).to_vec();
                staging.unmap();
                let ids = layout.last_chosen(&words, steps, k).map_err(into_error)?;
                Ok::<JsValue, JsValue>(Int32Array::from(ids.as_slice()).into())
            }
            .await;
            staging.destroy();
            result
        }))
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

fn js_error(value: JsValue) -> JsError {
    let message = js_sys::Reflect::get(&value, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{value:?}"));
    JsError::new(&message)
}
