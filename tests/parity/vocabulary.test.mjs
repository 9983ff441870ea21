// Vocabulary against the seed: the content-id rule for every id of the real
// vocabulary (models/vocab.json) and for generated vocabularies full of edge
// cases, and decode against the seed's `idToCharacter[token] ?? ""` join.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { loadCore, loadVocabulary } from "./load-core.mjs";
import { createSeedTokenChoice } from "./seed-reference.mjs";

const RUNS = Number(process.env.PARITY_RUNS ?? 3000);
const SEED = Number(process.env.PARITY_SEED ?? 20261129);

let core;
let charset;
before(async () => {
	core = await loadCore();
	charset = loadVocabulary();
});

test("isContent agrees with the seed's contentIds on every id of models/vocab.json", () => {
	const seed = createSeedTokenChoice(charset);
	const vocabulary = new core.Vocabulary(charset);
	assert.equal(vocabulary.size, seed.idToCharacter.length);
	const disagreements = [];
	for (let id = 0; id < vocabulary.size; id += 1) {
		if (vocabulary.isContent(id) !== seed.contentIds.has(id)) disagreements.push([id, seed.idToCharacter[id]]);
	}
	assert.deepEqual(disagreements, []);
	// The real vocabulary holds astral characters (length 2 in UTF-16): the
	// seed's `character.length === 1` made them non-content, letters or not.
	const astralLetters = charset.filter((character) => character.length === 2 && /\p{Letter}/u.test(character));
	assert.ok(astralLetters.length > 0, "models/vocab.json was expected to contain astral letters");
	for (const character of astralLetters) assert.equal(vocabulary.isContent(charset.indexOf(character) + 4), false, character);
});

// Characters that sit on the edges of the seed's rule.
const EDGE_CHARACTERS = [
	"ー", "ｰ", "〜", "~", "〇", "々", "ゝ", "ヽ", "Ⅳ", "½", "²", "٣", "ǅ", "ʰ", "あ", "ア", "ｱ", "Ａ", "１",
	"𠮷", "𝐀", "😀", "\u3000", "\uFEFF", " ", "、", "！", "\u0301", "e\u0301", "ab", "", "\uD800", "\uDC00",
];
const characterArbitrary = fc.oneof(
	fc.constantFrom(...EDGE_CHARACTERS),
	fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
	fc.string({ unit: "binary", minLength: 1, maxLength: 2 }),
);

test("isContent follows the seed's rule on generated vocabularies", () => {
	fc.assert(fc.property(fc.array(characterArbitrary, { minLength: 1, maxLength: 60 }), (entries) => {
		const seed = createSeedTokenChoice(entries);
		const vocabulary = new core.Vocabulary(entries);
		for (let id = 0; id < vocabulary.size; id += 1) {
			assert.equal(vocabulary.isContent(id), seed.contentIds.has(id), `id ${id} ${JSON.stringify(seed.idToCharacter[id])}`);
		}
	}), { seed: SEED, numRuns: Math.ceil(RUNS / 3) });
});

test("decode joins characters as the seed did, ids 0..3 as empty text", () => {
	const seed = createSeedTokenChoice(charset);
	const vocabulary = new core.Vocabulary(charset);
	fc.assert(fc.property(fc.array(fc.oneof(fc.nat({ max: 3 }), fc.nat({ max: vocabulary.size - 1 })), { maxLength: 130 }), (ids) => {
		assert.equal(vocabulary.decode(ids), seed.decodeTokens(ids));
	}), { seed: SEED, numRuns: RUNS });
});

test("decode rejects an id outside the vocabulary, where the seed gave empty text (documented difference)", () => {
	const seed = createSeedTokenChoice(charset);
	const vocabulary = new core.Vocabulary(charset);
	for (const id of [vocabulary.size, vocabulary.size + 1, 0xffffffff]) {
		assert.equal(seed.decodeTokens([5, id]), seed.idToCharacter[5]);
		assert.throws(() => vocabulary.decode([5, id]), (error) => error instanceof Error && /outside the vocabulary/.test(error.message));
	}
});
