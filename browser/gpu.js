// @ts-check
// The WebGPU device this harness hands to onnxruntime-web, and the words for
// what the adapter cannot do. Shared by the page and the workers.

import { ORT_VERSION } from "./ort.js";
import { deviceNeeds } from "./ort-device-needs.js";

/**
 * The limits a record keeps: the buffer sizes that bound a model, and every one
 * the device is created with (which differ between a GPU and SwiftShader).
 * @returns {string[]}
 */
const recordedLimits = () => [...new Set(["maxStorageBufferBindingSize", "maxBufferSize", ...deviceNeeds(ORT_VERSION).limits])];

/** The adapter, or a plain-words error when WebGPU is missing. */
export async function requestGpuAdapter() {
	if (!globalThis.navigator?.gpu) {
		throw new Error(
			"This browser exposes no WebGPU (navigator.gpu is missing). In Chromium start it with --enable-unsafe-webgpu; in Firefox set dom.webgpu.enabled and gfx.webgpu.ignore-blocklist to true.",
		);
	}
	const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
	if (!adapter) throw new Error("WebGPU is present but gave no adapter (navigator.gpu.requestAdapter() returned null).");
	return adapter;
}

/** A device on that adapter with what this realm's ORT would have asked for itself. */
export async function createDevice(adapter) {
	const { features, limits } = deviceNeeds(ORT_VERSION);
	const requiredFeatures = features.filter((feature) => adapter.features.has(feature));
	const requiredLimits = Object.fromEntries(limits.filter((name) => name in adapter.limits).map((name) => [name, adapter.limits[name]]));
	const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
	device.lost.then((info) => {
		if (info.reason !== "destroyed") console.error(`WebGPU device lost (${info.reason}): ${info.message}`);
	});
	return device;
}

// The software rasterisers a browser may fall back to (Chromium: SwiftShader;
// Firefox on Mesa: lavapipe, which names itself llvmpipe), by the names their
// adapter info carries.
const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|software|microsoft basic render/i;

/** true: a software adapter; false: a GPU; null: the browser does not say. */
function isSoftwareAdapter(info, adapter) {
	const fallback = info.isFallbackAdapter ?? adapter.isFallbackAdapter;
	const names = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(" ");
	if (fallback === true || SOFTWARE_ADAPTER.test(names)) return true;
	return fallback === false || names ? false : null;
}

/** What the records say about the adapter: enough to tell machines apart. */
export function describeAdapter(adapter) {
	const info = adapter.info ?? {};
	return {
		// The spec moved this from the adapter to adapter.info; a browser with
		// neither gives null (unknown), kept apart from false.
		isFallbackAdapter: info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? null,
		software: isSoftwareAdapter(info, adapter),
		vendor: info.vendor ?? "",
		architecture: info.architecture ?? "",
		device: info.device ?? "",
		description: info.description ?? "",
		features: [...adapter.features].sort(),
		limits: Object.fromEntries(
			recordedLimits()
				.filter((name) => name in adapter.limits)
				.map((name) => [name, adapter.limits[name]]),
		),
	};
}

/** Refuses a model whose manifest entry needs features this device lacks. */
export function checkRequirements(adapter, role, name, requires = []) {
	const missing = requires.filter((feature) => !adapter.features.has(feature));
	if (missing.length) {
		throw new Error(
			`The ${role} "${name}" needs the WebGPU feature${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which this WebGPU adapter does not offer (${adapter.info?.vendor || "unknown vendor"} ${adapter.info?.architecture || ""}; in Chromium, SwiftShader has no shader-f16). Refusing to load it. Choose a variant without it, or a browser/GPU that has it.`,
		);
	}
}

/**
 * A buffer a gpu-buffer tensor can live in and be copied to and from, sized as
 * onnxruntime-web sizes its own (16-byte granules, at least one).
 */
export function createTensorBuffer(device, label, bytes) {
	const size = Math.max(16, Math.ceil(bytes / 16) * 16);
	return device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
}
