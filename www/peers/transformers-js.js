// @ts-check
// The peer page: an optimum export folder read the way its users read it today,
// through @huggingface/transformers' own generate() on its own onnxruntime-web
// (the version it ships, from its own node_modules), reporting to the runner as
// another page (docs/benchmark-protocol.md, "The transformers.js peer page").
// The core (pkg/) reads the evaluation set's score and statistics, so nCER and
// the latency figures mean what they mean for the benchmark page.

import * as transformers from "/node_modules/@huggingface/transformers/dist/transformers.js";
import { messageOf, serializeError } from "../../browser/errors.js";
import init, * as core from "../../pkg/ocr_bench_core.js";
import { loadCases } from "../manifest.js";
import { createReporter } from "../server.js";

// transformers.js 4.3 bundles onnxruntime-web's WebGPU build and loads its WASM
// (ort-wasm-simd-threaded.asyncify.{mjs,wasm}) from wasmPaths; without them it
// would fetch them from a CDN. Its dependency's own dist holds the same version.
const ORT_DIST = "/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/";

/** The query's parameters: what each means and its default (null: required). */
const PARAMETERS = {
	model: { default: null, what: "the export folder under the served root, such as /models/hf-test/vit-trocr-tiny/" },
	cases: { default: "hayai13", what: "the evaluation set: models/eval/<cases>/cases.json (the benchmark page's default set)" },
	maxTokens: { default: "", what: "generated tokens at most (max_new_tokens); default the model's max_length - 1" },
	dtype: { default: "fp32", what: "transformers.js's dtype: the file suffix it loads (fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4)" },
	device: { default: "webgpu", what: "transformers.js's device: webgpu or wasm" },
	pixels: { default: "js", what: "js = transformers.js's own image processor; core = the core's VitImageProcessor" },
};
const CHOICES = { device: ["webgpu", "wasm"], pixels: ["js", "core"], dtype: ["fp32", "fp16", "q8", "int8", "uint8", "q4", "q4f16", "bnb4"] };

const runId = `transformers-js-${Date.now()}`;
const reporter = createReporter(runId);
let phase = "setup";
let failed = false;
/** @type {any} */
let model = null;

const log = (line) => {
	const element = document.getElementById("log");
	if (element) element.textContent += `${line}\n`;
	console.log(line);
};

/**
 * @typedef {object} Settings
 * @property {URL} folder the export folder
 * @property {string} cases
 * @property {string} maxTokens "" for the model's own limit
 * @property {string} dtype
 * @property {string} device
 * @property {string} pixels
 */

/**
 * The query's settings, or an error naming the bad parameter and what is allowed.
 * @param {string} search
 * @returns {Settings}
 */
function readQuery(search) {
	const given = new URLSearchParams(search);
	/** @type {Record<string, string>} */
	const settings = {};
	for (const name of given.keys()) {
		if (!(name in PARAMETERS)) throw new Error(`Unknown parameter "${name}"; allowed: ${Object.keys(PARAMETERS).join(", ")}.`);
	}
	for (const [name, { default: fallback, what }] of Object.entries(PARAMETERS)) {
		const value = given.get(name) ?? fallback;
		if (value === null) throw new Error(`The query needs ${name}= (${what}).`);
		const choices = CHOICES[name];
		if (choices && !choices.includes(value)) throw new Error(`${name}=${value} is not allowed; allowed: ${choices.join(", ")}.`);
		settings[name] = value;
	}
	if (settings.maxTokens !== "" && !/^[1-9][0-9]*$/.test(settings.maxTokens)) {
		throw new Error(`maxTokens=${settings.maxTokens} is not allowed; allowed: a whole number from 1.`);
	}
	const folder = new URL(settings.model.endsWith("/") ? settings.model : `${settings.model}/`, self.location.href);
	if (folder.origin !== self.location.origin) throw new Error(`model=${settings.model} is not on this server; the page reads no network.`);
	const { cases, maxTokens, dtype, device, pixels } = settings;
	return { folder, cases, maxTokens, dtype, device, pixels };
}

/** A BaseStreamer that notes when generate() hands it ids: first the decoder's start (after the encoder ran), then each new token. */
class TimingStreamer extends transformers.BaseStreamer {
	constructor() {
		super();
		/** @type {number[]} */
		this.puts = [];
	}
	put(_ids) {
		this.puts.push(performance.now());
	}
	end() {}
}

