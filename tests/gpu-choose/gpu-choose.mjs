// A GPU token chooser against its CPU twin, step by step. rule=built-in (the default):
// GpuTokenChooser against the core's TokenChooser, independent sequences (one workgroup
// each per dispatch), every step's logits made from the CPU's own sequence so far
// (logits.mjs), written to one GPU buffer and chosen on both; every `readEvery` steps one
// readback of the GPU's ids, which must equal the CPU's step for step, a CPU error
// (no candidate) being GpuTokenChooser.NO_CANDIDATE from that step on. rule=generation: an
// imported model's rule, GpuGenerationChooser against GenerationChooser, one chooser per
// sequence under penalties 1, 1.1 and 1.3, n-gram sizes 0, 2 and 3, several EOS ids and
// vocabularies that do not fill the workgroup (generation.mjs). Posts the counts to
// /benchmark-result, or the first difference to /benchmark-error.
//
// Query: rule (built-in or generation); sequences (default 96, generation 9) and steps
// (default 128, generation 256) per sequence; readEvery (default 64, generation 32: steps per
// readback, 1..=64); seed (default 1).
import init, * as core from "../../pkg/ocr_bench_core.js";
import { createDevice, describeAdapter, requestGpuAdapter } from "../../browser/gpu.js";
import { loadOrt } from "../../browser/ort.js";
import { checkGeneration } from "./generation.mjs";
import { createLogitMaker, createRandom } from "./logits.mjs";
import { standalonePage } from "../standalone-page.mjs";

const SEED_VOCABULARY = 14630;
const RULES = {
	"built-in": { sequences: 96, steps: 128, readEvery: 64, minVectors: 10000 },
	generation: { sequences: 9, steps: 256, readEvery: 32, minVectors: 2000 },
};
const { runId, log, report, run: runPage } = standalonePage("gpu-choose");
const wholeParameter = (query, name, fallback, min, max) => {
	const text = query.get(name);
	if (text === null) return fallback;
	const value = Number(text);
	if (!/^\d+$/.test(text) || value < min || value > max) throw new Error(`${name}=${text}: allowed an integer ${min}..=${max}`);
	return value;
};

