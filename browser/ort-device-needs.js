// @ts-check
// What onnxruntime-web's WebGPU kernels need of the device, a fact of the runtime at
// the version package.json pins (beside it, crate/src/runtime.rs holds what its WASM
// provider cannot run; a test there holds this version to the pin, so a new
// onnxruntime-web makes both be read again).
export const MEASURED_WITH_ORT_WEB = "1.30.0";

// What ORT asks for when it creates its own device
// (onnxruntime/core/providers/webgpu/webgpu_context.h, GetAvailableRequiredFeatures
// and GetRequiredLimits): these features where the adapter has them, these
// limits raised to the adapter's. A device we create must match, or kernels
// that ORT sizes from the limits fail validation.
export const WANTED_FEATURES = ["shader-f16", "timestamp-query", "subgroups"];
export const RAISED_LIMITS = [
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
