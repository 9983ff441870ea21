// rule=generation of tests/gpu-choose: the core's GpuGenerationChooser
// (wasm/src/generation_choose.wgsl) against its CPU twin GenerationChooser
// (crate/src/generation_choose.rs). Each sequence is one chooser of its own rule: a penalty of
// 1, 1.1 or 1.3 (applied in float32), n-gram size 0, 2 or 3, a vocabulary of 4099 ids (three
// past a multiple of the 256-wide workgroup) or 200 (below one workgroup), and a decoder
// start and EOS ids at the vocabulary's edges (start = EOS = 2 as TrOCR's; several EOS ids).
// Every step's logits come from the CPU's own ids so far (logits.mjs's hard cases, with the
// rule's own penalty, and the scenarios below that force n-grams to repeat and EOS to win).
// Every `readEvery` steps the GPU's ids are read back and must equal the CPU's step for step;
// then a sequence that chose an EOS id or had no candidate starts again (both reset), as a
// reading's next image does. The first difference throws with the sequence, step, both ids
// and their scores; the whole step's logits go to the log as float32 bits.

import * as core from "../../pkg/ocr_bench_core.js";
import { createLogitMaker, createRandom } from "./logits.mjs";

const VOCABULARIES = [4099, 200];
const PENALTIES = [1, 1.3, 1.1];
const NGRAMS = [0, 2, 3];
/** Decoder start and EOS ids of a vocabulary of `size`. */
const ENDS = [() => ({ start: 2, eos: [2] }), (size) => ({ start: 0, eos: [1, size - 1] }), (size) => ({ start: size - 1, eos: [0, 5, size - 2] })];

/**
 * Sequence `index`'s vocabulary and rule: the first 9 sequences hold every pair of penalty and
 * n-gram size, each with every decoder start and EOS set (a Latin square) and with both
 * vocabularies. Few choosers on purpose: each compiles its own pipeline, about 0.22 s in
 * Chromium on SwiftShader (36 took 8 s of a 10 s run), 0.02 s in Firefox on lavapipe.
 */
function sequenceRule(index, maxTokens) {
	const vocabulary = VOCABULARIES[index % VOCABULARIES.length];
	const { start, eos } = ENDS[(index + Math.floor(index / 3)) % ENDS.length](vocabulary);
	/** @type {import("../../pkg/ocr_bench_core.js").ManifestGeneration} */
	const generation = {
		decoderStartTokenId: start,
		eosTokenIds: eos,
		maxLength: maxTokens + 1,
		repetitionPenalty: PENALTIES[index % PENALTIES.length],
		noRepeatNgramSize: NGRAMS[Math.floor(index / 3) % NGRAMS.length],
	};
	return { vocabulary, generation };
}

/** The ids that would complete an n-gram of size `n` already in `ids` (NoRepeatNGramLogitsProcessor's bans). */
function completing(ids, n) {
	if (n === 0 || ids.length + 1 < n) return [];
	const prefix = ids.slice(ids.length + 1 - n);
	const banned = [];
	for (let start = 0; start + n <= ids.length; start += 1) {
		if (prefix.every((id, offset) => ids[start + offset] === id)) banned.push(ids[start + n - 1]);
	}
	return banned;
}

/** A float32 score's order (NaN and -Infinity lowest), so that scores compare as the shader's keys do. */
const orderOf = (score) => (Number.isNaN(score) ? -Infinity : score);

/** The scenarios this rule adds to logits.mjs's. */
function generationScenarios(size, eos) {
	return {
		// The id one to three steps back on top: runs and cycles that make n-grams repeat, so
		// size 2 and 3 bans fall on the best id; a rival sometimes close below decides.
		echo: [10, (v, state, random) => {
			const ids = state.ids;
			v[ids[ids.length - 1 - random.int(Math.min(3, ids.length))]] = 100;
			if (random.next() < 0.6) v[random.int(size)] = random.pick([99, 90.9, 76.9, 60]);
		}],
		// Every id a size 2 or 3 ban would take on top, tied, and an unseen rival at or near them.
		banned: [6, (v, state, random) => {
			for (const id of [...completing(state.ids, 2), ...completing(state.ids, 3)]) v[id] = 50;
			if (random.next() < 0.7) v[random.int(size)] = random.pick([50, 49.5, 38.4615364]);
		}],
		// An EOS id wins, alone, tied with another id, or at Infinity.
		eos: [3, (v, state, random) => {
			const top = random.pick([30, 30, Infinity]);
			v[random.pick(eos)] = top;
			if (random.next() < 0.3) v[random.int(size)] = top;
		}],
	};
}

