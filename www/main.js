// @ts-check
// The benchmark flow of the seed page, phase by phase: baseline, the
// schedule's loading phases (schedules.js), decoder-run, release. The core
// (pkg/) parses the query, preprocesses, chooses tokens, scores and
// summarises; the decoder run is set up by browser/decoding/decoder-run.js in
// either realm; this file only sequences, times and reports, one named step
// per part of run().

import { checkVision, visionIoOf } from "../browser/contract.js";
import { createTokenChoice, decoderRunOf } from "../browser/decoding/decoder-run.js";
import { deviceLostMessage, explainDeviceLoss, explained, explainOrtError, serializeError } from "../browser/errors.js";
import { checkRequirements, createDevice, describeAdapter, requestGpuAdapter } from "../browser/gpu.js";
import { trackGpuMemory } from "../browser/gpu-memory.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { loadOrt, ORT_VERSION } from "../browser/ort.js";
import { endProfile } from "../browser/ort-profile.js";
import { createSession } from "../browser/sessions.js";
import { capturedVisionIo } from "../browser/vision-capture.js";
import { wasmHeaps } from "../browser/wasm-memory.js";
import init, * as core from "../pkg/ocr_bench_core.js";
import { loadDecoderPool, oneAtATime, readWithPool } from "./decoder-pool.js";
import { startDecoderProxy } from "./decoder-proxy.js";
import { loadEncoderDecoder } from "./encoder-decoder.js";
import { armFaults, NO_FAULTS } from "./fault-injection.js";
import { loadPixels } from "./images.js";
import { guardLimits } from "./limit-guard.js";
import { loadCases, loadManifest, loadVocabulary, modelEntry } from "./manifest.js";
import { createMemorySampler } from "./memory.js";
import { gpuMemorySummary } from "./memory-summary.js";
import { buildPlan } from "./plan.js";
import { probeCompletionFloors } from "./probe.js";
import { createSchedule } from "./schedules.js";
import { createReporter } from "./server.js";
import { buildSummary, caseResult, timingNotes } from "./summary.js";
import { verificationWords, verifyOnWasm } from "./verify.js";
import { createView } from "./view.js";

/** @typedef {import("../browser/gpu-wait.js").GpuWaiter} GpuWaiter */

const view = createView();
// decoderRun: realm=page's decoder run (browser/decoding/decoder-run.js); decoderWorker: realm=worker's proxy (www/decoder-proxy.js) instead.
// decoderPool: pool>1's realms (www/decoder-pool.js).
/**
 * @typedef {object} Owned what the page holds, each null until made and after its release
 * @property {Awaited<ReturnType<typeof import("./worker-client.js").startWorker>> | null} worker the staged schedule's vision worker
 * @property {Awaited<ReturnType<typeof startDecoderProxy>> | null} decoderWorker
 * @property {import("onnxruntime-web").InferenceSession | null} vision
 * @property {import("../browser/vision-capture.js").CapturedVisionIo | null} visionIo
 * @property {import("../browser/decoding/decoder-run.js").DecoderRun | import("../browser/decoding/decoder-run.js").EncoderDecoderRun | null} decoderRun
 * @property {Awaited<ReturnType<typeof loadDecoderPool>> | null} decoderPool
 * @property {GPUDevice | null} device
 * @property {import("../browser/gpu-wait.js").GpuWaiter | null} waiter
 * @property {import("../browser/gpu-memory.js").GpuMemoryTracker | null} gpuMemory
 */
/** What releaseAll lets go of, as nothing held; the GPU-byte tracker outlives it (the summary reads it after). */
const nothingReleasable = () => ({
	worker: null,
	decoderWorker: null,
	vision: null,
	visionIo: null,
	decoderRun: null,
	decoderPool: null,
	device: null,
	waiter: null,
});
/** @type {Owned} */
const owned = { ...nothingReleasable(), gpuMemory: null };
let phase = "setup";
let runId = `invalid-${Date.now()}`;
let reporter = createReporter(runId);
let failed = false;
// Test-only faults (www/fault-injection.js), armed from inject= before the core reads the query.
let faults = NO_FAULTS;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function enter(name) {
	phase = name;
	view.phase(name);
	await reporter.mark(name);
}

