// @ts-check
// The worker's side of the protocol www/worker-client.js speaks, shared by
// worker/vision-worker.js and worker/decoder-worker.js:
// { id, type, payload } in; { id, type: "result" | "error", payload } out;
// one { id: null, type: "ready" } first. Errors travel as
// { name, message, stack }. A handler returns its answer, or
// { payload, transfer } to hand buffers over instead of copying them.

import { explainDeviceLoss, serializeError } from "./errors.js";
import { loadWorkerOrt, ORT_VERSION } from "./ort.js";

/**
 * name: the worker's kind, in its lifetime lock's name; handlers: { [type]:
 * async (payload) => answer }; device(): the worker's GPUDevice now (or
 * null), so that a failure after its loss is reported as the loss.
 */
export async function serveWorker(name, handlers, device) {
	// The version the page loaded, from the folder it named in this worker's URL;
	// a failure here rejects the page's wait for ready (www/worker-client.js).
	await loadWorkerOrt();
	self.onmessage = async ({ data }) => {
		// Anything not in the protocol is ignored rather than answered: it has no id to answer to.
		if (typeof data?.id !== "number" || !Object.hasOwn(handlers, data.type)) return;
		try {
			const answer = await handlers[data.type](data.payload ?? {});
			if (answer.transfer) self.postMessage({ id: data.id, type: "result", payload: answer.payload }, answer.transfer);
			else self.postMessage({ id: data.id, type: "result", payload: answer });
		} catch (error) {
			self.postMessage({ id: data.id, type: "error", payload: serializeError(await explainDeviceLoss(device(), error)) });
		}
	};

	// A lock held for the worker's whole life: the browser lets go of it when the
	// worker ends in any way (terminated, closed, crashed), which is how the page
	// learns of an end that sends no message (www/worker-client.js).
	// Held before ready is sent, so that the page's own request waits behind it.
	/** @type {string | null} */
	let lifeLock = null;
	if (navigator.locks) {
		const lockName = `ocr-bench-${name}-${crypto.randomUUID()}`;
		/** @type {Promise<void>} */
		const lockHeld = new Promise((held) => {
			navigator.locks
				.request(lockName, () => {
					held();
					return new Promise(() => {});
				})
				.catch(() => held());
		});
		await lockHeld;
		lifeLock = lockName;
	}
	self.postMessage({ id: null, type: "ready", payload: { ortVersion: ORT_VERSION, lifeLock } });
}
