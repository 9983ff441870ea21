// The page's own memory samples, at the seed's labels. They are taken only
// between phases and between cases, never inside a timed region, and each
// records how long it took: measureUserAgentSpecificMemory() waits for a
// garbage collection unless the browser answers eagerly. Measured here,
// headless Chromium 156 on SwiftShader: 10.0 s per call without flags, 17-180 ms
// with --enable-blink-features=ForceEagerMeasureMemory. Firefox has no such
// API (the field stays absent).

export function createMemorySampler(log) {
	const samples = [];
	const sample = async (label) => {
		const started = performance.now();
		const entry = { label, atMs: started };
		if (performance.memory) {
			entry.jsHeapSizeLimit = performance.memory.jsHeapSizeLimit;
			entry.totalJSHeapSize = performance.memory.totalJSHeapSize;
			entry.usedJSHeapSize = performance.memory.usedJSHeapSize;
		}
		if (typeof performance.measureUserAgentSpecificMemory === "function") {
			try {
				entry.userAgentBytes = (await performance.measureUserAgentSpecificMemory()).bytes;
			} catch (error) {
				entry.userAgentMemoryError = String(error);
			}
			entry.userAgentMs = performance.now() - started;
		}
		entry.sampleMs = performance.now() - started;
		samples.push(entry);
		log(`MEMORY ${JSON.stringify(entry)}`);
		return entry;
	};
	return { samples, sample };
}
