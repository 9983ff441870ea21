// @ts-check
// One decoder run, set up the same way in every realm that decodes: the page
// (realm=page, www/main.js) and the decoder worker (realm=worker,
// worker/decoder-worker.js). From the core's parsed config it creates the
// decoder session (and capture=on's step session), checks it against the model
// contract, and picks the loop (decode.js, or decode-gpu.js with choose=gpu)
// and the token choice (the core's TokenChooser or GpuTokenChooser), so the two
// realms decode and time alike. The caller owns the device and its waiter.
// An encoder-decoder manifest (`family`) gets its own loop and choice instead
// (decode-encoder-decoder.js, the core's GenerationChooser or GpuGenerationChooser).
import { GenerationChooser, GpuGenerationChooser, GpuTokenChooser, TokenChooser } from "../../pkg/ocr_bench_core.js";
import { checkDecoder } from "../contract.js";
import { endProfile } from "../ort-profile.js";
import { createSession } from "../sessions.js";
import { withCoreDefaults } from "./core-defaults.js";
import { createDecoder } from "./decode.js";
import { createCapturedSteps } from "./decode-capture.js";
import { checkEncoderDecoderGraph, createEncoderDecoder, encoderDecoderOutputLocations } from "./decode-encoder-decoder.js";
import { createGpuDecoder } from "./decode-gpu.js";
import { decoderOutputLocations } from "./decoder-tensors.js";

// Decoder-only scope: the seed forces this non-EOS id (the vocabulary's first
// character) so every run walks the complete cache path.
export const FORCED_TOKEN = 4;

/**
 * The choice on logits read on the CPU: the seed's, with the core's defaults (a
 * 1.2 penalty on every id already in the sequence, BOS included; a content
 * character repeated 12 times in a row blocked), or FORCED_TOKEN every step
 * with scope=decoder. Returns { next(logits), reset() (a fresh sequence: only
 * BOS), free() }.
 */
export function createTokenChoice({ decoderOnly, vocabulary, tokens }) {
	if (decoderOnly) return { next: () => FORCED_TOKEN, reset: () => {}, free: () => {} };
	const chooser = new TokenChooser(vocabulary, { bos: tokens.bos });
	return {
		next: (logits) => {
			const token = chooser.choose(logits);
			chooser.push(token);
			return token;
		},
		reset: () => chooser.reset(),
		free: () => chooser.free(),
	};
}

/** @typedef {Awaited<ReturnType<typeof createDecoderRun>>} DecoderRun */
/** @typedef {Awaited<ReturnType<typeof createEncoderDecoderRun>>} EncoderDecoderRun */

/**
 * The decoder run of a manifest's family: createDecoderRun for the built-in
 * prefix decoder, createEncoderDecoderRun for an imported encoder-decoder.
 * @param {string | undefined} family
 */
export const decoderRunOf = (family) => (family === "encoder-decoder" ? createEncoderDecoderRun : createDecoderRun);

/**
 * config: the core's parsed config (core.parseConfig, structured-cloned into a
 * worker as it is); capability: the manifest's; entry: the decoder's manifest
 * entry (www/manifest.js modelEntry: name, requires, fixedKv, kvSharedInPlace, model); tokens:
 * { bos, eos }; vocabulary: a core Vocabulary; device, waiter: the realm's
 * GPUDevice and its waiter (browser/gpu-wait.js).
 *
 * Returns { ready: { createMs, session (browser/sessions.js's record), step
 * (capture=on and all: { createMs, session } of the captured steps' session,
 * else null), spec }, decode, profile, release }.
 */
