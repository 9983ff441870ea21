// @ts-check
// The summary that /benchmark-result receives and window.__benchmarkResult
// holds: the seed's field names unchanged, additions after them
// (docs/architecture.md, "Summary"). Its types are the core's
// (crate/src/record.rs, TypeScript in pkg/ocr_bench_core.d.ts); the core
// scores the cases and computes every statistic, this file only gathers.

/** What each time means; shown on the page and kept in the record. */
export function timingNotes(config, ortVersion) {
	const notes = [];
	if (config.scope === "decoder") {
		notes.push(
			"visionMs is 0: the decoder-only scope feeds synthetic zero embeddings and forces token 4 at every step, so each case walks the full maxTokens cache path; accuracy is not applicable (nCER and exact are null).",
		);
	} else if (config.schedule === "staged") {
		notes.push(
			"visionMs (staged): vision.run() inside the worker with vision_embeds read back to the CPU, so it includes the GPU work and the copy back; it excludes image decoding, preprocessing and the postMessage transfer.",
		);
	} else {
		notes.push(
			"visionMs (resident): from vision.run() until device.queue.onSubmittedWorkDone() resolved on the device given to ORT, so it includes the GPU work; visionCallMs is when run() itself returned (vision_embeds stays on the GPU as a gpu-buffer).",
		);
	}
	notes.push(
		"prefillMs: the prefill decoder.run() (vision tokens + BOS), including uploading CPU inputs and waiting for the logits on the CPU.",
		"decodeMs: every step after prefill, each waiting for its logits on the CPU, plus the core's token choice; msPerToken = sum(decodeMs) / sum(decodeSteps).",
		"Decode probe, per step (decodeProbe): submitMs until decoder.run() returned with the logits left on the GPU (ORT encoding and submitting the step), syncMs until the logits were readable on the CPU (the GPU's work plus the browser's completion wait), chooseMs the core's token choice. A token's latency is its step's submitMs + syncMs + the chooseMs that picked it; timeToFirstTokenMs = visionMs + prefillMs + the first chooseMs (in the staged schedule the vision ran earlier, in the worker); tokensPerSecond = decodeSteps / decodeMs.",
		"completion: each realm's completion floor (an empty-queue onSubmittedWorkDone() and a one-dispatch mapAsync round trip, 20 rounds after 3 warm-up rounds, in the probe phase before any model phase, on a device of the realm's own with the run's poll; probeMs each realm's rounds; source says whether this run measured the floor or reused one the runner kept for the same key: browser build, adapter, driver, poll, kickMs and realm) and whether the decode steps sit at whole multiples of it (completion-bound: the browser's completion timer, not the model).",
		"totalMs = visionMs + the decoder's time from building the prefill inputs to the last step; medianMs, peakCaseMs, meanMs and p90Ms are over totalMs.",
		config.warmup > 0
			? `Warm-up: ${config.warmup} run${config.warmup > 1 ? "s" : ""} of the first cases went first and are kept apart (warmupResults), so the timed cases reuse ORT's compiled pipelines; pipelineCompilation compares the first run with the steady state.`
			: "No warm-up: the first case includes compiling the WebGPU pipelines (shaders) of every kernel it meets; later cases reuse ORT's pipeline cache (pipelineCompilation compares the first run with the rest).",
		"sessionMs: InferenceSession.create, including fetching the model files (loader=url: ORT fetches; loader=bytes: the page or worker fetches them first).",
		`Memory samples are taken only between phases and between cases, never inside a timed region; each records how long it took (sampleMs, userAgentMs). onnxruntime-web ${ortVersion}, native WebGPU EP.`,
	);
	if (config.realm === "worker") {
		notes.push(
			`realm=worker: the decoder session, its decode loop and the token choice ran in a dedicated worker (worker/decoder-worker.js) on its own WebGPU device; every decoder time was measured there, and the completion check uses that worker's floor. The embeddings reached it as a transferred array before the case's decoder time started${config.schedule === "resident" && config.scope === "full" ? " (resident: read back from the page's vision output, which is in neither visionMs nor the decoder's times)" : ""}.`,
		);
	}
	if (config.pool > 1) {
		notes.push(
			`pool=${config.pool}: ${config.realm === "worker" ? `${config.pool} decoder workers, each with its own onnxruntime-web and device,` : `${config.pool} decoder sessions in the page's one onnxruntime-web, their calls taking turns,`} read the cases at once from one queue; each case's times were measured in the realm that read it (decoderRealm) while the others ran, and pool.wallMs is the whole set's time.`,
		);
	}
	if (config.verify === "wasm") {
		notes.push(
			"verify=wasm: each timed step's logits are kept in the page (4 bytes per vocabulary id per step) until the release phase's \"released\" sample; then every case is decoded again on the WASM (CPU) execution provider, still in the release phase, so the runner's release-phase memory includes those sessions. Measure memory and time with verify=none.",
		);
	}
	return notes;
}

/** One case as the seed records it, then the additions: built by the core from what was measured. */
export function caseResult(testCase, run, accuracyApplicable, item, core) {
	return core.caseResult({
		id: testCase.id,
		expected: testCase.expected,
		text: run.text,
		tokenIds: run.tokens,
		visionMs: run.visionMs,
		prefillMs: run.prefillMs,
		decodeMs: run.decodeMs,
		totalMs: run.totalMs,
		decodeSteps: run.decodeSteps,
		visionCallMs: run.visionCallMs ?? null,
		visionDispatches: run.visionDispatches ?? null,
		probe: run.probe,
		repeat: item.repeat,
		accuracyApplicable,
		decoderRealm: run.decoderRealm ?? null,
		style: testCase.style ?? null,
	});
}

/** The whole summary: the page gathers, the core computes every statistic (crate/src/build_summary.rs). */
export function buildSummary({
	runId,
	config,
	manifest,
	visionEntry,
	decoderEntry,
	results,
	warmupResults,
	memorySamples,
	environment,
	sessionMs,
	wallMs,
	notes,
	completionFloors,
	profile,
	gpuMemory,
	sessions,
	verification,
	pool,
	core,
}) {
	const { layers, hiddenSize, intermediateSize, attentionHeads, kvHeads, vocabulary, maxTokens } = manifest.capability;
	return core.buildSummary({
		runId,
		config,
		capability: {
			layers,
			hiddenSize,
			intermediateSize,
			attentionHeads,
			kvHeads,
			vocabulary,
			maxTokens,
			vision: visionEntry ? visionEntry.description : "not loaded (decoder-only scope)",
			decoder: decoderEntry.description,
		},
		manifest: {
			url: manifest.url,
			name: manifest.name ?? null,
			vision: visionEntry?.model ?? null,
			decoder: decoderEntry.model,
			// The family and token rule of an encoder-decoder (absent for the built-in model).
			family: manifest.family ?? "prefix",
			generation: manifest.encoderDecoder?.generation,
		},
		results,
		warmupResults,
		memorySamples,
		environment,
		sessionMs,
		wallMs,
		timingNotes: notes,
		completionFloors: {
			page: completionFloors.page ?? null,
			worker: completionFloors.worker ?? null,
			decoderWorker: completionFloors.decoderWorker ?? null,
		},
		profile: profile ?? null,
		gpuMemory: gpuMemory ?? null,
		sessions,
		verification: verification ?? null,
		pool: pool ?? null,
	});
}
