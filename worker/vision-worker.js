// The vision encoder in its own dedicated module worker, on its own WebGPU
// device, for the staged schedule: terminating the worker is the only way to
// give its WASM heap back (the heap never shrinks; upstream
// onnxruntime#21673, #18165), so the decoder then loads into a clean realm.
//
// Protocol: { id, type, payload } in; { id, type: "result" | "error" |
// "progress", payload } out; one { id: null, type: "ready" } first. Errors
// travel as { name, message, stack }. The worker fetches model files itself
// from URLs, so weights never cross postMessage; embeddings come back in the
// transfer list.
import { ort, ORT_VERSION } from "../www/ort.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../www/gpu.js";
import { createSession } from "../www/sessions.js";
import { serializeError } from "../www/server.js";

let device = null;
let vision = null;

const handlers = {
	/** payload: { tier, model, requires, loader, memory } as resolved by the page. */
	async init({ tier, model, requires, loader, memory }) {
		if (vision) throw new Error("The vision worker is already initialised.");
		const adapter = await requestGpuAdapter();
		// Checked before any byte of the model is fetched: refuse, do not run.
		checkRequirements(adapter, "vision tier", tier, requires);
		device = await createDevice(adapter);
		const created = await createSession({
			model,
			loader,
			memory,
			device,
			// On the CPU: the embeddings must leave this worker anyway, and a CPU
			// output makes run() wait for the GPU, so visionMs is honest.
			preferredOutputLocation: { vision_embeds: "cpu" },
			what: `vision tier ${tier}`,
		});
		vision = created.session;
		if (JSON.stringify(vision.inputNames) !== JSON.stringify(["pixel_values"]) || !vision.outputNames.includes("vision_embeds")) {
			throw new Error(`The vision model has inputs [${vision.inputNames}] and outputs [${vision.outputNames}]; the contract is pixel_values -> vision_embeds.`);
		}
		return { createMs: created.createMs, adapter: describeAdapter(adapter), ortVersion: ORT_VERSION };
	},

	/** payload: { pixels: Float32Array(3*224*224) }. */
	async encode({ pixels, size }) {
		if (!vision) throw new Error("The vision worker got encode before init.");
		const input = new ort.Tensor("float32", pixels, [1, 3, size, size]);
		const started = performance.now();
		const output = await vision.run({ pixel_values: input });
		const visionMs = performance.now() - started;
		input.dispose();
		const embeds = output.vision_embeds;
		let values = embeds.data;
		// A view into ORT's (possibly shared) WASM memory cannot be transferred.
		if (!(values.buffer instanceof ArrayBuffer) || values.byteLength !== values.buffer.byteLength) values = values.slice();
		const dims = [...embeds.dims];
		embeds.dispose();
		return { payload: { values, dims, visionMs }, transfer: [values.buffer] };
	},

	async close() {
		await vision?.release();
		vision = null;
		// ORT never destroys a device it was given; the worker's owner does.
		device?.destroy();
		device = null;
		return {};
	},
};

self.onmessage = async ({ data }) => {
	// Anything not in the protocol is ignored rather than answered: it has no id to answer to.
	if (typeof data?.id !== "number" || !Object.hasOwn(handlers, data.type)) return;
	try {
		const answer = await handlers[data.type](data.payload ?? {});
		if (answer.transfer) self.postMessage({ id: data.id, type: "result", payload: answer.payload }, answer.transfer);
		else self.postMessage({ id: data.id, type: "result", payload: answer });
	} catch (error) {
		self.postMessage({ id: data.id, type: "error", payload: serializeError(error) });
	}
};

self.postMessage({ id: null, type: "ready", payload: { ortVersion: ORT_VERSION } });