async function releaseAll() {
	owned.worker?.terminate();
	owned.decoderWorker?.terminate();
	for (const realm of owned.decoderPool ?? []) await realm.terminate();
	await owned.vision?.release();
	owned.visionIo?.release();
	await owned.decoderRun?.release();
	owned.waiter?.close();
	owned.device?.destroy();
	Object.assign(owned, nothingReleasable());
}

/** The core's config from the query (faults armed first), shown, and the run's id and reporter. */
async function readConfig() {
	await init();
	const armed = await armFaults(location.search, view.log);
	faults = armed.faults;
	const config = core.parseConfig(armed.configSearch);
	faults.checkConfig(config);
	// The version ort= names, before anything makes a device or a session (browser/ort.js).
	await loadOrt(core.ortDistFolder(config));
	view.showConfig(config);
	runId = `tier-${config.tier}-${config.memory}-${config.loader}-${config.schedule}-${config.decoder}-${config.scope}-${Date.now()}`;
	reporter = createReporter(runId);
	return config;
}

/** The manifest, its entries for this config, the vocabulary, the cases and the plan, checked. */
async function loadInputs(config) {
	const decoderOnly = config.scope === "decoder";
	// The core reads the manifest and holds the config to it (imageSize, maxTokens, the variants).
	const manifest = await loadManifest(config, core.checkManifest);
	const capability = manifest.capability;
	const visionEntry = decoderOnly ? null : modelEntry(manifest, "vision", config.tier, config.weights);
	const decoderEntry = modelEntry(manifest, "decoder", config.decoder, config.weights);
	const testCases = decoderOnly ? [{ id: "synthetic", expected: "", imageUrl: null }] : await loadCases(config.cases);
	const plan = buildPlan(testCases, config);
	if (manifest.family === "encoder-decoder") {
		// An imported model: its tokenizer and image processor instead of the built-in vocabulary and preprocess.
		const { decodeText, loadPixels: loadModelPixels } = await loadEncoderDecoder(manifest);
		return {
			decoderOnly,
			manifest,
			capability,
			visionEntry,
			decoderEntry,
			vocabularyCharacters: null,
			vocabulary: null,
			decodeText,
			loadPixels: loadModelPixels,
			plan,
		};
	}
	const vocabularyCharacters = await loadVocabulary(manifest);
	const vocabulary = new core.Vocabulary(vocabularyCharacters);
	/** @param {number[]} ids */
	const decodeText = (ids) => vocabulary.decode(Int32Array.from(ids));
	return { decoderOnly, manifest, capability, visionEntry, decoderEntry, vocabularyCharacters, vocabulary, decodeText, loadPixels, plan };
}

/**
 * The device-limit guard (www/limit-guard.js) on the tier and the decoder: a
 * fallback taken replaces the entry loaded (the config stays the query asked,
 * as every record's query does); the steps taken are returned for the record.
 */
function guardDeviceLimits(config, inputs, adapter) {
	const roles = [["decoder", "decoder", "decoderEntry"], ...(inputs.visionEntry ? [["vision", "tier", "visionEntry"]] : [])];
	const taken = [];
	for (const [role, parameter, entryKey] of roles) {
		const guarded = guardLimits(adapter, inputs.manifest, role, config[parameter]);
		if (!guarded.taken.length) continue;
		for (const step of guarded.taken) view.log(`LIMIT_FALLBACK ${JSON.stringify(step)}`);
		taken.push(...guarded.taken);
		inputs[entryKey] = modelEntry(inputs.manifest, role, guarded.name, config.weights);
	}
	return taken;
}

