// @ts-check
// The decoder contract's tensors (docs/model-contract.md, "Prefill and steps"),
// shared by the decode loops (decode.js, decode-gpu.js, decode-capture.js): the
// present names, the CPU tensors each loop feeds, the prefill's inputs, and the
// disposal of a run's outputs.

import { cacheName, DECODER_IO, pastNameOf } from "../contract.js";
import { ort } from "../ort.js";

/** @typedef {import("onnxruntime-web").Tensor} Tensor */
/** Tensors by input or output name, as session.run takes and answers them. @typedef {Record<string, Tensor>} Tensors */

/**
 * What the decode loops know of the decoder: its shape as checked against the
 * manifest (browser/contract.js checkDecoder; kvSlots is null unless fixedKv), the
 * manifest's capability numbers and the vocabulary's BOS and EOS ids.
 * @typedef {object} DecoderSpec
 * @property {number} layers
 * @property {number} kvHeads
 * @property {number} headDim
 * @property {number | null} kvSlots
 * @property {boolean} fixedKv
 * @property {boolean} kvSharedInPlace the manifest's: under capture, each past and its present are one buffer (decode-capture.js)
 * @property {number} visionTokens
 * @property {number} hiddenSize
 * @property {number} vocabulary
 * @property {number} bos
 * @property {number} eos
 */

/**
 * The prefill's ids: BOS, at position V after the V vision tokens' positions
 * 0..V-1. Written into tensors (prefillFeeds) or into fixed GPU buffers
 * (decode-capture.js, capture=all).
 * @param {DecoderSpec} spec
 */
export function prefillIds(spec) {
	const positions = spec.visionTokens + 1;
	return {
		tokenIds: Int32Array.of(spec.bos),
		positionIds: Int32Array.from({ length: positions }, (_, index) => index),
		dims: { tokenIds: [1, 1], positionIds: [1, positions] },
	};
}

/**
 * Where a decoder session keeps its outputs, in either realm: every one on the
 * GPU, logits too, until the decode probe reads them (decode.js).
 */
export function decoderOutputLocations(layers) {
	/** @type {Record<string, import("onnxruntime-web").Tensor.DataLocation>} */
	const outputs = { [DECODER_IO.logits]: "gpu-buffer" };
	for (const name of presentNamesOf(layers)) outputs[name] = "gpu-buffer";
	return outputs;
}

/** present_k0, present_v0, present_k1, … : the cache outputs of a decoder of `layers` blocks. */
function presentNamesOf(layers) {
	const names = [];
	for (let layer = 0; layer < layers; layer += 1) names.push(cacheName("present", "k", layer), cacheName("present", "v", layer));
	return names;
}

/** @param {DecoderSpec} spec */
export function decoderTensors(spec) {
	const presentNames = presentNamesOf(spec.layers);
	// A fixed-KV cache has all its slots from the start (zeros); a growing one none.
	const slots = spec.fixedKv ? (spec.kvSlots ?? 0) : 0;
	/** @param {Iterable<number>} values @param {number[]} dims */
	const int32 = (values, dims) => new ort.Tensor("int32", Int32Array.from(values), dims);
	const emptyCache = () => new ort.Tensor("float32", new Float32Array(spec.kvHeads * slots * spec.headDim), [1, spec.kvHeads, slots, spec.headDim]);
	/** @param {number} length */
	const pastLength = (length) => new ort.Tensor("int64", BigInt64Array.of(BigInt(length)), [1]);
	return {
		presentNames,
		int32,
		pastLength,
		/**
		 * The prefill's feeds, all CPU tensors but visionEmbeds (a [1,V,hidden]
		 * tensor, as given): BOS at positions 0..V, an empty cache, and past length 0
		 * for a fixed-KV decoder. The caller disposes them after the run.
		 * @param {Tensor} visionEmbeds
		 * @returns {Tensors}
		 */
		prefillFeeds: (visionEmbeds) => {
			const ids = prefillIds(spec);
			/** @type {Tensors} */
			const feeds = {
				[DECODER_IO.visionEmbeds]: visionEmbeds,
				[DECODER_IO.tokenIds]: int32(ids.tokenIds, ids.dims.tokenIds),
				[DECODER_IO.positionIds]: int32(ids.positionIds, ids.dims.positionIds),
			};
			for (const name of presentNames) feeds[pastNameOf(name)] = emptyCache();
			if (spec.fixedKv) feeds[DECODER_IO.pastLength] = pastLength(0);
			return feeds;
		},
		/**
		 * Every output of a run disposed: an undisposed gpu-buffer output pins its buffer for good.
		 * @param {Tensors | null} outputs
		 */
		disposeOutputs: (outputs) => {
			outputs?.[DECODER_IO.logits]?.dispose();
			for (const name of presentNames) outputs?.[name]?.dispose();
		},
	};
}
