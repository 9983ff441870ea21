// The model manifest (docs/architecture.md, "Model manifest"): which files a
// configuration uses and the capability numbers they must agree with. Paths
// in it are relative to the manifest's own URL.

/**
 * A URL on the serving origin, or an error naming what is allowed: the page
 * fetches the manifest and every file it lists, and a benchmark never reaches
 * the network on its own.
 */
export function sameOrigin(url, what, base = self.location.href) {
	const resolved = new URL(url, base);
	if (resolved.origin !== self.location.origin) {
		throw new Error(`The ${what} ${resolved.href} is not on the serving origin ${self.location.origin}; allowed: a path on this server, such as /models/manifest.json (a benchmark never reaches the network on its own).`);
	}
	return resolved.href;
}

async function fetchJson(url, what) {
	let response;
	try {
		response = await fetch(url);
	} catch (error) {
		throw new Error(`Could not fetch the ${what} at ${url}: ${error.message}`);
	}
	if (!response.ok) throw new Error(`Could not fetch the ${what} at ${url}: HTTP ${response.status}${response.status === 404 ? " (not built yet? see README.md)" : ""}`);
	try {
		return await response.json();
	} catch (error) {
		throw new Error(`The ${what} at ${url} is not valid JSON: ${error.message}`);
	}
}

const CAPABILITY_NUMBERS = ["layers", "hiddenSize", "vocabulary", "imageSize", "visionTokens", "kvSlots", "maxTokens"];

export async function loadManifest(manifestParameter) {
	const url = sameOrigin(manifestParameter, "model manifest (manifest=)");
	const manifest = await fetchJson(url, "model manifest");
	for (const key of ["vocab", "tokens", "capability", "vision", "decoder"]) {
		if (!(key in manifest)) throw new Error(`The model manifest ${url} has no "${key}" field.`);
	}
	for (const key of CAPABILITY_NUMBERS) {
		if (!Number.isInteger(manifest.capability[key])) throw new Error(`The model manifest ${url} has no integer capability.${key}.`);
	}
	return { ...manifest, url };
}

/**
 * The resolved files of one vision tier or decoder variant for the chosen weights, with the
 * properties the realms check (requires, fixedKv) and its graph's I/O names.
 */
export function modelEntry(manifest, role, name, weights) {
	const entries = manifest[role];
	const entry = entries[name];
	if (!entry) throw new Error(`The model manifest has no ${role} "${name}" (it has: ${Object.keys(entries).join(", ")}).`);
	const resolve = (path) => sameOrigin(path, `${role} "${name}" file`, manifest.url);
	let model;
	if (weights === "external") {
		if (!entry.external?.model || !entry.external?.data) throw new Error(`The model manifest's ${role} "${name}" has no external-data pair (external.model, external.data).`);
		const dataUrl = resolve(entry.external.data);
		model = { url: resolve(entry.external.model), external: { path: dataUrl.split("/").pop(), url: dataUrl } };
	} else {
		if (!entry.embedded) throw new Error(`The model manifest's ${role} "${name}" has no embedded model file.`);
		model = { url: resolve(entry.embedded) };
	}
	return { name, description: entry.description ?? name, requires: entry.requires ?? [], fixedKv: Boolean(entry.fixedKv), inputs: entry.inputs, outputs: entry.outputs, model };
}

/** The vocabulary characters, checked against the manifest's capability. */
export async function loadVocabulary(manifest) {
	const url = sameOrigin(manifest.vocab, "vocabulary", manifest.url);
	const characters = await fetchJson(url, "vocabulary");
	if (!Array.isArray(characters)) throw new Error(`The vocabulary ${url} is not a JSON array of characters.`);
	const ids = characters.length + manifest.tokens.vocabOffset;
	if (ids !== manifest.capability.vocabulary) {
		throw new Error(`The vocabulary ${url} has ${characters.length} entries (${ids} ids with ${manifest.tokens.vocabOffset} special ones), but the manifest's capability.vocabulary says ${manifest.capability.vocabulary}.`);
	}
	return characters;
}

/** An evaluation set: its cases with absolute image URLs. */
export async function loadCases(name) {
	const base = new URL(`/models/eval/${encodeURIComponent(name)}/`, self.location.href);
	const listed = await fetchJson(new URL("cases.json", base).href, `evaluation set "${name}"`);
	const cases = Array.isArray(listed) ? listed : listed.cases;
	if (!Array.isArray(cases) || cases.length === 0) throw new Error(`The evaluation set "${name}" lists no cases.`);
	return cases.map((entry, index) => {
		const expected = entry.expected ?? entry.text;
		if (typeof entry.image !== "string" || typeof expected !== "string") {
			throw new Error(`Case ${index} of the evaluation set "${name}" needs "image" and "expected" strings.`);
		}
		return { id: String(entry.id ?? index + 1), expected, imageUrl: sameOrigin(entry.image, `image of case ${index} of the evaluation set "${name}"`, base) };
	});
}