/** The adapter, checked against the models' requirements and limits, and the environment the record starts with. */
async function startRecord(config, inputs) {
	const adapter = await requestGpuAdapter();
	const adapterInfo = describeAdapter(adapter);
	const limitFallbacks = guardDeviceLimits(config, inputs, adapter);
	const { visionEntry, decoderEntry } = inputs;
	// Refuse before loading anything: an fp16 graph on an adapter without
	// shader-f16 fails at session creation in the native EP at best.
	if (visionEntry) checkRequirements(adapter, "vision tier", config.tier, visionEntry.requires);
	checkRequirements(adapter, "decoder", config.decoder, decoderEntry.requires);
	const environment = {
		userAgent: navigator.userAgent,
		adapter: adapterInfo,
		ortVersion: ORT_VERSION,
		crossOriginIsolated: self.crossOriginIsolated,
		hardwareConcurrency: navigator.hardwareConcurrency,
		...(limitFallbacks.length ? { limitFallbacks } : {}),
	};
	await reporter.start({ config, userAgent: navigator.userAgent, adapter: adapterInfo, ortVersion: ORT_VERSION });
	return { adapter, environment };
}

/**
 * The memory sampler. Each sample: the page's GPU bytes (its device, once made)
 * with the peak since the last sample, the realm's WASM heaps, and each
 * worker's last report, which `workers` holds ({ vision, decoder }).
 */
function startMemory(config) {
	const workers = { vision: null, decoder: null };
	const memory = createMemorySampler(view.log, () => ({
		gpu: owned.gpuMemory ? { ...owned.gpuMemory.snapshot(), windowPeakBytes: owned.gpuMemory.takePeak() } : null,
		wasmHeaps: wasmHeaps(),
		...(workers.vision ? { worker: workers.vision } : {}),
		...(workers.decoder ? { decoderWorker: workers.decoder } : {}),
		// The decoder workers not yet terminated (release=realm's step ends them).
		...(config.realm === "worker" ? { decoderWorkers: (owned.decoderWorker ? 1 : 0) + (owned.decoderPool?.length ?? 0) } : {}),
	}));
	return { memory, workers };
}

/** The baseline sample, then the harness's own rounds in a phase of their own (www/probe.js). */
async function baselineAndProbe(config, environment, memory) {
	await enter("baseline");
	await memory.sample("baseline");
	await enter("probe");
	const completionFloors = await probeCompletionFloors(config, environment.adapter, view.log);
	for (const [realm, floor] of Object.entries(completionFloors)) {
		if (floor)
			view.log(
				`COMPLETION_FLOOR ${realm} ${JSON.stringify({ source: floor.source?.origin, probeMs: floor.probeMs, emptyQueueMs: core.latencyStats(Float64Array.from(floor.emptyQueueMs)), dispatchReadbackMs: core.latencyStats(Float64Array.from(floor.dispatchReadbackMs)) })}`,
			);
	}
	return completionFloors;
}

/**
 * What the schedule (schedules.js) needs of the page: the phases, the memory,
 * the page's device made at first use (the staged schedule loads the decoder
 * only after the vision worker ended), and the loading of each session. The
 * decoder's loading fills `decoding` ({ spec, decode, profile }) in the realm
 * the config names. `records` gathers sessionMs, the sessions and the placement.
 */
