// @ts-check
// onnxruntime-web's native WebGPU build (the C++ WebGPU EP, package export
// "./webgpu"), pinned by package.json and served from node_modules. It loads
// ort-wasm-simd-threaded.asyncify.{mjs,wasm} from wasmPaths. The default
// export (JSEP) is not used: it dequantizes per-tensor int8 wrongly and
// returns zeros for fp16 graphs on adapters without shader-f16.
import * as ort from "/node_modules/onnxruntime-web/dist/ort.webgpu.min.mjs";
import { installConsoleTap } from "./ort-profile.js";
import { installWasmMemoryTap } from "./wasm-memory.js";

// Before any session: ORT binds the console when its WASM starts (profile=ops
// reads it), and its heap is noted as it is instantiated (as is the core's,
// which the page starts after its imports).
installConsoleTap();
installWasmMemoryTap();

export const ORT_DIST_URL = new URL("/node_modules/onnxruntime-web/dist/", self.location.href).href;

ort.env.wasm.wasmPaths = ORT_DIST_URL;
// As the seed: one WASM thread, so CPU-side kernels do not compete with the
// browser's GPU process for this machine's two cores.
ort.env.wasm.numThreads = 1;
ort.env.logLevel = "error";

export const ORT_VERSION = ort.env.versions?.web ?? "unknown";

export { ort };
