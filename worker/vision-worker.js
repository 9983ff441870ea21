// @ts-check
// The vision encoder in its own dedicated module worker, on its own WebGPU
// device, for the staged schedule: terminating the worker is the only way to
// give its WASM heap back (the heap never shrinks; upstream
// onnxruntime#21673, #18165), so the decoder then loads into a clean realm.
//
// Protocol: browser/worker-host.js's. The worker fetches model files itself
// from URLs, so weights never cross postMessage; embeddings come back in the
// transfer list. It imports only the shared browser modules (browser/), never
// the page's.

import { checkVisionIo, visionIoOf } from "../browser/contract.js";
import { countDispatches } from "../browser/dispatch-count.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../browser/gpu.js";
import { trackGpuMemory } from "../browser/gpu-memory.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { ORT_VERSION, ort } from "../browser/ort.js";
import { endProfile } from "../browser/ort-profile.js";
import { realmMemory } from "../browser/realm-memory.js";
import { createSession } from "../browser/sessions.js";
import { capturedVisionIo } from "../browser/vision-capture.js";
import { serveWorker } from "../browser/worker-host.js";
import { injectFault } from "./fault-injection.js";

/** @type {GPUDevice | null} */
let device = null;
/** @type {import("../browser/gpu-wait.js").GpuWaiter | null} */
let waiter = null;
/** @type {import("onnxruntime-web").InferenceSession | null} */
let vision = null;
/** @type {string[] | null} */
let placementLines = null;
/** @type {import("../browser/gpu-memory.js").GpuMemoryTracker | null} */
let gpuMemory = null;
// capture=all: the session replays one recorded graph from fixed buffers (browser/vision-capture.js).
let captured = false;
/** The vision tensor names of the model's family (init's). */
let names = visionIoOf();
/** @type {import("../browser/vision-capture.js").CapturedVisionIo | null} */
let capturedIo = null;

/** This realm's GPU bytes, WASM heaps and JS heap, sent with every answer that changes them. */
const memoryReport = () => realmMemory(gpuMemory);

const handlers = {
	/** payload: { tier, model, requires, loader, memory, poll, kickMs, profile, capture (capture=all), family (the manifest's) } as resolved by the page. */
	async init({ tier, model, requires, loader, memory, poll, kickMs, profile, capture = false, family = "prefix" }) {
		if (vision) throw new Error("The vision worker is already initialised.");
		const adapter = await requestGpuAdapter();
		// Checked before any byte of the model is fetched: refuse, do not run.
		checkRequirements(adapter, "vision tier", tier, requires);
		const realmDevice = await createDevice(adapter);
		device = realmDevice;
		gpuMemory = trackGpuMemory(realmDevice);
		waiter = createGpuWaiter(realmDevice, { poll, kickMs });
		const created = await createSession({
			model,
			loader,
			memory,
			device: realmDevice,
			// On the CPU: the embeddings must leave this worker anyway, and a CPU
			// output makes run() wait for the GPU, so visionMs is honest. A captured
			// graph's outputs can only be GPU buffers: encode reads them back itself.
			preferredOutputLocation: { [visionIoOf(family).embeds]: capture ? "gpu-buffer" : "cpu" },
			what: `vision tier ${tier}`,
			profile,
			role: "vision",
			graph: "vision",
			graphCapture: capture,
		});
		captured = capture;
		vision = created.session;
		placementLines = created.placementLines;
		names = visionIoOf(family);
		checkVisionIo(vision, names);
		return {
			createMs: created.createMs,
			session: created.record,
			adapter: describeAdapter(adapter),
			ortVersion: ORT_VERSION,
			memory: memoryReport(),
		};
	},

	/** payload: { pixels: Float32Array(3*224*224), size, fault (test-only, www/fault-injection.js) }. */
	async encode({ pixels, size, fault = null }) {
		const session = vision;
		if (!session || !device || !waiter) throw new Error("The vision worker got encode before init.");
		await injectFault(fault, "encode", device);
		if (captured) capturedIo ??= capturedVisionIo(device, [1, 3, size, size], waiter);
		const io = captured ? capturedIo : null;
		const started = performance.now();
		// Timed with the run, as run()'s own upload of a CPU input is.
		const input = io ? io.input(pixels) : new ort.Tensor("float32", pixels, [1, 3, size, size]);
		const { value: output, dispatches: visionDispatches } = await waiter.wait(() => countDispatches(() => session.run({ [names.pixels]: input })));
		const embeds = output[names.embeds];
		// Read back before the next image replays into the same buffer; timed, as a CPU output's wait is.
		// The contract's embeddings are float32 (browser/contract.js).
		let values = /** @type {Float32Array} */ (captured ? await waiter.wait(() => embeds.getData()) : embeds.data);
		const visionMs = performance.now() - started;
		if (!captured) input.dispose();
		// A view into ORT's (possibly shared) WASM memory cannot be transferred.
		if (!(values.buffer instanceof ArrayBuffer) || values.byteLength !== values.buffer.byteLength) values = values.slice();
		const dims = [...embeds.dims];
		embeds.dispose();
		return { payload: { values, dims, visionMs, visionDispatches, memory: memoryReport() }, transfer: [values.buffer] };
	},

	/** profile=ops: the vision session's operators and placement (one-shot: ORT then stops profiling). */
	async profile() {
		if (!vision) throw new Error("The vision worker got profile before init.");
		if (!placementLines) throw new Error("The vision worker was not started with profile=ops.");
		return endProfile(vision, placementLines);
	},

	async close() {
		await vision?.release();
		vision = null;
		capturedIo?.release();
		capturedIo = null;
		waiter?.close();
		// ORT never destroys a device it was given; the worker's owner does.
		device?.destroy();
		device = null;
		return { memory: memoryReport() };
	},
};

await serveWorker("vision-worker", handlers, () => device);