function scheduleHooks({ config, inputs, adapter, environment, memory, workers, records, decoding }) {
	const { capability, visionEntry, decoderEntry, manifest } = inputs;
	const ensureDevice = async () => {
		if (owned.device) return owned.device;
		const device = await createDevice(adapter);
		owned.device = device;
		// A loss while the page still holds the device ends the run (a release destroys it after letting go).
		device.lost.then((info) => owned.device === device && fail(explained(deviceLostMessage(info))));
		owned.gpuMemory = trackGpuMemory(device);
		owned.waiter = createGpuWaiter(device, { poll: config.poll, kickMs: config.kickMs });
		return device;
	};
	/** The decoder's sessions and spec as either realm's run reports them when ready. */
	const noteDecoderReady = (ready) => {
		records.sessions.push(ready.session);
		records.sessionMs.decoder = ready.createMs;
		if (ready.step) {
			records.sessions.push(ready.step.session);
			records.sessionMs.decoderStep = ready.step.createMs;
		}
		decoding.spec = ready.spec;
	};
	const decoderInputs = { config, capability, tokens: manifest.tokens, family: manifest.family, encoderDecoder: manifest.encoderDecoder ?? null };
	const visionNames = visionIoOf(manifest.family);
	return {
		config,
		capability,
		visionEntry,
		visionNames,
		family: manifest.family,
		owned,
		memory,
		environment,
		sessionMs: records.sessionMs,
		view,
		enter,
		/** The vision worker's GPU bytes and heaps, as it last reported them. */
		noteWorkerMemory: (report) => {
			workers.vision = report;
		},
		/** A session another realm created (the vision worker's), as browser/sessions.js records it. */
		noteSession: (record) => {
			records.sessions.push(record);
		},
		waiter: () => owned.waiter,
		loadPixels: (testCase) => inputs.loadPixels(testCase, config.cases),
		faults,
		async loadVision() {
			// capture=all: the encoder replays one recorded graph from fixed buffers (browser/vision-capture.js).
			const captured = config.capture === "all";
			const created = await createSession({
				model: visionEntry.model,
				loader: config.loader,
				memory: config.memory,
				device: await ensureDevice(),
				preferredOutputLocation: { [visionNames.embeds]: "gpu-buffer" },
				what: `vision tier ${config.tier}`,
				profile: config.profile,
				role: "vision",
				graph: "vision",
				graphCapture: captured,
			});
			owned.vision = created.session;
			if (captured)
				owned.visionIo = capturedVisionIo(
					/** @type {GPUDevice} */ (owned.device),
					[1, 3, capability.imageSize, capability.imageSize],
					/** @type {GpuWaiter} */ (owned.waiter),
				);
			records.sessions.push(created.record);
			records.sessionMs.vision = created.createMs;
			records.placement.vision = created.placementLines;
			checkVision(owned.vision, manifest);
			await memory.sample("vision-session-ready");
		},
		async loadDecoder() {
			if (config.pool > 1) {
				/** @type {{ device: GPUDevice, waiter: GpuWaiter } | null} */
				let page = null;
				if (config.realm !== "worker") {
					const device = await ensureDevice();
					// Every call into the page's one onnxruntime-web, the resident vision's too, in turn (decoder-pool.js).
					// ensureDevice made the waiter with the device.
					const waiter = oneAtATime(/** @type {GpuWaiter} */ (owned.waiter));
					owned.waiter = waiter;
					page = { device, waiter };
				}
				owned.decoderPool = await loadDecoderPool(
					{ ...decoderInputs, decoderEntry, vocabulary: inputs.vocabulary, vocabularyCharacters: inputs.vocabularyCharacters },
					page,
				);
				for (const realm of owned.decoderPool) noteDecoderReady(realm.ready);
				if (config.realm === "worker") {
					environment.decoderWorkerAdapter = owned.decoderPool[0].ready.adapter;
					workers.decoder = owned.decoderPool[0].memory;
				}
				// One realm's decode for what reads a single one (verify=wasm's spec is the same in all).
				decoding.decode = owned.decoderPool[0].decode;
			} else if (config.realm === "worker") {
				// The decoder, its loop and the choice in a worker of their own; the page keeps a proxy.
				const proxy = await startDecoderProxy({ ...decoderInputs, decoderEntry, vocabulary: inputs.vocabularyCharacters });
				owned.decoderWorker = proxy;
				const { ready } = proxy;
				noteDecoderReady(ready);
				environment.decoderWorkerAdapter = ready.adapter;
				workers.decoder = ready.memory;
				decoding.decode = async (visionEmbeds, options) => {
					const answer = await proxy.decode(visionEmbeds, options);
					workers.decoder = answer.memory;
					return { ...answer.decoded, logits: answer.logits };
				};
				decoding.profile = () => proxy.profile();
			} else {
				owned.decoderRun = await decoderRunOf(manifest.family)({
					...decoderInputs,
					entry: decoderEntry,
					vocabulary: inputs.vocabulary,
					device: await ensureDevice(),
					waiter: owned.waiter,
				});
				noteDecoderReady(owned.decoderRun.ready);
				decoding.decode = owned.decoderRun.decode;
				decoding.profile = owned.decoderRun.profile;
			}
			await memory.sample("decoder-session-ready");
		},
		profileVision: config.profile === "ops" ? () => endProfile(owned.vision, records.placement.vision) : null,
	};
}

