// The WebGPU device this harness hands to onnxruntime-web, and the words for
// what the adapter cannot do. Shared by the page and the vision worker.

// What ORT 1.30 asks for when it creates its own device
// (onnxruntime/core/providers/webgpu/webgpu_context.h, GetAvailableRequiredFeatures
// and GetRequiredLimits): these features where the adapter has them, these
// limits raised to the adapter's. A device we create must match, or kernels
// that ORT sizes from the limits fail validation.
const WANTED_FEATURES = ["shader-f16", "timestamp-query", "subgroups"];
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

/** The adapter, or a plain-words error when WebGPU is missing. */
export async function requestGpuAdapter() {
	if (!globalThis.navigator?.gpu) {
		throw new Error("This browser exposes no WebGPU (navigator.gpu is missing). In Chromium start it with --enable-unsafe-webgpu; in Firefox set dom.webgpu.enabled and gfx.webgpu.ignore-blocklist to true.");
	}
	const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
	if (!adapter) throw new Error("WebGPU is present but gave no adapter (navigator.gpu.requestAdapter() returned null).");
	return adapter;
}

/** A device on that adapter with what ORT would have asked for itself. */
export async function createDevice(adapter) {
	const requiredFeatures = WANTED_FEATURES.filter((feature) => adapter.features.has(feature));
	const requiredLimits = Object.fromEntries(RAISED_LIMITS.filter((name) => name in adapter.limits).map((name) => [name, adapter.limits[name]]));
	const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
	device.lost.then((info) => {
		if (info.reason !== "destroyed") console.error(`WebGPU device lost (${info.reason}): ${info.message}`);
	});
	return device;
}

/** What the records say about the adapter: enough to tell machines apart. */
export function describeAdapter(adapter) {
	const info = adapter.info ?? {};
	return {
		vendor: info.vendor ?? "",
		architecture: info.architecture ?? "",
		device: info.device ?? "",
		description: info.description ?? "",
		features: [...adapter.features].sort(),
		limits: {
			maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
			maxBufferSize: adapter.limits.maxBufferSize,
			maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
			maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
			maxComputeInvocationsPerWorkgroup: adapter.limits.maxComputeInvocationsPerWorkgroup,
		},
	};
}

/** Refuses a model whose manifest entry needs features this device lacks. */
export function checkRequirements(adapter, role, name, requires = []) {
	const missing = requires.filter((feature) => !adapter.features.has(feature));
	if (missing.length) {
		throw new Error(`The ${role} "${name}" needs the WebGPU feature${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which this WebGPU adapter does not offer (${adapter.info?.vendor || "unknown vendor"} ${adapter.info?.architecture || ""}; in Chromium, SwiftShader has no shader-f16). Refusing to load it. Choose a variant without it, or a browser/GPU that has it.`);
	}
}

/**
 * ORT's own errors rewritten where the cause is known, the original kept
 * behind. Measured on SwiftShader (no shader-f16): an fp16 graph fails at
 * session creation ("Program Transpose requires f16 but the device does not
 * support it") or, for a Cast, only at the first run ("Program Cast requires
 * f16 …" from OrtRun).
 */
export function explainOrtError(error, what) {
	const message = String(error?.message ?? error);
	const f16 = /Program (\w+) requires f16 but the device does not support it/.exec(message);
	if (f16) {
		return withCause(`${what ? `${what}: ` : ""}this graph computes in fp16 (its ${f16[1]} kernel needs 16-bit floats), but the WebGPU device has no "shader-f16" feature. Use a variant without fp16 or an adapter that offers shader-f16. (onnxruntime-web said: ${message})`, error);
	}
	if (/HTTP \d+|Failed to fetch|failed to load external data/i.test(message)) {
		return withCause(`${what ? `${what}: ` : ""}a model file could not be fetched (${message}). Are the models built (models/generated/) and the manifest paths right?`, error);
	}
	return what ? withCause(`${what}: ${message}`, error) : error;
}

function withCause(message, cause) {
	const error = new Error(message, { cause });
	if (cause?.stack) error.stack = `${error.name}: ${message}\n${cause.stack}`;
	return error;
}
