// @ts-check
// The test-only divergence faults (www/fault-injection.js): what each one
// changes in decode.js's loop, in the page or in the decoder worker
// (realm=worker), so that a WebGPU run leaves the WASM reference at a known
// step and verify=wasm has to fail it. The reference (www/verify.js) has a loop
// of its own and never sees them.
//
// - diverge-logit: one logit of the prefill's, the runner-up's, raised 10 above
//   the best, in the array both the chooser and verify=wasm read (step 0).
// - diverge-token: the prefill's chosen token replaced by the runner-up (step 0).
// - diverge-kv: one KV slot, position 0 of layer 0's keys and values in every
//   head, overwritten in the prefill's presents on the GPU before the first step
//   reads them: step 1's logits move.

import { cacheName } from "../contract.js";

/** The value diverge-kv writes: large enough to pull layer 0's attention to the slot. */
const KV_VALUE = 16;
/** How far diverge-logit lifts the runner-up above the best logit. */
const LOGIT_LIFT = 10;

/** The id of the highest logit other than `except` and `eos`. */
function runnerUp(logits, except, eos) {
	let best = -1;
	for (let id = 0; id < logits.length; id += 1) {
		if (id === except || id === eos) continue;
		if (best < 0 || logits[id] > logits[best]) best = id;
	}
	return best;
}

/**
 * kind: "diverge-logit", "diverge-token" or "diverge-kv". spec: the decoder's
 * (decode.js). device: the GPUDevice the presents live on (diverge-kv).
 * The loop calls logits() before each choice, token() after it, cache() with
 * the prefill's presents before the first step, and check() at the end, which
 * throws when the case ended before the fault could change anything.
 */
export function createDivergence(kind, { spec, device }) {
	let applied = false;
	return {
		logits(logits, step) {
			if (kind !== "diverge-logit" || step !== 0) return;
			let best = 0;
			for (let id = 1; id < logits.length; id += 1) if (logits[id] > logits[best]) best = id;
			logits[runnerUp(logits, best, -1)] = logits[best] + LOGIT_LIFT;
			applied = true;
		},
		token(token, logits, step) {
			if (kind !== "diverge-token" || step !== 0) return token;
			applied = true;
			return runnerUp(logits, token, spec.eos);
		},
		cache(outputs, presentNames) {
			if (kind !== "diverge-kv") return;
			for (const name of presentNames.filter((n) => n === cacheName("present", "k", 0) || n === cacheName("present", "v", 0))) {
				const tensor = outputs[name];
				if (tensor.location !== "gpu-buffer")
					throw new Error(`inject=diverge-kv: ${name} is on ${tensor.location}, not a gpu-buffer; nothing on the GPU to overwrite.`);
				const [, heads, slots, headDim] = tensor.dims;
				const slot = new Float32Array(headDim).fill(KV_VALUE);
				for (let head = 0; head < heads; head += 1) device.queue.writeBuffer(tensor.gpuBuffer, head * slots * headDim * 4, slot);
			}
			applied = true;
		},
		check() {
			if (!applied)
				throw new Error(
					`inject=${kind}: the case ended before the fault could change its decode (it needs ${kind === "diverge-kv" ? "a first token that is not EOS and maxTokens of at least 2" : "a prefill"}).`,
				);
		},
	};
}
