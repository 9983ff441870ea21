// @ts-check
// The WebAssembly heaps of a realm: onnxruntime-web's and, in the page, the
// core's. Neither library hands out its Memory, so the realm notes every
// Memory that WebAssembly.instantiate / instantiateStreaming create or are
// given, labelled by the module's URL where the call has one. A heap only ever
// grows (upstream onnxruntime#21673): its size is the most it ever needed.
// Installed by browser/ort.js before either library starts.

/** @type {{ label: string, memory: WeakRef<WebAssembly.Memory> }[]} */
const heaps = [];
let tapped = false;

function labelOf(url) {
	if (!url) return "unlabelled";
	if (/ort-wasm/.test(url)) return "onnxruntime";
	if (/ocr_bench_core/.test(url)) return "core";
	return url.split("/").pop();
}

function note(url, importObject, result) {
	const instance = result instanceof WebAssembly.Instance ? result : result?.instance;
	const found = new Set();
	for (const value of Object.values(instance?.exports ?? {})) if (value instanceof WebAssembly.Memory) found.add(value);
	for (const module of Object.values(importObject ?? {})) {
		for (const value of Object.values(module ?? {})) if (value instanceof WebAssembly.Memory) found.add(value);
	}
	for (const memory of found)
		if (!heaps.some((heap) => heap.memory.deref() === memory)) heaps.push({ label: labelOf(url), memory: new WeakRef(memory) });
}

export function installWasmMemoryTap() {
	if (tapped) return;
	tapped = true;
	const instantiate = WebAssembly.instantiate;
	// The wrapper answers as the original does, for each of its overloads.
	WebAssembly.instantiate = /** @type {typeof WebAssembly.instantiate} */ (
		async (source, importObject) => {
			const result = await instantiate.call(WebAssembly, source, importObject);
			note(null, importObject, result);
			return result;
		}
	);
	const instantiateStreaming = WebAssembly.instantiateStreaming;
	if (instantiateStreaming) {
		WebAssembly.instantiateStreaming = async (source, importObject) => {
			const response = await source;
			const result = await instantiateStreaming.call(WebAssembly, response, importObject);
			note(response?.url, importObject, result);
			return result;
		};
	}
}

/**
 * [{ label, bytes, shared }] for every heap still alive in this realm.
 * @returns {import("../pkg/ocr_bench_core.js").WasmHeap[]}
 */
export function wasmHeaps() {
	return heaps.flatMap(({ label, memory }) => {
		const buffer = memory.deref()?.buffer;
		if (!buffer) return [];
		return [{ label, bytes: buffer.byteLength, shared: typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer }];
	});
}
