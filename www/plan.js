// @ts-check
// The runs of a benchmark, in order: warm-up runs of the first cases (cycling
// through the set when warmup exceeds it), then every case `repeat` times,
// one whole pass over the set per repeat.

/** Items { testCase, warmup, repeat } (repeat: null for a warm-up run). */
export function buildPlan(testCases, { warmup = 0, repeat = 1 }) {
	const plan = [];
	for (let index = 0; index < warmup; index += 1) plan.push({ testCase: testCases[index % testCases.length], warmup: true, repeat: null });
	for (let pass = 0; pass < repeat; pass += 1) for (const testCase of testCases) plan.push({ testCase, warmup: false, repeat: pass });
	return plan;
}
