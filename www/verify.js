// @ts-check
// verify=wasm: every timed case decoded again on onnxruntime-web's WASM (CPU)
// execution provider, in this realm, with the same graphs, inputs and token
// choice, and compared step by step with the WebGPU run.
//
// When: after every timed case and after the release phase has released the
// WebGPU sessions and taken its "released" sample, so no timing and no page
// memory sample of the run includes the CPU sessions (the runner's samples of
// the release phase do: that phase ends when the page posts its result).
// What: the vision encoder on the case's pixels (not in scope=decoder, where
// the zero embeddings are fed again), then the decoder through this file's own
// loop of the model contract (not browser/decoding/decode.js: a fault in the timed loop,
// such as an off-by-one position or a cache not fed back, must show up as a
// difference) with a fresh sequence for the core's chooser.
// Step k's logits (k = 0: the prefill's) chose token k; the core
// (crate/src/build_summary.rs, verification) compares them while the tokens
// before agree and applies the tolerance. A case id is decoded on the CPU once
// and compared with every repeat of it: the reference is deterministic.

import { CACHE_IO, DECODER_IO, VISION_IO } from "../browser/contract.js";
import { ort } from "../browser/ort.js";
import { createSession } from "../browser/sessions.js";

/**
 * The decode of docs/model-contract.md ("Prefill and steps") on CPU tensors:
 * prefill with the embeddings, BOS and positions 0..V; step i feeds token i at
 * position V+1+i with the previous presents as pasts (and past_length, for a
 * graph that takes it, as the number of cached positions). next(logits, step)
 * chooses; EOS ends the case and is not kept; maxTokens tokens end it too.
 * Returns the tokens and a copy of every step's logits (step 0: the prefill's).
 */
async function referenceDecode(session, spec, visionEmbeds, next, maxTokens) {
	const visionTokens = spec.visionTokens;
	const int32Row = (values) => new ort.Tensor("int32", Int32Array.from(values), [1, values.length]);
	const cacheDims = [1, spec.kvHeads, spec.fixedKv ? spec.kvSlots : 0, spec.headDim];
	const cacheNames = [];
	for (let layer = 0; layer < spec.layers; layer += 1) cacheNames.push(`k${layer}`, `v${layer}`);
	const takesPastLength = session.inputNames.includes(DECODER_IO.pastLength);
	let pasts = Object.fromEntries(
		cacheNames.map((name) => [CACHE_IO.past + name, new ort.Tensor("float32", new Float32Array(cacheDims.reduce((a, b) => a * b, 1)), cacheDims)]),
	);
	const call = async (embeds, token, positions) => {
		const feeds = {
			[DECODER_IO.visionEmbeds]: embeds,
			[DECODER_IO.tokenIds]: int32Row([token]),
			[DECODER_IO.positionIds]: int32Row(positions),
			...pasts,
		};
		if (takesPastLength) feeds[DECODER_IO.pastLength] = new ort.Tensor("int64", BigInt64Array.of(BigInt(positions[0])), [1]);
		const outputs = await session.run(feeds);
		pasts = Object.fromEntries(cacheNames.map((name) => [CACHE_IO.past + name, outputs[CACHE_IO.present + name]]));
		return Float32Array.from(await outputs[DECODER_IO.logits].getData());
	};
	const noEmbeds = new ort.Tensor("float32", new Float32Array(0), [1, 0, spec.hiddenSize]);
	const tokens = [];
	const logits = [];
	let stepLogits = await call(
		visionEmbeds,
		spec.bos,
		Array.from({ length: visionTokens + 1 }, (_, position) => position),
	);
	for (let step = 0; ; step += 1) {
		logits.push(stepLogits);
		const token = next(stepLogits, step);
		if (token === spec.eos) break;
		tokens.push(token);
		if (tokens.length >= maxTokens) break;
		stepLogits = await call(noEmbeds, token, [visionTokens + 1 + step]);
	}
	return { tokens, logits };
}

/** The largest |a[i] - b[i]|; NaN when a value is NaN or the lengths differ. */
export function maxAbsDifference(a, b) {
	if (a.length !== b.length) return Number.NaN;
	let largest = 0;
	for (let index = 0; index < a.length; index += 1) {
		const difference = Math.abs(a[index] - b[index]);
		if (Number.isNaN(difference)) return Number.NaN;
		if (difference > largest) largest = difference;
	}
	return largest;
}

