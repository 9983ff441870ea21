// @ts-check
// The decode loop of an imported encoder-decoder model (a Hugging Face
// VisionEncoderDecoder exported by optimum; docs/model-contract.md, "The
// encoder-decoder loop"), beside the built-in prefix decoder's decode.js.
//
// Step 1 feeds the decoder start as int64 input_ids [1,1] with the encoder's
// last_hidden_state as encoder_hidden_states and empty caches ([1, heads, 0,
// headDim], self- and cross-attention); the merged graph takes
// use_cache_branch=false. Every later step feeds the chosen token, the previous
// step's self-attention presents as pasts, and step 1's cross-attention presents
// (the encoder's keys and values, computed once per image) with
// use_cache_branch=true. The pair form runs decoder_model for step 1 and
// decoder_with_past_model after it, each fed only the inputs it takes. Every
// present stays on the GPU (gpu-buffer outputs, fed back zero-copy); later
// steps fetch only the logits and the self-attention presents.
//
// encoder_hidden_states is an input of every step of the merged graph (its
// cached branch ignores it): fed as a CPU tensor, onnxruntime uploads it again
// into a buffer of its own at every step (TrOCR-base's 577 x 768 float32 are
// 1.8 MB a step). So a CPU last_hidden_state (the staged schedule's, read back
// in the vision worker) is uploaded once per image into a buffer on the
// decoder's device, which every step of the image reads and which is destroyed
// after it; the resident schedule's is on the GPU already. Measured in Firefox
// on the test export (smoke2, 24 tokens, staged): the decoder's device created
// 146 buffers per case before, 123 after: the 24 steps' uploads became one.
//
// The figures are decode.js's: step 1 is the "prefill" (the first token), each
// later step split into submitMs, syncMs and chooseMs. With choose=gpu the loop
// is decode-gpu.js's: the core's GpuGenerationChooser picks each token from the
// logits where they are and writes it as the next step's int64 input_ids, and
// the ids come back every `sync` steps (the same probe as decode-gpu.js's).

import { GpuGenerationChooser } from "../../pkg/ocr_bench_core.js";
import { countDispatches, uncounted } from "../dispatch-count.js";
import { createTensorBuffer } from "../gpu.js";
import { ort } from "../ort.js";
import { recordBatch } from "./batch-probe.js";

/** The tensor names of optimum's decoder exports, defined once. */
export const ENCODER_DECODER_IO = Object.freeze({
	inputIds: "input_ids",
	encoderHiddenStates: "encoder_hidden_states",
	useCacheBranch: "use_cache_branch",
	logits: "logits",
});

/** past_key_values.N.{decoder,encoder}.{key,value} in, present.N.… out. */
const cacheNames = (layers, attention) =>
	Array.from({ length: layers }, (_, layer) => ["key", "value"].map((kv) => `${layer}.${attention}.${kv}`)).flat();
const pastName = (suffix) => `past_key_values.${suffix}`;
const presentName = (suffix) => `present.${suffix}`;

/**
 * Where the decoder sessions keep their outputs: every one on the GPU, logits
 * too, until the loop reads them.
 * @param {number} layers
 */
export function encoderDecoderOutputLocations(layers) {
	/** @type {Record<string, import("onnxruntime-web").Tensor.DataLocation>} */
	const outputs = { [ENCODER_DECODER_IO.logits]: "gpu-buffer" };
	for (const suffix of [...cacheNames(layers, "decoder"), ...cacheNames(layers, "encoder")]) outputs[presentName(suffix)] = "gpu-buffer";
	return outputs;
}

/**
 * The decoder sessions checked against the manifest's entry: the I/O names it
 * lists (written from the files by `ocr-bench import`), and logits of the
 * manifest's vocabulary.
 * @param {import("onnxruntime-web").InferenceSession} session
 * @param {{ inputs: string[], outputs: string[] }} graph
 * @param {string} what
 */
export function checkEncoderDecoderGraph(session, graph, what) {
	/** @type {[string, readonly string[], string[]][]} */
	const sides = [
		["inputs", session.inputNames, graph.inputs],
		["outputs", session.outputNames, graph.outputs],
	];
	for (const [kind, names, listed] of sides) {
		if (JSON.stringify(names) !== JSON.stringify(listed)) {
			throw new Error(
				`The ${what} has the ${kind} [${names.join(", ")}], but the manifest lists [${listed.join(", ")}]; is the manifest the one ocr-bench import wrote for this file?`,
			);
		}
	}
}

