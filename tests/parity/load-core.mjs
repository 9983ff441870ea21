// Loads the wasm builds of the core (pkg/ and the imported model's pkg-hf/,
// made by scripts/build-wasm) and the vocabulary into Node, the same files the
// page uses.
import { existsSync, readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

/** One wasm-pack `--target web` module: its glue with the module bytes given (initSync), not fetched. */
const loadModule = async (folder, name) => {
	const glue = new URL(`${folder}/${name}.js`, root);
	const binary = new URL(`${folder}/${name}_bg.wasm`, root);
	for (const file of [glue, binary]) {
		if (!existsSync(file)) {
			throw new Error(`${file.pathname} is missing: build the core first (scripts/build-wasm)`);
		}
	}
	const module = await import(glue.href);
	module.initSync({ module: readFileSync(binary) });
	return module;
};

export const loadCore = () => loadModule("pkg", "ocr_bench_core");

/** The imported model's module: HfTokenizer and specialIds. */
export const loadHfCore = () => loadModule("pkg-hf", "ocr_bench_hf");

export const loadVocabulary = () => JSON.parse(readFileSync(new URL("models/vocab.json", root), "utf8"));
