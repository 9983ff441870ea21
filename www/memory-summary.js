// @ts-check
// The summary's GPU-memory figures from the page's samples: per realm the
// peak and what is live at the end, and the leak check. With every KV cache
// and output disposed, the live GPU bytes after each case should not grow:
// onnxruntime-web keeps disposed buffers in its cache for reuse, so a longer
// case may still add some once; the same case in a later repeat must not.

/** @typedef {import("../pkg/ocr_bench_core.js").RealmMemory} RealmMemory */

/**
 * samples: memory.js's; page: the page tracker's last snapshot; worker,
 * decoderWorker: each worker's last report. The leak check follows the realm
 * that decoded: the decoder worker's device where it reported (realm=worker).
 * @param {import("../pkg/ocr_bench_core.js").MemorySample[]} samples
 * @param {import("../pkg/ocr_bench_core.js").GpuBytes | null} page
 * @param {RealmMemory | null} worker
 * @param {RealmMemory | null} [decoderWorker]
 */
export function gpuMemorySummary(samples, page, worker, decoderWorker = null) {
	const decoderGpu = (sample) => (decoderWorker ? sample.decoderWorker?.gpu : sample.gpu);
	const afterCases = samples
		.filter((sample) => sample.label.startsWith("after-case-") && decoderGpu(sample))
		.map((sample) => ({ label: sample.label, liveBytes: decoderGpu(sample).liveBytes }));
	const first = afterCases[0]?.liveBytes ?? null;
	const grownBytes = afterCases.length ? Math.max(...afterCases.map((sample) => sample.liveBytes)) - first : 0;
	// The same case id in a later repeat against its first pass.
	const firstPass = new Map();
	let repeatGrownBytes = 0;
	for (const sample of afterCases) {
		const id = sample.label.replace(/^after-case-/, "").replace(/-repeat-\d+$/, "");
		if (!firstPass.has(id)) firstPass.set(id, sample.liveBytes);
		else repeatGrownBytes = Math.max(repeatGrownBytes, sample.liveBytes - firstPass.get(id));
	}
	const grows = grownBytes > 0;
	const verdict = !afterCases.length
		? "not checked: no after-case sample has GPU bytes"
		: repeatGrownBytes > 0
			? `leak: the same case left ${repeatGrownBytes} more live GPU bytes in a later repeat`
			: grows
				? `grew by ${grownBytes} bytes over the cases (onnxruntime-web's buffer cache keeps disposed buffers for reuse; run repeat=2 to tell that from a leak)`
				: "steady: the same live GPU bytes after every case";
	return {
		measuredBy: "wrapped GPUDevice.createBuffer/createTexture/destroy on the device handed to onnxruntime-web, per realm",
		page,
		worker: worker?.gpu ?? null,
		...(decoderWorker?.gpu ? { decoderWorker: decoderWorker.gpu } : {}),
		leakCheck: { afterCases, grows, grownBytes, repeatGrownBytes, verdict },
	};
}
