// Loads the wasm build of the core (pkg/, made by scripts/build-wasm) and
// the vocabulary into Node, the same files the page uses.
import { existsSync, readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);
const glue = new URL("pkg/ocr_bench_core.js", root);
const binary = new URL("pkg/ocr_bench_core_bg.wasm", root);

export const loadCore = async () => {
	for (const file of [glue, binary]) {
		if (!existsSync(file)) {
			throw new Error(`${file.pathname} is missing: build the core first (scripts/build-wasm)`);
		}
	}
	const core = await import(glue.href);
	// `--target web` glue: initSync takes the module bytes instead of fetching them.
	core.initSync({ module: readFileSync(binary) });
	return core;
};

export const loadVocabulary = () => JSON.parse(readFileSync(new URL("models/vocab.json", root), "utf8"));