/**
 * The decoder-run phase: every item of the plan decoded, scored by the core and
 * reported. verify=wasm keeps each timed case's logits for verify.js. Returns
 * { results, warmupResults, verifyRuns, profile }.
 */
async function decodeCases({ config, inputs, schedule, decoding, memory, workers }) {
	const { plan, decodeText, decoderOnly } = inputs;
	const verifying = config.verify === "wasm";
	let profile = null;
	await enter("decoder-run");
	// pool>1: each result at its plan index, however the realms' cases finish.
	const byIndex = { results: new Map(), warmupResults: new Map(), verifyRuns: new Map() };
	const inOrder = (map) => [...map.entries()].sort(([a], [b]) => a - b).map(([, value]) => value);
	const readCase = async (item, index, embeds, decode, realm) => {
		const { testCase } = item;
		view.progress(index, plan.length, `${item.warmup ? "warming up on" : "decoding"} ${testCase.id}`);
		const { visionEmbeds, vision, reused } = embeds;
		const keepLogits = verifying && !item.warmup;
		// realm=worker chooses in the worker (the fault hook is the page realm's) and sends the kept logits back.
		const wrapNext = (next) => faults.duringDecode(index + 1, next, () => owned.device);
		const { logits, ...decoded } = await decode(visionEmbeds, {
			maxTokens: config.maxTokens,
			reused,
			keepLogits,
			diverge: faults.divergence(index + 1),
			wrapNext,
		});
		if (keepLogits) byIndex.verifyRuns.set(index, { testCase, repeat: item.repeat, tokenIds: decoded.tokens, logits });
		const runResult = {
			...decoded,
			...vision,
			text: decodeText(decoded.tokens),
			totalMs: vision.visionMs + decoded.decodeTotalMs,
			decoderRealm: realm,
		};
		// The core scores the case and computes its figures (crate/src/build_summary.rs).
		const result = caseResult(testCase, runResult, !decoderOnly, item, core);
		view.log(
			`CASE ${result.id} ${JSON.stringify({ warmup: item.warmup, repeat: item.repeat, actual: result.actual, distance: result.distance, tokens: result.tokens, visionMs: result.visionMs, prefillMs: result.prefillMs, decodeMs: result.decodeMs, totalMs: result.totalMs, tokenP50Ms: result.tokenLatency?.p50Ms ?? null, ...(realm === null ? {} : { decoderRealm: realm }) })}`,
		);
		if (item.warmup) {
			// Warm-up runs compile the pipelines and are kept apart: not scored,
			// not posted as finished cases, not in the statistics.
			byIndex.warmupResults.set(index, result);
			return;
		}
		byIndex.results.set(index, result);
		view.addCase(result, !decoderOnly);
		await reporter.progress(result);
	};
	const sampleAfter = (item) =>
		memory.sample(item.repeat === 0 ? `after-case-${item.testCase.id}` : `after-case-${item.testCase.id}-repeat-${item.repeat}`);
	/** @type {import("../pkg/ocr_bench_core.js").PoolInput | null} */
	let pool = null;
	const decoderPool = owned.decoderPool;
	if (decoderPool) {
		const takeEmbeds = async (item, index) => {
			await faults.at("case", index + 1, { device: owned.device });
			return schedule.embeds(item, index);
		};
		const wallMs = await readWithPool(plan, decoderPool, takeEmbeds, async (item, index, realm, embeds) => {
			await readCase(item, index, embeds, realm.decode, realm.index);
			// The samples' decoderWorker: realm 0's last report.
			if (config.realm === "worker") workers.decoder = decoderPool[0].memory;
			if (!item.warmup) await sampleAfter(item);
		});
		const realmMemory =
			config.realm === "worker"
				? decoderPool.map((realm) => realm.memory)
				: [{ shared: "the page's one onnxruntime-web and device", gpu: owned.gpuMemory?.snapshot() ?? null, wasmHeaps: wasmHeaps() }];
		if (config.realm === "worker") workers.decoder = decoderPool[0].memory;
		pool = { wallMs, realmMemory };
		view.log(`POOL ${JSON.stringify({ realms: config.pool, realm: config.realm, wallMs })}`);
	}
	for (const [index, item] of decoderPool ? [] : plan.entries()) {
		await faults.at("case", index + 1, { device: owned.device });
		await readCase(item, index, await schedule.embeds(item, index), decoding.decode, null);
		if (item.warmup) continue;
		// profile=ops profiles the warm-up runs and the first timed case only: the
		// profile of a whole set is hundreds of thousands of events (on the H200 a
		// hayai13 run with 3 repeats did not finish printing it within 150 s), and
		// the later cases then run unprofiled.
		if (config.profile === "ops" && !profile) profile = { ...(await schedule.profiles()), decoder: await decoding.profile() };
		await sampleAfter(item);
	}
	view.progress(plan.length, plan.length, "cases done");
	return { results: inOrder(byIndex.results), warmupResults: inOrder(byIndex.warmupResults), verifyRuns: inOrder(byIndex.verifyRuns), profile, pool };
}