async function run() {
	await init();
	const query = new URLSearchParams(location.search);
	const rule = query.get("rule") ?? "built-in";
	if (!Object.hasOwn(RULES, rule)) throw new Error(`rule=${rule}: allowed ${Object.keys(RULES).join(", ")}`);
	const defaults = RULES[rule];
	const sequences = wholeParameter(query, "sequences", defaults.sequences, 1, 4096);
	const steps = wholeParameter(query, "steps", defaults.steps, 1, 1024);
	const seed = wholeParameter(query, "seed", 1, 0, 2 ** 32 - 1);
	const readEvery = wholeParameter(query, "readEvery", defaults.readEvery, 1, 64);
	if (rule === "generation") return runGeneration({ sequences, steps, seed, readEvery, minVectors: defaults.minVectors });

	const charset = await (await fetch("../../models/vocab.json")).json();
	const vocabulary = new core.Vocabulary(charset);
	const size = vocabulary.size;
	if (size !== SEED_VOCABULARY) throw new Error(`models/vocab.json gives ${size} ids; the test is of the seed's ${SEED_VOCABULARY}`);
	const nonContent = [];
	for (let id = 0; id < size && nonContent.length < 8; id += 1) if (!vocabulary.isContent(id)) nonContent.push(id);

	// The device as a default run's page makes it, for the pinned onnxruntime-web.
	await loadOrt(core.ortDistFolder(core.parseConfig("")));
	const adapter = await requestGpuAdapter();
	const device = await createDevice(adapter);
	const started = performance.now();
	const gpu = await core.GpuTokenChooser.create(device, vocabulary, { sequences });
	const cpu = Array.from({ length: sequences }, () => new core.TokenChooser(vocabulary));
	const states = Array.from({ length: sequences }, () => ({ seen: [1], tokens: [], streak: 0, failedAt: null }));
	const expected = Array.from({ length: sequences }, () => []);
	const fill = createLogitMaker(size, nonContent);
	const random = createRandom(seed);
	const logits = new Float32Array(sequences * size);
	const logitsBuffer = device.createBuffer({ label: "parity logits", size: logits.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
	const scenarios = {};
	let compared = 0;
	let noCandidate = 0;
	let blockedSteps = 0;
	let cpuMs = 0;
	let gpuWaitMs = 0;

	for (let step = 0; step < steps; step += 1) {
		const cpuStarted = performance.now();
		for (let sequence = 0; sequence < sequences; sequence += 1) {
			const state = states[sequence];
			const vector = logits.subarray(sequence * size, (sequence + 1) * size);
			const scenario = fill(vector, state, random);
			if (state.failedAt !== null) {
				expected[sequence].push(core.GpuTokenChooser.NO_CANDIDATE);
				continue;
			}
			scenarios[scenario] = (scenarios[scenario] ?? 0) + 1;
			const last = state.tokens.at(-1);
			let run = 0;
			for (let index = state.tokens.length - 1; index >= 0 && state.tokens[index] === last; index -= 1) run += 1;
			if (run >= 12 && vocabulary.isContent(last)) blockedSteps += 1;
			let id;
			try {
				id = cpu[sequence].choose(vector);
			} catch (error) {
				if (!/no token can be chosen/.test(String(error?.message))) throw error;
				state.failedAt = step;
				noCandidate += 1;
				expected[sequence].push(core.GpuTokenChooser.NO_CANDIDATE);
				compared += 1;
				continue;
			}
			cpu[sequence].push(id);
			state.tokens.push(id);
			if (!state.seen.includes(id)) state.seen.push(id);
			expected[sequence].push(id);
			compared += 1;
		}
		cpuMs += performance.now() - cpuStarted;
		device.queue.writeBuffer(logitsBuffer, 0, logits);
		gpu.choose(logitsBuffer);
		const done = step + 1;
		if (done % readEvery === 0 || done === steps) {
			const k = done % readEvery || readEvery;
			const waitStarted = performance.now();
			const ids = await gpu.readChosen(k);
			gpuWaitMs += performance.now() - waitStarted;
			for (let sequence = 0; sequence < sequences; sequence += 1) {
				for (let index = 0; index < k; index += 1) {
					const at = done - k + index;
					const want = expected[sequence][at];
					const got = ids[sequence * k + index];
					if (want !== got) {
						const state = states[sequence];
						throw new Error(`sequence ${sequence} step ${at} (seed ${seed}): the CPU chose ${want}, the GPU ${got}; decoded so far ${JSON.stringify(state.tokens.slice(0, at))}`);
					}
				}
			}
		}
	}

	// The token buffer holds each sequence's last id: what the next decoder step would read.
	const staging = device.createBuffer({ size: sequences * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
	const encoder = device.createCommandEncoder();
	encoder.copyBufferToBuffer(gpu.tokenBuffer, 0, staging, 0, sequences * 4);
	device.queue.submit([encoder.finish()]);
	await staging.mapAsync(GPUMapMode.READ);
	const lastIds = Array.from(new Int32Array(staging.getMappedRange().slice(0)));
	staging.unmap();
	const lastExpected = expected.map((ids) => ids.at(-1));
	if (JSON.stringify(lastIds) !== JSON.stringify(lastExpected)) throw new Error(`tokenBuffer holds ${JSON.stringify(lastIds)}, the last choices were ${JSON.stringify(lastExpected)}`);

	// A reset starts every sequence again: the first step after it matches a fresh CPU chooser.
	gpu.reset();
	for (let sequence = 0; sequence < sequences; sequence += 1) {
		const vector = logits.subarray(sequence * size, (sequence + 1) * size);
		vector.fill(0);
		vector[1] = 1.1; // BOS: 1.1 / 1.2 < 1 after the penalty.
		vector[4 + (sequence % 100)] = 1;
	}
	device.queue.writeBuffer(logitsBuffer, 0, logits);
	gpu.choose(logitsBuffer);
	const afterReset = await gpu.readChosen(1);
	const fresh = new core.TokenChooser(vocabulary);
	for (let sequence = 0; sequence < sequences; sequence += 1) {
		const want = fresh.choose(logits.subarray(sequence * size, (sequence + 1) * size));
		if (afterReset[sequence] !== want) throw new Error(`after reset, sequence ${sequence}: the CPU chose ${want}, the GPU ${afterReset[sequence]}`);
	}
	gpu.destroy();
	logitsBuffer.destroy();

	const { minVectors } = defaults;
	if (compared < minVectors) throw new Error(`only ${compared} vectors were compared; the test wants at least ${minVectors} (raise sequences or steps)`);
	const result = {
		runId,
		page: "tests/gpu-choose",
		rule,
		environment: { userAgent: navigator.userAgent, adapter: describeAdapter(adapter) },
		seed,
		sequences,
		steps,
		vocabulary: size,
		compared,
		identical: true,
		noCandidateSteps: noCandidate,
		blockedSteps,
		scenarios,
		cpuMs,
		gpuWaitMs,
		wallMs: performance.now() - started,
	};
	log(`gpu-choose: ${compared} logit vectors in ${sequences} sequences of ${steps} steps, every choice identical (${blockedSteps} steps with a blocked id, ${noCandidate} without a candidate); ${(result.wallMs / 1000).toFixed(1)} s`);
	log(`SUITE_RESULT ${JSON.stringify(result)}`);
	await report(result);
}

/** rule=generation: generation.mjs's check on the page's device, reported as the built-in rule's. */
async function runGeneration({ sequences, steps, seed, readEvery, minVectors }) {
	await loadOrt(core.ortDistFolder(core.parseConfig("")));
	const adapter = await requestGpuAdapter();
	const device = await createDevice(adapter);
	const started = performance.now();
	const figures = await checkGeneration({ device, sequences, steps, seed, readEvery, log });
	const { compared, eosSteps, banDecidedSteps, penaltyDecidedSteps } = figures;
	if (compared < minVectors) throw new Error(`only ${compared} vectors were compared; the test wants at least ${minVectors} (raise sequences or steps)`);
	// Each part of the rule decided some step, or the run did not test it.
	for (const [name, count] of Object.entries({ eosSteps, banDecidedSteps, penaltyDecidedSteps })) {
		if (count === 0) throw new Error(`${name} is 0 in ${compared} steps: the logits never let that part of the rule decide (raise sequences or steps)`);
	}
	const result = {
		runId,
		page: "tests/gpu-choose",
		rule: "generation",
		environment: { userAgent: navigator.userAgent, adapter: describeAdapter(adapter) },
		seed,
		sequences,
		steps,
		identical: true,
		...figures,
		wallMs: performance.now() - started,
	};
	log(`gpu-choose rule=generation: ${compared} logit vectors in ${sequences} sequences of ${steps} steps, every choice identical (${banDecidedSteps} steps decided by the n-gram ban, ${penaltyDecidedSteps} by the penalty, ${eosSteps} EOS, ${figures.noCandidateSteps} without a candidate); ${(result.wallMs / 1000).toFixed(1)} s`);
	log(`SUITE_RESULT ${JSON.stringify(result)}`);
	await report(result);
}

await runPage(run);
