// normalize and editDistance against the seed's over generated text: the
// vocabulary's own characters, every JS `\s` character and near misses,
// fullwidth and halfwidth forms, compatibility characters that NFKC rewrites,
// combining marks and astral characters.
// Documented difference: the core's Levenshtein counts Unicode scalar values,
// the seed's counted UTF-16 code units (an astral character was 2). Where a
// string holds an astral character the core must equal the seed's own
// algorithm run over scalar values (its function indexes arrays as well as
// strings).
import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { loadCore, loadVocabulary } from "./load-core.mjs";
import { editDistance, normalize } from "./seed-reference.mjs";

const RUNS = Number(process.env.PARITY_RUNS ?? 3000);
const SEED = Number(process.env.PARITY_SEED ?? 20261129);

// What JS `\s` matches (WhiteSpace and LineTerminator), and characters that
// other definitions of whitespace include or that look like spaces.
const JS_WHITESPACE = [
	"\t", "\n", "\v", "\f", "\r", " ", "\u00A0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004",
	"\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200A", "\u2028", "\u2029", "\u202F", "\u205F",
	"\u3000", "\uFEFF",
];
const NOT_JS_WHITESPACE = ["\u0085", "\u180E", "\u200B", "\u200C", "\u200D", "\u2060", "\u001C", "\u001F"];
// Characters NFKC changes: fullwidth/halfwidth forms, squared and circled
// CJK, compatibility ideographs, ligatures, superscripts, and letters whose
// decomposition contains a space (so whitespace appears only after NFKC).
const NFKC_CHANGES = [
	"Ａ", "ｚ", "０", "９", "！", "～", "＇", "．", "（", "）", "「", "ｶ", "ﾞ", "ｰ", "ﾟ", "㍿", "㌔", "㈱", "①", "⑳",
	"豈", "兀", "ﬁ", "²", "½", "™", "Å", "Ω", "ǆ", "\u00A8", "\u00B4", "\u02DC", "\u1FBF", "\uFE4D", "\u3000",
	"カ\u3099", "は\u309A", "e\u0301", "\u0301", "\u1100\u1161", "가", "𝐀", "𝟘", "🄰", "🅐",
];
const ASTRAL = ["𠮷", "𩸽", "😀", "👨‍👩‍👧", "𝐀", "𝟘", "🄰", "\u{1F1EF}\u{1F1F5}"];

let core;
let unitArbitrary;
before(async () => {
	core = await loadCore();
	const charset = loadVocabulary();
	unitArbitrary = fc.oneof(
		{ arbitrary: fc.constantFrom(...charset), weight: 6 },
		{ arbitrary: fc.constantFrom(...JS_WHITESPACE, ...NOT_JS_WHITESPACE), weight: 2 },
		{ arbitrary: fc.constantFrom(...NFKC_CHANGES), weight: 2 },
		{ arbitrary: fc.constantFrom(...ASTRAL), weight: 1 },
		{ arbitrary: fc.string({ unit: "grapheme-composite", minLength: 1, maxLength: 1 }), weight: 1 },
	);
});

const textArbitrary = (maxLength) => fc.string({ unit: unitArbitrary, maxLength });
const hasAstral = (text) => [...text].some((character) => character.codePointAt(0) > 0xffff);

test("normalize equals the seed's NFKC + strip \\s", () => {
	fc.assert(fc.property(textArbitrary(40), (text) => {
		assert.equal(core.normalize(text), normalize(text));
	}), { seed: SEED, numRuns: RUNS });
});

test("normalize strips exactly the JS \\s set, U+3000 and U+FEFF included", () => {
	for (const space of JS_WHITESPACE) assert.equal(core.normalize(`a${space}b`), "ab", `U+${space.codePointAt(0).toString(16)}`);
	for (const other of NOT_JS_WHITESPACE) {
		assert.equal(core.normalize(`a${other}b`), normalize(`a${other}b`), `U+${other.codePointAt(0).toString(16)}`);
		assert.equal(core.normalize(`a${other}b`).length, 3, `U+${other.codePointAt(0).toString(16)} is not JS whitespace`);
	}
});

test("editDistance equals the seed's on BMP text and counts scalar values on astral text", () => {
	const seen = { bmp: 0, astralDiffers: 0 };
	// Pairs built from one text and an edit of it, so distances are small and
	// realistic, plus independent pairs.
	const pairArbitrary = fc.oneof(
		fc.tuple(textArbitrary(30), textArbitrary(30)),
		fc.tuple(textArbitrary(30), fc.nat(), textArbitrary(4), fc.nat({ max: 4 })).map(([text, at, insert, cut]) => {
			const characters = [...text];
			const position = characters.length === 0 ? 0 : at % characters.length;
			characters.splice(position, cut, ...insert);
			return [text, characters.join("")];
		}),
	);
	fc.assert(fc.property(pairArbitrary, ([left, right]) => {
		const actual = core.editDistance(left, right);
		if (!hasAstral(left) && !hasAstral(right)) {
			seen.bmp += 1;
			assert.equal(actual, editDistance(left, right));
			return;
		}
		// Documented difference: scalar values, not UTF-16 code units.
		const scalars = editDistance([...left], [...right]);
		if (scalars !== editDistance(left, right)) seen.astralDiffers += 1;
		assert.equal(actual, scalars);
	}), { seed: SEED, numRuns: RUNS });
	assert.ok(seen.bmp > 0 && seen.astralDiffers > 0, `the generator must reach both cases: ${JSON.stringify(seen)}`);
});

test("editDistance on the documented astral example", () => {
	// One astral character against nothing: the seed said 2 (two code units).
	assert.equal(editDistance("𠮷", ""), 2);
	assert.equal(core.editDistance("𠮷", ""), 1);
	assert.equal(core.editDistance("𠮷野家", "吉野家"), 1);
	assert.equal(editDistance("𠮷野家", "吉野家"), 2);
});

test("lone surrogates reach the core as U+FFFD (documented difference)", () => {
	// A JS string is UTF-16 and may hold an unpaired surrogate; Rust strings
	// cannot, and wasm-bindgen replaces each one with U+FFFD on the way in. The
	// seed kept them. Decoded model output never holds one (vocabulary entries
	// are whole characters), so only hand-made input can tell the difference.
	assert.equal(normalize("a\uD800b"), "a\uD800b");
	assert.equal(core.normalize("a\uD800b"), "a\uFFFDb");
	assert.equal(editDistance("\uD800", "\uDC00"), 1);
	assert.equal(core.editDistance("\uD800", "\uDC00"), 0);
});
