// @ts-check
// What onnxruntime-web's WebGPU kernels need of the device, and how a session
// is given the realm's device: facts of the runtime, kept per version (ort=;
// beside them, crate/src/runtime.rs holds what its WASM provider cannot run,
// and a test there holds this file to its list of versions, so a new
// onnxruntime-web makes both be read again).
//
// features, limits: what ORT asks for when it creates its own device
// (onnxruntime/core/providers/webgpu/webgpu_context.cc, GetAvailableRequiredFeatures
// and GetRequiredLimits): these features where the adapter has them, these
// limits raised to the adapter's. A device we create must match, or kernels
// that ORT sizes from the limits fail validation.
//
// handOver: how a session gets the realm's device.
// - "session": as { name: "webgpu", device } in the session's options; 1.30
//   registers it under a WebGPU context of its own (ids from 1).
// - "adopted": 1.31 attaches the provider through the EP-device API
//   (_OrtGetEpDevices + _OrtAppendExecutionProviderV2), whose allocator and
//   data transfer are for context 0 only, so a device given per session fails
//   ("Failed to find allocator for device … DeviceId:0"; onnxruntime #32227
//   and #32257). The session names no device, and when context 0 asks the
//   adapter for one, it is handed the realm's (adoptRealmDevice below).
const RAISED_LIMITS = [
	"maxBindGroups",
	"maxComputeWorkgroupStorageSize",
	"maxComputeWorkgroupsPerDimension",
	"maxStorageBufferBindingSize",
	"maxBufferSize",
	"maxComputeInvocationsPerWorkgroup",
	"maxComputeWorkgroupSizeX",
	"maxComputeWorkgroupSizeY",
	"maxComputeWorkgroupSizeZ",
	// Not raised by ORT itself, but SwiftShader offers 10 against the default 8
	// and attention kernels bind up to 9 storage buffers.
	"maxStorageBuffersPerShaderStage",
];

/** Every onnxruntime-web version the page loads, by its version string. */
export const ORT_DEVICE_NEEDS = {
	"1.30.0": { features: ["shader-f16", "timestamp-query", "subgroups"], limits: RAISED_LIMITS, handOver: "session" },
	// 1.31.1 also asks for subgroup-size-control where the adapter has it: Chromium's
	// SwiftShader does, and an adopted device made without it was refused ("asked for a
	// device with feature subgroup-size-control"); Firefox's adapter on lavapipe offers neither
	// subgroup feature. Chromium on an NVIDIA H100 also offers
	// chromium-experimental-subgroup-matrix, which 1.31.1 then asks for (its MatMulNBits and
	// flash-attention kernels). Were it to ask for more, adoptRealmDevice refuses it in words.
	"1.31.1": {
		features: ["shader-f16", "timestamp-query", "subgroups", "subgroup-size-control", "chromium-experimental-subgroup-matrix"],
		limits: RAISED_LIMITS,
		handOver: "adopted",
	},
};

/**
 * The needs of one version, or an error naming the versions this file knows.
 * @param {string} version
 * @returns {{ features: string[], limits: string[], handOver: "session" | "adopted" }}
 */
export function deviceNeeds(version) {
	const needs = ORT_DEVICE_NEEDS[version];
	if (!needs)
		throw new Error(
			`onnxruntime-web ${version} has no device needs in browser/ort-device-needs.js (known: ${Object.keys(ORT_DEVICE_NEEDS).join(", ")}).`,
		);
	return needs;
}

// The device context 0 of this realm's onnxruntime-web is handed, while a
// session that adopts it is being created; null otherwise, so that the
// harness's own requestDevice calls are left alone.
/** @type {GPUDevice | null} */
let adopting = null;

/**
 * What ORT asked for that `device` lacks, in words, or null.
 * @param {GPUDevice} device
 * @param {GPUDeviceDescriptor | undefined} descriptor
 * @returns {string | null}
 */
function unmetRequest(device, descriptor) {
	const features = [...(descriptor?.requiredFeatures ?? [])].filter((feature) => !device.features.has(feature));
	const limits = Object.entries(descriptor?.requiredLimits ?? {}).filter(
		([name, wanted]) => typeof wanted === "number" && (name.startsWith("min") ? device.limits[name] > wanted : device.limits[name] < wanted),
	);
	const missing = [
		...features.map((feature) => `feature ${feature}`),
		...limits.map(([name, wanted]) => `${name} ${wanted} (the device has ${device.limits[name]})`),
	];
	return missing.length ? missing.join(", ") : null;
}

let adapterHooked = false;

/** Installs, once per realm, the hook through which ORT's context 0 gets the adopted device. */
function hookAdapter() {
	if (adapterHooked) return;
	adapterHooked = true;
	const requestDevice = GPUAdapter.prototype.requestDevice;
	GPUAdapter.prototype.requestDevice = function (descriptor) {
		if (!adopting) return requestDevice.call(this, descriptor);
		const unmet = unmetRequest(adopting, descriptor);
		if (unmet)
			return Promise.reject(
				new Error(
					`onnxruntime-web asked for a device with ${unmet}, which the realm's device was not made with: browser/ort-device-needs.js is out of date for this version.`,
				),
			);
		return Promise.resolve(adopting);
	};
}

/**
 * Runs create() (a session's creation) with ORT's context 0 handed `device`
 * should it ask for one; the first session of a realm makes it ask.
 * @template T
 * @param {GPUDevice | undefined} device
 * @param {() => Promise<T>} create
 * @returns {Promise<T>}
 */
export async function adoptRealmDevice(device, create) {
	if (!device) throw new Error("A WebGPU session that adopts the realm's device was given none.");
	hookAdapter();
	adopting = device;
	try {
		return await create();
	} finally {
		adopting = null;
	}
}