/**
 * device: the page's GPUDevice; sequences, steps, seed, readEvery: the query's; log: the
 * page's. Returns the figures; throws at the first difference.
 */
export async function checkGeneration({ device, sequences, steps, seed, readEvery, log }) {
	const random = createRandom(seed);
	const runs = [];
	const makers = new Map();
	let createMs = 0;
	for (let index = 0; index < sequences; index += 1) {
		const { vocabulary, generation } = sequenceRule(index, steps);
		const penalty = Math.fround(generation.repetitionPenalty);
		// PyTorch's float32 arithmetic: a float32 product or quotient rounded once (doubles hold
		// it exactly enough that Math.fround rounds it as float32 would).
		const penalised = (raw) => {
			const score = Math.fround(raw);
			return Math.fround(score < 0 ? score * penalty : score / penalty);
		};
		const key = `${vocabulary} ${penalty} ${generation.eosTokenIds}`;
		if (!makers.has(key)) makers.set(key, createLogitMaker(vocabulary, generation.eosTokenIds, { penalised, extra: generationScenarios(vocabulary, generation.eosTokenIds) }));
		const createStarted = performance.now();
		const gpu = await core.GpuGenerationChooser.create(device, vocabulary, generation, steps);
		createMs += performance.now() - createStarted;
		runs.push({
			vocabulary,
			generation,
			penalised,
			fill: makers.get(key),
			cpu: new core.GenerationChooser(vocabulary, generation),
			gpu,
			logitsBuffer: device.createBuffer({ label: `generation parity logits ${index}`, size: vocabulary * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }),
			vector: new Float32Array(vocabulary),
			// This batch's logits, kept to show where a difference came from.
			batch: new Float32Array(readEvery * vocabulary),
			batchScenarios: [],
			// The input ids before each step of this batch.
			batchIds: [],
			expected: [],
			state: null,
		});
	}
	const start = (run) => {
		const first = run.generation.decoderStartTokenId;
		run.state = { seen: [first], ids: [first], tokens: [], streak: 0, failed: false, ended: false };
	};
	runs.forEach(start);

	const scenarios = {};
	const counts = { compared: 0, noCandidateSteps: 0, eosSteps: 0, resets: 0, banDecidedSteps: 0, penaltyDecidedSteps: 0 };
	let cpuMs = 0;
	let gpuWaitMs = 0;
	for (let step = 0; step < steps; step += 1) {
		const cpuStarted = performance.now();
		const index = step % readEvery;
		for (const run of runs) {
			const { state, vector } = run;
			const scenario = run.fill(vector, state, random);
			run.batch.set(vector, index * run.vocabulary);
			run.batchScenarios[index] = scenario;
			run.batchIds[index] = state.ids.slice();
			device.queue.writeBuffer(run.logitsBuffer, 0, vector);
			run.gpu.choose(run.logitsBuffer);
			if (state.failed) {
				run.expected.push(core.GpuGenerationChooser.NO_CANDIDATE);
				continue;
			}
			scenarios[scenario] = (scenarios[scenario] ?? 0) + 1;
			counts.compared += 1;
			let id;
			try {
				id = run.cpu.choose(vector);
			} catch (error) {
				if (!/no token can be chosen/.test(String(error?.message))) throw error;
				state.failed = true;
				counts.noCandidateSteps += 1;
				run.expected.push(core.GpuGenerationChooser.NO_CANDIDATE);
				continue;
			}
			countDeciders(run, id, counts);
			run.cpu.push(id);
			state.ids.push(id);
			state.tokens.push(id);
			if (!state.seen.includes(id)) state.seen.push(id);
			if (run.generation.eosTokenIds.includes(id)) {
				counts.eosSteps += 1;
				state.ended = true;
			}
			run.expected.push(id);
		}
		cpuMs += performance.now() - cpuStarted;
		const done = step + 1;
		if (done % readEvery !== 0 && done !== steps) continue;
		const k = index + 1;
		const waitStarted = performance.now();
		const [inputIds, ...read] = await Promise.all([readInputIds(device, runs), ...runs.map((run) => run.gpu.readChosen(k))]);
		gpuWaitMs += performance.now() - waitStarted;
		for (const [sequence, run] of runs.entries()) {
			for (let at = 0; at < k; at += 1) {
				const want = run.expected[at];
				const got = read[sequence][at];
				if (want !== got) mismatch(run, { sequence, step: done - k + at, at, want, got, seed, log });
			}
			const last = run.expected[k - 1];
			const want = [last, last < 0 ? -1 : 0];
			const words = Array.from(inputIds.subarray(sequence * 2, sequence * 2 + 2));
			if (words[0] !== want[0] || words[1] !== want[1]) throw new Error(`sequence ${sequence} step ${done - 1}: inputIdsBuffer holds the words ${JSON.stringify(words)}; the last choice was ${last}, so ${JSON.stringify(want)}`);
			run.expected = [];
			// The loop reads no further than an EOS or a failed step: the next image starts again.
			if (run.state.ended || run.state.failed) {
				run.cpu.reset();
				run.gpu.reset();
				start(run);
				counts.resets += 1;
			}
		}
	}
	for (const run of runs) {
		run.gpu.destroy();
		run.logitsBuffer.destroy();
		run.cpu.free();
	}
	return { vocabularies: VOCABULARIES, penalties: PENALTIES, ngramSizes: NGRAMS, readEvery, ...counts, scenarios, createMs, cpuMs, gpuWaitMs };
}