/**
 * What the loop knows of the decoder, from the manifest.
 * @typedef {object} EncoderDecoderSpec
 * @property {number} layers
 * @property {number} kvHeads self-attention heads
 * @property {number} crossHeads cross-attention heads
 * @property {number} headDim
 * @property {number} vocabulary
 * @property {number} decoderStart
 * @property {number[]} eos any of them ends the reading
 */

/**
 * first: the session of step 1 (the merged graph, or decoder_model); later:
 * the session of every later step (the merged graph again, or
 * decoder_with_past_model); spec: what the loop knows of the decoder; waiter:
 * the realm's GPU waiter (browser/gpu-wait.js); device: the sessions' GPUDevice
 * (a CPU last_hidden_state is uploaded to it). gpuChooser (choose=gpu): the
 * core's GpuGenerationChooser on the sessions' device, which then chooses every
 * token from the logits' gpu-buffer and writes it where the next step reads
 * input_ids; sync: steps queued per readback of its ids, 1..=64.
 * @param {import("onnxruntime-web").InferenceSession} first
 * @param {import("onnxruntime-web").InferenceSession} later
 * @param {EncoderDecoderSpec} spec
 * @param {import("../gpu-wait.js").GpuWaiter} waiter
 * @param {{ device: GPUDevice, gpuChooser?: GpuGenerationChooser | null, sync?: number }} options
 */
