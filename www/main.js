// The benchmark flow of the seed page, phase by phase: baseline, vision-load,
// vision-encode and vision-release (staged only), decoder-load, decoder-run,
// release. The core (www/pkg) parses the query, preprocesses, chooses tokens,
// scores and summarises; this file only sequences, times and reports.
import init, * as core from "./pkg/ocr_bench_core.js";
import { ort, ORT_VERSION } from "./ort.js";
import { checkRequirements, createDevice, describeAdapter, explainOrtError, requestGpuAdapter } from "./gpu.js";
import { createSession } from "./sessions.js";
import { checkDecoder, checkVision } from "./contract.js";
import { loadCases, loadManifest, loadVocabulary, modelEntry } from "./manifest.js";
import { loadPixels } from "./images.js";
import { createDecoder } from "./decode.js";
import { createMemorySampler } from "./memory.js";
import { createReporter, serializeError } from "./server.js";
import { startVisionWorker } from "./vision-client.js";
import { buildSummary, caseResult, timingNotes } from "./summary.js";
import { createView } from "./view.js";

// The seed's token choice: a 1.2 penalty on every id already in the sequence
// (BOS included), a content character repeated 12 times in a row blocked.
const CHOOSER_OPTIONS = { penalty: 1.2, maxRun: 12 };
// Decoder-only scope: the seed forces this non-EOS id (the vocabulary's first
// character) so every run walks the complete cache path.
const FORCED_TOKEN = 4;

const view = createView();
const owned = { worker: null, vision: null, decoder: null, device: null };
let phase = "setup";
let runId = `invalid-${Date.now()}`;
let reporter = createReporter(runId);
let failed = false;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function enter(name) {
	phase = name;
	view.phase(name);
	await reporter.mark(name);
}

async function releaseAll() {
	owned.worker?.terminate();
	await owned.vision?.release();
	await owned.decoder?.release();
	owned.device?.destroy();
	Object.assign(owned, { worker: null, vision: null, decoder: null, device: null });
}