/**
 * Counts the steps where a rule's part chose: an id the n-gram ban took would have won, or
 * the raw best id was seen and the penalty let another win. A run whose counts stay 0 did not
 * test that part.
 */
function countDeciders(run, chosen, counts) {
	const { vector, state, generation, penalised } = run;
	const processed = (id) => orderOf(state.seen.includes(id) && generation.repetitionPenalty !== 1 ? penalised(vector[id]) : vector[id]);
	const chosenScore = processed(chosen);
	const bans = completing(state.ids, generation.noRepeatNgramSize);
	if (bans.some((id) => processed(id) > chosenScore || (processed(id) === chosenScore && id < chosen && chosenScore !== -Infinity))) counts.banDecidedSteps += 1;
	let rawBest = 0;
	for (let id = 1; id < vector.length; id += 1) if (orderOf(vector[id]) > orderOf(vector[rawBest])) rawBest = id;
	if (rawBest !== chosen && generation.repetitionPenalty !== 1 && state.seen.includes(rawBest) && !bans.includes(rawBest)) counts.penaltyDecidedSteps += 1;
}

/**
 * Every chooser's input_ids buffer (int64 [1, 1]: the last choice and 0, or -1 and -1 after a
 * step without a candidate) as two int32 words per sequence, with one mapAsync: Firefox
 * answers each mapAsync on its own poll, about 0.1 s apart on lavapipe.
 */
async function readInputIds(device, runs) {
	const staging = device.createBuffer({ size: runs.length * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
	const encoder = device.createCommandEncoder();
	for (const [sequence, run] of runs.entries()) encoder.copyBufferToBuffer(run.gpu.inputIdsBuffer, 0, staging, sequence * 8, 8);
	device.queue.submit([encoder.finish()]);
	await staging.mapAsync(GPUMapMode.READ);
	const words = new Int32Array(staging.getMappedRange().slice(0));
	staging.destroy();
	return words;
}

function mismatch(run, { sequence, step, at, want, got, seed, log }) {
	const size = run.vocabulary;
	const logits = run.batch.subarray(at * size, (at + 1) * size);
	const bits = new Uint32Array(logits.slice().buffer);
	const score = (id) => (id >= 0 && id < size ? `${logits[id]} (0x${bits[id].toString(16).padStart(8, "0")})` : "none");
	log(`GENERATION_MISMATCH_LOGITS ${JSON.stringify(Array.from(bits, (word) => word.toString(16)))}`);
	throw new Error(
		`sequence ${sequence} step ${step} (seed ${seed}, rule ${JSON.stringify(run.generation)}, vocabulary ${size}, scenario ${run.batchScenarios[at]}): ` +
			`the CPU chose ${want}, the GPU ${got}; logits there: CPU's id ${score(want)}, GPU's id ${score(got)}; ` +
			`input ids before it ${JSON.stringify(run.batchIds[at])} (the whole vector's float32 bits are in the log)`,
	);
}
