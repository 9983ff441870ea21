// @ts-check
// onnxruntime-web's native WebGPU build (the C++ WebGPU EP, package export
// "./webgpu") at the version the run names (ort=, crate/src/runtime.rs), each
// version installed by package.json in its own node_modules folder and loaded
// from there by a dynamic import, once per realm: the page after the core has
// read the query, each worker from the folder the page put in its URL
// (www/worker-client.js). It loads ort-wasm-simd-threaded.asyncify.{mjs,wasm}
// from wasmPaths, the same folder. The default export (JSEP) is not used: it
// dequantizes per-tensor int8 wrongly and returns zeros for fp16 graphs on
// adapters without shader-f16.

import { messageOf } from "./errors.js";
import { adoptRealmDevice, deviceNeeds } from "./ort-device-needs.js";
import { installConsoleTap } from "./ort-profile.js";
import { installWasmMemoryTap } from "./wasm-memory.js";

// Before any session: ORT binds the console when its WASM starts (profile=ops
// reads it), and its heap is noted as it is instantiated (as is the core's,
// which the page starts after its imports).
installConsoleTap();
installWasmMemoryTap();

/** The parameter of a worker's URL that names the folder it loads onnxruntime-web from. */
export const ORT_DIST_PARAMETER = "ortDist";

// This realm's onnxruntime-web, its version and the folder it came from
// (under the site root, as the core names it); null until loadOrt. Typed as
// loaded: every user runs after it (the page's readConfig, a worker's
// serveWorker), and loadOrt fails the run before anything else when it cannot.
/** @type {typeof import("onnxruntime-web/webgpu")} */
export let ort = /** @type {any} */ (null);
/** @type {string} */
export let ORT_VERSION = /** @type {any} */ (null);
/** @type {string} */
export let ORT_DIST_FOLDER = /** @type {any} */ (null);

/**
 * Imports onnxruntime-web from distFolder (under the site root, such as
 * "node_modules/onnxruntime-web/dist") and sets it up; once per realm.
 * @param {string} distFolder
 * @returns {Promise<void>}
 */
export async function loadOrt(distFolder) {
	if (ort) throw new Error(`onnxruntime-web is already loaded in this realm (from ${ORT_DIST_FOLDER}).`);
	const distUrl = new URL(`/${distFolder}/`, self.location.href).href;
	let loaded;
	try {
		loaded = await import(`${distUrl}ort.webgpu.min.mjs`);
	} catch (error) {
		// The browsers' own words name no file ("error loading dynamically imported module").
		throw new Error(
			`onnxruntime-web could not be imported from ${distUrl}ort.webgpu.min.mjs (${messageOf(error)}): is it installed (npm ci), or does this portable bundle carry that version (scripts/bundle --ort)?`,
		);
	}
	loaded.env.wasm.wasmPaths = distUrl;
	// As the seed: one WASM thread, so CPU-side kernels do not compete with the
	// browser's GPU process for this machine's two cores.
	loaded.env.wasm.numThreads = 1;
	loaded.env.logLevel = "error";
	ORT_VERSION = loaded.env.versions?.web ?? "unknown";
	ORT_DIST_FOLDER = distFolder;
	ort = loaded;
}

/**
 * A worker's onnxruntime-web: from the folder the page named in the worker's URL.
 * @returns {Promise<void>}
 */
export async function loadWorkerOrt() {
	const distFolder = new URLSearchParams(self.location.search).get(ORT_DIST_PARAMETER);
	if (!distFolder)
		throw new Error(
			`This worker's URL names no onnxruntime-web folder (${ORT_DIST_PARAMETER}=); the page starts its workers through www/worker-client.js, which adds it.`,
		);
	await loadOrt(distFolder);
}

/**
 * The WebGPU execution provider of a session on the realm's device, named the
 * way this realm's version takes a device (ort-device-needs.js, handOver).
 * @param {GPUDevice | undefined} device
 * @returns {{ name: "webgpu", device?: GPUDevice }}
 */
export function webgpuProvider(device) {
	return deviceNeeds(ORT_VERSION).handOver === "session" ? { name: "webgpu", device } : { name: "webgpu" };
}

/**
 * Runs create() (a WebGPU session's creation) so that the session computes on
 * the realm's device: for a version that adopts the device, ORT's own request
 * for one is answered with it.
 * @template T
 * @param {GPUDevice | undefined} device
 * @param {() => Promise<T>} create
 * @returns {Promise<T>}
 */
export function createOnDevice(device, create) {
	return deviceNeeds(ORT_VERSION).handOver === "session" ? create() : adoptRealmDevice(device, create);
}