export async function createDecoderRun({ config: parsed, capability, entry, tokens, vocabulary, device, waiter }) {
	const config = withCoreDefaults(parsed);
	const decoderOnly = config.scope === "decoder";
	const outputs = decoderOutputLocations(capability.layers);
	// capture=all: the prefill on this session replays its own recorded graph (decode-capture.js).
	const capturedPrefill = config.capture === "all";
	const created = await createSession({
		model: entry.model,
		loader: config.loader,
		memory: config.memory,
		device,
		preferredOutputLocation: outputs,
		what: `decoder "${entry.name}"`,
		profile: config.profile,
		role: "decoder",
		graph: "decoder",
		graphCapture: capturedPrefill,
	});
	const session = created.session;
	/** @type {import("onnxruntime-web").InferenceSession | null} */
	let stepSession = null;
	/** @type {ReturnType<typeof createTokenChoice> | null} */
	let choice = null;
	/** @type {GpuTokenChooser | null} */
	let gpuChooser = null;
	let released = false;
	const release = async () => {
		if (released) return;
		released = true;
		await session.release();
		await stepSession?.release();
		stepSession = null;
		choice?.free();
		gpuChooser?.free();
		choice = null;
		gpuChooser = null;
	};
	try {
		const shape = checkDecoder(session, capability, entry, config.maxTokens);
		const spec = {
			...shape,
			fixedKv: entry.fixedKv,
			kvSharedInPlace: entry.kvSharedInPlace,
			visionTokens: capability.visionTokens,
			hiddenSize: capability.hiddenSize,
			vocabulary: capability.vocabulary,
			bos: tokens.bos,
			eos: tokens.eos,
		};
		/** @type {{ createMs: number, session: import("../../pkg/ocr_bench_core.js").SessionRecord } | null} */
		let step = null;
		let loop;
		if (config.choose === "gpu") {
			// The choice as a shader on the logits' buffer, `sync` steps per readback;
			// the GPU loop resets its chooser itself and forces the token of scope=decoder.
			gpuChooser = decoderOnly ? null : await GpuTokenChooser.create(device, vocabulary, { bos: tokens.bos });
			let createRunner;
			if (config.capture !== "off") {
				// The steps on a second session of the same file that records and replays them (decode-capture.js).
				const captured = await createCapturedSteps({
					model: entry.model,
					loader: config.loader,
					memory: config.memory,
					device,
					outputs,
					name: entry.name,
					profile: config.profile,
					capturedPrefill,
				});
				stepSession = captured.session;
				step = { createMs: captured.createMs, session: captured.record };
				createRunner = captured.createRunner;
			}
			loop = createGpuDecoder(session, spec, waiter, { device, chooser: gpuChooser, forcedToken: FORCED_TOKEN, sync: config.sync, createRunner });
		} else {
			choice = createTokenChoice({ decoderOnly, vocabulary, tokens });
			loop = createDecoder(session, spec, waiter, { device });
		}
		return {
			ready: { createMs: created.createMs, session: created.record, step, spec },
			/**
			 * visionEmbeds: a [1,V,hidden] tensor (disposed by the loop). keepLogits
			 * (verify=wasm): each step's logits kept, the array the step read back,
			 * no copy inside the timed loop. diverge: a test-only divergence fault's
			 * kind (divergence.js), or null. wrapNext(next): the page's fault hook
			 * around the choice. Returns the loop's result with `logits` (null
			 * without keepLogits).
			 */
			async decode(visionEmbeds, { maxTokens, keepLogits = false, diverge = null, wrapNext = (next) => next }) {
				/** @type {Float32Array[] | null} */
				const logits = keepLogits ? [] : null;
				// A fresh sequence holds only BOS (penalised like any seen id).
				choice?.reset();
				/** @param {Float32Array} stepLogits */
				const next = (stepLogits) => {
					logits?.push(stepLogits);
					// Only the CPU loop asks: choose=gpu chooses on the GPU.
					if (!choice) throw new Error("No CPU token choice: this decoder run chooses on the GPU (choose=gpu).");
					return choice.next(stepLogits);
				};
				const decoded = await loop(visionEmbeds, { next: wrapNext(next), maxTokens, diverge });
				return { ...decoded, logits };
			},
			/** profile=ops: the decoder session's operators and placement (one-shot: ORT then stops profiling). */
			profile: () => endProfile(session, created.placementLines),
			placementLines: created.placementLines,
			release,
		};
	} catch (error) {
		await release();
		throw error;
	}
}

