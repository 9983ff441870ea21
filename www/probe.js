// @ts-check
// The probe phase: the completion floor (browser/completion-floor.js) of every
// realm the run will decode or encode in, measured before the first model
// phase so that no model phase holds the harness's own rounds (at Firefox's
// 100 ms completion timer they are about 4.6 s a realm).
//
// Each realm gets a device of its own here, not the one it later hands to
// onnxruntime-web: those are made inside their model phases (the vision
// worker's in vision-load, gone with vision-release; the page's in the staged
// schedule only in decoder-load; the decoder worker starts in decoder-load),
// and making them earlier would move a worker's start, or a device's life,
// into other phases. The floor is the browser's completion mechanism for that
// kind of realm (its timer, the realm's event loop, the run's poll and
// kickMs), which a fresh device on the same adapter meets alike: measured in
// Firefox at 100 ms in the page and in a worker, on lavapipe and an H200.
// That is also why a floor can be kept across runs (www/probe-cache.js): a
// second run of the same browser, adapter, driver and waiting meets the same
// timer, and its probe phase then runs no rounds.

import { measureCompletionFloor } from "../browser/completion-floor.js";
import { createDevice, requestGpuAdapter } from "../browser/gpu.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { askProbeCache, keptFloor, measuredRounds, probeKey, reusedRounds } from "./probe-cache.js";
import { startWorker } from "./worker-client.js";

/** Which realms hold a device in a run of config: the page, the vision worker, the decoder worker. */
export function probedRealms(config) {
	const decoderInWorker = config.realm === "worker";
	const visionInWorker = config.scope !== "decoder" && config.schedule === "staged";
	const visionInPage = config.scope !== "decoder" && !visionInWorker;
	return { page: !decoderInWorker || visionInPage, worker: visionInWorker, decoderWorker: decoderInWorker };
}

async function pageFloor({ poll, kickMs }) {
	// A fresh adapter: one adapter gives one device, and the page's is kept for its model phase.
	const device = await createDevice(await requestGpuAdapter());
	const waiter = createGpuWaiter(device, { poll, kickMs });
	try {
		return await measureCompletionFloor(device, waiter);
	} finally {
		waiter.close();
		device.destroy();
	}
}

async function workerFloor({ poll, kickMs }) {
	const worker = await startWorker("/worker/probe-worker.js", "The probe worker");
	try {
		return (await worker.call("floor", { poll, kickMs })).completionFloor;
	} finally {
		worker.terminate();
	}
}

/**
 * Each realm's floor rounds, one realm at a time (so that no probe shares the
 * CPU with another); null for a realm the run does not have. The vision and the
 * decoder worker are both dedicated workers, but each gets a probe of its own,
 * so that each record's floor was measured as its realm's. A realm whose key
 * the runner's cache holds reuses that floor and runs no rounds
 * (www/probe-cache.js); `log` says which.
 */
export async function probeCompletionFloors(config, adapterInfo, log) {
	const realms = probedRealms(config);
	const waiting = { poll: config.poll, kickMs: config.kickMs };
	const offer = await askProbeCache();
	if (!offer.reuse) log(`PROBE_CACHE measuring every floor: ${offer.reason}`);
	const measure = { page: () => pageFloor(waiting), worker: () => workerFloor(waiting), decoderWorker: () => workerFloor(waiting) };
	/** @type {import("../pkg/ocr_bench_core.js").CompletionFloors} */
	const floors = { page: null, worker: null, decoderWorker: null };
	for (const realm of /** @type {(keyof typeof floors)[]} */ (Object.keys(floors))) {
		if (!realms[realm]) continue;
		const key = probeKey(offer.runner, adapterInfo, waiting, realm);
		const kept = keptFloor(offer, key);
		floors[realm] = kept ? reusedRounds(kept) : measuredRounds(await measure[realm](), key);
		if (offer.reuse) log(`PROBE_CACHE ${realm} ${kept ? `reused the floor measured ${kept.measuredAt}` : "measured: no kept floor has this key"}`);
	}
	return floors;
}