export function createEncoderDecoder(first, later, spec, waiter, { device, gpuChooser = null, sync = 1 }) {
	const selfCache = cacheNames(spec.layers, "decoder");
	const crossCache = cacheNames(spec.layers, "encoder");
	const merged = first === later;
	const eos = new Set(spec.eos);
	// Later steps fetch only what they feed on: the cross-attention presents of a merged
	// graph's cached branch are its inputs passed through.
	const laterFetches = [ENCODER_DECODER_IO.logits, ...selfCache.map(presentName)];
	/** @param {number} token */
	const inputIds = (token) => new ort.Tensor("int64", BigInt64Array.of(BigInt(token)), [1, 1]);
	/** @param {boolean} value */
	const useCacheBranch = (value) => new ort.Tensor("bool", Uint8Array.of(value ? 1 : 0), [1]);
	/** @param {number} heads */
	const emptyCache = (heads) => new ort.Tensor("float32", new Float32Array(0), [1, heads, 0, spec.headDim]);
	// choose=gpu: the chooser writes each id where the next step reads input_ids.
	const gpu = gpuChooser && {
		chooser: gpuChooser,
		sync,
		inputIds: ort.Tensor.fromGpuBuffer(gpuChooser.inputIdsBuffer, { dataType: "int64", dims: [1, 1] }),
		NO_CANDIDATE: GpuGenerationChooser.NO_CANDIDATE,
	};
	/**
	 * Queues the GPU choice from a step's logits (still in their gpu-buffer); returns the
	 * time it took to queue. Its dispatch is the harness's, not onnxruntime's: left out of
	 * the counts.
	 * @param {Record<string, import("onnxruntime-web").Tensor>} outputs
	 */
	const choose = (outputs) => {
		const started = performance.now();
		uncounted(() => gpuChooser?.choose(outputs[ENCODER_DECODER_IO.logits].gpuBuffer));
		return performance.now() - started;
	};
	/** @param {number} count the last `count` ids chosen on the GPU, on the CPU */
	const readIds = async (count) => Array.from(await waiter.wait(() => /** @type {GpuGenerationChooser} */ (gpuChooser).readChosen(count)));
	/** @param {number} step */
	const noCandidate = (step) =>
		new Error(`No token can be chosen at decode step ${step}: every score is NaN, -Infinity or banned (the GPU chooser's readback marked it).`);
	/**
	 * The encoder's output where every step reads it: a gpu-buffer tensor as it is; a CPU
	 * one written once into a buffer of its own (destroyed when the returned tensor is
	 * disposed) and let go. Returns the tensor and the time the upload took to queue.
	 * @param {import("onnxruntime-web").Tensor} encoderHidden
	 */
	const onDevice = (encoderHidden) => {
		if (encoderHidden.location === "gpu-buffer") return { hidden: encoderHidden, uploadMs: 0 };
		try {
			// The contract's embeddings are float32 (browser/contract.js): whole 4-byte words, as writeBuffer needs.
			if (encoderHidden.type !== "float32")
				throw new Error(`The encoder's last_hidden_state is ${encoderHidden.type}; the encoder-decoder loop takes float32 only.`);
			const started = performance.now();
			const values = /** @type {Float32Array} */ (encoderHidden.data);
			const buffer = createTensorBuffer(device, "encoder hidden states (uploaded once per image)", values.byteLength);
			// writeBuffer copies the values before it returns; the GPU copy is ordered before step 1's submit.
			device.queue.writeBuffer(buffer, 0, values);
			const hidden = ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims: encoderHidden.dims, dispose: () => buffer.destroy() });
			return { hidden, uploadMs: performance.now() - started };
		} finally {
			encoderHidden.dispose();
		}
	};
	/** @param {Record<string, import("onnxruntime-web").Tensor> | null} outputs */
	const disposeAll = (outputs) => {
		for (const tensor of Object.values(outputs ?? {})) tensor.dispose();
	};
	/**
	 * The presents `kept` names, as the pasts they feed; every other output disposed (an
	 * undisposed gpu-buffer output pins its buffer for good).
	 * @param {Record<string, import("onnxruntime-web").Tensor>} outputs
	 * @param {string[]} kept
	 */
	const keepPresents = (outputs, kept) => {
		/** @type {Record<string, import("onnxruntime-web").Tensor>} */
		const pasts = {};
		for (const suffix of kept) pasts[pastName(suffix)] = outputs[presentName(suffix)];
		const keptNames = new Set(kept.map(presentName));
		for (const [name, tensor] of Object.entries(outputs)) if (!keptNames.has(name)) tensor.dispose();
		return pasts;
	};

	/**
	 * One decoder run, timed as decode.js times it: run() returning, then the logits on the
	 * CPU; with choose=gpu (readLogits false) they stay in their gpu-buffer.
	 */
	const step = async (session, feeds, fetches, readLogits = true) => {
		const inputs = Object.fromEntries(Object.entries(feeds).filter(([name]) => session.inputNames.includes(name)));
		const started = performance.now();
		const { value: outputs, dispatches } = await waiter.wait(() =>
			countDispatches(() =>
				fetches
					? session.run(
							inputs,
							fetches.filter((name) => session.outputNames.includes(name)),
						)
					: session.run(inputs),
			),
		);
		const submitted = performance.now();
		if (!readLogits) return { outputs, logits: null, submitMs: submitted - started, syncMs: 0, dispatches };
		let logits;
		try {
			logits = /** @type {Float32Array} */ (await waiter.wait(() => outputs[ENCODER_DECODER_IO.logits].getData()));
			if (logits.length !== spec.vocabulary)
				throw new Error(`The decoder returned ${logits.length} logits, but the manifest's capability.vocabulary says ${spec.vocabulary}.`);
		} catch (error) {
			disposeAll(outputs);
			throw error;
		}
		return { outputs, logits, submitMs: submitted - started, syncMs: performance.now() - submitted, dispatches };
	};

	/**
	 * encoderHidden: the encoder's last_hidden_state [1, visionTokens, hidden]
	 * (CPU or gpu-buffer; disposed here, with the buffer a CPU one was uploaded
	 * to). next(logits, step): the next token id
	 * (the CPU loop's; choose=gpu chooses on the GPU). Returns what decode.js
	 * returns: the tokens (no EOS), the times and the probe.
	 */
	return async function decode(encoderHidden, { next, maxTokens }) {
		const started = performance.now();
		gpu?.chooser.reset();
		const { hidden, uploadMs } = onDevice(encoderHidden);
		/** @type {Record<string, import("onnxruntime-web").Tensor>} */
		const firstFeeds = {
			[ENCODER_DECODER_IO.inputIds]: inputIds(spec.decoderStart),
			[ENCODER_DECODER_IO.encoderHiddenStates]: hidden,
			[ENCODER_DECODER_IO.useCacheBranch]: useCacheBranch(false),
		};
		for (const suffix of selfCache) firstFeeds[pastName(suffix)] = emptyCache(spec.kvHeads);
		for (const suffix of crossCache) firstFeeds[pastName(suffix)] = emptyCache(spec.crossHeads);
		/** @type {Record<string, import("onnxruntime-web").Tensor> | null} */
		let cross = null;
		/** @type {Record<string, import("onnxruntime-web").Tensor> | null} */
		let selfPresents = null;
		/**
		 * One later step on `ids` (the chosen token as an input_ids tensor, the caller's).
		 * @param {import("onnxruntime-web").Tensor} ids
		 * @param {boolean} readLogits
		 */
		const laterStep = async (ids, readLogits) => {
			const flag = useCacheBranch(true);
			try {
				return await step(
					later,
					{
						[ENCODER_DECODER_IO.inputIds]: ids,
						[ENCODER_DECODER_IO.useCacheBranch]: flag,
						[ENCODER_DECODER_IO.encoderHiddenStates]: hidden,
						...selfPresents,
						...cross,
					},
					merged ? laterFetches : null,
					readLogits,
				);
			} finally {
				flag.dispose();
			}
		};
		/**
		 * The step's self-attention presents kept as the next step's pasts, the rest disposed.
		 * @param {Record<string, import("onnxruntime-web").Tensor>} outputs
		 */
		const advance = (outputs) => {
			disposeAll(selfPresents);
			// The pair's with-past graph may return the cross-attention presents too: not kept.
			selfPresents = keepPresents(outputs, selfCache);
		};
		try {
			let prefill;
			try {
				prefill = await step(first, firstFeeds, null, !gpu);
			} finally {
				for (const [name, tensor] of Object.entries(firstFeeds)) if (name !== ENCODER_DECODER_IO.encoderHiddenStates) tensor.dispose();
			}
			/** @type {import("./decode.js").DecodeProbe} */
			const probe = {
				// The upload is step 1's, as onnxruntime's own upload of a CPU input was inside its run().
				prefillSubmitMs: uploadMs + prefill.submitMs,
				prefillSyncMs: prefill.syncMs,
				submitMs: [],
				syncMs: [],
				chooseMs: [],
				...(gpu ? { stepsPerReadback: gpu.sync } : {}),
				prefillDispatches: prefill.dispatches,
				stepDispatches: [],
			};
			// Queued before the prefill's logits go back with the outputs not kept.
			const prefillChooseMs = gpu ? choose(prefill.outputs) : 0;
			// The encoder's keys and values of this image, fed to every later step.
			const pasts = keepPresents(prefill.outputs, [...selfCache, ...crossCache]);
			/** @param {string[]} suffixes */
			const pick = (suffixes) => Object.fromEntries(suffixes.map((suffix) => [pastName(suffix), pasts[pastName(suffix)]]));
			cross = pick(crossCache);
			selfPresents = pick(selfCache);
			/** @type {number[]} */
			const tokens = [];
			let decodeSteps = 0;
			let decodeStarted = performance.now();
			if (gpu) {
				// decode-gpu.js's loop: the first id read back on its own, then `sync` steps per
				// readback, the steps queued after an EOS discarded.
				probe.chooseMs.push(prefillChooseMs);
				const syncStarted = performance.now();
				const [first] = await readIds(1);
				probe.prefillSyncMs = performance.now() - syncStarted;
				decodeStarted = performance.now();
				if (first === gpu.NO_CANDIDATE) throw noCandidate(0);
				let ended = eos.has(first);
				if (!ended) tokens.push(first);
				while (!ended && tokens.length < maxTokens) {
					// Each step makes one token: never queue more than maxTokens allows.
					const batch = Math.min(gpu.sync, maxTokens - tokens.length);
					/** @type {{ submitMs: number, dispatches: number, chooseMs: number }[]} */
					const times = [];
					for (let index = 0; index < batch; index += 1) {
						const stepped = await laterStep(gpu.inputIds, false);
						const chooseMs = choose(stepped.outputs);
						advance(stepped.outputs);
						times.push({ submitMs: stepped.submitMs, dispatches: stepped.dispatches, chooseMs });
					}
					const syncStarted = performance.now();
					const ids = await readIds(batch);
					const syncMs = performance.now() - syncStarted;
					let kept = 0;
					for (const id of ids) {
						kept += 1;
						if (id === gpu.NO_CANDIDATE) throw noCandidate(decodeSteps + kept);
						if (eos.has(id)) {
							ended = true;
							break;
						}
						tokens.push(id);
					}
					recordBatch(probe, times, kept, syncMs);
					decodeSteps += kept;
				}
			} else {
				let logits = /** @type {Float32Array} */ (prefill.logits);
				for (let iteration = 0; iteration < maxTokens; iteration += 1) {
					const chooseStarted = performance.now();
					const token = next(logits, iteration);
					probe.chooseMs.push(performance.now() - chooseStarted);
					if (eos.has(token)) break;
					tokens.push(token);
					if (tokens.length >= maxTokens) break;
					const ids = inputIds(token);
					let stepped;
					try {
						stepped = await laterStep(ids, true);
					} finally {
						ids.dispose();
					}
					decodeSteps += 1;
					probe.submitMs.push(stepped.submitMs);
					probe.syncMs.push(stepped.syncMs);
					probe.stepDispatches.push(stepped.dispatches);
					advance(stepped.outputs);
					logits = /** @type {Float32Array} */ (stepped.logits);
				}
			}
			const now = performance.now();
			return {
				tokens,
				decodeSteps,
				prefillMs: probe.prefillSubmitMs + probe.prefillSyncMs,
				decodeMs: now - decodeStarted,
				decodeTotalMs: now - started,
				probe,
			};
		} finally {
			disposeAll(selfPresents);
			disposeAll(cross);
			hidden.dispose();
		}
	};
}