// The wait after each release step before its samples: long enough for the
// browser to hand back what the step let go of (a destroyed device's buffers,
// a terminated worker's thread), short enough that four steps stay a second or
// two of a timed test. 250 ms was the release phase's one wait before the steps.
const RELEASE_SETTLE_MS = 300;

// The release steps each mode takes before letting go of the rest (all), in order.
const RELEASE_STEPS = { all: [], sessions: ["sessions"], device: ["sessions", "device"], realm: ["sessions", "device", "realm"] };

/** Each release step: what it lets go of, in every realm that holds one. */
const releaseStep = {
	async sessions(config, workers) {
		if (owned.decoderWorker) workers.decoder = await owned.decoderWorker.releaseSession();
		for (const realm of owned.decoderPool ?? []) await realm.releaseSession();
		if (owned.decoderPool && config.realm === "worker") workers.decoder = owned.decoderPool[0].memory;
		await owned.vision?.release();
		owned.visionIo?.release();
		await owned.decoderRun?.release();
		Object.assign(owned, { vision: null, visionIo: null, decoderRun: null });
	},
	async device(config, workers) {
		if (owned.decoderWorker) workers.decoder = await owned.decoderWorker.destroyDevice();
		for (const realm of owned.decoderPool ?? []) await realm.destroyDevice();
		if (owned.decoderPool && config.realm === "worker") workers.decoder = owned.decoderPool[0].memory;
		owned.waiter?.close();
		// owned.device cleared first: its loss handler ignores a device the page no longer holds.
		const device = owned.device;
		Object.assign(owned, { waiter: null, device: null });
		device?.destroy();
	},
	async realm() {
		owned.decoderWorker?.terminate();
		for (const realm of owned.decoderPool ?? []) realm.terminate();
		Object.assign(owned, { decoderWorker: null, decoderPool: null });
	},
};

/**
 * The release phase (docs/benchmark-protocol.md, "Release"): the steps of the
 * release mode, each followed by the settle wait, the runner's step sample and
 * the page's released-STEP sample; then everything left (the decoder worker
 * first, its last report says what it left), and the step all with the
 * released sample.
 */
async function releasePhase({ config, memory, workers }) {
	await enter("release");
	const settled = async (step, label) => {
		await sleep(RELEASE_SETTLE_MS);
		await reporter.step("release", step);
		await memory.sample(label);
	};
	// The core's config leaves release out at its default (all), as it does pool.
	for (const step of RELEASE_STEPS[config.release ?? "all"]) {
		await releaseStep[step](config, workers);
		await settled(step, `released-${step}`);
	}
	if (owned.decoderWorker) workers.decoder = await owned.decoderWorker.close();
	// pool>1: each realm releases its session (and a worker its device) and reports what it left.
	for (const realm of owned.decoderPool ?? []) await realm.close();
	if (owned.decoderPool && config.realm === "worker") workers.decoder = owned.decoderPool[0].memory;
	await releaseAll();
	await settled("all", "released");
}

