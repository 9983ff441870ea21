// The benchmark inputs, generated deterministically so that Node, Chromium
// and Firefox time (and hash) exactly the same bytes.

export const VOCABULARY_SIZE = 14630;
export const IMAGE_WIDTH = 1024;
export const IMAGE_HEIGHT = 768;

// Case 04 of the seed's evaluation set: a realistic decoded text (30
// characters) for the penalty set and the run-length check.
const SAMPLE_TEXT = "だとしてもこのレベルがウロつくなんて．．．おそらく２級の呪い";

const xorshift32 = (seed) => {
	let state = seed | 1;
	return () => {
		state ^= state << 13;
		state ^= state >>> 17;
		state ^= state << 5;
		return (state >>> 0) / 4294967296;
	};
};

// Token ids of SAMPLE_TEXT in this vocabulary (ids are entry index + 4).
export const sampleTokens = (charset) => {
	const ids = new Map(charset.map((character, index) => [character, index + 4]));
	const tokens = [...SAMPLE_TEXT].map((character) => ids.get(character)).filter((id) => id !== undefined);
	if (tokens.length < 20) throw new Error(`the vocabulary holds only ${tokens.length} characters of the sample text`);
	return tokens;
};

// Decoder-like scores: a broad normal background and one clear winner, a few
// sets so that no single array stays hot in a cache line by accident.
export const sampleLogits = (sets = 8) => {
	const random = xorshift32(0x5eed);
	return Array.from({ length: sets }, (_, set) => {
		const logits = new Float32Array(VOCABULARY_SIZE);
		for (let index = 0; index < VOCABULARY_SIZE; index += 1) {
			// Box-Muller: normal(0, 3).
			logits[index] = 3 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
		}
		logits[100 + set * 997] = 25;
		return logits;
	});
};

// A 1024x768 opaque RGBA page of dark "glyphs" (strokes in 32 px cells, in
// lines) on an off-white background: the high-frequency content of text,
// which is what a downscaling filter has to handle well.
export const sampleImage = () => {
	const random = xorshift32(0x1024768);
	const rgba = new Uint8ClampedArray(IMAGE_WIDTH * IMAGE_HEIGHT * 4);
	for (let index = 0; index < rgba.length; index += 4) {
		const shade = 236 + Math.floor(random() * 16);
		rgba[index] = shade;
		rgba[index + 1] = shade;
		rgba[index + 2] = shade - 6;
		rgba[index + 3] = 255;
	}
	const stroke = (x0, y0, width, height, ink) => {
		for (let y = y0; y < Math.min(y0 + height, IMAGE_HEIGHT); y += 1) {
			for (let x = x0; x < Math.min(x0 + width, IMAGE_WIDTH); x += 1) {
				const index = (y * IMAGE_WIDTH + x) * 4;
				rgba[index] = ink[0];
				rgba[index + 1] = ink[1];
				rgba[index + 2] = ink[2];
			}
		}
	};
	for (let line = 0; line < 12; line += 1) {
		const top = 40 + line * 58;
		const ink = line % 4 === 3 ? [170, 20, 30] : [20, 20, 24];
		for (let cell = 0; cell < 28; cell += 1) {
			const left = 48 + cell * 33;
			for (let part = 0; part < 5; part += 1) {
				const horizontal = random() < 0.5;
				const x = left + Math.floor(random() * 24);
				const y = top + Math.floor(random() * 24);
				stroke(x, y, horizontal ? 6 + Math.floor(random() * 20) : 3, horizontal ? 3 : 6 + Math.floor(random() * 20), ink);
			}
		}
	}
	return rgba;
};

// The two contenders of the choose benchmark, on the same inputs, after checking
// that they agree on every logit set (a fast wrong answer is no result).
// `core` is the wasm module, `seed` the seed's token choice for `charset`.
export const chooseContenders = (core, seed, charset) => {
	const tokens = sampleTokens(charset);
	const sequence = [1, ...tokens];
	const logitSets = sampleLogits();
	const chooser = new core.TokenChooser(new core.Vocabulary(charset));
	chooser.reset();
	for (const token of tokens) chooser.push(token);
	for (const logits of logitSets) {
		const ours = chooser.choose(logits);
		const theirs = seed.chooseToken(logits, sequence, tokens);
		if (ours !== theirs) throw new Error(`choose disagrees with the seed: ${ours} vs ${theirs}`);
	}
	let turn = 0;
	return {
		logits: logitSets[0].length,
		sequenceLength: sequence.length,
		contenders: {
			core: () => chooser.choose(logitSets[turn++ % logitSets.length]),
			seed: () => seed.chooseToken(logitSets[turn++ % logitSets.length], sequence, tokens),
		},
	};
};
