// @ts-check
// realm=worker: the page's proxy of worker/decoder-worker.js, which holds the
// decoder session, its decode loop and the token choice. The page hands it each
// case's vision embeddings as a transferred Float32Array (staged: the array the
// vision worker sent, copied only while a later repeat still needs it; resident:
// read back from the page's vision output; scope=decoder: none, the worker
// makes the zeros) and gets browser/decoding/decode.js's result back, timed inside the worker.
import { startDecoderWorker } from "./worker-client.js";

/** A typed array that owns its whole buffer, so that it can be transferred. */
const standalone = (values) =>
	values.buffer instanceof ArrayBuffer && values.byteOffset === 0 && values.byteLength === values.buffer.byteLength ? values : values.slice();

/**
 * The embeddings of an ort.Tensor as { values, dims } with an array to
 * transfer, the tensor let go; null for none. reused: the array is needed
 * again later (a repeat of a staged case), so a copy goes.
 */
async function embeddingsArray(tensor, reused) {
	if (!tensor) return null;
	const dims = [...tensor.dims];
	if (tensor.location === "gpu-buffer") return { values: standalone(await tensor.getData(true)), dims };
	const values = tensor.data;
	tensor.dispose();
	return { values: reused ? values.slice() : standalone(values), dims };
}

/**
 * Starts the worker and creates its decoder run (browser/decoding/decoder-run.js).
 * run: { config (the core's parsed config, sent as it is), capability,
 * decoderEntry, tokens: { bos, eos }, vocabulary (vocab.json's characters) }.
 * The proxy's ready is the worker's init answer: { createMs, session, step
 * (capture=on: { createMs, session } of the captured steps' session, else
 * null), spec, adapter, memory }.
 */
export async function startDecoderProxy({ config, capability, decoderEntry, tokens, vocabulary }) {
	const worker = await startDecoderWorker();
	try {
		const ready = await worker.call("init", { config, capability, entry: decoderEntry, tokens: { bos: tokens.bos, eos: tokens.eos }, vocabulary });
		return {
			ready,
			/**
			 * diverge: a test-only divergence fault's kind for this case (browser/decoding/divergence.js), or null.
			 * Returns { decoded (decode.js's result), logits (keepLogits: one array per step, else null), memory }.
			 */
			async decode(visionEmbeds, { maxTokens, reused = false, keepLogits = false, diverge = null }) {
				const embeds = await embeddingsArray(visionEmbeds, reused);
				return worker.call(
					"decode",
					{ embeds: embeds?.values ?? null, dims: embeds?.dims ?? null, maxTokens, keepLogits, diverge },
					embeds ? [embeds.values.buffer] : [],
				);
			},
			/** profile=ops: the decoder session's profile, as ort-profile.js's endProfile gives it. */
			profile: () => worker.call("profile", {}),
			/** Releases the session and the worker's device; returns the worker's memory after. */
			close: async () => (await worker.call("close", {})).memory,
			/** The release steps one at a time (release=sessions|device|realm): each returns the worker's memory after. */
			releaseSession: async () => (await worker.call("releaseSession", {})).memory,
			destroyDevice: async () => (await worker.call("destroyDevice", {})).memory,
			terminate: () => worker.terminate(),
		};
	} catch (error) {
		worker.terminate();
		throw error;
	}
}
