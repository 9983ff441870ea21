// @ts-check
// The page's side of the probe cache (docs/benchmark-protocol.md, "The probe
// cache"): the runner keeps each measured completion floor beside the results
// and offers the kept ones at PROBE_CACHE_PATH (the run's secret cookie says
// who asks, so no query parameter carries them). The page builds the key of
// each realm from the runner's part and what it sees itself, and reuses a
// floor only where a kept key equals it in every field; anything else, or no
// offer, measures.

import { messageOf } from "../browser/errors.js";

const PROBE_CACHE_PATH = "/__ocr-bench/probe-cache";

const MEASURE_ALL = (reason) => ({ reuse: false, reason, runner: null, floors: [] });

/** The runner's offer (crate/src/record/probe_cache.rs, ProbeOffer); a failed ask measures, saying why. */
export async function askProbeCache() {
	try {
		const response = await fetch(PROBE_CACHE_PATH, {
			method: "POST",
			credentials: "same-origin",
			headers: { "Content-Type": "application/json" },
			body: "{}",
		});
		if (!response.ok) return MEASURE_ALL(`the server answered ${PROBE_CACHE_PATH} with HTTP ${response.status}`);
		return await response.json();
	} catch (error) {
		return MEASURE_ALL(`asking ${PROBE_CACHE_PATH} failed: ${messageOf(error)}`);
	}
}

/** A realm's key (ProbeKey): null where no runner keeps floors (its part is unknown). */
export function probeKey(runner, adapterInfo, { poll, kickMs }, realm) {
	if (!runner) return null;
	const { vendor, architecture, device, description } = adapterInfo;
	return { ...runner, userAgent: navigator.userAgent, adapter: { vendor, architecture, device, description }, poll, kickMs: kickMs ?? null, realm };
}

/** JSON with every object's fields in one order, so that equal keys are equal text whoever wrote them. */
function canonical(value) {
	if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
	if (value && typeof value === "object") {
		return `{${Object.keys(value)
			.sort()
			.map((name) => `${JSON.stringify(name)}:${canonical(value[name])}`)
			.join(",")}}`;
	}
	return JSON.stringify(value ?? null);
}

/** The kept floor whose key equals `key` in every field, or null. */
export function keptFloor(offer, key) {
	if (!offer.reuse || !key) return null;
	const wanted = canonical(key);
	return offer.floors.find((kept) => canonical(kept.key) === wanted) ?? null;
}

/** A kept floor as the record's rounds, saying it was reused and where it was measured. */
export function reusedRounds(kept) {
	return {
		...kept.rounds,
		source: { origin: "reused", key: kept.key, measuredAt: kept.measuredAt, ...(kept.measuredRunId ? { measuredRunId: kept.measuredRunId } : {}) },
	};
}

/** Measured rounds with the key the runner keeps them under. */
export function measuredRounds(rounds, key) {
	return { ...rounds, source: { origin: "measured", key } };
}
