// Creating ORT sessions from resolved manifest entries, the way the query
// string asks (loader, weights, memory), on a device we own. Shared by the
// page and the vision worker.
import { ort } from "./ort.js";
import { explainOrtError } from "./errors.js";
import { captureConsole, PROFILE_SESSION_OPTIONS } from "./ort-profile.js";

async function fetchBytes(url) {
	const response = await fetch(url);
	if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
	return new Uint8Array(await response.arrayBuffer());
}

/**
 * model: { url, external?: { path, url } } (see manifest.js). `external.path`
 * is the data file name stored inside the .onnx, which ORT matches against.
 */
/**
 * profile: "ops" turns ORT's profiler and placement log on; the creation log
 * comes back as placementLines for ort-profile.js's endProfile.
 */
export async function createSession({ model, loader, memory, device, preferredOutputLocation, what, profile = "none" }) {
	const options = {
		executionProviders: [{ name: "webgpu", device }],
		preferredOutputLocation,
		logSeverityLevel: 3,
		// The seed's "lean": both off. Read in onnxruntime-web 1.30: the web build
		// already defaults enableCpuMemArena to false and forces enableMemPattern
		// off with the WebGPU EP, so this may change nothing; the runs say.
		...(memory === "lean" ? { enableCpuMemArena: false, enableMemPattern: false } : {}),
		...(profile === "ops" ? PROFILE_SESSION_OPTIONS : {}),
	};
	const started = performance.now();
	try {
		let source = model.url;
		if (loader === "bytes") {
			source = await fetchBytes(model.url);
			if (model.external) options.externalData = [{ path: model.external.path, data: await fetchBytes(model.external.url) }];
		} else if (model.external) {
			options.externalData = [{ path: model.external.path, data: model.external.url }];
		}
		if (profile !== "ops") {
			const session = await ort.InferenceSession.create(source, options);
			return { session, createMs: performance.now() - started, placementLines: null };
		}
		const { value: session, lines } = await captureConsole(() => ort.InferenceSession.create(source, options));
		return { session, createMs: performance.now() - started, placementLines: lines };
	} catch (error) {
		throw explainOrtError(error, `Loading the ${what} (${model.url})`);
	}
}

/** Static dimensions of one input or output, or null where ORT reports none. */
export function tensorShape(session, name) {
	const meta = [...(session.inputMetadata ?? []), ...(session.outputMetadata ?? [])].find((entry) => entry.name === name);
	return meta?.isTensor ? meta.shape : null;
}
