// realm=worker: the decoder session, its whole decode loop and the core's
// token choice in a dedicated module worker of their own, on its own WebGPU
// device; the page holds only a proxy (www/decoder-proxy.js). The loop is the
// page's (www/decode.js, or www/decode-gpu.js with choose=gpu), imported, so
// the two realms decode and time alike, and the core is loaded here from
// www/pkg for the choice. Every answer carries this realm's memory (GPU bytes
// of its wrapped device, its WASM heaps, its JS heap where the browser has
// performance.memory), which the page records as the realm decoder-worker.
//
// Protocol: browser/worker-host.js's. The worker fetches the model files itself
// from URLs; embeddings come in, and verify=wasm's logits go out, in the
// transfer list.
import init, * as core from "../www/pkg/ocr_bench_core.js";
import { ort } from "../browser/ort.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../browser/gpu.js";
import { createSession } from "../browser/sessions.js";
import { checkDecoder } from "../browser/contract.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { endProfile } from "../browser/ort-profile.js";
import { trackGpuMemory } from "../browser/gpu-memory.js";
import { realmMemory } from "../browser/realm-memory.js";
import { serveWorker } from "../browser/worker-host.js";
import { createDecoder } from "../www/decode.js";
import { createGpuDecoder } from "../www/decode-gpu.js";
import { createCapturedSteps } from "../www/decode-capture.js";
import { decoderOutputLocations } from "../www/decoder-tensors.js";

let device = null;
let waiter = null;
let decoder = null;
// capture=on: the session whose steps onnxruntime-web records and replays.
let decoderStep = null;
let placementLines = null;
let gpuMemory = null;
// What init set up for every decode: the spec, the loop, the choice.
let run = null;

/** This realm's memory, with its device's peak since the answer before. */
const memoryReport = () => {
	const report = realmMemory(gpuMemory);
	if (report.gpu) report.gpu.windowPeakBytes = gpuMemory.takePeak();
	return report;
};

/** A typed array that owns its whole buffer, so that it can be transferred. */
const standalone = (values) => (values.buffer instanceof ArrayBuffer && values.byteOffset === 0 && values.byteLength === values.buffer.byteLength ? values : values.slice());

const handlers = {
	/**
	 * payload: { decoder (its name), entry: { model, requires, fixedKv }, loader,
	 * memory, poll, kickMs, profile, choose, sync, capture, capability, maxTokens, tokens:
	 * { bos, eos }, vocabulary (vocab.json's characters), decoderOnly, forcedToken },
	 * as the page resolved them from the query and the manifest.
	 */
	async init({ decoder: name, entry, loader, memory, poll, kickMs, profile, choose, sync, capture = "off", capability, maxTokens, tokens, vocabulary: characters, decoderOnly, forcedToken }) {
		if (decoder) throw new Error("The decoder worker is already initialised.");
		await init();
		const adapter = await requestGpuAdapter();
		// Checked before any byte of the model is fetched: refuse, do not run.
		checkRequirements(adapter, "decoder", name, entry.requires);
		device = await createDevice(adapter);
		gpuMemory = trackGpuMemory(device);
		waiter = createGpuWaiter(device, { poll, kickMs });
		const outputs = decoderOutputLocations(capability.layers);
		const created = await createSession({ model: entry.model, loader, memory, device, preferredOutputLocation: outputs, what: `decoder "${name}"`, profile, role: "decoder", graph: "decoder" });
		decoder = created.session;
		placementLines = created.placementLines;
		const shape = checkDecoder(decoder, capability, { ...entry, name }, maxTokens);
		const spec = { ...shape, fixedKv: entry.fixedKv, visionTokens: capability.visionTokens, hiddenSize: capability.hiddenSize, vocabulary: capability.vocabulary, bos: tokens.bos, eos: tokens.eos };
		const vocabulary = new core.Vocabulary(characters);
		let captured = null;
		if (choose === "gpu") {
			const chooser = decoderOnly ? null : await core.GpuTokenChooser.create(device, vocabulary, { bos: tokens.bos });
			// The GPU loop resets its chooser itself and forces the token of scope=decoder.
			let createRunner;
			if (capture === "on") {
				const step = await createCapturedSteps({ model: entry.model, loader, memory, device, outputs, name, profile });
				decoderStep = step.session;
				captured = { createMs: step.createMs, session: step.record };
				createRunner = step.createRunner;
			}
			run = { spec, decoderOnly, chooser, resetChooser: false, decode: createGpuDecoder(decoder, spec, waiter, { device, chooser, forcedToken, sync, createRunner }) };
		} else {
			// The seed's choice with the core's defaults, as the page makes it (www/main.js).
			const chooser = decoderOnly ? null : new core.TokenChooser(vocabulary, { bos: tokens.bos });
			run = { spec, decoderOnly, chooser, resetChooser: true, forcedToken, decode: createDecoder(decoder, spec, waiter, { device }) };
		}
		return { createMs: created.createMs, session: created.record, ...(captured ? { step: captured } : {}), spec, adapter: describeAdapter(adapter), memory: memoryReport() };
	},

	/**
	 * payload: { embeds: Float32Array [1, V, hidden] or null (scope=decoder: the
	 * zeros are made here), dims, maxTokens, keepLogits (verify=wasm: every
	 * step's logits come back), diverge (a test-only divergence fault's kind, sent
	 * by the page, which alone arms faults: www/divergence.js) }. Returns
	 * decode.js's result, the kept logits and the memory.
	 */
	async decode({ embeds, dims, maxTokens, keepLogits = false, diverge = null }) {
		if (!run) throw new Error("The decoder worker got decode before init.");
		const { spec } = run;
		const visionDims = [1, spec.visionTokens, spec.hiddenSize];
		const values = embeds ?? new Float32Array(spec.visionTokens * spec.hiddenSize);
		if (embeds && (dims?.join() !== visionDims.join() || embeds.length !== spec.visionTokens * spec.hiddenSize)) {
			throw new Error(`The decoder worker got embeddings [${dims}] of ${embeds.length} values; the decoder takes [${visionDims}].`);
		}
		const visionEmbeds = new ort.Tensor("float32", values, visionDims);
		const logits = keepLogits ? [] : null;
		// A fresh sequence holds only BOS (penalised like any seen id).
		if (run.resetChooser) run.chooser?.reset();
		const next = run.decoderOnly
			? () => run.forcedToken
			: (stepLogits) => {
				logits?.push(standalone(stepLogits));
				const token = run.chooser.choose(stepLogits);
				run.chooser.push(token);
				return token;
			};
		const decoded = await run.decode(visionEmbeds, { next, maxTokens, diverge });
		const kept = logits ?? [];
		return { payload: { decoded, logits, memory: memoryReport() }, transfer: kept.map((array) => array.buffer) };
	},

	/** profile=ops: the decoder session's operators and placement (one-shot: ORT then stops profiling). */
	async profile() {
		if (!decoder) throw new Error("The decoder worker got profile before init.");
		if (!placementLines) throw new Error("The decoder worker was not started with profile=ops.");
		return endProfile(decoder, placementLines);
	},

	async close() {
		await decoder?.release();
		await decoderStep?.release();
		decoder = null;
		decoderStep = null;
		run?.chooser?.free?.();
		run = null;
		waiter?.close();
		// ORT never destroys a device it was given; the worker's owner does.
		device?.destroy();
		device = null;
		return { memory: memoryReport() };
	},
};

await serveWorker("decoder-worker", handlers, () => device);