/**
 * An imported encoder-decoder model's decoder run (manifest `family:
 * "encoder-decoder"`): the merged decoder's one session, or the pair's two
 * (decoder_model for the first step, decoder_with_past_model after), each
 * checked against the manifest; greedy choice under the model's
 * generation_config.json (the core's GenerationChooser, or with choose=gpu its
 * GpuGenerationChooser); the loop of decode-encoder-decoder.js. The same answer as createDecoderRun's.
 */
export async function createEncoderDecoderRun({ config: parsed, capability, entry, encoderDecoder, waiter, device }) {
	const config = withCoreDefaults(parsed);
	const outputs = encoderDecoderOutputLocations(capability.layers);
	/** @param {{ url: string }} model @param {string} what */
	const open = (model, what) =>
		createSession({
			model,
			loader: config.loader,
			memory: config.memory,
			device,
			preferredOutputLocation: outputs,
			what,
			profile: config.profile,
			role: "decoder",
			graph: "decoder",
		});
	const created = await open(entry.model, `decoder "${entry.name}"`);
	/** @type {Awaited<ReturnType<typeof open>> | null} */
	let withPast = null;
	/** @type {GenerationChooser | null} */
	let chooser = null;
	/** @type {GpuGenerationChooser | null} */
	let gpuChooser = null;
	let released = false;
	const release = async () => {
		if (released) return;
		released = true;
		await created.session.release();
		await withPast?.session.release();
		chooser?.free();
		chooser = null;
		gpuChooser?.destroy();
		gpuChooser?.free();
		gpuChooser = null;
	};
	try {
		checkEncoderDecoderGraph(created.session, entry, `decoder "${entry.name}"`);
		if (entry.withPast) {
			withPast = await open(entry.withPast.model, `decoder "${entry.name}" (with past)`);
			checkEncoderDecoderGraph(withPast.session, entry.withPast, `decoder "${entry.name}" (with past)`);
		}
		const generation = encoderDecoder.generation;
		const spec = {
			layers: capability.layers,
			kvHeads: capability.kvHeads,
			crossHeads: encoderDecoder.crossAttentionHeads,
			headDim: capability.headDim,
			vocabulary: capability.vocabulary,
			decoderStart: generation.decoderStartTokenId,
			eos: generation.eosTokenIds,
		};
		// choose=gpu: the same rule as a shader on the logits' buffer, `sync` steps per readback.
		if (config.choose === "gpu") gpuChooser = await GpuGenerationChooser.create(device, capability.vocabulary, generation, config.maxTokens);
		else chooser = new GenerationChooser(capability.vocabulary, generation);
		const active = chooser;
		const loop = createEncoderDecoder(created.session, withPast?.session ?? created.session, spec, waiter, { device, gpuChooser, sync: config.sync });
		return {
			ready: {
				createMs: created.createMs + (withPast?.createMs ?? 0),
				session: created.record,
				step: withPast ? { createMs: withPast.createMs, session: withPast.record } : null,
				spec,
			},
			/** encoderHidden: the encoder's last_hidden_state, CPU (staged) or gpu-buffer (resident); disposed by the loop. */
			async decode(encoderHidden, { maxTokens, wrapNext = (next) => next }) {
				active?.reset();
				/** @param {Float32Array} logits */
				const next = (logits) => {
					// Only the CPU loop asks: choose=gpu chooses on the GPU.
					if (!active) throw new Error("No CPU token choice: this decoder run chooses on the GPU (choose=gpu).");
					const token = active.choose(logits);
					active.push(token);
					return token;
				};
				const decoded = await loop(encoderHidden, { next: wrapNext(next), maxTokens });
				return { ...decoded, logits: null };
			},
			profile: () => endProfile(created.session, created.placementLines),
			placementLines: created.placementLines,
			release,
		};
	} catch (error) {
		await release();
		throw error;
	}
}
