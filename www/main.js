// The benchmark flow of the seed page, phase by phase: baseline, the
// schedule's loading phases (schedules.js), decoder-run, release. The core
// (www/pkg) parses the query, preprocesses, chooses tokens, scores and
// summarises; this file only sequences, times and reports.
import init, * as core from "./pkg/ocr_bench_core.js";
import { ORT_VERSION } from "../browser/ort.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../browser/gpu.js";
import { deviceLostMessage, explained, explainDeviceLoss, explainOrtError, serializeError } from "../browser/errors.js";
import { createSession } from "../browser/sessions.js";
import { checkDecoder, checkVision } from "../browser/contract.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { endProfile } from "../browser/ort-profile.js";
import { trackGpuMemory } from "../browser/gpu-memory.js";
import { wasmHeaps } from "../browser/wasm-memory.js";
import { loadCases, loadManifest, loadVocabulary, modelEntry } from "./manifest.js";
import { loadPixels } from "./images.js";
import { createDecoder } from "./decode.js";
import { createGpuDecoder } from "./decode-gpu.js";
import { createCapturedSteps } from "./decode-capture.js";
import { decoderOutputLocations } from "./decoder-tensors.js";
import { startDecoderProxy } from "./decoder-proxy.js";
import { verificationWords, verifyOnWasm } from "./verify.js";
import { createMemorySampler } from "./memory.js";
import { createReporter } from "./server.js";
import { createSchedule } from "./schedules.js";
import { probeCompletionFloors } from "./probe.js";
import { buildSummary, caseResult, timingNotes } from "./summary.js";
import { buildPlan } from "./plan.js";
import { gpuMemorySummary } from "./memory-summary.js";
import { createView } from "./view.js";
import { armFaults } from "./fault-injection.js";

// Decoder-only scope: the seed forces this non-EOS id (the vocabulary's first
// character) so every run walks the complete cache path.
const FORCED_TOKEN = 4;

const view = createView();
// decoderWorker: realm=worker's proxy (www/decoder-proxy.js), which holds the decoder instead of `decoder`.
const owned = { worker: null, decoderWorker: null, vision: null, decoder: null, decoderStep: null, device: null, waiter: null, gpuMemory: null };
let phase = "setup";
let runId = `invalid-${Date.now()}`;
let reporter = createReporter(runId);
let failed = false;
// Test-only faults (www/fault-injection.js), armed from inject= before the core reads the query.
let faults = null;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function enter(name) {
	phase = name;
	view.phase(name);
	await reporter.mark(name);
}

async function releaseAll() {
	owned.worker?.terminate();
	owned.decoderWorker?.terminate();
	await owned.vision?.release();
	await owned.decoder?.release();
	await owned.decoderStep?.release();
	owned.waiter?.close();
	owned.device?.destroy();
	Object.assign(owned, { worker: null, decoderWorker: null, vision: null, decoder: null, decoderStep: null, device: null, waiter: null });
}

