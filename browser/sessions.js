// @ts-check
// Creating ORT sessions from resolved manifest entries, the way the query
// string asks (loader, weights, memory), on a device we own. Shared by the
// page and the vision worker.

import { explained, explainOrtError, messageOf } from "./errors.js";
import { createOnDevice, ort, webgpuProvider } from "./ort.js";
import { captureConsole, PROFILE_SESSION_OPTIONS } from "./ort-profile.js";

async function fetchBytes(url) {
	const response = await fetch(url);
	if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
	return new Uint8Array(await response.arrayBuffer());
}

// onnxruntime-web 1.30 fetches a model URL with the loader of external data,
// so a missing .onnx reads "failed to load external data file: …" even for an
// embedded model.
const FETCH_FAILURE = /HTTP \d+|Failed to fetch|NetworkError|failed to load external data/i;

/**
 * Which of the session's files could not be fetched, in words, or null when
 * each of them can be: a HEAD request per file after the failure says which
 * one it was and with what status.
 */
async function missingFile(model) {
	const files = [{ url: model.url, what: "the model file" }];
	if (model.external) files.push({ url: model.external.url, what: `the external-data file of ${model.url}` });
	for (const { url, what } of files) {
		let status;
		try {
			const response = await fetch(url, { method: "HEAD" });
			if (response.ok) continue;
			status = `HTTP ${response.status}`;
		} catch (error) {
			status = messageOf(error);
		}
		return `${what} ${url} could not be fetched (${status})`;
	}
	return null;
}

/** A failed session creation in words: the missing file where one is missing. */
async function explainLoadFailure(error, what, model) {
	const message = String(error?.message ?? error);
	if (FETCH_FAILURE.test(message)) {
		const missing = await missingFile(model);
		if (missing) return explained(`Loading the ${what}: ${missing}. Are the models built (models/generated/) and the manifest paths right?`, error);
	}
	return explainOrtError(error, `Loading the ${what} (${model.url})`);
}

/** A served file's size from a HEAD request (loader=url: ORT fetched the body itself). */
async function servedBytes(url) {
	try {
		const response = await fetch(url, { method: "HEAD" });
		const length = Number(response.headers.get("content-length"));
		return response.ok && Number.isInteger(length) && length > 0 ? length : null;
	} catch {
		return null;
	}
}

/**
 * What the session loaded and the options that matter, read from the very
 * options object given to ORT after it created the session, so the record
 * cannot drift from what ran: ORT 1.30 sets enableMemPattern to false there
 * itself when the WebGPU EP is listed. Options still unset are written as
 * ORT 1.30's defaults (graphOptimizationLevel "all", no graph capture, no
 * profiling); the memory options as null.
 */
function sessionRecord({ role, graph, loader, model, options, bytes, createMs }) {
	return {
		role,
		graph,
		loader,
		model: { url: model.url, bytes: bytes.model },
		externalData: model.external ? { path: model.external.path, url: model.external.url, bytes: bytes.externalData } : null,
		executionProviders: options.executionProviders.map((provider) => (typeof provider === "string" ? provider : provider.name)),
		options: {
			graphOptimizationLevel: options.graphOptimizationLevel ?? "all",
			preferredOutputLocation:
				typeof options.preferredOutputLocation === "string"
					? { "*": options.preferredOutputLocation }
					: { ...(options.preferredOutputLocation ?? {}) },
			freeDimensionOverrides: { ...(options.freeDimensionOverrides ?? {}) },
			enableProfiling: Boolean(options.enableProfiling),
			enableGraphCapture: Boolean(options.enableGraphCapture),
			enableCpuMemArena: options.enableCpuMemArena ?? null,
			enableMemPattern: options.enableMemPattern ?? null,
			logSeverityLevel: options.logSeverityLevel,
		},
		createMs,
	};
}

