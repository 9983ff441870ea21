// @ts-check
// The model manifest (docs/architecture.md, "Model manifest"): which files a
// configuration uses and the capability numbers they must agree with. Paths
// in it are relative to the manifest's own URL.
import { messageOf } from "../browser/errors.js";

/**
 * A URL on the serving origin, or an error naming what is allowed: the page
 * fetches the manifest and every file it lists, and a benchmark never reaches
 * the network on its own.
 */
/**
 * @param {string} url
 * @param {string} what
 * @param {string | URL} [base]
 */
export function sameOrigin(url, what, base = self.location.href) {
	const resolved = new URL(url, base);
	if (resolved.origin !== self.location.origin) {
		throw new Error(
			`The ${what} ${resolved.href} is not on the serving origin ${self.location.origin}; allowed: a path on this server, such as /models/manifest.json (a benchmark never reaches the network on its own).`,
		);
	}
	return resolved.href;
}

export async function fetchText(url, what) {
	let response;
	try {
		response = await fetch(url);
	} catch (error) {
		throw new Error(`Could not fetch the ${what} at ${url}: ${messageOf(error)}`);
	}
	if (!response.ok)
		throw new Error(
			`Could not fetch the ${what} at ${url}: HTTP ${response.status}${response.status === 404 ? " (not built yet? see README.md)" : ""}`,
		);
	return await response.text();
}

async function fetchJson(url, what) {
	const text = await fetchText(url, what);
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new Error(`The ${what} at ${url} is not valid JSON: ${messageOf(error)}`);
	}
}

/**
 * The manifest `config.manifest` names, read by the core (`checkManifest`, the boundary over
 * crate/src/manifest.rs), the one reading the runner makes too: every field with its type, the
 * variant names, the capability against the core's preprocessing and logits, and the config's
 * tier, decoder, maxTokens, capture and verify against it. Returns it with its URL.
 */
export async function loadManifest(config, checkManifest) {
	const url = sameOrigin(config.manifest, "model manifest (manifest=)");
	const text = await fetchText(url, "model manifest");
	let manifest;
	try {
		manifest = checkManifest(text, config);
	} catch (error) {
		throw new Error(`The model manifest ${url} is refused: ${messageOf(error)}`);
	}
	return { ...manifest, url };
}

/**
 * The resolved files of one vision tier or decoder variant for the chosen weights, with the
 * properties the realms check (requires, fixedKv, kvSharedInPlace) and its graph's I/O names. The
 * core has checked that the variant exists and, for weights=external, that it has that form.
 */
export function modelEntry(manifest, role, name, weights) {
	const entry = manifest[role][name];
	const resolve = (path) => sameOrigin(path, `${role} "${name}" file`, manifest.url);
	/** The files of one graph (the entry's, or an encoder-decoder pair's withPast) in the chosen form. */
	const filesOf = (graph) => {
		if (weights !== "external") return { url: resolve(graph.embedded) };
		// The core refuses weights=external for a variant without the external form.
		if (!graph.external) throw new Error(`The ${role} "${name}" of the manifest has no external-data form.`);
		const dataUrl = resolve(graph.external.data);
		return { url: resolve(graph.external.model), external: { path: dataUrl.split("/").pop(), url: dataUrl } };
	};
	return {
		name,
		description: entry.description ?? name,
		requires: entry.requires,
		fixedKv: Boolean(entry.fixedKv),
		kvSharedInPlace: Boolean(entry.kvSharedInPlace),
		inputs: entry.inputs,
		outputs: entry.outputs,
		model: filesOf(entry),
		// An encoder-decoder's pair form: the graph of every step after the first.
		withPast: entry.withPast ? { model: filesOf(entry.withPast), inputs: entry.withPast.inputs, outputs: entry.withPast.outputs } : null,
	};
}

/** The vocabulary characters, checked against the manifest's capability. */
export async function loadVocabulary(manifest) {
	if (!manifest.vocab)
		throw new Error(
			`The manifest ${manifest.url} names no vocab file (its family is ${manifest.family ?? "prefix"}); the prefix decoder's loop needs one.`,
		);
	const url = sameOrigin(manifest.vocab, "vocabulary", manifest.url);
	const characters = await fetchJson(url, "vocabulary");
	if (!Array.isArray(characters)) throw new Error(`The vocabulary ${url} is not a JSON array of characters.`);
	const ids = characters.length + manifest.tokens.vocabOffset;
	if (ids !== manifest.capability.vocabulary) {
		throw new Error(
			`The vocabulary ${url} has ${characters.length} entries (${ids} ids with ${manifest.tokens.vocabOffset} special ones), but the manifest's capability.vocabulary says ${manifest.capability.vocabulary}.`,
		);
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
		if (entry.style !== undefined && typeof entry.style !== "string") {
			throw new Error(
				`Case ${index} of the evaluation set "${name}" has a "style" that is not a string (it names the kind of crop, for accuracy per style).`,
			);
		}
		return {
			id: String(entry.id ?? index + 1),
			expected,
			style: entry.style ?? null,
			imageUrl: sameOrigin(entry.image, `image of case ${index} of the evaluation set "${name}"`, base),
		};
	});
}
