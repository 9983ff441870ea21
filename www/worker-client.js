// @ts-check
// The page's side of a dedicated worker of this harness (worker/vision-worker.js,
// worker/decoder-worker.js): a ready handshake, then calls matched to answers
// by id. A worker that dies rejects every pending call with what it said, and
// one that does not answer in time (or whose call is aborted) is terminated,
// so the page never waits forever. A worker that ends without a word (closed,
// crashed, killed) lets go of its lifetime lock, and every pending call then
// rejects at once.

import { rebuildError } from "../browser/errors.js";
import { ORT_DIST_FOLDER, ORT_DIST_PARAMETER } from "../browser/ort.js";

// One call's limit when the caller names none. Generous on purpose: on
// SwiftShader one vision encode took 32-81 s and a session's creation minutes;
// a hung worker is what this catches, not a slow one.
const DEFAULT_CALL_LIMIT_MS = 15 * 60 * 1000;

/** The vision worker of the staged schedule. */
export const startVisionWorker = () => startWorker("/worker/vision-worker.js", "The vision worker");

/** The decoder worker of realm=worker. */
export const startDecoderWorker = () => startWorker("/worker/decoder-worker.js", "The decoder worker");

/**
 * path: the worker module, from the site root; who: how errors name it ("The
 * vision worker"). The worker loads the page's onnxruntime-web, from the
 * folder its URL names (browser/ort.js).
 */
export async function startWorker(path, who) {
	const url = new URL(path, self.location.href);
	url.searchParams.set(ORT_DIST_PARAMETER, ORT_DIST_FOLDER);
	const worker = new Worker(url, { type: "module" });
	const pending = new Map();
	let nextId = 1;
	let failure = null;
	let readyResolve;
	let readyReject;
	const ready = new Promise((resolve, reject) => {
		readyResolve = resolve;
		readyReject = reject;
	});
	const failAll = (error) => {
		failure = error;
		readyReject(error);
		for (const call of pending.values()) call.reject(error);
		pending.clear();
	};
	worker.onmessage = ({ data }) => {
		if (data?.type === "ready") return readyResolve(data.payload);
		const call = pending.get(data?.id);
		if (!call || data.type === "progress") return;
		pending.delete(data.id);
		if (data.type === "error") call.reject(rebuildError(data.payload, `${who} failed without a message.`));
		else call.resolve(data.payload);
	};
	// A module that fails to load or throws at top level reports here, often
	// with an empty message in Chromium; say at least which file it was.
	worker.onerror = (event) => {
		event.preventDefault();
		failAll(new Error(`${who} (${path}) failed: ${event.message || "it could not load or start (see the browser console)"}`));
	};
	worker.onmessageerror = () => failAll(new Error(`${who} sent a message that could not be deserialised.`));
	const readyPayload = await ready;
	if (readyPayload.lifeLock) {
		navigator.locks
			.request(readyPayload.lifeLock, () => {
				if (failure) return;
				const calls = [...pending.values()].map((call) => `"${call.type}"`);
				failAll(new Error(`${who} ended without answering${calls.length ? ` ${calls.join(", ")}` : ""} (it was closed, crashed or was killed).`));
			})
			.catch(() => {});
	}
	return {
		ready: readyPayload,
		/**
		 * options: { signal, limitMs }: past either the worker is terminated and every call rejects.
		 * @param {string} type
		 * @param {unknown} payload
		 * @param {Transferable[]} [transfer]
		 * @param {{ signal?: AbortSignal, limitMs?: number }} [options]
		 */
		call(type, payload, transfer = [], { signal, limitMs = DEFAULT_CALL_LIMIT_MS } = {}) {
			if (failure) return Promise.reject(failure);
			if (signal?.aborted) return Promise.reject(signal.reason);
			const id = nextId++;
			return new Promise((resolve, reject) => {
				const stop = (error) => {
					worker.terminate();
					failAll(error);
				};
				const timer = setTimeout(
					() => stop(new Error(`${who} did not answer "${type}" within ${Math.round(limitMs / 1000)} s; it was terminated.`)),
					limitMs,
				);
				const onAbort = () => stop(signal?.reason ?? new Error(`${who}'s "${type}" was aborted.`));
				signal?.addEventListener("abort", onAbort, { once: true });
				const settle = (finish) => (value) => {
					clearTimeout(timer);
					signal?.removeEventListener("abort", onAbort);
					finish(value);
				};
				pending.set(id, { type, resolve: settle(resolve), reject: settle(reject) });
				worker.postMessage({ id, type, payload }, transfer);
			});
		},
		terminate() {
			worker.terminate();
			failAll(new Error(`${who} was terminated.`));
		},
	};
}