async function fetchText(url, what) {
	const response = await fetch(url);
	if (!response.ok) throw new Error(`${what} (${url}) could not be fetched: HTTP ${response.status}`);
	return response.text();
}

/** transformers.js reads a folder under localModelPath by its name; the export's files sit in it, not in an onnx/ subfolder. */
function configureLibrary(folder) {
	const { env } = transformers;
	env.allowRemoteModels = false;
	env.allowLocalModels = true;
	// A path, not a URL: transformers.js 4.3 looks a file up locally only when localModelPath is no http(s) URL.
	env.localModelPath = new URL("../", folder).pathname;
	// Every run starts cold like the benchmark page's: no Cache API copies of the model or the WASM.
	env.useBrowserCache = false;
	env.useWasmCache = false;
	const onnx = /** @type {any} */ (env.backends.onnx);
	onnx.wasm.wasmPaths = new URL(ORT_DIST, self.location.href).href;
	// As the benchmark page: one WASM thread, so CPU-side kernels do not compete with the GPU process.
	onnx.wasm.numThreads = 1;
	return folder.pathname.split("/").filter(Boolean).at(-1) ?? "";
}

/** The core's pixel values for an RGBA image, shaped as transformers.js feeds them. */
function corePixels(processor, image) {
	const rgba = image.rgba();
	const { centerCrop, resizeWidth, resizeHeight } = processor.settings;
	const [width, height] = centerCrop ?? [resizeWidth, resizeHeight];
	return new transformers.Tensor("float32", processor.pixelValues(rgba.data, rgba.width, rgba.height), [1, 3, height, width]);
}

const maxAbsDiff = (a, b) => a.reduce((most, value, i) => Math.max(most, Math.abs(value - b[i])), 0);

/** One case: both processors' pixels (their largest difference recorded), the chosen one through generate(), timed by the streamer. */
async function readCase(testCase, { imageProcessor, vitProcessor, tokenizer, settings, maxTokens, eosIds }) {
	const image = await transformers.RawImage.fromURL(testCase.imageUrl);
	const preprocessStarted = performance.now();
	const { pixel_values: jsPixels } = await imageProcessor(image);
	const preprocessMs = performance.now() - preprocessStarted;
	const fromCore = corePixels(vitProcessor, image);
	const pixelsMaxDiff = fromCore.dims.join() === jsPixels.dims.join() ? maxAbsDiff(fromCore.data, jsPixels.data) : null;
	const streamer = new TimingStreamer();
	const started = performance.now();
	const sequences = await model.generate({
		pixel_values: settings.pixels === "core" ? fromCore : jsPixels,
		max_new_tokens: maxTokens,
		do_sample: false,
		num_beams: 1,
		streamer,
	});
	const finished = performance.now();
	const [row] = sequences.tolist();
	// The benchmark page's tokenIds: after the decoder start, without the EOS that ended the loop.
	const generated = row.slice(1).map(Number);
	const ended = generated.length > 0 && eosIds.includes(generated.at(-1)) ? "eos" : "maxTokens";
	const tokenIds = ended === "eos" ? generated.slice(0, -1) : generated;
	const [encoded, ...tokens] = streamer.puts;
	if (encoded === undefined || tokens.length !== generated.length) {
		throw new Error(
			`Case ${testCase.id}: the streamer saw ${streamer.puts.length} puts for ${generated.length} generated ids; transformers.js's generate() calls put() otherwise than this page reads it.`,
		);
	}
	const tokenMs = tokens.slice(1).map((at, i) => at - tokens[i]);
	const visionMs = encoded - started;
	const prefillMs = tokens[0] - encoded;
	return {
		id: testCase.id,
		expected: testCase.expected,
		actual: tokenizer.decode(tokenIds, { skip_special_tokens: true }),
		tokenIds,
		tokens: tokenIds.length,
		ended,
		decodeSteps: generated.length - 1,
		preprocessMs,
		pixelsMaxDiff,
		visionMs,
		prefillMs,
		decodeMs: finished - tokens[0],
		totalMs: finished - started,
		timeToFirstTokenMs: visionMs + prefillMs,
		tokenMs,
		tokenLatency: core.latencyStats(tokenMs) ?? null,
	};
}

