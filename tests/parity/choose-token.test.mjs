// TokenChooser.choose against the seed's chooseToken over thousands of
// generated decoding states. Identical choices are required, except the
// documented differences, each asserted explicitly below:
// - NaN never wins. The seed compared with `>`, so a NaN at index 0 became its
//   best value and nothing could beat it: it returned 0. The core skips NaN.
// - An input where nothing can be chosen (no id scores above -Infinity: every
//   score NaN, -Infinity or blocked, or no scores at all) is an error in the
//   core; the seed returned 0.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { loadCore, loadVocabulary } from "./load-core.mjs";
import { createSeedTokenChoice } from "./seed-reference.mjs";

const VOCABULARY_SIZE = 14630; // the seed's loop bound
const BOS = 1;
const RUNS = Number(process.env.PARITY_RUNS ?? 3000);
const SEED = Number(process.env.PARITY_SEED ?? 20261129);

let core;
let seed;
let chooser;
let contentIds;
let otherIds;
before(async () => {
	core = await loadCore();
	const charset = loadVocabulary();
	seed = createSeedTokenChoice(charset);
	chooser = new core.TokenChooser(new core.Vocabulary(charset));
	contentIds = [...seed.contentIds];
	otherIds = Array.from({ length: VOCABULARY_SIZE }, (_, id) => id).filter((id) => !seed.contentIds.has(id));
});

// Small deterministic generator for the bulk of the logits; fast-check
// generates (and shrinks) only the recipe that drives it.
const mulberry32 = (state) => () => {
	state = (state + 0x6d2b79f5) | 0;
	let t = Math.imul(state ^ (state >>> 15), 1 | state);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const SPECIAL_VALUES = [
	Number.NaN, -0, 0, Infinity, -Infinity,
	3.4028234663852886e38, -3.4028234663852886e38, // ±f32 max
	1.401298464324817e-45, -1.401298464324817e-45, // ±smallest subnormal
	1.1754943508222875e-38, // smallest normal
];

const BASE_SCORES = {
	spread: (u) => (u - 0.5) * 40, // typical decoder scores, both signs
	negative: (u) => -u * 30 - 1e-3,
	levels: (u) => Math.floor(u * 4) - 1, // many exact ties: -1, 0, 1, 2
	constant: () => 1.5,
	eighths: (u) => Math.round((u - 0.3) * 64) / 8, // ties that the 1.2 penalty breaks or makes
	nan: () => Number.NaN, // placements then decide what is choosable
};

const baseLogits = (kind, state) => {
	const random = mulberry32(state);
	const score = BASE_SCORES[kind];
	const logits = new Float32Array(VOCABULARY_SIZE);
	for (let index = 0; index < VOCABULARY_SIZE; index += 1) logits[index] = score(random());
	return logits;
};

// The sequence the chooser has seen: tokens after BOS, ending in a run of one
// token (content or not) whose length straddles the 12-token block.
const tokensArbitrary = () => fc.record({
	prefix: fc.array(fc.oneof(
		fc.constantFrom(0, 1, 2, 3),
		fc.nat({ max: VOCABULARY_SIZE - 1 }),
		fc.nat().map((n) => ({ content: n })),
	), { maxLength: 40 }),
	runToken: fc.oneof(fc.nat().map((n) => ({ content: n })), fc.nat().map((n) => ({ other: n }))),
	runLength: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 10, max: 14 })),
});

const recipeArbitrary = fc.record({
	kind: fc.constantFrom(...Object.keys(BASE_SCORES)),
	state: fc.noShrink(fc.integer()),
	tokens: tokensArbitrary(),
	// Scores placed on chosen indices: specials, the run token, BOS, seen ids.
	placements: fc.array(fc.record({
		where: fc.oneof(
			fc.constantFrom("zero", "bos", "runToken", "seen", "last"),
			fc.nat({ max: VOCABULARY_SIZE - 1 }),
		),
		value: fc.oneof(fc.constantFrom(...SPECIAL_VALUES), fc.float(), fc.constantFrom(50, 60, 72, -50)),
	}), { maxLength: 8 }),
	// Near-ties between a penalised score and an unpenalised one, exactly at
	// float32 rounding of score / 1.2 (and * 1.2): they separate float64
	// arithmetic (the seed's) from float32 arithmetic.
	nearTie: fc.option(fc.record({
		value: fc.oneof(fc.float({ noNaN: true, noDefaultInfinity: true, min: -100, max: 100 }), fc.constantFrom(60, -60, 7.2, -7.2)),
		ulps: fc.integer({ min: -2, max: 2 }),
		unseenFirst: fc.boolean(),
	})),
});

const pick = (list, n) => list[n % list.length];

