// summarize against the seed's own scoring loop and summary figures over
// generated runs: nCER, distance, characters, exact, medianMs, peakCaseMs.
// Documented difference: characters (and so nCER) count Unicode scalar values
// where the seed's `.length` counted UTF-16 units, as editDistance does; on
// text with an astral character the core must equal the seed's figures
// recomputed over scalar values.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { loadCore, loadVocabulary } from "./load-core.mjs";
import { editDistance, normalize, seedSummarize } from "./seed-reference.mjs";

const RUNS = Math.ceil(Number(process.env.PARITY_RUNS ?? 3000) / 3);
const SEED = Number(process.env.PARITY_SEED ?? 20261129);

let core;
let caseArbitrary;
before(async () => {
	core = await loadCore();
	const charset = loadVocabulary();
	const unit = fc.oneof(
		{ arbitrary: fc.constantFrom(...charset), weight: 8 },
		{ arbitrary: fc.constantFrom(" ", "\u3000", "\uFEFF", "Ａ", "１", "ｶ", "𠮷", "😀"), weight: 1 },
	);
	const text = fc.string({ unit, maxLength: 24 });
	caseArbitrary = fc.tuple(text, fc.option(text, { nil: undefined }), fc.oneof(fc.nat({ max: 60000 }), fc.double({ min: 0, max: 1e5, noNaN: true })))
		.map(([expected, reading, totalMs]) => ({ expected, actual: reading ?? expected, totalMs }));
});

const hasAstral = (text) => [...text].some((character) => character.codePointAt(0) > 0xffff);

// The seed's figures with lengths and distances over scalar values: the
// documented core semantics, computed with the seed's own functions.
const scalarSummary = (cases) => {
	const perCase = cases.map(({ expected, actual }) => {
		const left = [...normalize(expected)];
		const right = [...normalize(actual)];
		return { distance: editDistance(left, right), characters: left.length };
	});
	const distance = perCase.reduce((sum, entry) => sum + entry.distance, 0);
	const characters = perCase.reduce((sum, entry) => sum + entry.characters, 0);
	return { distance, characters, nCER: characters ? distance / characters : null };
};

test("summarize matches the seed's summary figures", () => {
	const seen = { bmp: 0, astral: 0 };
	fc.assert(fc.property(fc.array(caseArbitrary, { minLength: 1, maxLength: 14 }), (generated) => {
		const cases = generated.map((entry, index) => ({ id: String(index + 1).padStart(2, "0"), ...entry }));
		const expected = seedSummarize(cases);
		const actual = core.summarize(cases, { accuracyApplicable: true });
		assert.equal(actual.cases, expected.cases);
		assert.equal(actual.exact, expected.exact);
		assert.equal(actual.medianMs, expected.medianMs);
		assert.equal(actual.peakCaseMs, expected.peakCaseMs);
		if (!cases.some(({ expected: text, actual: reading }) => hasAstral(text) || hasAstral(reading))) {
			seen.bmp += 1;
			assert.equal(actual.distance, expected.distance);
			assert.equal(actual.characters, expected.characters);
			assert.equal(actual.nCER, expected.nCER);
			return;
		}
		// Documented difference: scalar values, not UTF-16 units.
		seen.astral += 1;
		const scalars = scalarSummary(cases);
		assert.equal(actual.distance, scalars.distance);
		assert.equal(actual.characters, scalars.characters);
		assert.equal(actual.nCER, scalars.nCER);
	}), { seed: SEED, numRuns: RUNS });
	assert.ok(seen.bmp > 0 && seen.astral > 0, `the generator must reach both cases: ${JSON.stringify(seen)}`);
});

test("summarize reports accuracy as not applicable instead of the seed's every-case-exact", () => {
	const cases = [{ id: "synthetic", expected: "", actual: "ああああ", totalMs: 5 }];
	// The seed's decoder-only scope compared "" with the reading's text: 0
	// characters, nCER null, and the case counted exact when the text was empty.
	assert.equal(seedSummarize(cases).nCER, null);
	const summary = core.summarize(cases, { accuracyApplicable: false });
	assert.equal(summary.nCER, null);
	assert.equal(summary.exact, null);
	assert.equal(summary.medianMs, 5);
});
