// @ts-check
// Loads the benchmark. A module that fails to load (the core not built into
// pkg/, node_modules missing) never runs its own error handling, so the
// failure is reported from here with the same hooks: the page, the server
// and window.__benchmarkDone.

import { serializeError } from "../browser/errors.js";
import { createReporter } from "./server.js";
import { createView } from "./view.js";

try {
	await import("./main.js");
} catch (error) {
	const reported = serializeError(error);
	reported.message = `The benchmark's modules could not load: ${reported.message}. Is the core built (scripts/build-wasm writes pkg/) and onnxruntime-web installed (npm ci)?`;
	createView().showError(reported, "setup");
	await createReporter(`unloaded-${Date.now()}`).error("setup", reported);
	window.__benchmarkResult = { error: reported, phase: "setup" };
	window.__benchmarkDone = true;
	console.log(`SUITE_ERROR ${JSON.stringify(window.__benchmarkResult)}`);
}