async function run() {
	const wallStarted = performance.now();
	await init();
	const config = core.parseConfig(location.search);
	view.showConfig(config);
	runId = `tier-${config.tier}-${config.memory}-${config.loader}-${config.schedule}-${config.decoder}-${config.scope}-${Date.now()}`;
	reporter = createReporter(runId);
	const decoderOnly = config.scope === "decoder";
	const staged = config.schedule === "staged";

	const manifest = await loadManifest(config.manifest);
	const capability = manifest.capability;
	if (capability.imageSize !== 224) throw new Error(`The manifest's capability.imageSize is ${capability.imageSize}; the core preprocesses to the contract's 224.`);
	if (config.maxTokens > capability.maxTokens) throw new Error(`maxTokens=${config.maxTokens} exceeds the model's capability.maxTokens (${capability.maxTokens}).`);
	const visionEntry = decoderOnly ? null : modelEntry(manifest, "vision", config.tier, config.weights);
	const decoderEntry = modelEntry(manifest, "decoder", config.decoder, config.weights);
	const vocabulary = new core.Vocabulary(await loadVocabulary(manifest));
	const testCases = decoderOnly ? [{ id: "synthetic", expected: "", imageUrl: null }] : await loadCases(config.cases);

	const adapter = await requestGpuAdapter();
	const adapterInfo = describeAdapter(adapter);
	// Refuse before loading anything: an fp16 graph on an adapter without
	// shader-f16 fails at session creation in the native EP at best.
	if (visionEntry) checkRequirements(adapter, "vision tier", config.tier, visionEntry.requires);
	checkRequirements(adapter, "decoder", config.decoder, decoderEntry.requires);
	const environment = { userAgent: navigator.userAgent, adapter: adapterInfo, ortVersion: ORT_VERSION, crossOriginIsolated: self.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency };
	await reporter.start({ config, userAgent: navigator.userAgent, adapter: adapterInfo, ortVersion: ORT_VERSION });

	const memory = createMemorySampler(view.log);
	const sessionMs = {};
	const ensureDevice = async () => {
		owned.device ??= await createDevice(adapter);
		return owned.device;
	};
	await enter("baseline");
	await memory.sample("baseline");

	const loadVision = async () => {
		const created = await createSession({ model: visionEntry.model, loader: config.loader, memory: config.memory, device: await ensureDevice(), preferredOutputLocation: { vision_embeds: "gpu-buffer" }, what: `vision tier ${config.tier}` });
		owned.vision = created.session;
		sessionMs.vision = created.createMs;
		checkVision(owned.vision, capability);
		await memory.sample("vision-session-ready");
	};
	let decode = null;
	const loadDecoder = async () => {
		const outputs = { logits: "cpu" };
		for (let layer = 0; layer < capability.layers; layer += 1) outputs[`present_k${layer}`] = outputs[`present_v${layer}`] = "gpu-buffer";
		const created = await createSession({ model: decoderEntry.model, loader: config.loader, memory: config.memory, device: await ensureDevice(), preferredOutputLocation: outputs, what: `decoder "${config.decoder}"` });
		owned.decoder = created.session;
		sessionMs.decoder = created.createMs;
		const shape = checkDecoder(owned.decoder, capability, decoderEntry, config.maxTokens);
		decode = createDecoder(owned.decoder, { ...shape, fixedKv: decoderEntry.fixedKv, visionTokens: capability.visionTokens, hiddenSize: capability.hiddenSize, vocabulary: capability.vocabulary, bos: manifest.tokens.bos, eos: manifest.tokens.eos });
		await memory.sample("decoder-session-ready");
	};

	if (!staged && !decoderOnly) {
		await enter("vision-load");
		await loadVision();
		await enter("decoder-load");
		await loadDecoder();
	}
	if (decoderOnly) {
		await enter("decoder-load");
		await loadDecoder();
	}
	const stagedEmbeds = [];
	if (staged && !decoderOnly) {
		await enter("vision-load");
		owned.worker = await startVisionWorker();
		const ready = await owned.worker.call("init", { tier: config.tier, model: visionEntry.model, requires: visionEntry.requires, loader: config.loader, memory: config.memory });
		sessionMs.vision = ready.createMs;
		environment.workerAdapter = ready.adapter;
		await memory.sample("vision-worker-session-ready");
		await enter("vision-encode");
		for (const [index, testCase] of testCases.entries()) {
			view.progress(index, testCases.length, `encoding ${testCase.id}`);
			const pixels = await loadPixels(testCase.imageUrl, core.preprocess);
			stagedEmbeds.push(await owned.worker.call("encode", { pixels, size: capability.imageSize }, [pixels.buffer]));
		}
		await memory.sample("all-vision-embeddings-ready");
		await enter("vision-release");
		await owned.worker.call("close", {});
		owned.worker.terminate();
		owned.worker = null;
		await sleep(100);
		await memory.sample("vision-worker-terminated");
		await enter("decoder-load");
		await loadDecoder();
	}

	const chooser = new core.TokenChooser(vocabulary, { ...CHOOSER_OPTIONS, bos: manifest.tokens.bos });
	const results = [];
	const finished = [];
	await enter("decoder-run");
	for (const [index, testCase] of testCases.entries()) {
		view.progress(index, testCases.length, `decoding ${testCase.id}`);
		let visionEmbeds;
		let vision = { visionMs: 0 };
		if (decoderOnly) {
			visionEmbeds = new ort.Tensor("float32", new Float32Array(capability.visionTokens * capability.hiddenSize), [1, capability.visionTokens, capability.hiddenSize]);
		} else if (staged) {
			const staged = stagedEmbeds[index];
			visionEmbeds = new ort.Tensor("float32", staged.values, staged.dims);
			vision = { visionMs: staged.visionMs };
			stagedEmbeds[index] = null;
		} else {
			const pixels = new ort.Tensor("float32", await loadPixels(testCase.imageUrl, core.preprocess), [1, 3, capability.imageSize, capability.imageSize]);
			const started = performance.now();
			const output = await owned.vision.run({ pixel_values: pixels });
			const visionCallMs = performance.now() - started;
			// run() returns once the work is submitted, not done (measured: 6-18 ms
			// early with a gpu-buffer output); wait on the queue ORT submitted to.
			await owned.device.queue.onSubmittedWorkDone();
			vision = { visionMs: performance.now() - started, visionCallMs };
			pixels.dispose();
			visionEmbeds = output.vision_embeds;
		}
		// A fresh sequence holds only BOS (penalised like any seen id).
		chooser.reset();
		const next = decoderOnly ? () => FORCED_TOKEN : (logits) => {
			const token = chooser.choose(logits);
			chooser.push(token);
			return token;
		};
		const decoded = await decode(visionEmbeds, { next, maxTokens: config.maxTokens });
		const runResult = { ...decoded, ...vision, text: vocabulary.decode(Int32Array.from(decoded.tokens)), totalMs: vision.visionMs + decoded.decodeTotalMs };
		// decodeMs covers decodeSteps decoder runs (one fewer than the tokens when
		// maxTokens stops the loop), so the core's msPerToken divides by those.
		const scoredInput = { id: testCase.id, expected: testCase.expected, actual: runResult.text, totalMs: runResult.totalMs, tokens: runResult.decodeSteps, decodeMs: runResult.decodeMs };
		finished.push(scoredInput);
		const scored = core.summarize([scoredInput], { accuracyApplicable: !decoderOnly }).perCase[0];
		const result = caseResult(testCase, runResult, scored, !decoderOnly);
		results.push(result);
		view.addCase(result, !decoderOnly);
		view.log(`CASE ${result.id} ${JSON.stringify({ actual: result.actual, distance: result.distance, tokens: result.tokens, visionMs: result.visionMs, prefillMs: result.prefillMs, decodeMs: result.decodeMs, totalMs: result.totalMs })}`);
		await reporter.progress(result);
		await memory.sample(`after-case-${testCase.id}`);
	}
	view.progress(testCases.length, testCases.length, "cases done");

	await enter("release");
	await releaseAll();
	await sleep(250);
	await memory.sample("released");

	const stats = core.summarize(finished, { accuracyApplicable: !decoderOnly });
	const summary = buildSummary({ runId, config, manifest, visionEntry, decoderEntry, stats, results, memorySamples: memory.samples, environment, sessionMs, wallMs: performance.now() - wallStarted, notes: timingNotes(config, ORT_VERSION) });
	summary.processMemory = await reporter.result(summary);
	window.__benchmarkResult = summary;
	window.__benchmarkDone = true;
	view.showSummary(summary);
	console.log(`SUITE_RESULT ${JSON.stringify(summary)}`);
}

async function fail(thrown) {
	if (failed) return;
	failed = true;
	const running = { "vision-encode": "Running the vision encoder", "decoder-run": "Running the models" }[phase] ?? "";
	const error = explainOrtError(thrown, running);
	const reported = serializeError(error);
	view.showError(error, phase);
	// Best effort, and bounded: a wedged session must not keep __benchmarkDone unset.
	const released = releaseAll().catch((releaseError) => console.error(`Release after the failure failed too: ${releaseError.message}`));
	await Promise.race([released, sleep(5000)]);
	await reporter.error(phase, reported);
	window.__benchmarkResult = { error: reported, runId, phase };
	window.__benchmarkDone = true;
	console.log(`SUITE_ERROR ${JSON.stringify(window.__benchmarkResult)}`);
}

window.addEventListener("error", (event) => fail(event.error ?? new Error(event.message)));
window.addEventListener("unhandledrejection", (event) => fail(event.reason instanceof Error ? event.reason : new Error(String(event.reason))));
run().catch(fail);
