// @ts-check
// The decode loop of the model contract (docs/model-contract.md, "Prefill and
// steps"): prefill with the vision embeddings, BOS and positions 0..V; then
// one token per step at position V+1+i with the previous presents fed back as
// pasts. The KV cache stays on the GPU (presents are requested as gpu-buffer,
// which ORT feeds back zero-copy). Every tensor is disposed: an undisposed
// gpu-buffer output pins its buffer for good.
//
// The decode probe: the logits are requested as a gpu-buffer too, so each step
// splits into submitMs (until run() returns: ORT encodes and submits the
// step's kernels), syncMs (until the logits are readable on the CPU: the GPU's
// work plus the browser's completion wait) and chooseMs (the core's token
// choice). Without the split the first two are one await, as in the seed.

import { DECODER_IO, pastNameOf } from "../contract.js";
import { countDispatches } from "../dispatch-count.js";
import { ort } from "../ort.js";
import { decoderTensors } from "./decoder-tensors.js";
import { createDivergence } from "./divergence.js";

/**
 * The decode probe of one case as both loops fill it (the core's CaseProbe, with the
 * dispatch counts always there).
 * @typedef {import("../../pkg/ocr_bench_core.js").CaseProbe & { stepDispatches: number[] }} DecodeProbe
 */

/**
 * session: the decoder session; spec: what the loop knows of the decoder; waiter: the
 * realm's GPU waiter (browser/gpu-wait.js). device: the GPUDevice the session
 * runs on (only the test-only diverge-kv fault writes to it).
 * @param {import("onnxruntime-web").InferenceSession} session
 * @param {import("./decoder-tensors.js").DecoderSpec} spec
 * @param {import("../gpu-wait.js").GpuWaiter} waiter
 * @param {{ device?: GPUDevice | null }} [options]
 */
export function createDecoder(session, spec, waiter, { device = null } = {}) {
	const { presentNames, int32, pastLength, prefillFeeds, disposeOutputs } = decoderTensors(spec);
	const pastNames = new Set(presentNames.map((name) => pastNameOf(name)));
	const disposeFeeds = (feeds, keep) => {
		for (const [name, tensor] of Object.entries(feeds)) if (!keep.has(name)) tensor.dispose();
	};
	/** One decoder run, timed in two: run() returning, then the logits on the CPU; and its dispatches counted. */
	const step = async (feeds) => {
		const started = performance.now();
		const { value: outputs, dispatches } = await waiter.wait(() => countDispatches(() => session.run(feeds)));
		const submitted = performance.now();
		let logits;
		try {
			logits = await waiter.wait(() => outputs[DECODER_IO.logits].getData());
		} catch (error) {
			disposeOutputs(outputs);
			throw error;
		}
		const synced = performance.now();
		if (logits.length !== spec.vocabulary) {
			disposeOutputs(outputs);
			throw new Error(
				`The decoder returned ${logits.length} logits, but the vocabulary has ${spec.vocabulary} ids (manifest capability.vocabulary and vocab.json).`,
			);
		}
		return { outputs, logits, submitMs: submitted - started, syncMs: synced - submitted, dispatches };
	};

	/**
	 * visionEmbeds: a [1,V,hidden] tensor (CPU or gpu-buffer; disposed here).
	 * next(logits, step): the next token id, from the core's TokenChooser or forced.
	 * diverge: a test-only divergence fault's kind (www/divergence.js), or null.
	 * Returns the tokens, the seed's times and the probe: per step submitMs,
	 * syncMs, chooseMs (chooseMs[0] chose the prefill's token), and the
	 * dispatches of the prefill and of each step.
	 */
	return async function decode(visionEmbeds, { next, maxTokens, diverge = null }) {
		const divergence = diverge ? createDivergence(diverge, { spec, device }) : null;
		const started = performance.now();
		const prefillInputs = prefillFeeds(visionEmbeds);
		let prefill;
		try {
			prefill = await step(prefillInputs);
		} finally {
			disposeFeeds(prefillInputs, new Set());
		}
		/** @type {DecodeProbe} */
		const probe = {
			prefillSubmitMs: prefill.submitMs,
			prefillSyncMs: prefill.syncMs,
			submitMs: [],
			syncMs: [],
			chooseMs: [],
			prefillDispatches: prefill.dispatches,
			stepDispatches: [],
		};
		let { outputs, logits } = prefill;
		/** @type {number[]} */
		const tokens = [];
		let decodeSteps = 0;
		const decodeStarted = performance.now();
		try {
			for (let iteration = 0; iteration < maxTokens; iteration += 1) {
				const chooseStarted = performance.now();
				divergence?.logits(logits, iteration);
				const chosen = next(logits, iteration);
				const token = divergence ? divergence.token(chosen, logits, iteration) : chosen;
				probe.chooseMs.push(performance.now() - chooseStarted);
				if (token === spec.eos) break;
				tokens.push(token);
				if (tokens.length >= maxTokens) break;
				const position = spec.visionTokens + 1 + iteration;
				const feeds = {
					[DECODER_IO.visionEmbeds]: new ort.Tensor("float32", new Float32Array(0), [1, 0, spec.hiddenSize]),
					[DECODER_IO.tokenIds]: int32([token], [1, 1]),
					[DECODER_IO.positionIds]: int32([position], [1, 1]),
				};
				if (spec.fixedKv) feeds[DECODER_IO.pastLength] = pastLength(position);
				if (iteration === 0) divergence?.cache(outputs, presentNames);
				for (const name of presentNames) feeds[pastNameOf(name)] = outputs[name];
				let stepped;
				try {
					stepped = await step(feeds);
				} finally {
					disposeFeeds(feeds, pastNames);
				}
				decodeSteps += 1;
				probe.submitMs.push(stepped.submitMs);
				probe.syncMs.push(stepped.syncMs);
				probe.stepDispatches.push(stepped.dispatches);
				disposeOutputs(outputs);
				({ outputs, logits } = stepped);
			}
		} finally {
			disposeOutputs(outputs);
		}
		divergence?.check();
		const now = performance.now();
		return { tokens, decodeSteps, prefillMs: prefill.submitMs + prefill.syncMs, decodeMs: now - decodeStarted, decodeTotalMs: now - started, probe };
	};
}
