// @ts-check
// realm=worker: the decoder session, its whole decode loop and the core's
// token choice in a dedicated module worker of their own, on its own WebGPU
// device; the page holds only a proxy (www/decoder-proxy.js). The run is set
// up by the same function as the page's (browser/decoding/decoder-run.js), from
// the config the core parsed, so the two realms decode and time alike. Every
// answer carries this realm's memory (GPU bytes of its wrapped device, its WASM
// heaps, its JS heap where the browser has performance.memory), which the page
// records as the realm decoder-worker.
//
// Protocol: browser/worker-host.js's. The worker fetches the model files itself
// from URLs; embeddings come in, and verify=wasm's logits go out, in the
// transfer list.

import { createDecoderRun } from "../browser/decoding/decoder-run.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../browser/gpu.js";
import { trackGpuMemory } from "../browser/gpu-memory.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { ort } from "../browser/ort.js";
import { realmMemory } from "../browser/realm-memory.js";
import { serveWorker } from "../browser/worker-host.js";
import init, * as core from "../pkg/ocr_bench_core.js";

/** @type {GPUDevice | null} */
let device = null;
/** @type {import("../browser/gpu-wait.js").GpuWaiter | null} */
let waiter = null;
/** @type {import("../browser/gpu-memory.js").GpuMemoryTracker | null} */
let gpuMemory = null;
/** What init set up for every decode. @type {import("../browser/decoding/decoder-run.js").DecoderRun | null} */
let run = null;

/** This realm's memory, with its device's peak since the answer before. */
const memoryReport = () => {
	const report = realmMemory(gpuMemory);
	if (report.gpu && gpuMemory) report.gpu.windowPeakBytes = gpuMemory.takePeak();
	return report;
};

/** A typed array that owns its whole buffer, so that it can be transferred. */
const standalone = (values) =>
	values.buffer instanceof ArrayBuffer && values.byteOffset === 0 && values.byteLength === values.buffer.byteLength ? values : values.slice();

const handlers = {
	/**
	 * payload: { config (the core's parsed config, as the page has it), capability
	 * (the manifest's), entry (the decoder's manifest entry: name, requires,
	 * fixedKv, model), tokens: { bos, eos }, vocabulary (vocab.json's characters) }.
	 * Returns the run's ready ({ createMs, session, step, spec }), the adapter and the memory.
	 */
	async init({ config, capability, entry, tokens, vocabulary }) {
		if (run) throw new Error("The decoder worker is already initialised.");
		await init();
		const adapter = await requestGpuAdapter();
		// Checked before any byte of the model is fetched: refuse, do not run.
		checkRequirements(adapter, "decoder", entry.name, entry.requires);
		device = await createDevice(adapter);
		gpuMemory = trackGpuMemory(device);
		waiter = createGpuWaiter(device, { poll: config.poll, kickMs: config.kickMs });
		run = await createDecoderRun({ config, capability, entry, tokens, vocabulary: new core.Vocabulary(vocabulary), device, waiter });
		return { ...run.ready, adapter: describeAdapter(adapter), memory: memoryReport() };
	},

	/**
	 * payload: { embeds: Float32Array [1, V, hidden] or null (scope=decoder: the
	 * zeros are made here), dims, maxTokens, keepLogits (verify=wasm: every
	 * step's logits come back), diverge (a test-only divergence fault's kind, sent
	 * by the page, which alone arms faults: browser/decoding/divergence.js) }. Returns
	 * decode.js's result, the kept logits and the memory.
	 */
	async decode({ embeds, dims, maxTokens, keepLogits = false, diverge = null }) {
		if (!run) throw new Error("The decoder worker got decode before init.");
		const { spec } = run.ready;
		const visionDims = [1, spec.visionTokens, spec.hiddenSize];
		const values = embeds ?? new Float32Array(spec.visionTokens * spec.hiddenSize);
		if (embeds && (dims?.join() !== visionDims.join() || embeds.length !== spec.visionTokens * spec.hiddenSize)) {
			throw new Error(`The decoder worker got embeddings [${dims}] of ${embeds.length} values; the decoder takes [${visionDims}].`);
		}
		const decoded = await run.decode(new ort.Tensor("float32", values, visionDims), { maxTokens, keepLogits, diverge });
		// Each kept array (the one its step read back) made transferable here, after the timed loop.
		const logits = decoded.logits?.map(standalone) ?? null;
		delete decoded.logits;
		return { payload: { decoded, logits, memory: memoryReport() }, transfer: (logits ?? []).map((array) => array.buffer) };
	},

	/** profile=ops: the decoder session's operators and placement (one-shot: ORT then stops profiling). */
	async profile() {
		if (!run) throw new Error("The decoder worker got profile before init.");
		if (!run.placementLines) throw new Error("The decoder worker was not started with profile=ops.");
		return run.profile();
	},

	/** The release phase's first step: the sessions let go of, the device kept. */
	async releaseSession() {
		await run?.release();
		run = null;
		return { memory: memoryReport() };
	},

	/** The release phase's device step, after releaseSession. */
	async destroyDevice() {
		waiter?.close();
		waiter = null;
		// ORT never destroys a device it was given; the worker's owner does.
		device?.destroy();
		device = null;
		return { memory: memoryReport() };
	},

	/** Both at once (release=all). */
	async close() {
		await handlers.releaseSession();
		return handlers.destroyDevice();
	},
};

await serveWorker("decoder-worker", handlers, () => device);