/** verify=wasm: each kept case decoded again on WASM (verify.js) with the same choice on the CPU. */
async function verifyCases({ config, inputs, decoding, verifyRuns, records, loadCasePixels }) {
	view.progress(0, verifyRuns.length, "verifying on WASM (CPU)");
	const choice = createTokenChoice({ decoderOnly: inputs.decoderOnly, vocabulary: inputs.vocabulary, tokens: inputs.manifest.tokens });
	const makeNext = () => {
		choice.reset();
		return choice.next;
	};
	try {
		return await verifyOnWasm({
			config,
			capability: inputs.capability,
			visionEntry: inputs.visionEntry,
			decoderEntry: inputs.decoderEntry,
			spec: decoding.spec,
			runs: verifyRuns,
			loadPixels: loadCasePixels,
			makeNext,
			sessions: records.sessions,
			log: view.log,
		});
	} finally {
		choice.free();
		verifyRuns.length = 0;
	}
}

/** The summary built by the core, posted, left for the runner and shown. */
async function finish(summaryInput, { memory, workers }) {
	const gpuMemory = gpuMemorySummary(memory.samples, owned.gpuMemory?.snapshot() ?? null, workers.vision, workers.decoder);
	const summary = buildSummary({ ...summaryInput, runId, memorySamples: memory.samples, gpuMemory, core });
	summary.processMemory = await reporter.result(summary);
	window.__benchmarkResult = summary;
	window.__benchmarkDone = true;
	view.showSummary(summary);
	if (summary.verification) {
		const words = verificationWords(summary.verification);
		view.log(
			`VERIFICATION ${JSON.stringify({ passed: summary.verification.passed, agreeing: summary.verification.agreeing, total: summary.verification.total })} ${words}`,
		);
		const status = /** @type {HTMLElement} */ (document.querySelector("#status"));
		status.textContent = `Finished. ${words}`;
		if (!summary.verification.passed) status.className = "failed";
	}
	console.log(`SUITE_RESULT ${JSON.stringify(summary)}`);
}

async function run() {
	const wallStarted = performance.now();
	const config = await readConfig();
	const inputs = await loadInputs(config);
	const { adapter, environment } = await startRecord(config, inputs);
	const { memory, workers } = startMemory(config);
	// Every session this realm creates, as browser/sessions.js records it, with their creation times and placement.
	const records = { sessionMs: {}, placement: {}, sessions: [] };
	const completionFloors = await baselineAndProbe(config, environment, memory);

	const decoding = { spec: null, decode: null, profile: null };
	const hooks = scheduleHooks({ config, inputs, adapter, environment, memory, workers, records, decoding });
	const schedule = createSchedule(hooks);
	await schedule.load(inputs.plan);
	const { results, warmupResults, verifyRuns, profile, pool } = await decodeCases({ config, inputs, schedule, decoding, memory, workers });
	await releasePhase({ config, memory, workers });
	const verification =
		config.verify === "wasm" ? await verifyCases({ config, inputs, decoding, verifyRuns, records, loadCasePixels: hooks.loadPixels }) : null;

	const { manifest, visionEntry, decoderEntry } = inputs;
	await finish(
		{
			config,
			manifest,
			visionEntry,
			decoderEntry,
			results,
			warmupResults,
			environment,
			sessionMs: records.sessionMs,
			wallMs: performance.now() - wallStarted,
			notes: timingNotes(config, ORT_VERSION),
			completionFloors,
			profile,
			sessions: records.sessions,
			verification,
			pool,
		},
		{ memory, workers },
	);
}

async function fail(thrown) {
	if (failed) return;
	failed = true;
	const running = { "vision-encode": "Running the vision encoder", "decoder-run": "Running the models" }[phase] ?? "";
	const explainedError = explainOrtError(await explainDeviceLoss(owned.device, thrown), running);
	const error = faults.annotate(explainedError);
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
