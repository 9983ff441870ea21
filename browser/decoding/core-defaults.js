// @ts-check
// The core's JSON form of a config leaves a few parameters out at their
// defaults (choose, sync, capture, realm: older records stay as they were).
// Code that reads them takes the default from the core's own parameter table
// here, so no default is written down a second time in JavaScript. The realm
// must have called the core's init() first.
import { parameters } from "../../pkg/ocr_bench_core.js";

/** `config` (as core.parseConfig gave it) with every left-out parameter at the core's default. */
export function withCoreDefaults(config) {
	const full = { ...config };
	for (const parameter of parameters()) {
		if (parameter.name in full) continue;
		const numeric = parameter.kind === "integer" || parameter.kind === "decimal";
		full[parameter.name] = numeric ? Number(parameter.default) : parameter.default;
	}
	return full;
}
