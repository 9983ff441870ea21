// verify=wasm: every timed case decoded again on onnxruntime-web's WASM (CPU)
// execution provider, in this realm, with the same graphs, inputs and token
// choice, and compared step by step with the WebGPU run.
//
// When: after every timed case and after the release phase has released the
// WebGPU sessions and taken its "released" sample, so no timing and no page
// memory sample of the run includes the CPU sessions (the runner's samples of
// the release phase do: that phase ends when the page posts its result).
// What: the vision encoder on the case's pixels (not in scope=decoder, where
// the zero embeddings are fed again), then the decoder with the same loop
// (www/decode.js, a CPU waiter) and a fresh sequence for the core's chooser.
// Step k's logits (k = 0: the prefill's) chose token k; the core
// (crate/src/build_summary.rs, verification) compares them while the tokens
// before agree and applies the tolerance. A case id is decoded on the CPU once
// and compared with every repeat of it: the reference is deterministic.
import { ort } from "../browser/ort.js";
import { createSession } from "../browser/sessions.js";
import { createDecoder } from "./decode.js";

// The decode loop's waits are GPU waits; on the CPU there is nothing to wait on.
const CPU_WAITER = { wait: (work) => work() };

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
 * tokenIds, logits } with the WebGPU run's logits per step. spec: the decoder
 * spec of decode.js (the same shape the WebGPU session was checked against).
 * makeNext(): a fresh next(logits, step) for one sequence. sessions: the
 * run's session records, which this pass's two are added to.
 * Returns the core's VerificationInput (crate/src/record.d.ts).
 */
export async function verifyOnWasm({ config, capability, visionEntry, decoderEntry, spec, runs, loadPixels, makeNext, sessions, log }) {
	const started = performance.now();
	const decoderOnly = config.scope === "decoder";
	const load = async (entry, graph, what) => {
		const created = await createSession({ model: entry.model, loader: config.loader, memory: config.memory, executionProvider: "wasm", what: `${what} on WASM (verify=wasm)`, role: "verify", graph });
		sessions.push(created.record);
		return created.session;
	};
	let vision = null;
	let decoder = null;
	try {
		if (!decoderOnly) vision = await load(visionEntry, "vision", `vision tier ${config.tier}`);
		decoder = await load(decoderEntry, "decoder", `decoder "${config.decoder}"`);
		const decode = createDecoder(decoder, spec, CPU_WAITER);
		const embeddings = async (testCase) => {
			if (decoderOnly) {
				const zeros = new Float32Array(capability.visionTokens * capability.hiddenSize);
				return new ort.Tensor("float32", zeros, [1, capability.visionTokens, capability.hiddenSize]);
			}
			const pixels = new ort.Tensor("float32", await loadPixels(testCase.imageUrl), [1, 3, capability.imageSize, capability.imageSize]);
			try {
				return (await vision.run({ pixel_values: pixels })).vision_embeds;
			} finally {
				pixels.dispose();
			}
		};
		const references = new Map();
		const cases = [];
		for (const run of runs) {
			const { id } = run.testCase;
			if (!references.has(id)) {
				const logits = [];
				const next = makeNext();
				const decoded = await decode(await embeddings(run.testCase), {
					// A copy: the CPU tensor behind these logits is disposed after the step.
					next: (stepLogits, step) => {
						logits.push(Float32Array.from(stepLogits));
						return next(stepLogits, step);
					},
					maxTokens: config.maxTokens,
				});
				references.set(id, { tokens: decoded.tokens, logits });
			}
			const reference = references.get(id);
			const steps = Math.min(run.logits.length, reference.logits.length);
			const stepMaxAbsDiff = [];
			for (let step = 0; step < steps; step += 1) stepMaxAbsDiff.push(maxAbsDifference(run.logits[step], reference.logits[step]));
			cases.push({ id, repeat: run.repeat, tokenIds: run.tokenIds, referenceTokenIds: reference.tokens, stepMaxAbsDiff });
			log(`VERIFY_CASE ${id} ${JSON.stringify({ repeat: run.repeat, tokens: run.tokenIds, reference: reference.tokens, maxAbsLogitDiff: Math.max(...stepMaxAbsDiff) })}`);
		}
		return { method: "wasm", wallMs: performance.now() - started, cases };
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