async function run() {
	const wallStarted = performance.now();
	await init();
	const armed = await armFaults(location.search, view.log);
	faults = armed.faults;
	const config = core.parseConfig(armed.configSearch);
	faults.checkConfig(config);
	view.showConfig(config);
	runId = `tier-${config.tier}-${config.memory}-${config.loader}-${config.schedule}-${config.decoder}-${config.scope}-${Date.now()}`;
	reporter = createReporter(runId);
	const decoderOnly = config.scope === "decoder";

	const manifest = await loadManifest(config.manifest);
	const capability = manifest.capability;
	if (capability.imageSize !== 224) throw new Error(`The manifest's capability.imageSize is ${capability.imageSize}; the core preprocesses to the contract's 224.`);
	if (config.maxTokens > capability.maxTokens) throw new Error(`maxTokens=${config.maxTokens} exceeds the model's capability.maxTokens (${capability.maxTokens}).`);
	const visionEntry = decoderOnly ? null : modelEntry(manifest, "vision", config.tier, config.weights);
	const decoderEntry = modelEntry(manifest, "decoder", config.decoder, config.weights);
	const vocabularyCharacters = await loadVocabulary(manifest);
	const vocabulary = new core.Vocabulary(vocabularyCharacters);
	const testCases = decoderOnly ? [{ id: "synthetic", expected: "", imageUrl: null }] : await loadCases(config.cases);
	const plan = buildPlan(testCases, config);

	const adapter = await requestGpuAdapter();
	const adapterInfo = describeAdapter(adapter);
	// Refuse before loading anything: an fp16 graph on an adapter without
	// shader-f16 fails at session creation in the native EP at best.
	if (visionEntry) checkRequirements(adapter, "vision tier", config.tier, visionEntry.requires);
	checkRequirements(adapter, "decoder", config.decoder, decoderEntry.requires);
	const environment = { userAgent: navigator.userAgent, adapter: adapterInfo, ortVersion: ORT_VERSION, crossOriginIsolated: self.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency };
	await reporter.start({ config, userAgent: navigator.userAgent, adapter: adapterInfo, ortVersion: ORT_VERSION });

	// Each sample: the page's GPU bytes (its device, once made) with the peak since
	// the last sample, the realm's WASM heaps, and each worker's last report.
	let workerMemory = null;
	let decoderWorkerMemory = null;
	const memory = createMemorySampler(view.log, () => ({
		gpu: owned.gpuMemory ? { ...owned.gpuMemory.snapshot(), windowPeakBytes: owned.gpuMemory.takePeak() } : null,
		wasmHeaps: wasmHeaps(),
		...(workerMemory ? { worker: workerMemory } : {}),
		...(decoderWorkerMemory ? { decoderWorker: decoderWorkerMemory } : {}),
	}));
	const sessionMs = {};
	const placement = {};
	// Every session this realm creates, as browser/sessions.js records it.
	const sessions = [];
	let decoderSpec = null;
	// The page's device and its waiter, made at first use (the staged schedule
	// loads the decoder only after the vision worker ended).
	const ensureDevice = async () => {
		if (!owned.device) {
			const device = await createDevice(adapter);
			owned.device = device;
			// A loss while the page still holds the device ends the run (a release destroys it after letting go).
			device.lost.then((info) => owned.device === device && fail(explained(deviceLostMessage(info))));
			owned.gpuMemory = trackGpuMemory(owned.device);
			owned.waiter = createGpuWaiter(owned.device, { poll: config.poll, kickMs: config.kickMs });
		}
		return owned.device;
	};
	await enter("baseline");
	await memory.sample("baseline");
	// The harness's own rounds, in a phase of their own (www/probe.js).
	await enter("probe");
	const completionFloors = await probeCompletionFloors(config);
	for (const [realm, floor] of Object.entries(completionFloors)) {
		if (floor) view.log(`COMPLETION_FLOOR ${realm} ${JSON.stringify({ probeMs: floor.probeMs, emptyQueueMs: core.latencyStats(Float64Array.from(floor.emptyQueueMs)), dispatchReadbackMs: core.latencyStats(Float64Array.from(floor.dispatchReadbackMs)) })}`);
	}

	let decode = null;
	let profileDecoder = null;
	const shared = {
		config, capability, visionEntry, owned, memory, environment, sessionMs, view, enter,
		/** The vision worker's GPU bytes and heaps, as it last reported them. */
		noteWorkerMemory: (report) => {
			workerMemory = report;
		},
		/** A session another realm created (the vision worker's), as browser/sessions.js records it. */
		noteSession: (record) => {
			sessions.push(record);
		},
		waiter: () => owned.waiter,
		loadPixels: (testCase) => loadPixels(testCase, config.cases),
		faults,
		async loadVision() {
			const created = await createSession({ model: visionEntry.model, loader: config.loader, memory: config.memory, device: await ensureDevice(), preferredOutputLocation: { vision_embeds: "gpu-buffer" }, what: `vision tier ${config.tier}`, profile: config.profile, role: "vision", graph: "vision" });
			owned.vision = created.session;
			sessions.push(created.record);
			sessionMs.vision = created.createMs;
			placement.vision = created.placementLines;
			checkVision(owned.vision, capability);
			await memory.sample("vision-session-ready");
		},
		async loadDecoder() {
			if (config.realm === "worker") {
				// The decoder, its loop and the choice in a worker of their own; the page keeps a proxy.
				owned.decoderWorker = await startDecoderProxy({ config, capability, decoderEntry, tokens: manifest.tokens, vocabulary: vocabularyCharacters, forcedToken: FORCED_TOKEN });
				const { ready } = owned.decoderWorker;
				sessions.push(ready.session);
				sessionMs.decoder = ready.createMs;
				if (ready.step) {
					sessions.push(ready.step.session);
					sessionMs.decoderStep = ready.step.createMs;
				}
				environment.decoderWorkerAdapter = ready.adapter;
				decoderWorkerMemory = ready.memory;
				decoderSpec = ready.spec;
				decode = async (visionEmbeds, options) => {
					const answer = await owned.decoderWorker.decode(visionEmbeds, options);
					decoderWorkerMemory = answer.memory;
					return { ...answer.decoded, logits: answer.logits };
				};
				profileDecoder = () => owned.decoderWorker.profile();
				await memory.sample("decoder-session-ready");
				return;
			}
			const outputs = decoderOutputLocations(capability.layers);
			const created = await createSession({ model: decoderEntry.model, loader: config.loader, memory: config.memory, device: await ensureDevice(), preferredOutputLocation: outputs, what: `decoder "${config.decoder}"`, profile: config.profile, role: "decoder", graph: "decoder" });
			owned.decoder = created.session;
			sessions.push(created.record);
			sessionMs.decoder = created.createMs;
			placement.decoder = created.placementLines;
			const shape = checkDecoder(owned.decoder, capability, decoderEntry, config.maxTokens);
			decoderSpec = { ...shape, fixedKv: decoderEntry.fixedKv, visionTokens: capability.visionTokens, hiddenSize: capability.hiddenSize, vocabulary: capability.vocabulary, bos: manifest.tokens.bos, eos: manifest.tokens.eos };
			// choose=gpu: the choice as a shader on the logits' buffer, `sync` steps per readback.
			if (config.choose === "gpu") {
				const chooser = decoderOnly ? null : await core.GpuTokenChooser.create(owned.device, vocabulary, { bos: manifest.tokens.bos });
				let createRunner;
				if (config.capture === "on") {
					// capture=on: the steps on a second session of the same file that records and replays them (decode-capture.js).
					const step = await createCapturedSteps({ model: decoderEntry.model, loader: config.loader, memory: config.memory, device: owned.device, outputs, name: config.decoder, profile: config.profile });
					owned.decoderStep = step.session;
					sessions.push(step.record);
					sessionMs.decoderStep = step.createMs;
					createRunner = step.createRunner;
				}
				decode = createGpuDecoder(owned.decoder, decoderSpec, owned.waiter, { device: owned.device, chooser, forcedToken: FORCED_TOKEN, sync: config.sync ?? 1, createRunner });
			} else {
				decode = createDecoder(owned.decoder, decoderSpec, owned.waiter, { device: owned.device });
			}
			profileDecoder = () => endProfile(owned.decoder, placement.decoder);
			await memory.sample("decoder-session-ready");
		},
		profileVision: config.profile === "ops" ? () => endProfile(owned.vision, placement.vision) : null,
	};
	const schedule = createSchedule(shared);
	await schedule.load(plan);

	// The seed's token choice, with the core's defaults: a 1.2 penalty on every
	// id already in the sequence (BOS included), a content character repeated
	// 12 times in a row blocked.
	const chooser = new core.TokenChooser(vocabulary, { bos: manifest.tokens.bos });
	const next = decoderOnly ? () => FORCED_TOKEN : (logits) => {
		const token = chooser.choose(logits);
		chooser.push(token);
		return token;
	};
	// verify=wasm keeps each timed step's logits for verify.js: a reference to
	// the array the step read back, no copy inside the timed loop.
	const verifying = config.verify === "wasm";
	const verifyRuns = [];
	let stepLogits = null;
	const recordingNext = (logits, step) => {
		stepLogits?.push(logits);
		return next(logits, step);
	};
	const results = [];
	const warmupResults = [];
	let profile = null;
	await enter("decoder-run");
	for (const [index, item] of plan.entries()) {
		const { testCase } = item;
		view.progress(index, plan.length, `${item.warmup ? "warming up on" : "decoding"} ${testCase.id}`);
		await faults.at("case", index + 1, { device: owned.device });
		const { visionEmbeds, vision, reused } = await schedule.embeds(item, index);
		// A fresh sequence holds only BOS (penalised like any seen id).
		chooser.reset();
		stepLogits = verifying && !item.warmup ? [] : null;
		// realm=worker chooses in the worker (next unused there) and sends the kept logits back.
		const decoded = await decode(visionEmbeds, { next: faults.duringDecode(index + 1, recordingNext, () => owned.device), maxTokens: config.maxTokens, reused, keepLogits: stepLogits !== null, diverge: faults.divergence(index + 1) });
		if (stepLogits) verifyRuns.push({ testCase, repeat: item.repeat, tokenIds: decoded.tokens, logits: decoded.logits ?? stepLogits });
		const runResult = { ...decoded, ...vision, text: vocabulary.decode(Int32Array.from(decoded.tokens)), totalMs: vision.visionMs + decoded.decodeTotalMs };
		// The core scores the case and computes its figures (crate/src/build_summary.rs).
		const result = caseResult(testCase, runResult, !decoderOnly, item, core);
		view.log(`CASE ${result.id} ${JSON.stringify({ warmup: item.warmup, repeat: item.repeat, actual: result.actual, distance: result.distance, tokens: result.tokens, visionMs: result.visionMs, prefillMs: result.prefillMs, decodeMs: result.decodeMs, totalMs: result.totalMs, tokenP50Ms: result.tokenLatency?.p50Ms ?? null })}`);
		if (item.warmup) {
			// Warm-up runs compile the pipelines and are kept apart: not scored,
			// not posted as finished cases, not in the statistics.
			warmupResults.push(result);
			continue;
		}
		results.push(result);
		view.addCase(result, !decoderOnly);
		await reporter.progress(result);
		// profile=ops profiles the warm-up runs and the first timed case only: the
		// profile of a whole set is hundreds of thousands of events (on the H200 a
		// hayai13 run with 3 repeats did not finish printing it within 150 s), and
		// the later cases then run unprofiled.
		if (config.profile === "ops" && !profile) profile = { ...(await schedule.profiles()), decoder: await profileDecoder() };
		await memory.sample(item.repeat === 0 ? `after-case-${testCase.id}` : `after-case-${testCase.id}-repeat-${item.repeat}`);
	}
	view.progress(plan.length, plan.length, "cases done");

	await enter("release");
	// The decoder worker lets go of its session and device first, so its last report says what that left.
	if (owned.decoderWorker) decoderWorkerMemory = await owned.decoderWorker.close();
	await releaseAll();
	await sleep(250);
	await memory.sample("released");
	let verification = null;
	if (verifying) {
		view.progress(0, verifyRuns.length, "verifying on WASM (CPU)");
		const makeNext = () => {
			chooser.reset();
			return next;
		};
		verification = await verifyOnWasm({ config, capability, visionEntry, decoderEntry, spec: decoderSpec, runs: verifyRuns, loadPixels: shared.loadPixels, makeNext, sessions, log: view.log });
		verifyRuns.length = 0;
	}

	const gpuMemory = gpuMemorySummary(memory.samples, owned.gpuMemory?.snapshot() ?? null, workerMemory, decoderWorkerMemory);
	const summary = buildSummary({ runId, config, manifest, visionEntry, decoderEntry, results, warmupResults, memorySamples: memory.samples, environment, sessionMs, wallMs: performance.now() - wallStarted, notes: timingNotes(config, ORT_VERSION), completionFloors, profile, gpuMemory, sessions, verification, core });
	summary.processMemory = await reporter.result(summary);
	window.__benchmarkResult = summary;
	window.__benchmarkDone = true;
	view.showSummary(summary);
	if (summary.verification) {
		const words = verificationWords(summary.verification);
		view.log(`VERIFICATION ${JSON.stringify({ passed: summary.verification.passed, agreeing: summary.verification.agreeing, total: summary.verification.total })} ${words}`);
		const status = document.querySelector("#status");
		status.textContent = `Finished. ${words}`;
		if (!summary.verification.passed) status.className = "failed";
	}
	console.log(`SUITE_RESULT ${JSON.stringify(summary)}`);
}

async function fail(thrown) {
	if (failed) return;
	failed = true;
	const running = { "vision-encode": "Running the vision encoder", "decoder-run": "Running the models" }[phase] ?? "";
	const explainedError = explainOrtError(await explainDeviceLoss(owned.device, thrown), running);
	const error = faults ? faults.annotate(explainedError) : explainedError;
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
