// The page's image input, three ways, from the same file (a Blob):
//   seedImageTensor    the seed's whole path: createImageBitmap, drawImage to its
//                      224x224 canvas ("high" smoothing), getImageData, its loop.
//   formerImageTensor  the page's path before the core's imageTensor (www/images.js
//                      at c9e9143, verbatim): createImageBitmap with no
//                      premultiplication and no colour conversion, a 1:1 drawImage
//                      onto an OffscreenCanvas, getImageData, the core's preprocess.
//                      The reference the new path's tensor must equal bit for bit.
//   core.imageTensor   the new path (wasm/src/image_input.rs).
//   browserDecode      createImageBitmap alone, with the former path's options: no path
//                      that decodes in the browser at full size can be faster.
// Also the files the test and the benchmark make: a 1024x768 page as a PNG
// (encoded here, so that its bytes are the same in every browser), as a JPEG, and
// an RGBA PNG with transparent pixels.
import { IMAGE_HEIGHT, IMAGE_WIDTH, sampleImage } from "./workload.mjs";

export const seedImageTensor = async (seedPreprocess, file) => {
	const bitmap = await createImageBitmap(file);
	try {
		return seedPreprocess(bitmap);
	} finally {
		bitmap.close();
	}
};

// www/images.js's loadRgba before the change (fetch left out: `file` is the response's blob).
export const formerLoadRgba = async (file) => {
	let bitmap;
	try {
		bitmap = await createImageBitmap(file, { premultiplyAlpha: "none", colorSpaceConversion: "none" });
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
};

// The decode alone, at full size, as the former path and imageTensor's browser fallback ask for
// it: the floor of any path that lets the browser decode the file and keeps their tensor.
export const browserDecode = async (file) => {
	const bitmap = await createImageBitmap(file, { premultiplyAlpha: "none", colorSpaceConversion: "none" });
	bitmap.close();
};

export const formerImageTensor = async (core, file) => {
	const image = await formerLoadRgba(file);
	try {
		return core.preprocess(image.rgba, image.width, image.height);
	} catch (error) {
		throw new Error(`could not be preprocessed (${error?.message ?? error})`, { cause: error });
	}
};

export const sha256 = async (values) => {
	const digest = await crypto.subtle.digest("SHA-256", new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
	return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
};

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let bit = 0; bit < 8; bit += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});

const crc32 = (bytes) => {
	let crc = 0xffffffff;
	for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
	return (crc ^ 0xffffffff) >>> 0;
};

const chunk = (type, data) => {
	const out = new Uint8Array(12 + data.length);
	const view = new DataView(out.buffer);
	view.setUint32(0, data.length);
	out.set([...type].map((character) => character.charCodeAt(0)), 4);
	out.set(data, 8);
	view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
	return out;
};

const deflate = async (bytes) => new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());

// An 8-bit PNG of `samples` (rows of width x channels, channels 1 = grey, 3 = RGB,
// 4 = RGBA), every row with the Sub filter as encoders commonly choose for text.
export const encodePng = async (samples, width, height, channels) => {
	const colourType = { 1: 0, 3: 2, 4: 6 }[channels];
	const rowBytes = width * channels;
	const filtered = new Uint8Array(height * (rowBytes + 1));
	for (let y = 0; y < height; y += 1) {
		const row = samples.subarray(y * rowBytes, (y + 1) * rowBytes);
		const out = filtered.subarray(y * (rowBytes + 1));
		out[0] = 1;
		for (let x = 0; x < rowBytes; x += 1) out[1 + x] = (row[x] - (x >= channels ? row[x - channels] : 0)) & 0xff;
	}
	const header = new Uint8Array(13);
	const view = new DataView(header.buffer);
	view.setUint32(0, width);
	view.setUint32(4, height);
	header.set([8, colourType, 0, 0, 0], 8);
	const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
	return new Blob([signature, chunk("IHDR", header), chunk("IDAT", await deflate(filtered)), chunk("IEND", new Uint8Array())], { type: "image/png" });
};

// The benchmark's 1024x768 page (workload.mjs) as an RGB PNG, and as a grey one.
export const pagePngs = async () => {
	const rgba = sampleImage();
	const pixels = IMAGE_WIDTH * IMAGE_HEIGHT;
	const rgb = new Uint8Array(pixels * 3);
	const grey = new Uint8Array(pixels);
	for (let pixel = 0; pixel < pixels; pixel += 1) {
		rgb.set(rgba.subarray(pixel * 4, pixel * 4 + 3), pixel * 3);
		grey[pixel] = rgba[pixel * 4 + 1];
	}
	return { rgb: await encodePng(rgb, IMAGE_WIDTH, IMAGE_HEIGHT, 3), grey: await encodePng(grey, IMAGE_WIDTH, IMAGE_HEIGHT, 1) };
};

// The same page as a JPEG (the browser's encoder; the bytes may differ between browsers).
export const pageJpeg = async () => {
	const canvas = new OffscreenCanvas(IMAGE_WIDTH, IMAGE_HEIGHT);
	canvas.getContext("2d").putImageData(new ImageData(sampleImage(), IMAGE_WIDTH, IMAGE_HEIGHT), 0, 0);
	return canvas.convertToBlob({ type: "image/jpeg", quality: 0.9 });
};

// 97x61 RGBA with every alpha value: a transparent PNG the new path must leave to the browser.
export const transparentPng = async () => {
	const width = 97;
	const height = 61;
	const rgba = new Uint8Array(width * height * 4);
	for (let pixel = 0; pixel < width * height; pixel += 1) {
		rgba.set([(pixel * 7) & 0xff, (pixel * 13) & 0xff, (pixel * 29) & 0xff, pixel & 0xff], pixel * 4);
	}
	return encodePng(rgba, width, height, 4);
};