/**
 * model: { url, external?: { path, url } } (see manifest.js). `external.path`
 * is the data file name stored inside the .onnx, which ORT matches against.
 * profile: "ops" turns ORT's profiler and placement log on; the creation log
 * comes back as placementLines for ort-profile.js's endProfile.
 * executionProvider: "webgpu" (on `device`) or "wasm" (the CPU reference of
 * verify=wasm). role, graph: what the record calls the session (see
 * sessionRecord); the result's `record` is typed SessionRecord (crate/src/types.d.ts).
 * graphCapture: the WebGPU EP records the first runs and replays them
 * (enableGraphCapture); then every input and output of each run must be a
 * gpu-buffer tensor, the same buffers every run (browser/decoding/decode-capture.js).
 * @param {object} options
 * @param {{ url: string, external?: { path: string, url: string } }} options.model
 * @param {import("../pkg/ocr_bench_core.js").Loader} options.loader
 * @param {import("../pkg/ocr_bench_core.js").Memory} options.memory
 * @param {GPUDevice} [options.device]
 * @param {import("onnxruntime-web").InferenceSession.SessionOptions["preferredOutputLocation"]} [options.preferredOutputLocation]
 * @param {string} options.what
 * @param {import("../pkg/ocr_bench_core.js").Profile} [options.profile]
 * @param {"webgpu" | "wasm"} [options.executionProvider]
 * @param {string | null} [options.role]
 * @param {string | null} [options.graph]
 * @param {boolean} [options.graphCapture]
 */
export async function createSession({
	model,
	loader,
	memory,
	device,
	preferredOutputLocation,
	what,
	profile = "none",
	executionProvider = "webgpu",
	role = null,
	graph = null,
	graphCapture = false,
}) {
	if (graphCapture && executionProvider !== "webgpu")
		throw new Error(`Graph capture is a WebGPU execution provider option; the ${what} runs on ${executionProvider}.`);
	/** @type {import("onnxruntime-web").InferenceSession.SessionOptions} */
	const options = {
		executionProviders: [executionProvider === "webgpu" ? webgpuProvider(device) : executionProvider],
		...(preferredOutputLocation ? { preferredOutputLocation } : {}),
		logSeverityLevel: 3,
		// The seed's "lean": both off. Read in onnxruntime-web 1.30: the web build
		// already defaults enableCpuMemArena to false and forces enableMemPattern
		// off with the WebGPU EP, so this may change nothing; the runs say.
		...(memory === "lean" ? { enableCpuMemArena: false, enableMemPattern: false } : {}),
		...(profile === "ops" ? PROFILE_SESSION_OPTIONS : {}),
		...(graphCapture ? { enableGraphCapture: true } : {}),
	};
	const started = performance.now();
	/** @type {{ session: import("onnxruntime-web").InferenceSession, createMs: number, placementLines: string[] | null }} */
	let created;
	/** @type {{ model: number | null, externalData: number | null }} */
	const bytes = { model: null, externalData: null };
	try {
		/** @type {string | Uint8Array} */
		let source = model.url;
		if (loader === "bytes") {
			const modelBytes = await fetchBytes(model.url);
			source = modelBytes;
			bytes.model = modelBytes.byteLength;
			if (model.external) {
				const data = await fetchBytes(model.external.url);
				bytes.externalData = data.byteLength;
				options.externalData = [{ path: model.external.path, data }];
			}
		} else if (model.external) {
			options.externalData = [{ path: model.external.path, data: model.external.url }];
		}
		// create() has one overload per kind of source.
		const create = () => (typeof source === "string" ? ort.InferenceSession.create(source, options) : ort.InferenceSession.create(source, options));
		const open = () => (executionProvider === "webgpu" ? createOnDevice(device, create) : create());
		if (profile !== "ops") {
			const session = await open();
			created = { session, createMs: performance.now() - started, placementLines: null };
		} else {
			const { value: session, lines } = await captureConsole(open);
			created = { session, createMs: performance.now() - started, placementLines: lines };
		}
	} catch (error) {
		throw await explainLoadFailure(error, what, model);
	}
	// After the timed creation: ORT fetched these itself under loader=url.
	if (loader !== "bytes") {
		bytes.model = await servedBytes(model.url);
		if (model.external) bytes.externalData = await servedBytes(model.external.url);
	}
	return { ...created, record: sessionRecord({ role, graph, loader, model, options, bytes, createMs: created.createMs }) };
}

/** Static dimensions of one input or output, or null where ORT reports none. */
export function tensorShape(session, name) {
	const meta = [...(session.inputMetadata ?? []), ...(session.outputMetadata ?? [])].find((entry) => entry.name === name);
	return meta?.isTensor ? meta.shape : null;
}
