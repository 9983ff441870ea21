// Checks that the core's preprocessing gave the same tensor, bit for bit, in
// every browser that ran bench/core/index.html and in Node: the SHA-256 each
// page run recorded against the one computed here from the same input.
// Usage: node bench/core/check-tensor-hashes.mjs RESULTS.jsonl
// (the file `ocr-bench run --page bench/core/index.html --results RESULTS.jsonl`
// appended to). Exit status 1 when a hash differs or no page result is found.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadCore } from "../../tests/parity/load-core.mjs";
import { IMAGE_HEIGHT, IMAGE_WIDTH, sampleImage } from "./workload.mjs";

const [resultsPath] = process.argv.slice(2);
if (!resultsPath) {
	console.error("usage: node bench/core/check-tensor-hashes.mjs RESULTS.jsonl");
	process.exit(2);
}

const latestByBrowser = new Map();
for (const line of readFileSync(resultsPath, "utf8").split("\n")) {
	if (!line.trim()) continue;
	const record = JSON.parse(line);
	if (record.kind === "result" && record.summary?.page === "bench/core") latestByBrowser.set(record.browser?.name ?? String(record.browser), record.summary);
}
if (latestByBrowser.size === 0) {
	console.error(`${resultsPath} holds no result of bench/core/index.html`);
	process.exit(1);
}

const core = await loadCore();
const tensor = core.preprocess(sampleImage(), IMAGE_WIDTH, IMAGE_HEIGHT);
const nodeHash = createHash("sha256").update(new Uint8Array(tensor.buffer, tensor.byteOffset, tensor.byteLength)).digest("hex");

let differs = false;
console.log(`node      core ${nodeHash}`);
for (const [browser, summary] of latestByBrowser) {
	const { tensorSha256, fromBitmapTensorSha256, seedTensorSha256 } = summary.preprocess;
	const same = tensorSha256 === nodeHash && fromBitmapTensorSha256 === nodeHash;
	differs ||= !same;
	console.log(`${browser.padEnd(9)} core ${tensorSha256} ${same ? "same" : "DIFFERS"}; from its ImageBitmap ${fromBitmapTensorSha256 === nodeHash ? "same" : "DIFFERS"}; seed's canvas ${seedTensorSha256}`);
}
process.exit(differs ? 1 : 0);