/**
 * runs: the timed cases in the order of the results, each { testCase, repeat,
 * tokenIds, logits } with the WebGPU run's logits per step. spec: the decoder's
 * shape as checked against the WebGPU session (browser/contract.js) with the
 * manifest's numbers: { layers, kvHeads, headDim, kvSlots, fixedKv,
 * visionTokens, hiddenSize, bos, eos }.
 * makeNext(): a fresh next(logits, step) for one sequence. sessions: the
 * run's session records, which this pass's two are added to.
 * Returns the core's VerificationInput (crate/src/types.d.ts).
 */
export async function verifyOnWasm({ config, capability, visionEntry, decoderEntry, spec, runs, loadPixels, makeNext, sessions, log }) {
	const started = performance.now();
	const decoderOnly = config.scope === "decoder";
	const load = async (entry, graph, what) => {
		const created = await createSession({
			model: entry.model,
			loader: config.loader,
			memory: config.memory,
			executionProvider: "wasm",
			what: `${what} on WASM (verify=wasm)`,
			role: "verify",
			graph,
		});
		sessions.push(created.record);
		return created.session;
	};
	/** @type {import("onnxruntime-web").InferenceSession | null} */
	let vision = null;
	/** @type {import("onnxruntime-web").InferenceSession | null} */
	let decoder = null;
	try {
		if (!decoderOnly) vision = await load(visionEntry, "vision", `vision tier ${config.tier}`);
		decoder = await load(decoderEntry, "decoder", `decoder "${config.decoder}"`);
		const embeddings = async (testCase) => {
			if (decoderOnly) {
				const zeros = new Float32Array(capability.visionTokens * capability.hiddenSize);
				return new ort.Tensor("float32", zeros, [1, capability.visionTokens, capability.hiddenSize]);
			}
			if (!vision) throw new Error("verify=wasm has no vision session to encode the case with.");
			const pixels = new ort.Tensor("float32", await loadPixels(testCase), [1, 3, capability.imageSize, capability.imageSize]);
			try {
				return (await vision.run({ [VISION_IO.pixels]: pixels }))[VISION_IO.embeds];
			} finally {
				pixels.dispose();
			}
		};
		const references = new Map();
		const cases = [];
		for (const run of runs) {
			const { id } = run.testCase;
			if (!references.has(id)) {
				references.set(id, await referenceDecode(decoder, spec, await embeddings(run.testCase), makeNext(), config.maxTokens));
			}
			const reference = references.get(id);
			const steps = Math.min(run.logits.length, reference.logits.length);
			const stepMaxAbsDiff = [];
			for (let step = 0; step < steps; step += 1) stepMaxAbsDiff.push(maxAbsDifference(run.logits[step], reference.logits[step]));
			cases.push({ id, repeat: run.repeat, tokenIds: run.tokenIds, referenceTokenIds: reference.tokens, stepMaxAbsDiff });
			log(
				`VERIFY_CASE ${id} ${JSON.stringify({ repeat: run.repeat, tokens: run.tokenIds, reference: reference.tokens, maxAbsLogitDiff: Math.max(...stepMaxAbsDiff) })}`,
			);
		}
		// The core picks the logit tolerance from what the graphs run require (an fp16 one needs shader-f16).
		const requires = { visionRequires: decoderOnly ? [] : visionEntry.requires, decoderRequires: decoderEntry.requires };
		return { method: "wasm", wallMs: performance.now() - started, cases, ...requires };
	} finally {
		await vision?.release();
		await decoder?.release();
	}
}

/** The verification in one sentence, for the page's status line. */
export function verificationWords(verification) {
	const { agreeing, total, tolerance, worst, passed } = verification;
	const head = `${agreeing}/${total} cases agree with the WASM (CPU) reference (tokens equal, max |Δlogit| ≤ ${tolerance.maxAbsLogitDiff})`;
	if (!worst) return `Verification failed: ${head}.`;
	const difference = worst.maxAbsLogitDiff == null ? "not a number" : worst.maxAbsLogitDiff.toPrecision(3);
	const where = worst.firstDivergingStep == null ? "" : `, tokens diverged at step ${worst.firstDivergingStep}`;
	return `${passed ? "Verified" : "Verification FAILED, these figures are not a result"}: ${head}; worst case ${worst.id}: max |Δlogit| ${difference}${where}.`;
}
