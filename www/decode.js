// The decode loop of the model contract (DESIGN.md): prefill with the vision
// embeddings, BOS and positions 0..V; then one token per step at position
// V+1+i with the previous presents fed back as pasts. The KV cache stays on
// the GPU (presents are requested as gpu-buffer, which ORT feeds back
// zero-copy); logits come to the CPU for token choice. Every tensor is
// disposed: an undisposed gpu-buffer output pins its buffer for good.
import { ort } from "./ort.js";

/**
 * session: the decoder session; spec: { layers, visionTokens, hiddenSize,
 * kvHeads, headDim, kvSlots, fixedKv, vocabulary, bos, eos }.
 */
export function createDecoder(session, spec) {
	const presentNames = [];
	for (let layer = 0; layer < spec.layers; layer += 1) presentNames.push(`present_k${layer}`, `present_v${layer}`);
	const int32 = (values, dims) => new ort.Tensor("int32", Int32Array.from(values), dims);
	const emptyCache = () => spec.fixedKv
		? new ort.Tensor("float32", new Float32Array(spec.kvHeads * spec.kvSlots * spec.headDim), [1, spec.kvHeads, spec.kvSlots, spec.headDim])
		: new ort.Tensor("float32", new Float32Array(0), [1, spec.kvHeads, 0, spec.headDim]);
	const pastLength = (length) => new ort.Tensor("int64", BigInt64Array.of(BigInt(length)), [1]);
	const disposeOutputs = (outputs) => {
		outputs.logits?.dispose();
		for (const name of presentNames) outputs[name]?.dispose();
	};
	const disposeFeeds = (feeds, keep) => {
		for (const [name, tensor] of Object.entries(feeds)) if (!keep.has(name)) tensor.dispose();
	};
	const checkLogits = (logits) => {
		if (logits.data.length !== spec.vocabulary) {
			throw new Error(`The decoder returned ${logits.data.length} logits, but the vocabulary has ${spec.vocabulary} ids (manifest capability.vocabulary and vocab.json).`);
		}
	};

	/**
	 * visionEmbeds: a [1,V,hidden] tensor (CPU or gpu-buffer; disposed here).
	 * next(logits, step): the next token id, from the core's TokenChooser or forced.
	 */
	return async function decode(visionEmbeds, { next, maxTokens }) {
		const started = performance.now();
		const prefillFeeds = {
			vision_embeds: visionEmbeds,
			token_ids: int32([spec.bos], [1, 1]),
			position_ids: int32(Array.from({ length: spec.visionTokens + 1 }, (_, index) => index), [1, spec.visionTokens + 1]),
		};
		for (const name of presentNames) prefillFeeds[name.replace("present_", "past_")] = emptyCache();
		if (spec.fixedKv) prefillFeeds.past_length = pastLength(0);
		const prefillStarted = performance.now();
		let outputs = await session.run(prefillFeeds);
		const prefillMs = performance.now() - prefillStarted;
		disposeFeeds(prefillFeeds, new Set());
		const tokens = [];
		let decodeSteps = 0;
		const decodeStarted = performance.now();
		try {
			checkLogits(outputs.logits);
			for (let iteration = 0; iteration < maxTokens; iteration += 1) {
				const token = next(outputs.logits.data, iteration);
				if (token === spec.eos) break;
				tokens.push(token);
				if (tokens.length >= maxTokens) break;
				const position = spec.visionTokens + 1 + iteration;
				const feeds = {
					vision_embeds: new ort.Tensor("float32", new Float32Array(0), [1, 0, spec.hiddenSize]),
					token_ids: int32([token], [1, 1]),
					position_ids: int32([position], [1, 1]),
				};
				if (spec.fixedKv) feeds.past_length = pastLength(position);
				for (const name of presentNames) feeds[name.replace("present_", "past_")] = outputs[name];
				const nextOutputs = await session.run(feeds);
				decodeSteps += 1;
				disposeOutputs(outputs);
				disposeFeeds(feeds, new Set(presentNames.map((name) => name.replace("present_", "past_"))));
				outputs = nextOutputs;
			}
		} finally {
			disposeOutputs(outputs);
		}
		const now = performance.now();
		return { tokens, decodeSteps, prefillMs, decodeMs: now - decodeStarted, decodeTotalMs: now - started };
	};
}
