// Errors as they cross realms and the wire: the plain { name, message, stack }
// that postMessage and JSON keep, and onnxruntime-web's own messages rewritten
// where the cause is known. Shared by the page and the workers.

/** An Error (or anything thrown) as the plain object that crosses JSON and postMessage. */
export function serializeError(error) {
	if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack ?? "" };
	return { name: "Error", message: String(error), stack: "" };
}

/** The Error that a serialized one stood for, on the receiving side. */
export function rebuildError(payload, fallback) {
	const error = new Error(payload?.message ?? fallback);
	error.name = payload?.name ?? "Error";
	if (payload?.stack) error.stack = payload.stack;
	return error;
}

/** A new message in front, the original error kept as the cause and in the stack. */
export function withCause(message, cause) {
	const error = new Error(message, { cause });
	if (cause?.stack) error.stack = `${error.name}: ${message}\n${cause.stack}`;
	return error;
}

/**
 * ORT's own errors rewritten where the cause is known, the original kept
 * behind. Measured on SwiftShader (no shader-f16): an fp16 graph fails at
 * session creation ("Program Transpose requires f16 but the device does not
 * support it") or, for a Cast, only at the first run ("Program Cast requires
 * f16 …" from OrtRun).
 */
export function explainOrtError(error, what) {
	const message = String(error?.message ?? error);
	const f16 = /Program (\w+) requires f16 but the device does not support it/.exec(message);
	if (f16) {
		return withCause(`${what ? `${what}: ` : ""}this graph computes in fp16 (its ${f16[1]} kernel needs 16-bit floats), but the WebGPU device has no "shader-f16" feature. Use a variant without fp16 or an adapter that offers shader-f16. (onnxruntime-web said: ${message})`, error);
	}
	if (/HTTP \d+|Failed to fetch|failed to load external data/i.test(message)) {
		return withCause(`${what ? `${what}: ` : ""}a model file could not be fetched (${message}). Are the models built (models/generated/) and the manifest paths right?`, error);
	}
	return what ? withCause(`${what}: ${message}`, error) : error;
}
