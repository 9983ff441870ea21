// Runs one wasm32-wasip1 test binary under Node's WASI: cargo's runner for the
// core's unit tests built as WASM with SIMD (scripts/test-core-wasm).
// Usage: node tests/wasm-core/run-wasi.mjs TEST.wasm [test args...]
import { readFileSync } from "node:fs";
import { WASI } from "node:wasi";

const [file, ...args] = process.argv.slice(2);
if (!file) {
	console.error("usage: node tests/wasm-core/run-wasi.mjs TEST.wasm [args...]");
	process.exit(2);
}
const wasi = new WASI({ version: "preview1", args: [file, ...args], env: process.env, returnOnExit: true });
const { instance } = await WebAssembly.instantiate(readFileSync(file), wasi.getImportObject());
process.exitCode = wasi.start(instance);
