// @ts-check
// GPU bytes as the device sees them: the page and the workers wrap the
// GPUDevice they hand to onnxruntime-web (per session with 1.30, adopted as its
// own device with 1.31: browser/ort-device-needs.js; the same object either
// way, so both versions are counted alike). The native WebGPU EP allocates every
// buffer through that device's createBuffer and frees it with destroy()
// (read in onnxruntime-web 1.30), so live and peak bytes are exact for
// buffers; textures (ORT's compute kernels make none) are counted by their
// size as created. On a real GPU this memory is not in any process's RSS.
//
// A buffer dropped without destroy() stays live until it is garbage
// collected; a FinalizationRegistry notices that, so no strong reference is
// kept here.

const KINDS = ["storage", "uniform", "mapped", "copy", "other"];

function kindOf(usage) {
	if (usage & (GPUBufferUsage.MAP_READ | GPUBufferUsage.MAP_WRITE)) return "mapped";
	if (usage & GPUBufferUsage.UNIFORM) return "uniform";
	if (usage & GPUBufferUsage.STORAGE) return "storage";
	if (usage & (GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST)) return "copy";
	return "other";
}

// Bytes per texel of the formats a compute library might use; others count 4.
const TEXEL_BYTES = {
	r8unorm: 1,
	rg8unorm: 2,
	r16float: 2,
	r32float: 4,
	rgba8unorm: 4,
	bgra8unorm: 4,
	rg32float: 8,
	rgba16float: 8,
	rgba32float: 16,
};

function textureBytes({ size, format, mipLevelCount = 1, sampleCount = 1 }) {
	const [width, height = 1, depth = 1] = Array.isArray(size) ? size : [size.width, size.height ?? 1, size.depthOrArrayLayers ?? 1];
	let bytes = 0;
	for (let level = 0; level < mipLevelCount; level += 1) bytes += Math.max(1, width >> level) * Math.max(1, height >> level) * depth;
	return bytes * (TEXEL_BYTES[format] ?? 4) * sampleCount;
}

/** @typedef {ReturnType<typeof trackGpuMemory>} GpuMemoryTracker */

/** Wraps device in place; returns { snapshot(), takePeak() }. */
export function trackGpuMemory(device) {
	const live = Object.fromEntries([...KINDS, "texture"].map((kind) => [kind, 0]));
	let liveBytes = 0;
	let peakBytes = 0;
	let windowPeak = 0;
	let created = 0;
	let destroyed = 0;
	let collected = 0;
	// The records (sizes and kinds), never the GPU objects themselves.
	const records = new Set();
	const add = (record) => {
		records.add(record);
		live[record.kind] += record.bytes;
		liveBytes += record.bytes;
		peakBytes = Math.max(peakBytes, liveBytes);
		windowPeak = Math.max(windowPeak, liveBytes);
		created += 1;
	};
	const remove = (record) => {
		if (record.gone) return;
		record.gone = true;
		records.delete(record);
		live[record.kind] -= record.bytes;
		liveBytes -= record.bytes;
	};
	const finalizer = new FinalizationRegistry((record) => {
		if (!record.gone) collected += 1;
		remove(record);
	});
	const track = (object, record) => {
		add(record);
		finalizer.register(object, record);
		const destroy = object.destroy.bind(object);
		object.destroy = () => {
			if (!record.gone) destroyed += 1;
			remove(record);
			destroy();
		};
		return object;
	};
	const createBuffer = device.createBuffer.bind(device);
	device.createBuffer = (descriptor) => track(createBuffer(descriptor), { bytes: descriptor.size, kind: kindOf(descriptor.usage), gone: false });
	const createTexture = device.createTexture.bind(device);
	device.createTexture = (descriptor) => track(createTexture(descriptor), { bytes: textureBytes(descriptor), kind: "texture", gone: false });
	let deviceDestroyed = false;
	const destroyDevice = device.destroy.bind(device);
	device.destroy = () => {
		// Destroying the device frees everything made on it.
		deviceDestroyed = true;
		for (const record of [...records]) remove(record);
		destroyDevice();
	};
	return {
		/** What is live now, the peak so far, and the counts. */
		snapshot() {
			return {
				liveBytes,
				peakBytes,
				liveByKind: { ...live },
				created,
				destroyed,
				collected,
				deviceDestroyed,
				measuredBy: "wrapped GPUDevice.createBuffer/createTexture/destroy",
			};
		},
		/** The peak since the last call (a phase's or a sample window's), then a new window. */
		takePeak() {
			const peak = windowPeak;
			windowPeak = liveBytes;
			return peak;
		},
	};
}
