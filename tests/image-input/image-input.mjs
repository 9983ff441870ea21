// The core's imageTensor (wasm/src/image_input.rs) against the page's former path
// (bench/core/image-paths.mjs's formerImageTensor), file by file: the SHA-256 of
// both tensors must be equal for every image of the evaluation sets named in the
// query (`sets=a,b,...`; tests/image-input/run names every set under models/eval/),
// or the first N of each with `first=N`, and for three files made here: a 1024x768
// page as a grey and as an RGB PNG, the same page as a JPEG, and a PNG with transparent pixels. The evaluation images and
// the made PNGs must be decoded in WASM, the JPEG and the transparent PNG by the
// browser. Broken files must come out as they did (the same message, or the same tensor). Posts the counts
// to /benchmark-result, the first difference to /benchmark-error.
import init, * as core from "../../pkg/ocr_bench_core.js";
import { loadCases } from "../../www/manifest.js";
import { formerImageTensor, pageJpeg, pagePngs, sha256, transparentPng } from "../../bench/core/image-paths.mjs";
import { standalonePage } from "../standalone-page.mjs";

const { runId, log, report, run: runPage } = standalonePage("image-input");

const fetchBlob = async (url) => {
	const response = await fetch(url);
	if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
	return response.blob();
};

// One file: both tensors' hashes, which must match, and the path the new one took.
const compareFile = async (name, file, expectedPath) => {
	const path = core.imageDecodePath(new Uint8Array(await file.arrayBuffer()));
	if (!path.startsWith(expectedPath)) throw new Error(`${name}: decoded by "${path}", expected "${expectedPath}"`);
	const ours = await sha256(await core.imageTensor(file));
	const former = await sha256(await formerImageTensor(core, file));
	if (ours !== former) throw new Error(`${name} (${path}): tensor sha256 ${ours}, the former path's ${former}`);
	return { path, sha256: ours };
};

// A broken file must come out as it did: refused with the same message, or (Firefox
// shows a torn PNG as far as it goes) accepted with the same tensor.
const compareOutcome = async (name, file) => {
	const outcome = async (run) => {
		try {
			return `accepted, tensor sha256 ${await sha256(await run())}`;
		} catch (error) {
			return `refused: ${error.message}`;
		}
	};
	const ours = await outcome(() => core.imageTensor(file));
	const former = await outcome(() => formerImageTensor(core, file));
	if (ours !== former) throw new Error(`${name}: ${ours}; the former path: ${former}`);
	return ours;
};

async function run() {
	await init();
	const params = new URLSearchParams(location.search);
	const sets = (params.get("sets") ?? "").split(",").filter(Boolean);
	if (sets.length === 0) throw new Error("no evaluation sets: give ?sets=a,b,... (tests/image-input/run names every set under models/eval/)");
	const first = params.has("first") ? Number(params.get("first")) : Infinity;
	if (first !== Infinity && !(Number.isInteger(first) && first >= 1)) throw new Error(`first=${params.get("first")}: give a whole number of images per set, 1 or more, or leave it out for every image`);
	const perSet = {};
	let images = 0;
	for (const set of sets) {
		const cases = (await loadCases(set)).slice(0, first);
		for (const testCase of cases) {
			await compareFile(`${set}/${testCase.id} ${testCase.imageUrl}`, await fetchBlob(testCase.imageUrl), "wasm");
		}
		perSet[set] = cases.length;
		images += cases.length;
		log(`${set}: ${cases.length} images, tensors identical, all decoded in WASM`);
	}
	const pages = await pagePngs();
	const made = {
		pageGreyPng: await compareFile("1024x768 grey PNG", pages.grey, "wasm"),
		pageRgbPng: await compareFile("1024x768 RGB PNG", pages.rgb, "wasm"),
		pageJpeg: await compareFile("1024x768 JPEG", await pageJpeg(), "browser: not a PNG"),
		transparentPng: await compareFile("97x61 transparent PNG", await transparentPng(), "browser: transparent pixels"),
	};
	for (const [name, { path, sha256: hash }] of Object.entries(made)) log(`${name}: ${path}, tensors identical (${hash.slice(0, 12)}…)`);
	const png = new Uint8Array(await pages.grey.arrayBuffer());
	const refusals = {
		torn: await compareOutcome("a torn PNG", new Blob([png.subarray(0, 4000)], { type: "image/png" })),
		notAnImage: await compareOutcome("a text file", new Blob(["not an image"], { type: "image/png" })),
		empty: await compareOutcome("an empty file", new Blob([], { type: "image/png" })),
	};
	for (const [name, message] of Object.entries(refusals)) log(`${name}: as before: ${message}`);
	const result = { runId, page: "tests/image-input", environment: { userAgent: navigator.userAgent }, images, sets: perSet, made, refusals };
	log(`PASS ${images} evaluation images in ${sets.length} sets and ${Object.keys(made).length} made files: every tensor identical to the former path's`);
	await report(result);
}

await runPage(run);
