// @ts-check
// GPU buffers that onnxruntime-web keeps registered from their first run on,
// for a captured graph that binds one buffer as both an input and an output
// (the KV cache of a decoder whose GroupQueryAttention writes in place).
//
// Why: run() registers every gpu-buffer feed and fetch with the WASM side (a
// handle, counted per GPUBuffer under a symbol "gpuBufferMetadata") and
// unregisters them when the run ends; at a count of 0 the handle is released.
// A captured session binds its inputs and outputs on the first run only, so
// from the second run on a pre-allocated output is read back through the
// first run's handle, which is gone by then ("can't access property
// Symbol("gpuBufferMetadata"), h is undefined"; 1.30.0 and 1.31.1 alike,
// ort.webgpu.mjs, run's finally and webgpuRegisterBuffer). The outputs
// onnxruntime allocates itself are registered with a count of NaN, which never
// counts down to 0; keepRegistered gives a buffer of ours the same count the
// first time it is registered. Its handle then stays one value on every run,
// which is also how GroupQueryAttention sees past and present as one buffer
// (their data pointers are that handle).

/** The description of the symbol that onnxruntime-web keeps a buffer's registration under. */
const REGISTRATION = "gpuBufferMetadata";

/** @param {PropertyKey} key */
const isRegistration = (key) => typeof key === "symbol" && key.description === REGISTRATION;

/**
 * Makes `buffer`'s registration, once onnxruntime-web makes it, one that its
 * runs never release. The assignment that makes it finds no property of that
 * name on the buffer, so it reaches the buffer's prototype: a proxy there
 * defines it on the buffer with the count NaN. Everything else passes through
 * to GPUBuffer's own prototype.
 * @param {GPUBuffer} buffer
 */
export function keepRegistered(buffer) {
	const prototype = Object.getPrototypeOf(buffer);
	const keeper = new Proxy(prototype, {
		set(target, key, value, receiver) {
			if (receiver === buffer && isRegistration(key) && Array.isArray(value)) {
				return Reflect.defineProperty(receiver, key, { value: [value[0], Number.NaN], writable: true, configurable: true, enumerable: true });
			}
			return Reflect.set(target, key, value, receiver);
		},
	});
	Object.setPrototypeOf(buffer, keeper);
}

/**
 * Throws unless `buffer` (given to keepRegistered, then to a run) holds a
 * registration that no run releases: a check after the first run that the
 * onnxruntime-web loaded still registers buffers as described above.
 * @param {GPUBuffer} buffer
 * @param {string} what the buffer, in words
 * @param {string} version onnxruntime-web's version
 */
export function checkKeptRegistered(buffer, what, version) {
	const key = Object.getOwnPropertySymbols(buffer).find(isRegistration);
	const registration = key === undefined ? undefined : /** @type {any} */ (buffer)[key];
	if (!Array.isArray(registration) || !Number.isNaN(registration[1]))
		throw new Error(
			`onnxruntime-web ${version} no longer keeps a gpu-buffer's registration as 1.30 and 1.31 do (a "${REGISTRATION}" symbol on the buffer, counted), so ${what} cannot stay bound in place across the captured runs; run this decoder with capture=off.`,
		);
}
