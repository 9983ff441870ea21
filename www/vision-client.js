// The page's side of worker/vision-worker.js: a ready handshake, then calls
// matched to answers by id. A worker that dies rejects every pending call
// with what it said, so the page never waits forever.

function rebuildError(payload) {
	const error = new Error(payload?.message ?? "The vision worker failed without a message.");
	error.name = payload?.name ?? "Error";
	if (payload?.stack) error.stack = payload.stack;
	return error;
}

export async function startVisionWorker() {
	const worker = new Worker(new URL("/worker/vision-worker.js", self.location.href), { type: "module" });
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
		if (data.type === "error") call.reject(rebuildError(data.payload));
		else call.resolve(data.payload);
	};
	// A module that fails to load or throws at top level reports here, often
	// with an empty message in Chromium; say at least which file it was.
	worker.onerror = (event) => {
		event.preventDefault();
		failAll(new Error(`The vision worker (/worker/vision-worker.js) failed: ${event.message || "it could not load or start (see the browser console)"}`));
	};
	worker.onmessageerror = () => failAll(new Error("The vision worker sent a message that could not be deserialised."));
	const readyPayload = await ready;
	return {
		ready: readyPayload,
		call(type, payload, transfer = []) {
			if (failure) return Promise.reject(failure);
			const id = nextId++;
			return new Promise((resolve, reject) => {
				pending.set(id, { resolve, reject });
				worker.postMessage({ id, type, payload }, transfer);
			});
		},
		terminate() {
			worker.terminate();
			failAll(new Error("The vision worker was terminated."));
		},
	};
}
