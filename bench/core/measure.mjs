// Side-by-side timing that works unchanged in Node and in browsers: the
// contenders run interleaved (A B, then B A, ...) so that drift in the
// machine's load — two cores shared with other jobs — hits both alike.
// Each sample times a batch of calls sized so that one batch lasts about
// `batchMs`: browsers coarsen performance.now() (5 µs in cross-origin-isolated
// Chromium, 20 µs in Firefox), too coarse for a single 10 µs call.

const calibrate = (run, batchMs) => {
	let calls = 0;
	const started = performance.now();
	while (performance.now() - started < batchMs) {
		run();
		calls += 1;
	}
	return calls;
};

// The core's definitions (crate/src/stats.rs, docs/benchmark-protocol.md "Medians and
// percentiles"), written again here: this harness times the core and imports nothing, so
// that it runs unchanged in Node and in browsers. The median is the mean of the two middle
// values of an even count, a percentile the nearest rank. `sorted` is ascending, not empty.
const median = (sorted) => {
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const percentile = (sorted, p) => sorted[Math.min(Math.max(Math.ceil((p / 100) * sorted.length), 1), sorted.length) - 1];

// Per contender: the median, p10 and p90 of its samples (ms per call), its batch size.
const summarize = (names, samples, batches) => Object.fromEntries(names.map((name) => {
	const sorted = samples[name].sort((left, right) => left - right);
	return [name, {
		medianMs: median(sorted),
		p10Ms: percentile(sorted, 10),
		p90Ms: percentile(sorted, 90),
		batch: batches[name],
		samples: sorted.length,
	}];
}));

// contenders: { name: () => value }. Returns { name: { medianMs, p10Ms, p90Ms,
// batch, samples } } with per-call milliseconds. Calibration doubles as the
// warm-up (JIT tiers, wasm compilation tiers, caches).
export const compare = (contenders, { rounds = 31, batchMs = 20, warmupMs = 200 } = {}) => {
	const names = Object.keys(contenders);
	for (const name of names) calibrate(contenders[name], warmupMs);
	const batches = Object.fromEntries(names.map((name) => [name, calibrate(contenders[name], batchMs)]));
	const samples = Object.fromEntries(names.map((name) => [name, []]));
	for (let round = 0; round < rounds; round += 1) {
		const order = round % 2 === 0 ? names : [...names].reverse();
		for (const name of order) {
			const run = contenders[name];
			const batch = batches[name];
			const started = performance.now();
			for (let call = 0; call < batch; call += 1) run();
			samples[name].push((performance.now() - started) / batch);
		}
	}
	return summarize(names, samples, batches);
};

const calibrateAsync = async (run, batchMs) => {
	let calls = 0;
	const started = performance.now();
	while (performance.now() - started < batchMs) {
		await run();
		calls += 1;
	}
	return calls;
};

// `compare` for contenders that return promises (an image decode is one): each
// call is awaited before the next starts, so a sample is the whole path's latency.
export const compareAsync = async (contenders, { rounds = 21, batchMs = 30, warmupMs = 300 } = {}) => {
	const names = Object.keys(contenders);
	for (const name of names) await calibrateAsync(contenders[name], warmupMs);
	const batches = {};
	for (const name of names) batches[name] = await calibrateAsync(contenders[name], batchMs);
	const samples = Object.fromEntries(names.map((name) => [name, []]));
	for (let round = 0; round < rounds; round += 1) {
		const order = round % 2 === 0 ? names : [...names].reverse();
		for (const name of order) {
			const run = contenders[name];
			const batch = batches[name];
			const started = performance.now();
			for (let call = 0; call < batch; call += 1) await run();
			samples[name].push((performance.now() - started) / batch);
		}
	}
	return summarize(names, samples, batches);
};
