// @ts-check
// The model files checked against the contract, the manifest's I/O names and its
// capability numbers before any run, in the page and the workers: layers from the
// past_k*/past_v* inputs, the KV slot count of the fixed-KV variant, the
// vocabulary size from the logits. Nothing is assumed.
import { tensorShape } from "./sessions.js";

/** The vision encoder's tensor names, defined once: checkVisionIo holds every vision model to them. */
export const VISION_IO = Object.freeze({ pixels: "pixel_values", embeds: "vision_embeds" });

/** An imported encoder-decoder model's encoder (optimum's encoder_model.onnx): the same input, its own output. */
export const ENCODER_IO = Object.freeze({ pixels: "pixel_values", embeds: "last_hidden_state" });

/** The vision tensor names of a manifest's family ("prefix", the built-in model's, or "encoder-decoder"). */
export const visionIoOf = (family = "prefix") => (family === "encoder-decoder" ? ENCODER_IO : VISION_IO);

/**
 * The decoder's tensor names the decode loops (decoding/) feed and read, defined once:
 * checkDecoder holds every decoder to them through its manifest entry's inputs and outputs,
 * so a model with other names is refused naming the one it lacks.
 */
export const DECODER_IO = Object.freeze({
	visionEmbeds: VISION_IO.embeds,
	tokenIds: "token_ids",
	positionIds: "position_ids",
	pastLength: "past_length",
	logits: "logits",
});

/** The KV cache's tensor names: `past_k0` in, `present_k0` out, for each layer and each of k and v. */
export const CACHE_IO = Object.freeze({ past: "past_", present: "present_" });
export const cacheName = (side, kv, layer) => `${CACHE_IO[side]}${kv}${layer}`;

/** The cache input a present output feeds at the next step: present_k0 -> past_k0. */
export const pastNameOf = (presentName) => CACHE_IO.past + presentName.slice(CACHE_IO.present.length);

function indexedNames(names, prefix) {
	return names.filter((name) => new RegExp(`^${prefix}\\d+$`).test(name)).sort();
}

function staticDim(shape, index) {
	const value = shape?.[index];
	return typeof value === "number" && value > 0 ? value : null;
}

/**
 * The names of the vision contract: what a realm without the manifest can check.
 * io: the family's names (visionIoOf).
 * @param {import("onnxruntime-web").InferenceSession} session
 * @param {{ pixels: string, embeds: string }} [io]
 */
export function checkVisionIo(session, io = VISION_IO) {
	if (JSON.stringify(session.inputNames) !== JSON.stringify([io.pixels]) || !session.outputNames.includes(io.embeds)) {
		throw new Error(
			`The vision model has inputs [${session.inputNames}] and outputs [${session.outputNames}]; the contract is ${io.pixels} -> ${io.embeds}.`,
		);
	}
}

/** manifest: its family, capability and (encoder-decoder) encoderHidden, which the output's width must be. */
export function checkVision(session, manifest) {
	const { capability } = manifest;
	const io = visionIoOf(manifest.family);
	checkVisionIo(session, io);
	const width = manifest.encoderDecoder?.encoderHidden ?? capability.hiddenSize;
	const shape = tensorShape(session, io.embeds);
	const tokens = staticDim(shape, 1);
	const hidden = staticDim(shape, 2);
	if ((tokens !== null && tokens !== capability.visionTokens) || (hidden !== null && hidden !== width)) {
		throw new Error(`The vision model outputs ${io.embeds} [${shape}], but the manifest says [1, ${capability.visionTokens}, ${width}].`);
	}
}

/** Returns the decoder's shape of things (layers, slots) as read from its inputs. */
export function checkDecoder(session, capability, entry, maxTokens) {
	// The graph is the one the manifest describes: its I/O names were written from the file.
	for (const [kind, names, listed] of [
		["inputs", session.inputNames, entry.inputs],
		["outputs", session.outputNames, entry.outputs],
	]) {
		if (JSON.stringify(names) !== JSON.stringify(listed)) {
			throw new Error(
				`The decoder "${entry.name}" has the ${kind} [${names.join(", ")}], but the manifest lists [${listed.join(", ")}]; is the manifest the one built with this file?`,
			);
		}
	}
	for (const name of [DECODER_IO.visionEmbeds, DECODER_IO.tokenIds, DECODER_IO.positionIds]) {
		if (!session.inputNames.includes(name))
			throw new Error(`The decoder "${entry.name}" has no input ${name} (it has: ${session.inputNames.join(", ")}).`);
	}
	if (!session.outputNames.includes(DECODER_IO.logits))
		throw new Error(`The decoder "${entry.name}" has no output ${DECODER_IO.logits} (it has: ${session.outputNames.join(", ")}).`);
	const counts = Object.fromEntries(
		[
			["past", session.inputNames],
			["present", session.outputNames],
		].flatMap(([side, names]) => ["k", "v"].map((kv) => [`${CACHE_IO[side]}${kv}`, indexedNames(names, `${CACHE_IO[side]}${kv}`).length])),
	);
	for (const [kind, count] of Object.entries(counts)) {
		if (count !== capability.layers) {
			throw new Error(`The decoder "${entry.name}" has ${count} ${kind}* tensors, but the manifest's capability.layers says ${capability.layers}.`);
		}
	}
	const hasPastLength = session.inputNames.includes(DECODER_IO.pastLength);
	if (hasPastLength !== entry.fixedKv) {
		throw new Error(
			`The decoder "${entry.name}" ${hasPastLength ? "has" : "lacks"} a ${DECODER_IO.pastLength} input, but the manifest says fixedKv: ${entry.fixedKv}.`,
		);
	}
	const logitsShape = tensorShape(session, DECODER_IO.logits);
	const vocabulary = staticDim(logitsShape, (logitsShape?.length ?? 1) - 1);
	if (vocabulary !== null && vocabulary !== capability.vocabulary) {
		throw new Error(
			`The decoder "${entry.name}" outputs ${vocabulary} logits, but the manifest's capability.vocabulary says ${capability.vocabulary}.`,
		);
	}
	const firstPast = cacheName("past", "k", 0);
	const pastShape = tensorShape(session, firstPast);
	const kvHeads = staticDim(pastShape, 1) ?? capability.kvHeads;
	const headDim = staticDim(pastShape, 3) ?? capability.headDim;
	if (kvHeads !== capability.kvHeads || headDim !== capability.headDim) {
		throw new Error(
			`The decoder "${entry.name}" takes ${firstPast} [${pastShape}], but the manifest says ${capability.kvHeads} KV heads of ${capability.headDim}.`,
		);
	}
	/** @type {number | null} */
	let kvSlots = null;
	if (entry.fixedKv) {
		kvSlots = staticDim(pastShape, 2);
		if (kvSlots === null || kvSlots !== capability.kvSlots) {
			throw new Error(
				`The fixed-KV decoder "${entry.name}" has ${kvSlots ?? "dynamic"} KV slots, but the manifest's capability.kvSlots says ${capability.kvSlots}.`,
			);
		}
		const needed = capability.visionTokens + 1 + maxTokens - 1;
		if (kvSlots < needed) throw new Error(`The fixed-KV decoder "${entry.name}" has ${kvSlots} KV slots; ${maxTokens} tokens need ${needed}.`);
	}
	return { layers: capability.layers, kvHeads, headDim, kvSlots };
}
