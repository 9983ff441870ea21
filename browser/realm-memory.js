// What a worker reports of its own realm with every answer that changes it
// (RealmMemory, crate/src/types.d.ts): its device's GPU bytes
// (browser/gpu-memory.js), its WASM heaps (browser/wasm-memory.js) and, where
// the browser has performance.memory (Chromium, in workers too), its JS heap.
import { wasmHeaps } from "./wasm-memory.js";

/** gpuMemory: the realm's tracker, or null before its device exists. */
export function realmMemory(gpuMemory) {
	const report = { gpu: gpuMemory?.snapshot() ?? null, wasmHeaps: wasmHeaps() };
	if (self.performance?.memory) {
		report.totalJSHeapSize = performance.memory.totalJSHeapSize;
		report.usedJSHeapSize = performance.memory.usedJSHeapSize;
	}
	return report;
}