const materialize = (recipe) => {
	const resolve = (entry) => typeof entry === "number" ? entry
		: "content" in entry ? pick(contentIds, entry.content) : pick(otherIds, entry.other);
	const runToken = resolve(recipe.tokens.runToken);
	const tokens = [...recipe.tokens.prefix.map(resolve), ...Array(recipe.tokens.runLength).fill(runToken)];
	const sequence = [BOS, ...tokens];
	const logits = baseLogits(recipe.kind, recipe.state);
	const seenIds = [...new Set(sequence)];
	for (const { where, value } of recipe.placements) {
		const index = typeof where === "number" ? where : {
			zero: 0, bos: BOS, runToken, last: VOCABULARY_SIZE - 1, seen: pick(seenIds, Math.abs(recipe.state)),
		}[where];
		logits[index] = value;
	}
	if (recipe.nearTie) {
		const { value, ulps, unseenFirst } = recipe.nearTie;
		const seenId = pick(seenIds, Math.abs(recipe.state >> 3));
		const unseen = otherIds.filter((id) => !seenIds.includes(id));
		// Which of the two comes first decides who wins an exact tie.
		const ordered = unseen.filter((id) => (id < seenId) === unseenFirst);
		const unseenId = pick(ordered.length > 0 ? ordered : unseen, Math.abs(recipe.state >> 5));
		logits[seenId] = value;
		const penalised = Math.fround(value < 0 ? value * 1.2 : value / 1.2);
		logits[unseenId] = nextFloat32(penalised, ulps);
		// Both well above the rest so the tie decides the choice.
		for (let index = 0; index < VOCABULARY_SIZE; index += 1) {
			if (index !== seenId && index !== unseenId && logits[index] > penalised - 1e-3) logits[index] = -1e30;
		}
	}
	return { tokens, sequence, logits };
};

// float32 `ulps` steps away from x (which must be a float32).
const nextFloat32 = (x, ulps) => {
	const view = new DataView(new ArrayBuffer(4));
	view.setFloat32(0, x);
	let bits = view.getInt32(0);
	// Walk the ordered integer representation.
	let ordered = bits < 0 ? -(bits & 0x7fffffff) : bits;
	ordered += ulps;
	bits = ordered < 0 ? (-ordered | 0x80000000) : ordered;
	view.setInt32(0, bits);
	return view.getFloat32(0);
};

const coreChoose = (tokens, logits) => {
	chooser.reset();
	for (const token of tokens) chooser.push(token);
	try {
		return { choice: chooser.choose(logits) };
	} catch (error) {
		return { error };
	}
};

// The seed's own function with NaN made unable to win (replaced by -Infinity,
// which a strict `>` never prefers): the documented core semantics, still
// computed by the seed's code.
const seedWithoutNan = (logits, sequence, tokens) => {
	const cleaned = logits.map((value) => Number.isNaN(value) ? -Infinity : value);
	return seed.chooseToken(cleaned, sequence, tokens);
};

test("choose matches the seed's chooseToken, NaN and nothing-to-choose aside", () => {
	const seen = { equal: 0, nanAtZero: 0, nothingToChoose: 0, blocked: 0, nearTies: 0 };
	fc.assert(fc.property(recipeArbitrary, (recipe) => {
		const { tokens, sequence, logits } = materialize(recipe);
		const expected = seed.chooseToken(logits, sequence, tokens);
		const actual = coreChoose(tokens, logits);
		const last = tokens.at(-1);
		const blocked = seed.contentIds.has(last) && tokens.length >= 12 && tokens.slice(-12).every((token) => token === last) ? last : -1;
		if (blocked >= 0) seen.blocked += 1;
		if (recipe.nearTie) seen.nearTies += 1;
		const choosable = logits.some((value, index) => index !== blocked && value > -Infinity);
		if (!choosable) {
			// Documented difference: nothing can be chosen → error, not 0.
			seen.nothingToChoose += 1;
			assert.equal(expected, 0);
			assert.ok(actual.error instanceof Error, `expected an Error, got ${JSON.stringify(actual)}`);
			return;
		}
		assert.equal(actual.error, undefined, `unexpected error: ${actual.error?.message}`);
		if (Number.isNaN(logits[0]) && blocked !== 0) {
			// Documented difference: the seed's NaN at index 0 won; the core skips it.
			seen.nanAtZero += 1;
			assert.equal(expected, 0);
			assert.equal(actual.choice, seedWithoutNan(logits, sequence, tokens));
			return;
		}
		seen.equal += 1;
		assert.equal(actual.choice, expected);
	}), { seed: SEED, numRuns: RUNS });
	// The generator must reach every case above, or this test proves less than it says.
	for (const [name, count] of Object.entries(seen)) assert.ok(count > 0, `no generated case reached "${name}": ${JSON.stringify(seen)}`);
});

test("choose follows the seed through a whole greedy decode", () => {
	// 128 steps of feeding the chosen token back, as the seed's decode loop
	// did, on logits that make one content character win again and again:
	// the 12-token block must fire at the same step in both.
	const random = mulberry32(7);
	const favourite = contentIds[123];
	chooser.reset();
	const tokens = [];
	const sequence = [BOS];
	for (let step = 0; step < 128; step += 1) {
		const logits = new Float32Array(VOCABULARY_SIZE).map(() => random() * 4);
		logits[favourite] = 100;
		const expected = seed.chooseToken(logits, sequence, tokens);
		assert.equal(chooser.choose(logits), expected, `step ${step}`);
		tokens.push(expected);
		sequence.push(expected);
		chooser.push(expected);
	}
	assert.ok(tokens.slice(0, 12).every((token) => token === favourite));
	assert.notEqual(tokens[12], favourite, "the block must fire after 12 repeats");
});

test("choose rejects empty logits with an Error (the seed returned 0)", () => {
	assert.equal(seed.chooseToken(new Float32Array(0), [BOS], []), 0);
	chooser.reset();
	assert.throws(() => chooser.choose(new Float32Array(0)), Error);
});
