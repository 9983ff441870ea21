// The decoder contract's tensors (docs/model-contract.md, "Prefill and steps"),
// shared by both decode loops (decode.js, decode-gpu.js): the present names,
// the CPU tensors each loop feeds, the empty cache of the prefill, and the
// disposal of a run's outputs.
import { ort } from "../ort.js";
import { cacheName, DECODER_IO } from "../contract.js";

/**
 * Where a decoder session keeps its outputs, in either realm: every one on the
 * GPU, logits too, until the decode probe reads them (decode.js).
 */
export function decoderOutputLocations(layers) {
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

/** spec: { layers, kvHeads, headDim, kvSlots, fixedKv } of the decoder. */
export function decoderTensors(spec) {
	const presentNames = presentNamesOf(spec.layers);
	return {
		presentNames,
		int32: (values, dims) => new ort.Tensor("int32", Int32Array.from(values), dims),
		emptyCache: () => spec.fixedKv
			? new ort.Tensor("float32", new Float32Array(spec.kvHeads * spec.kvSlots * spec.headDim), [1, spec.kvHeads, spec.kvSlots, spec.headDim])
			: new ort.Tensor("float32", new Float32Array(0), [1, spec.kvHeads, 0, spec.headDim]),
		pastLength: (length) => new ort.Tensor("int64", BigInt64Array.of(BigInt(length)), [1]),
		/** Every output of a run disposed: an undisposed gpu-buffer output pins its buffer for good. */
		disposeOutputs: (outputs) => {
			outputs?.[DECODER_IO.logits]?.dispose();
			for (const name of presentNames) outputs?.[name]?.dispose();
		},
	};
}