async function enter(name) {
	phase = name;
	log(`phase ${name}`);
	await reporter.mark(name);
}

async function run() {
	await init();
	const settings = readQuery(self.location.search);
	if (settings.device === "webgpu" && !("gpu" in navigator))
		throw new Error("device=webgpu: this browser has no navigator.gpu (WebGPU is off or unsupported).");
	const cases = await loadCases(settings.cases);
	await enter("baseline");

	// Nothing model-sized: the library's processor and tokenizer, and the core's processor beside them.
	await enter("vision-load");
	const modelId = configureLibrary(settings.folder);
	const [imageProcessor, tokenizer, preprocessorText] = await Promise.all([
		transformers.AutoImageProcessor.from_pretrained(modelId),
		transformers.AutoTokenizer.from_pretrained(modelId),
		fetchText(new URL("preprocessor_config.json", settings.folder).href, "the export's preprocessor_config.json"),
	]);
	const vitProcessor = new core.VitImageProcessor(preprocessorText);

	// transformers.js creates the encoder's and the decoder's sessions in one from_pretrained(): both load in this phase.
	await enter("decoder-load");
	const loadStarted = performance.now();
	model = await transformers.AutoModelForVision2Seq.from_pretrained(modelId, {
		dtype: /** @type {any} */ (settings.dtype),
		device: /** @type {any} */ (settings.device),
		subfolder: "",
	});
	const loadMs = performance.now() - loadStarted;
	const generation = model.generation_config;
	const maxTokens = settings.maxTokens === "" ? generation.max_length - 1 : Number(settings.maxTokens);
	const eosIds = [generation.eos_token_id].flat().filter((id) => id !== null && id !== undefined);

	await enter("decoder-run");
	const results = [];
	for (const testCase of cases) {
		const result = await readCase(testCase, { imageProcessor, vitProcessor, tokenizer, settings, maxTokens, eosIds });
		log(
			`CASE ${result.id} ${JSON.stringify({ actual: result.actual, tokenIds: result.tokenIds, pixelsMaxDiff: result.pixelsMaxDiff, totalMs: result.totalMs })}`,
		);
		results.push(result);
	}

	await enter("release");
	await model.dispose();
	model = null;

	const scored = core.summarize(
		results.map((r) => ({ id: r.id, expected: r.expected, actual: r.actual, totalMs: r.totalMs, tokens: r.tokens, decodeMs: r.decodeMs })),
		{},
	);
	const summary = {
		runId,
		peer: "transformers.js",
		transformersVersion: transformers.env.version,
		ortVersion: /** @type {any} */ (transformers.env.backends.onnx).versions?.web ?? null,
		model: settings.folder.pathname,
		cases: settings.cases,
		maxTokens,
		dtype: settings.dtype,
		device: settings.device,
		pixels: settings.pixels,
		nCER: scored.nCER,
		distance: scored.distance,
		characters: scored.characters,
		exact: scored.exact,
		medianMs: scored.medianMs,
		loadMs,
		results: results.map((r, i) => ({ ...r, distance: scored.perCase[i].distance, characters: scored.perCase[i].characters })),
		decodeProbe: {
			timeToFirstToken: core.latencyStats(results.map((r) => r.timeToFirstTokenMs)) ?? null,
			tokenLatency: core.latencyStats(results.flatMap((r) => r.tokenMs)) ?? null,
		},
		environment: { userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated },
	};
	await reporter.result(summary);
	const status = document.getElementById("status");
	if (status) status.textContent = `Done: nCER ${summary.nCER}`;
	log(`SUITE_DONE ${JSON.stringify({ runId, nCER: summary.nCER })}`);
}

async function fail(thrown) {
	if (failed) return;
	failed = true;
	const error = thrown instanceof Error ? thrown : new Error(messageOf(thrown));
	log(`SUITE_ERROR ${phase}: ${error.message}`);
	const status = document.getElementById("status");
	if (status) status.textContent = `Failed in ${phase}: ${error.message}`;
	await model?.dispose().catch(() => {});
	await reporter.error(phase, serializeError(error));
}

window.addEventListener("error", (event) => fail(event.error ?? new Error(event.message)));
window.addEventListener("unhandledrejection", (event) => fail(event.reason));
run().catch(fail);
