// @ts-check
// What a worker reports of its own realm with every answer that changes it
// (RealmMemory, crate/src/types.d.ts): its device's GPU bytes
// (browser/gpu-memory.js), its WASM heaps (browser/wasm-memory.js) and, where
// the browser has performance.memory (Chromium, in workers too), its JS heap.
import { wasmHeaps } from "./wasm-memory.js";

/**
 * gpuMemory: the realm's tracker, or null before its device exists.
 * @returns {import("../pkg/ocr_bench_core.js").RealmMemory}
 */
export function realmMemory(gpuMemory) {
	/** @type {import("../pkg/ocr_bench_core.js").RealmMemory} */
	const report = { gpu: gpuMemory?.snapshot() ?? null, wasmHeaps: wasmHeaps() };
	const heap = self.performance?.memory;
	if (heap) {
		report.totalJSHeapSize = heap.totalJSHeapSize;
		report.usedJSHeapSize = heap.usedJSHeapSize;
	}
	return report;
}
