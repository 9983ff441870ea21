// @ts-check
// The device-limit guard (docs/model-contract.md, "Device limits"): a variant's
// manifest `limits` against the adapter's, before any session is created. A
// kernel that binds more storage buffers than the device allows builds an
// invalid pipeline whose dispatches silently do nothing (output that differs
// each run), so a shortfall refuses the variant, or takes the `fallback` the
// manifest names for it, which the record keeps with the reason.

/** The limits in `needs` the adapter falls short of: [{ limit, need, value }]. */
export function unmetLimits(adapter, needs) {
	return Object.entries(needs ?? {}).flatMap(([limit, need]) => {
		const value = adapter.limits[limit];
		return value === undefined || value < need ? [{ limit, need, value: value ?? null }] : [];
	});
}

const inWords = (unmet) =>
	unmet
		.map(({ limit, need, value }) => `${limit}: needs ${need}, the adapter offers ${value ?? "none (the browser does not expose this limit)"}`)
		.join("; ");

const ROLE_WORDS = { vision: "vision tier", decoder: "decoder" };

/**
 * The variant of `role` ("vision" or "decoder") to load in place of `name`:
 * `name` when the adapter meets its limits, else its fallback, checked alike,
 * with each step taken as { role, asked, used, reason }; an error naming the
 * limit, the need and the adapter's value when no fallback remains.
 */
export function guardLimits(adapter, manifest, role, name) {
	const taken = [];
	let current = name;
	for (;;) {
		const entry = manifest[role][current];
		const unmet = unmetLimits(adapter, entry.limits);
		if (!unmet.length) return { name: current, taken };
		const reason = inWords(unmet);
		const fallback = entry.fallback;
		if (!fallback || !(fallback in manifest[role]) || fallback === name || taken.some((step) => step.asked === fallback)) {
			throw new Error(
				`The ${ROLE_WORDS[role]} "${current}" needs more of this WebGPU adapter than it offers (${reason}). A kernel bound past a device limit builds an invalid pipeline whose dispatches silently do nothing, so it is refused before any session is created. Choose another ${ROLE_WORDS[role]}, a GPU whose adapter offers the limit, or name a "fallback" for it in the manifest.`,
			);
		}
		taken.push({ role, asked: current, used: fallback, reason });
		current = fallback;
	}
}
