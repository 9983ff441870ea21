// @ts-check
// Errors as they cross realms and the wire: the plain { name, message, stack }
// that postMessage and JSON keep, and onnxruntime-web's own messages rewritten
// where the cause is known. Shared by the page and the workers.

/** An Error (or anything thrown) as the plain object that crosses JSON and postMessage. */
export function serializeError(error) {
	if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack ?? "" };
	return { name: "Error", message: String(error), stack: "" };
}

/** A thrown value's message: an Error's own, anything else as text. */
export const messageOf = (error) => (error instanceof Error ? error.message : String(error));

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
 * f16 …" from OrtRun). An error explained once is returned as it is, so a
 * message is never wrapped twice; a model file that could not be fetched is
 * explained where it is fetched (sessions.js), which knows which file it was.
 */
export function explainOrtError(error, what) {
	if (error?.explained) return error;
	const message = String(error?.message ?? error);
	const f16 = /Program (\w+) requires f16 but the device does not support it/.exec(message);
	if (f16) {
		return explained(
			`${what ? `${what}: ` : ""}this graph computes in fp16 (its ${f16[1]} kernel needs 16-bit floats), but the WebGPU device has no "shader-f16" feature. Use a variant without fp16 or an adapter that offers shader-f16. (onnxruntime-web said: ${message})`,
			error,
		);
	}
	return what ? explained(`${what}: ${message}`, error) : error;
}

/** withCause, marked so that explainOrtError leaves it as it is. */
export function explained(message, cause) {
	const error = /** @type {Error & { explained?: boolean }} */ (withCause(message, cause));
	error.explained = true;
	return error;
}

/**
 * The error a failed run should report when its WebGPU device was lost: the
 * loss in words, the error the loss caused kept behind; else the error as it
 * is. `device.lost` resolves a few milliseconds after the loss, often after
 * the failed call it caused has already rejected, so it is awaited briefly.
 */
export async function explainDeviceLoss(device, error, waitMs = 250) {
	if (!device) return error;
	const lost = await Promise.race([device.lost, new Promise((resolve) => setTimeout(resolve, waitMs, null))]);
	if (!lost) return error;
	return explained(`${deviceLostMessage(lost)}${error ? ` (then: ${error.message})` : ""}`, error ?? undefined);
}

/** A lost device in words: its reason and the browser's message. */
export function deviceLostMessage(info) {
	return `The WebGPU device was lost (reason: ${info.reason ?? "unknown"}${info.message ? `, "${info.message}"` : ""}); the run cannot go on without it. A driver reset, a GPU process that crashed or was killed, or device.destroy() loses a device.`;
}
