// Evaluation images to the vision input. The browser only decodes: the PNG
// becomes RGBA at its natural size with no premultiplication and no colour
// conversion, so the core's preprocess (resize, normalise, CHW) sees the same
// bytes that Python's Pillow does.

export async function loadRgba(url) {
	let response;
	try {
		response = await fetch(url);
	} catch (error) {
		throw new Error(`could not be fetched (${error.message})`, { cause: error });
	}
	if (!response.ok) throw new Error(`could not be fetched: HTTP ${response.status}`);
	let bitmap;
	try {
		bitmap = await createImageBitmap(await response.blob(), { premultiplyAlpha: "none", colorSpaceConversion: "none" });
	} catch (error) {
		throw new Error(`could not be decoded as an image (${error.name}: ${error.message}); is it a valid PNG?`, { cause: error });
	}
	try {
		const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
		const context = canvas.getContext("2d", { willReadFrequently: true });
		context.drawImage(bitmap, 0, 0);
		const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
		return { rgba: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: bitmap.width, height: bitmap.height };
	} finally {
		bitmap.close();
	}
}

/**
 * The vision input of one case: testCase { id, imageUrl }, set the evaluation
 * set's name, preprocess the core's preprocess(rgba, width, height) ->
 * Float32Array(3*224*224). A failure names the case, the set and the file.
 */
export async function loadPixels(testCase, set, preprocess) {
	const fail = (reason, cause) => new Error(`Case ${testCase.id} of the evaluation set "${set}": the image ${testCase.imageUrl} ${reason}`, { cause });
	let image;
	try {
		image = await loadRgba(testCase.imageUrl);
	} catch (error) {
		throw fail(error.message, error);
	}
	try {
		return preprocess(image.rgba, image.width, image.height);
	} catch (error) {
		throw fail(`could not be preprocessed (${error?.message ?? error})`, error);
	}
}
