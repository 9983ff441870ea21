// Times the core (pkg/) against the seed's own functions in one page,
// interleaved, and posts the figures to /benchmark-result:
//   choose      TokenChooser.choose vs the seed's chooseToken over 14630
//               logits, after BOS + the 30-token text of a real evaluation case.
//   preprocess  a 1024x768 page image to the [1,3,224,224] tensor. The seed's
//               path: canvas drawImage to 224x224 ("high" smoothing) +
//               getImageData + its loop, from an ImageBitmap. Ours: the same
//               RGBA bytes through preprocess. Also timed, for honesty: ours
//               from the same ImageBitmap (a 1:1 drawImage + getImageData to
//               get the bytes, then preprocess).
//   imageInput  an image file (a Blob, as fetched) to the tensor, whole paths:
//               the seed's (createImageBitmap, its canvas, its loop), the page's
//               former one (createImageBitmap, 1:1 canvas, getImageData,
//               preprocess) and the core's imageTensor, on a 1024x768 page as a
//               grey and an RGB PNG, an evaluation image and the page as a JPEG;
//               beside them the browser's full-size decode alone, the floor of
//               any path that decodes in the browser and keeps the tensor.
// The SHA-256 of each tensor lets runs in different browsers be compared:
// the core's must be bit-identical everywhere.
import init, * as core from "../../pkg/ocr_bench_core.js";
import { createSeedPreprocess, createSeedTokenChoice } from "../../tests/parity/seed-reference.mjs";
import { browserDecode, formerImageTensor, pageJpeg, pagePngs, seedImageTensor, sha256 } from "./image-paths.mjs";
import { compare, compareAsync } from "./measure.mjs";
import { IMAGE_HEIGHT, IMAGE_WIDTH, chooseContenders, sampleImage } from "./workload.mjs";
import { standalonePage } from "../../tests/standalone-page.mjs";

const { runId, log, report, run: runPage } = standalonePage("core-bench");

const benchmarkChoose = (charset) => {
	const seed = createSeedTokenChoice(charset);
	const { logits, sequenceLength, contenders } = chooseContenders(core, seed, charset);
	const timings = compare(contenders);
	return {
		logits,
		sequenceLength,
		coreMedianMs: timings.core.medianMs,
		seedMedianMs: timings.seed.medianMs,
		speedup: timings.seed.medianMs / timings.core.medianMs,
		// On a loaded machine the fastest tenth is closer to the uncontended cost.
		speedupP10: timings.seed.p10Ms / timings.core.p10Ms,
		target: "speedup >= 5",
		detail: timings,
	};
};

const benchmarkPreprocess = async () => {
	const rgba = sampleImage();
	const bitmap = await createImageBitmap(new ImageData(rgba, IMAGE_WIDTH, IMAGE_HEIGHT));
	const context = document.querySelector("#canvas").getContext("2d", { willReadFrequently: true });
	const seedPreprocess = createSeedPreprocess(context);
	const source = document.querySelector("#source").getContext("2d", { willReadFrequently: true });
	const coreFromBitmap = () => {
		source.drawImage(bitmap, 0, 0);
		const pixels = source.getImageData(0, 0, IMAGE_WIDTH, IMAGE_HEIGHT).data;
		return core.preprocess(pixels, IMAGE_WIDTH, IMAGE_HEIGHT);
	};
	const timings = compare({
		core: () => core.preprocess(rgba, IMAGE_WIDTH, IMAGE_HEIGHT),
		seed: () => seedPreprocess(bitmap),
		coreFromBitmap,
	}, { rounds: 21, batchMs: 50 });
	const coreTensor = core.preprocess(rgba, IMAGE_WIDTH, IMAGE_HEIGHT);
	const fromBitmapTensor = coreFromBitmap();
	return {
		image: `${IMAGE_WIDTH}x${IMAGE_HEIGHT}`,
		coreMedianMs: timings.core.medianMs,
		seedMedianMs: timings.seed.medianMs,
		ratio: timings.core.medianMs / timings.seed.medianMs,
		ratioP10: timings.core.p10Ms / timings.seed.p10Ms,
		target: "ratio core/seed <= 1.0",
		coreFromBitmapMedianMs: timings.coreFromBitmap.medianMs,
		ratioFromBitmap: timings.coreFromBitmap.medianMs / timings.seed.medianMs,
		tensorSha256: await sha256(coreTensor),
		// Equal to tensorSha256 when the browser's getImageData returns the
		// bytes it was given (opaque image, so no premultiplication loss).
		fromBitmapTensorSha256: await sha256(fromBitmapTensor),
		// The seed's canvas resize: expected to differ between browsers.
		seedTensorSha256: await sha256(seedPreprocess(bitmap)),
		detail: timings,
	};
};

