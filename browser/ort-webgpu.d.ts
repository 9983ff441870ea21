// The types of what ort.js imports by the URL the page serves onnxruntime-web's WebGPU
// build at (tsconfig.json maps that URL here): the package's own for that export.
export * from "onnxruntime-web/webgpu";
