// @ts-check
// The compute dispatches encoded in this realm, counted on every timed case:
// the record's dispatches per vision encode, per prefill and per decode step
// (docs/benchmark-protocol.md, "Dispatches"). profile=ops sees only the runs it
// profiled, and only operators, not how many dispatches each one encodes.
//
// onnxruntime-web's WASM reaches WebGPU only through its JS imports, and its
// one import for a dispatch calls pass.dispatchWorkgroups (and one more
// dispatchWorkgroupsIndirect) on the pass object: so wrapping the prototype's
// two methods sees every dispatch it encodes, graph-capture replays included
// (1.30's replay encodes the recorded commands again through the same import).
// A module is evaluated once per realm: the page and each worker that imports
// it count their own. The cost is one increment per dispatch.
let dispatches = 0;

if (typeof GPUComputePassEncoder !== "undefined") {
	const pass = GPUComputePassEncoder.prototype;
	const direct = pass.dispatchWorkgroups;
	const indirect = pass.dispatchWorkgroupsIndirect;
	pass.dispatchWorkgroups = function dispatchWorkgroups(x, y, z) {
		dispatches += 1;
		return direct.call(this, x, y, z);
	};
	pass.dispatchWorkgroupsIndirect = function dispatchWorkgroupsIndirect(buffer, offset) {
		dispatches += 1;
		return indirect.call(this, buffer, offset);
	};
}

/**
 * Calls start() (an onnxruntime run()) and resolves to { value (what its
 * promise gave), dispatches (encoded until it settled) }. Call it inside the
 * realm's waiter (waiter.wait(() => countDispatches(...))): with pool=K in the
 * page the sessions' calls take turns there, so the window holds one run's.
 */
/**
 * @template T
 * @param {() => Promise<T>} start
 */
export async function countDispatches(start) {
	const before = dispatches;
	const value = await start();
	return { value, dispatches: dispatches - before };
}

/**
 * Calls run() (synchronous) with its dispatches left out of every count: the
 * GPU token choice (choose=gpu) is the harness's shader, not onnxruntime's.
 */
/**
 * @template T
 * @param {() => T} run
 */
export function uncounted(run) {
	const before = dispatches;
	try {
		return run();
	} finally {
		dispatches = before;
	}
}
