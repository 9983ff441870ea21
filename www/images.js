// Evaluation images to the vision input. The browser only decodes: the PNG
// becomes RGBA at its natural size with no premultiplication and no colour
// conversion, so the core's preprocess (resize, normalise, CHW) sees the same
// bytes that Python's Pillow does.

export async function loadRgba(url) {
	const response = await fetch(url);
	if (!response.ok) throw new Error(`Could not fetch the image ${url}: HTTP ${response.status}`);
	const bitmap = await createImageBitmap(await response.blob(), { premultiplyAlpha: "none", colorSpaceConversion: "none" });
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

/** preprocess: the core's preprocess(rgba, width, height) -> Float32Array(3*224*224). */
export async function loadPixels(url, preprocess) {
	const { rgba, width, height } = await loadRgba(url);
	return preprocess(rgba, width, height);
}