// The evaluation image of the figure: the largest file of the sets (483x578 grey).
const EVAL_IMAGE = "../../models/eval/long/18.png";

const benchmarkImageInput = async () => {
	const context = document.querySelector("#canvas").getContext("2d", { willReadFrequently: true });
	const seedPreprocess = createSeedPreprocess(context);
	const pages = await pagePngs();
	const response = await fetch(EVAL_IMAGE);
	if (!response.ok) throw new Error(`${EVAL_IMAGE}: HTTP ${response.status}`);
	const files = {
		"page 1024x768 grey PNG": pages.grey,
		"page 1024x768 RGB PNG": pages.rgb,
		"models/eval/long/18.png 483x578 grey PNG": await response.blob(),
		"page 1024x768 JPEG": await pageJpeg(),
	};
	const figures = {};
	for (const [name, file] of Object.entries(files)) {
		const ours = await sha256(await core.imageTensor(file));
		const former = await sha256(await formerImageTensor(core, file));
		// A fast wrong answer is no result.
		if (ours !== former) throw new Error(`${name}: imageTensor's tensor ${ours} differs from the former path's ${former}`);
		const timings = await compareAsync({
			seed: () => seedImageTensor(seedPreprocess, file),
			former: () => formerImageTensor(core, file),
			core: () => core.imageTensor(file),
			decodeOnly: () => browserDecode(file),
		});
		figures[name] = {
			bytes: file.size,
			decode: core.imageDecodePath(new Uint8Array(await file.arrayBuffer())),
			seedMedianMs: timings.seed.medianMs,
			formerMedianMs: timings.former.medianMs,
			coreMedianMs: timings.core.medianMs,
			ratio: timings.core.medianMs / timings.seed.medianMs,
			ratioP10: timings.core.p10Ms / timings.seed.p10Ms,
			formerRatio: timings.former.medianMs / timings.seed.medianMs,
			formerRatioP10: timings.former.p10Ms / timings.seed.p10Ms,
			decodeOnlyMedianMs: timings.decodeOnly.medianMs,
			decodeOnlyRatio: timings.decodeOnly.medianMs / timings.seed.medianMs,
			tensorSha256: ours,
			detail: timings,
		};
	}
	return { target: "ratio core/seed <= 1.0", files: figures };
};

const run = async () => {
	await init();
	const charset = await (await fetch("../../models/vocab.json")).json();
	const choose = benchmarkChoose(charset);
	log(`choose over ${choose.logits} logits: core ${(choose.coreMedianMs * 1000).toFixed(1)} µs, seed ${(choose.seedMedianMs * 1000).toFixed(1)} µs, speedup ${choose.speedup.toFixed(1)}x (target >= 5x; p10 ${choose.speedupP10.toFixed(1)}x)`);
	const preprocess = await benchmarkPreprocess();
	log(`preprocess ${preprocess.image}: core ${preprocess.coreMedianMs.toFixed(3)} ms, seed ${preprocess.seedMedianMs.toFixed(3)} ms, ratio ${preprocess.ratio.toFixed(2)} (target <= 1.0; p10 ${preprocess.ratioP10.toFixed(2)}); core from ImageBitmap ${preprocess.coreFromBitmapMedianMs.toFixed(3)} ms (ratio ${preprocess.ratioFromBitmap.toFixed(2)})`);
	log(`tensor sha256 core ${preprocess.tensorSha256}, seed ${preprocess.seedTensorSha256}`);
	const imageInput = await benchmarkImageInput();
	for (const [name, figure] of Object.entries(imageInput.files)) {
		log(`image input ${name} (${figure.decode}): core ${figure.coreMedianMs.toFixed(2)} ms, seed ${figure.seedMedianMs.toFixed(2)} ms, former ${figure.formerMedianMs.toFixed(2)} ms; core/seed ${figure.ratio.toFixed(2)} (target <= 1.0; p10 ${figure.ratioP10.toFixed(2)}), former/seed ${figure.formerRatio.toFixed(2)} (p10 ${figure.formerRatioP10.toFixed(2)}); the browser's decode alone ${figure.decodeOnlyMedianMs.toFixed(2)} ms, ${figure.decodeOnlyRatio.toFixed(2)}× the seed's whole path`);
	}
	const result = {
		runId,
		page: "bench/core",
		environment: { userAgent: navigator.userAgent, crossOriginIsolated },
		choose,
		preprocess,
		imageInput,
	};
	log(`SUITE_RESULT ${JSON.stringify(result)}`);
	await report(result);
};

await runPage(run);
