// Randomised logit vectors for the GPU/CPU chooser parity test, made step by step from the
// CPU chooser's own sequence so that the hard cases land where they matter: ties (among
// unseen ids, among seen ones, and between a seen id's penalised score and an unseen raw
// one, exact and one float32 step apart), NaN (at index 0 too), ±Infinity, ±0, subnormals,
// all-negative vectors, runs of one id long enough for the 12-in-a-row block, and steps
// with no candidate at all. A rule of another penalty (the generation rule's float32 one) passes
// its own `penalised` and may add scenarios of its own (generation.mjs).

/** mulberry32: a small seeded generator, so a failure can be replayed from its seed. */
export function createRandom(seed) {
	let state = seed >>> 0;
	const next = () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (n) => Math.floor(next() * n),
		pick: (items) => items[Math.floor(next() * items.length)],
	};
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The float32 one step above (direction 1) or below (-1) a finite float32. */
function nextFloat32(value, direction) {
	f32[0] = value;
	if (value === 0) {
		u32[0] = direction > 0 ? 1 : 0x80000001;
		return f32[0];
	}
	u32[0] += (value > 0) === direction > 0 ? 1 : -1;
	return f32[0];
}

/** The core's penalty in doubles, as choose.rs applies it to a seen id. */
const seedPenalised = (raw) => (raw < 0 ? raw * 1.2 : raw / 1.2);

/**
 * size: the vocabulary's ids; nonContent: some ids the run block never applies to. Returns
 * fill(target, state, random) writing one step's logits into `target` (a Float32Array of
 * `size`) from the sequence so far: state.seen (ids in the sequence, BOS first),
 * state.tokens (the ids decoded) and state.streak (repeat steps still to come, kept here).
 * It returns the scenario's name.
 *
 * options.penalised: a seen id's score under the rule's penalty (default the seed's);
 * options.extra: more scenarios, `{ name: [weight, (v, state, random) => void] }`.
 */
export function createLogitMaker(size, nonContent, { penalised = seedPenalised, extra = {} } = {}) {
	// A pool of plain scores; each vector starts from a random window of it.
	const random0 = createRandom(12345);
	const pool = new Float32Array(size * 8);
	for (let index = 0; index < pool.length; index += 1) pool[index] = (random0.next() - 0.5) * 16;
	const special = [NaN, Infinity, -Infinity, 0, -0, 1e-45, -1e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38];

	const scenarios = {
		plain(v) {},
		// The last token again, by far: runs grow until the block stops a content id.
		repeat(v, state, random) {
			const last = state.tokens.at(-1) ?? random.pick(nonContent);
			v[last] = 100;
			// Now and then a rival: below 100 / 1.2 the run goes on, above it the run ends.
			if (random.next() < 0.3) v[random.int(size)] = random.next() < 0.1 ? 99 : 80;
		},
		// A non-content id repeated: never blocked.
		repeatFreely(v, state, random) {
			v[state.tokens.length % 2 ? nonContent[0] : random.pick(nonContent)] = 50;
		},
		// Equal top scores at several ids, seen and unseen.
		ties(v, state, random) {
			const top = random.pick([9, 0, -0, Infinity, 20.5]);
			for (let count = 2 + random.int(4); count > 0; count -= 1) v[random.int(size)] = top;
			if (state.seen.length) v[random.pick(state.seen)] = top;
		},
		// A seen id's penalised score against an unseen one at, or one float32 step off,
		// the nearest float32 to it (and exact ties such as 6 / 1.2 = 5).
		nearPenalty(v, state, random) {
			const seen = random.pick(state.seen);
			const raw = random.next() < 0.3 ? random.pick([6, -5, 1.2, -1.2, 12, 3.6, 0.6]) : Math.fround((random.next() - 0.3) * random.pick([2, 40, 1e6, 1e-30]));
			let unseen = random.int(size);
			while (state.seen.includes(unseen)) unseen = random.int(size);
			const nearest = Math.fround(penalised(raw));
			const candidates = [nearest, nextFloat32(nearest, 1), nextFloat32(nearest, -1)];
			v.fill(-1000);
			v[seen] = raw;
			v[unseen] = random.pick(candidates);
			if (random.next() < 0.3) v[random.int(size)] = v[unseen];
		},
		// NaN everywhere it could win, at index 0 too.
		nans(v, state, random) {
			v[0] = NaN;
			for (let count = random.int(50); count > 0; count -= 1) v[random.int(size)] = NaN;
			if (state.seen.length) v[random.pick(state.seen)] = NaN;
		},
		// Infinity at seen and unseen ids (Infinity / 1.2 is still Infinity).
		infinities(v, state, random) {
			v[random.int(size)] = Infinity;
			if (random.next() < 0.7) v[random.pick(state.seen)] = Infinity;
			if (random.next() < 0.5) v[random.int(size)] = -Infinity;
		},
		// Mostly -Infinity and NaN: a handful of finite scores decide.
		sparse(v, state, random) {
			v.fill(-Infinity);
			for (let index = 0; index < size; index += 97) v[index] = NaN;
			for (let count = 1 + random.int(3); count > 0; count -= 1) v[random.int(size)] = -(random.next() * 10);
			if (random.next() < 0.5) v[random.pick(state.seen)] = random.pick([-0.5, 0, -0, 7]);
		},
		// Every score negative, the seen ones pushed further down by the penalty.
		negative(v, state, random) {
			for (let index = 0; index < size; index += 1) v[index] = -Math.abs(v[index]) - 1;
			if (random.next() < 0.5) v[random.pick(state.seen)] = -1;
		},
		// Zeros, subnormals and the float32 extremes as the top scores.
		extremes(v, state, random) {
			v.fill(-1);
			for (let count = 3 + random.int(8); count > 0; count -= 1) v[random.int(size)] = random.pick(special);
			v[random.pick(state.seen)] = random.pick(special);
		},
		// No candidate: every score NaN or -Infinity, or only the blocked id finite.
		none(v, state, random) {
			v.fill(random.pick([NaN, -Infinity]));
			const last = state.tokens.at(-1);
			if (last !== undefined && random.next() < 0.5) v[last] = 5;
		},
	};
	const weights = [["plain", 20], ["repeat", 3], ["repeatFreely", 4], ["ties", 10], ["nearPenalty", 14], ["nans", 6], ["infinities", 5], ["sparse", 4], ["negative", 4], ["extremes", 5], ["none", 0.15]];
	for (const [name, [weight, scenario]] of Object.entries(extra)) {
		scenarios[name] = scenario;
		weights.push([name, weight]);
	}
	const total = weights.reduce((sum, [, weight]) => sum + weight, 0);

	return function fill(target, state, random) {
		const offset = random.int(pool.length - size);
		target.set(pool.subarray(offset, offset + size));
		let name = weights[0][0];
		if (state.streak > 0) {
			// A repeat streak runs on over several steps, past the block's 12.
			state.streak -= 1;
			name = "repeat";
		} else {
			let draw = random.next() * total;
			for (const [candidate, weight] of weights) {
				draw -= weight;
				if (draw < 0) {
					name = candidate;
					break;
				}
			}
			if (name === "repeat") state.streak = 8 + random.int(12);
		}
		scenarios[name](target, state, random);
		return name;
	};
}
