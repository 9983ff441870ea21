// @ts-check
// Evaluation images to the vision input, through the core's imageTensor: an
// opaque 8-bit PNG is decoded in WASM, any other file by the browser
// (createImageBitmap with no premultiplication and no colour conversion, a 1:1
// drawImage, getImageData), then the core's preprocess. Either way the tensor
// is the one the browser's decode alone gave (tests/image-input/ checks it).

import { messageOf } from "../browser/errors.js";
import { imageTensor } from "../pkg/ocr_bench_core.js";

export async function fetchImage(url) {
	let response;
	try {
		response = await fetch(url);
	} catch (error) {
		throw new Error(`could not be fetched (${messageOf(error)})`, { cause: error });
	}
	if (!response.ok) throw new Error(`could not be fetched: HTTP ${response.status}`);
	return response.blob();
}

/**
 * The vision input of one case: testCase { id, imageUrl }, set the evaluation
 * set's name -> Float32Array(3*224*224). The core must be initialised. A
 * failure names the case, the set and the file.
 */
export async function loadPixels(testCase, set) {
	try {
		return await imageTensor(await fetchImage(testCase.imageUrl));
	} catch (error) {
		throw new Error(`Case ${testCase.id} of the evaluation set "${set}": the image ${testCase.imageUrl} ${messageOf(error)}`, { cause: error });
	}
}
