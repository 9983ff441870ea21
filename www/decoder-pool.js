// @ts-check
// pool=K (docs/benchmark-protocol.md, "A pool of decoder realms"): K decoder
// realms read the set's cases at once from one queue, as a reader app reads
// a page of 10-20 balloons. realm=worker: K dedicated workers
// (worker/decoder-worker.js through www/decoder-proxy.js), each with its own
// onnxruntime-web instance, WebGPU device and session. realm=page: K sessions
// in the page's one onnxruntime-web on its one device, reading their cases in
// turn step by step: the isolation check, whose tokens against pool=1 say
// whether onnxruntime-web's WebGPU provider keeps two decoding sessions apart.
// Their calls into onnxruntime-web go one at a time: two that overlap (one
// session's run() while another's is pending) trap in its WASM ("unaligned
// memory access", onnxruntime-web 1.30.0, Firefox), so one realm cannot
// decode two cases at once.
import { createDecoderRun } from "../browser/decoding/decoder-run.js";
import { messageOf } from "../browser/errors.js";
import { startDecoderProxy } from "./decoder-proxy.js";

/**
 * The K realms, their sessions created one after another. inputs: what one
 * decoder run takes ({ config, capability, tokens, decoderEntry, vocabulary
 * (a core Vocabulary), vocabularyCharacters }); page: { device, waiter } for
 * realm=page. Each realm: { index, ready, decode(embeds, options) → decode.js's
 * result with logits, memory (its last report: realm=worker only), close(),
 * releaseSession() and destroyDevice() (the release steps one at a time; in
 * the page the device is the page's, which it destroys itself), terminate() }.
 */
export async function loadDecoderPool(inputs, page) {
	const { config, decoderEntry } = inputs;
	const realms = [];
	try {
		for (let index = 0; index < config.pool; index += 1) {
			realms.push(config.realm === "worker" ? await workerRealm(index, inputs) : await pageRealm(index, inputs, page));
		}
	} catch (error) {
		for (const realm of realms) realm.terminate();
		throw new Error(`Decoder realm ${realms.length} of pool=${config.pool} (decoder "${decoderEntry.name}") could not start: ${messageOf(error)}`, {
			cause: error,
		});
	}
	return realms;
}

async function workerRealm(index, { config, capability, tokens, decoderEntry, vocabularyCharacters }) {
	const proxy = await startDecoderProxy({ config, capability, decoderEntry, tokens, vocabulary: vocabularyCharacters });
	const realm = {
		index,
		ready: proxy.ready,
		memory: proxy.ready.memory,
		async decode(visionEmbeds, options) {
			const answer = await proxy.decode(visionEmbeds, options);
			realm.memory = answer.memory;
			return { ...answer.decoded, logits: answer.logits };
		},
		async close() {
			realm.memory = await proxy.close();
			proxy.terminate();
		},
		async releaseSession() {
			realm.memory = await proxy.releaseSession();
		},
		async destroyDevice() {
			realm.memory = await proxy.destroyDevice();
		},
		terminate: () => proxy.terminate(),
	};
	return realm;
}

/** @typedef {import("../browser/gpu-wait.js").GpuWaiter} GpuWaiter */

/**
 * The page's waiter with its waits made one at a time, in the order asked:
 * each decode step's run() and readback wait on it, so the K sessions' calls
 * into the one onnxruntime-web alternate and never overlap.
 * @param {GpuWaiter} waiter
 * @returns {GpuWaiter}
 */
export function oneAtATime(waiter) {
	/** @type {Promise<unknown>} */
	let last = Promise.resolve();
	// Spreading the waiter would copy its `kicks` getter's value once; the count must stay live.
	return {
		poll: waiter.poll,
		kickMs: waiter.kickMs,
		/**
		 * @template T
		 * @param {() => Promise<T>} start
		 */
		wait(start) {
			const turn = last.then(() => waiter.wait(start));
			last = turn.catch(() => {});
			return turn;
		},
		get kicks() {
			return waiter.kicks;
		},
		close: () => waiter.close(),
	};
}

async function pageRealm(index, { config, capability, tokens, decoderEntry, vocabulary }, { device, waiter }) {
	const run = await createDecoderRun({ config, capability, entry: decoderEntry, tokens, vocabulary, device, waiter });
	// run.release() lets go once, however often it is called (browser/decoding/decoder-run.js).
	return {
		index,
		ready: run.ready,
		memory: null,
		decode: run.decode,
		close: run.release,
		releaseSession: run.release,
		destroyDevice: async () => {},
		terminate: () => run.release(),
	};
}

/**
 * The shared queue: each realm takes the next item of `plan` until none is
 * left. takeEmbeds(item, index) gives a case's vision embeddings; the calls
 * are made one at a time (the resident schedule's vision session is one).
 * readCase(item, index, realm) decodes and records one case. Returns the
 * wall time from the first take to the last case read.
 */
export async function readWithPool(plan, realms, takeEmbeds, readCase) {
	let next = 0;
	let embedding = Promise.resolve();
	const embedsInTurn = (item, index) => {
		const taken = embedding.then(() => takeEmbeds(item, index));
		embedding = taken.catch(() => {});
		return taken;
	};
	const started = performance.now();
	await Promise.all(
		realms.map(async (realm) => {
			while (next < plan.length) {
				const index = next;
				next += 1;
				await readCase(plan[index], index, realm, await embedsInTurn(plan[index], index));
			}
		}),
	);
	return performance.now() - started;
}
