// @ts-check
// The page's own memory samples, at the seed's labels. They are taken only
// between phases and between cases, never inside a timed region, and each
// records how long it took: measureUserAgentSpecificMemory() waits for a
// garbage collection unless the browser answers eagerly. Measured here,
// headless Chromium 156 on SwiftShader: 10.0 s per call without flags, 17-590 ms
// with --enable-blink-features=ForceEagerMeasureMemory. Firefox has no such
// API (the field stays absent).

// Seen once here with ForceEagerMeasureMemory: the sample right after the
// vision worker was terminated took 60.1 s (another run: 20 ms), as if the
// browser waited for the gone worker. A sample gives up after this long and
// the run goes on; while that measurement is still pending no new one starts.
const USER_AGENT_MEMORY_TIMEOUT_MS = 5000;

/** @typedef {import("../pkg/ocr_bench_core.js").MemorySample} MemorySample */

/**
 * extras(): what else each sample records (the realms' GPU bytes and WASM
 * heaps, browser/gpu-memory.js and wasm-memory.js), taken first, before the
 * slower user-agent measurement.
 */
export function createMemorySampler(log, extras = () => ({})) {
	/** @type {MemorySample[]} */
	const samples = [];
	/** @type {Promise<unknown> | null} */
	let pending = null;
	/**
	 * @param {MemorySample} entry
	 * @param {() => Promise<{ bytes: number }>} measure the browser's measureUserAgentSpecificMemory
	 */
	const measureUserAgent = async (entry, measure) => {
		if (pending) {
			entry.userAgentMemoryError = "skipped: an earlier measureUserAgentSpecificMemory() has not answered yet";
			return;
		}
		const measurement = measure();
		pending = measurement.finally(() => {
			pending = null;
		});
		let timer;
		const timeout = new Promise((resolve) => {
			timer = setTimeout(resolve, USER_AGENT_MEMORY_TIMEOUT_MS, "timeout");
		});
		try {
			const answer = await Promise.race([measurement, timeout]);
			if (answer === "timeout") entry.userAgentMemoryError = `no answer within ${USER_AGENT_MEMORY_TIMEOUT_MS} ms`;
			else entry.userAgentBytes = answer.bytes;
		} catch (error) {
			entry.userAgentMemoryError = String(error);
		} finally {
			clearTimeout(timer);
		}
	};
	const sample = async (label) => {
		const started = performance.now();
		// sampleMs is added last, once the sample is taken.
		const entry = /** @type {MemorySample} */ ({ label, atMs: started, ...extras() });
		if (performance.memory) {
			entry.jsHeapSizeLimit = performance.memory.jsHeapSizeLimit;
			entry.totalJSHeapSize = performance.memory.totalJSHeapSize;
			entry.usedJSHeapSize = performance.memory.usedJSHeapSize;
		}
		const measure = performance.measureUserAgentSpecificMemory;
		if (typeof measure === "function") {
			await measureUserAgent(entry, () => measure.call(performance));
			entry.userAgentMs = performance.now() - started;
		}
		entry.sampleMs = performance.now() - started;
		samples.push(entry);
		log(`MEMORY ${JSON.stringify(entry)}`);
		return entry;
	};
	return { samples, sample };
}
