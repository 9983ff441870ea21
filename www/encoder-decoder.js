// @ts-check
// What an imported encoder-decoder model (manifest `family: "encoder-decoder"`)
// needs of the page beside its sessions: the Hugging Face tokenizer, from the
// second wasm module (pkg-hf/, imported here only, so the built-in model's runs
// never load it), and the ViT image processor of its preprocessor_config.json
// (the core's VitImageProcessor). Both files are named by the manifest's
// encoderDecoder section, relative to the manifest.
import { messageOf } from "../browser/errors.js";
import { VitImageProcessor, vitImageTensor } from "../pkg/ocr_bench_core.js";
import { fetchImage } from "./images.js";
import { fetchText, sameOrigin } from "./manifest.js";

/**
 * The tokenizer and the image processor of `manifest` (loadManifest's, with
 * its url). Returns { decodeText(ids), loadPixels(testCase, set) }: the reading's
 * text (special tokens skipped, as transformers' batch_decode) and a case's
 * pixel_values [1, 3, S, S].
 */
export async function loadEncoderDecoder(manifest) {
	const section = manifest.encoderDecoder;
	const fileUrl = (path, what) => sameOrigin(path, what, manifest.url);
	const hf = await import("../pkg-hf/ocr_bench_hf.js");
	await hf.default();
	const tokenizerUrl = fileUrl(section.tokenizer, "tokenizer (encoderDecoder.tokenizer)");
	let tokenizer;
	try {
		tokenizer = hf.HfTokenizer.fromJson(await fetchText(tokenizerUrl, "tokenizer"));
	} catch (error) {
		throw new Error(`The tokenizer ${tokenizerUrl} is refused: ${messageOf(error)}`, { cause: error });
	}
	const preprocessorUrl = fileUrl(section.preprocessor, "image processor (encoderDecoder.preprocessor)");
	let processor;
	try {
		processor = new VitImageProcessor(await fetchText(preprocessorUrl, "image processor"));
	} catch (error) {
		throw new Error(`The image processor ${preprocessorUrl} is refused: ${messageOf(error)}`, { cause: error });
	}
	return {
		/** @param {number[]} ids */
		decodeText: (ids) => tokenizer.decode(Uint32Array.from(ids), true),
		async loadPixels(testCase, set) {
			try {
				return await vitImageTensor(await fetchImage(testCase.imageUrl), processor);
			} catch (error) {
				throw new Error(`Case ${testCase.id} of the evaluation set "${set}": the image ${testCase.imageUrl} ${messageOf(error)}`, { cause: error });
			}
		},
	};
}
