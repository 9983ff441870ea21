// The decode probe's figures in the summary: per case (time to first token,
// per-token latency, tokens per second), over the run (the same, plus the
// submit/sync/choose split and the completion verdict), across repeats (mean
// and 95 % interval) and for the first run against the steady state. The
// statistics are the core's (latencyStats, meanInterval, completionCheck).

const finite = (value) => typeof value === "number" && Number.isFinite(value);
const stats = (core, values) => core.latencyStats(Float64Array.from(values.filter(finite)));

/** One latency per decoded token after the first: its step's submit + sync + the choice that read it. */
export function tokenLatencies(probe) {
	return probe.submitMs.map((submit, step) => submit + probe.syncMs[step] + probe.chooseMs[step + 1]);
}

/** The per-case additions, from decode.js's result and the vision times. */
export function caseProbe(run, core) {
	const latencies = tokenLatencies(run.probe);
	return {
		timeToFirstTokenMs: run.visionMs + run.prefillMs + (run.probe.chooseMs[0] ?? 0),
		tokenLatency: latencies.length ? stats(core, latencies) : null,
		tokensPerSecond: run.decodeSteps > 0 && run.decodeMs > 0 ? (1000 * run.decodeSteps) / run.decodeMs : null,
		decodeProbe: run.probe,
	};
}

function floorFigures(core, raw) {
	if (!raw) return null;
	return { ...raw, emptyQueue: stats(core, raw.emptyQueueMs), dispatchReadback: stats(core, raw.dispatchReadbackMs) };
}

function runFigures(core, runs) {
	const steps = runs.reduce((sum, run) => sum + run.decodeSteps, 0);
	const decodeMs = runs.reduce((sum, run) => sum + run.decodeMs, 0);
	return {
		tokenLatency: stats(core, runs.flatMap((run) => tokenLatencies(run.decodeProbe))),
		submit: stats(core, runs.flatMap((run) => run.decodeProbe.submitMs)),
		sync: stats(core, runs.flatMap((run) => run.decodeProbe.syncMs)),
		choose: stats(core, runs.flatMap((run) => run.decodeProbe.chooseMs)),
		prefillSubmit: stats(core, runs.map((run) => run.decodeProbe.prefillSubmitMs)),
		prefillSync: stats(core, runs.map((run) => run.decodeProbe.prefillSyncMs)),
		timeToFirstToken: stats(core, runs.map((run) => run.timeToFirstTokenMs)),
		tokensPerSecond: steps > 0 && decodeMs > 0 ? (1000 * steps) / decodeMs : null,
	};
}

// The timings compared across repeats, each from one whole pass over the set.
const REPEAT_FIGURES = {
	caseP50Ms: (core, runs) => stats(core, runs.map((run) => run.totalMs))?.p50Ms,
	visionP50Ms: (core, runs) => stats(core, runs.map((run) => run.visionMs))?.p50Ms,
	prefillP50Ms: (core, runs) => stats(core, runs.map((run) => run.prefillMs))?.p50Ms,
	timeToFirstTokenP50Ms: (core, runs) => stats(core, runs.map((run) => run.timeToFirstTokenMs))?.p50Ms,
	tokenP50Ms: (core, runs) => stats(core, runs.flatMap((run) => tokenLatencies(run.decodeProbe)))?.p50Ms,
	tokenP90Ms: (core, runs) => stats(core, runs.flatMap((run) => tokenLatencies(run.decodeProbe)))?.p90Ms,
	msPerToken: (core, runs) => {
		const steps = runs.reduce((sum, run) => sum + run.decodeSteps, 0);
		return steps > 0 ? runs.reduce((sum, run) => sum + run.decodeMs, 0) / steps : null;
	},
	tokensPerSecond: (core, runs) => runFigures(core, runs).tokensPerSecond,
};

function repeatFigures(core, results, count) {
	const passes = new Map();
	for (const run of results) passes.set(run.repeat, [...(passes.get(run.repeat) ?? []), run]);
	const perRepeat = [...passes.entries()].map(([repeat, runs]) => ({
		repeat,
		...Object.fromEntries(Object.entries(REPEAT_FIGURES).map(([name, figure]) => [name, figure(core, runs) ?? null])),
	}));
	const interval = Object.fromEntries(Object.keys(REPEAT_FIGURES).map((name) => [name, core.meanInterval(Float64Array.from(perRepeat.map((pass) => pass[name]).filter(finite)))]));
	// Greedy decoding is deterministic: a repeat that reads other tokens is a finding.
	const tokensById = new Map();
	let tokensAgree = true;
	for (const run of results) {
		const key = JSON.stringify(run.tokenIds);
		if (tokensById.has(run.id) && tokensById.get(run.id) !== key) tokensAgree = false;
		tokensById.set(run.id, key);
	}
	return { count, perRepeat, interval, tokensAgree };
}

function compilationFigures(core, ordered) {
	if (!ordered.length) return null;
	const [first, ...rest] = ordered;
	const firstStep = first.decodeProbe.submitMs.length ? tokenLatencies(first.decodeProbe)[0] : null;
	const steady = rest.length
		? {
			runs: rest.length,
			caseP50Ms: stats(core, rest.map((run) => run.totalMs))?.p50Ms ?? null,
			visionP50Ms: stats(core, rest.map((run) => run.visionMs))?.p50Ms ?? null,
			prefillP50Ms: stats(core, rest.map((run) => run.prefillMs))?.p50Ms ?? null,
			tokenP50Ms: stats(core, rest.flatMap((run) => tokenLatencies(run.decodeProbe)))?.p50Ms ?? null,
		}
		: null;
	return {
		first: { id: first.id, warmup: first.repeat === null, totalMs: first.totalMs, visionMs: first.visionMs, prefillMs: first.prefillMs, firstTokenStepMs: firstStep },
		steady,
		// The prefill has the same shape in every case, so it compares fairly;
		// case totals also differ by how many tokens each case reads.
		prefillExtraMs: steady?.prefillP50Ms != null ? first.prefillMs - steady.prefillP50Ms : null,
		visionExtraMs: steady?.visionP50Ms != null ? first.visionMs - steady.visionP50Ms : null,
	};
}

/** The summary's additions of the decode probe. */
export function probeSummary({ config, results, warmupResults, completionFloors, profile, core }) {
	const page = floorFigures(core, completionFloors.page);
	const worker = floorFigures(core, completionFloors.worker);
	// A decode step's wait: run() plus the logits' readback, the span the timer quantises.
	const waits = results.flatMap((run) => run.decodeProbe.submitMs.map((submit, step) => submit + run.decodeProbe.syncMs[step]));
	const check = core.completionCheck(page?.dispatchReadback?.p50Ms ?? Number.NaN, Float64Array.from(waits), config.poll === "kick");
	const decoderProfile = profile?.decoder;
	return {
		poll: { mode: config.poll, kickMs: config.poll === "kick" ? config.kickMs : null },
		completion: { page, worker, check },
		completionBound: check.bound,
		decodeProbe: {
			...runFigures(core, results),
			gpuMsPerDecoderRun: decoderProfile?.gpuTimestamps && decoderProfile.runs > 0 ? decoderProfile.gpuMs / decoderProfile.runs : null,
		},
		repeats: repeatFigures(core, results, config.repeat),
		warmupResults,
		pipelineCompilation: compilationFigures(core, [...warmupResults, ...results]),
		profile,
	};
}
