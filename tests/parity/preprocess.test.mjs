// preprocess against the seed's normalisation loop, bit for bit. The seed left
// the resize to the canvas (whose "high" smoothing differs between browsers),
// so the parity is on an image that is already 224x224: what the seed's loop
// read from getImageData. The core's own resize is tested natively.
// Documented difference: the core composites transparent pixels over white;
// the seed's loop ignored alpha (and its cleared canvas made them black). It
// is asserted exactly: the core equals the seed's loop over the composited
// bytes.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { loadCore } from "./load-core.mjs";
import { seedNormalizeRgba } from "./seed-reference.mjs";

const SIZE = 224;
const PIXELS = SIZE * SIZE;
const RUNS = Math.ceil(Number(process.env.PARITY_RUNS ?? 3000) / 30); // each run is a whole image
const SEED = Number(process.env.PARITY_SEED ?? 20261129);

let core;
before(async () => {
	core = await loadCore();
});

const bits = (values) => new Uint32Array(values.buffer, values.byteOffset, values.length);

const assertBitIdentical = (actual, expected) => {
	assert.ok(actual instanceof Float32Array, "preprocess must return a Float32Array");
	assert.equal(actual.length, 3 * PIXELS);
	const actualBits = bits(actual);
	const expectedBits = bits(expected);
	for (let index = 0; index < expected.length; index += 1) {
		if (actualBits[index] !== expectedBits[index]) {
			const channel = Math.floor(index / PIXELS);
			assert.fail(`channel ${channel} pixel ${index % PIXELS}: ${actual[index]} (core) !== ${expected[index]} (seed)`);
		}
	}
};

test("every 8-bit value of every channel normalises to the seed's float, bit for bit", () => {
	// Pixel p carries value p % 256 in R, (p * 7) % 256 in G, (p * 13) % 256 in B:
	// every value of every channel appears, in several positions.
	const rgba = new Uint8Array(PIXELS * 4);
	for (let pixel = 0; pixel < PIXELS; pixel += 1) {
		rgba.set([pixel % 256, (pixel * 7) % 256, (pixel * 13) % 256, 255], pixel * 4);
	}
	assertBitIdentical(core.preprocess(rgba, SIZE, SIZE), seedNormalizeRgba(rgba));
});

test("random opaque 224x224 images match the seed's loop bit for bit", () => {
	fc.assert(fc.property(fc.noShrink(fc.integer()), (state) => {
		const rgba = new Uint8Array(PIXELS * 4);
		let x = state | 1;
		for (let index = 0; index < rgba.length; index += 1) {
			x ^= x << 13; x ^= x >>> 17; x ^= x << 5; // xorshift32
			rgba[index] = index % 4 === 3 ? 255 : x & 255;
		}
		assertBitIdentical(core.preprocess(rgba, SIZE, SIZE), seedNormalizeRgba(rgba));
	}), { seed: SEED, numRuns: RUNS });
});

test("transparent pixels are composited over white, where the seed ignored alpha (documented difference)", () => {
	// The core's rule (crate/src/preprocess.rs): c' = round((c * a + 255 * (255 - a)) / 255),
	// then the seed's loop. The seed's loop read c and ignored a.
	const overWhite = (c, a) => Math.floor((c * a + 255 * (255 - a) + 127) / 255);
	let differs = 0;
	fc.assert(fc.property(fc.noShrink(fc.integer()), fc.constantFrom(0, 1, 127, 128, 254, 255), (state, fixedAlpha) => {
		const rgba = new Uint8Array(PIXELS * 4);
		let x = state | 1;
		for (let index = 0; index < rgba.length; index += 1) {
			x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
			// Half the pixels take a random alpha, the rest one alpha for the whole image.
			rgba[index] = index % 4 !== 3 ? x & 255 : (x & 256) ? x & 255 : fixedAlpha;
		}
		const composited = rgba.slice();
		for (let index = 0; index < rgba.length; index += 4) {
			const alpha = rgba[index + 3];
			for (let channel = 0; channel < 3; channel += 1) composited[index + channel] = overWhite(rgba[index + channel], alpha);
			composited[index + 3] = 255;
		}
		const actual = core.preprocess(rgba, SIZE, SIZE);
		assertBitIdentical(actual, seedNormalizeRgba(composited));
		const seedBits = bits(seedNormalizeRgba(rgba));
		if (bits(actual).some((value, index) => value !== seedBits[index])) differs += 1;
	}), { seed: SEED, numRuns: RUNS });
	assert.ok(differs > 0, "the generated images must exercise the difference");
});

test("preprocess rejects a buffer whose length is not width * height * 4", () => {
	assert.throws(() => core.preprocess(new Uint8Array(10), SIZE, SIZE), Error);
	assert.throws(() => core.preprocess(new Uint8Array(0), 0, 0), Error);
});

test("preprocess takes the bytes of a Uint8Array or Uint8ClampedArray view, nothing else", () => {
	// A view into a larger buffer: only its own bytes count (the page passes ImageData's).
	const pixel = [10, 20, 30, 255];
	const backing = new Uint8Array(8 + 224 * 224 * 4 + 8).fill(7);
	const view = new Uint8ClampedArray(backing.buffer, 8, 224 * 224 * 4);
	for (let index = 0; index < view.length; index += 4) view.set(pixel, index);
	const expected = core.preprocess(new Uint8Array(view), 224, 224);
	assertBitIdentical(core.preprocess(view, 224, 224), expected);
	for (const [value, name] of [[Array.from(view), "Array"], [new Float32Array(4), "Float32Array"], [null, "null"], [undefined, "undefined"], ["rgba", "string"], [Object.create(null), "object"]]) {
		assert.throws(() => core.preprocess(value, 1, 1), new RegExp(`rgba must be a Uint8Array or Uint8ClampedArray .*; got ${name}$`));
	}
});
