// @ts-check
// capture=on: the decode steps of choose=gpu as one graph that onnxruntime-web's
// WebGPU EP records once and replays (the enableGraphCapture session option),
// instead of encoding every kernel of every step again. capture=all: the
// prefill too, on the decoder session created with enableGraphCapture (its own
// recorded graph: 257 positions, one shape every case).
//
// What capture needs, as onnxruntime-web 1.30 implements it: static shapes;
// every input and output a gpu-buffer tensor (run() refuses any other); and
// the same buffers on every run, because the IO binding is made on the first
// run only and the replay writes where the recording wrote. So:
// - the steps run on a session of their own (stepSession, created with
//   enableGraphCapture); the prefill (257 positions, its own shapes) runs on
//   the decoder session, and its presents are copied into the step
//   session's past buffers;
// - a captured prefill (capture=all) reads fixed buffers as well: BOS, the
//   positions 0..V, past length 0 and zero pasts written once, and the vision
//   embeddings copied in before each prefill (a buffer copy when they are on
//   this device, a queue write when they come from the CPU);
// - token_ids is the GPU chooser's token buffer, as without capture;
// - position_ids and past_length are one buffer each, written with
//   queue.writeBuffer before every step: the position is known on the CPU
//   without any readback, and a queue write is ordered before the submit
//   that follows it, so the step queued before still reads its own value;
// - past_k/v are fixed buffers; the outputs (present_k/v, logits) are
//   onnxruntime's own, the same captured buffers every replay: pre-allocated
//   outputs passed as fetches fail on the second run in 1.30 (the first run's
//   binding is kept, but the JS side unregisters those buffers after each run:
//   "can't access property Symbol("gpuBufferMetadata"), h is undefined");
// - a graph output cannot alias a graph input (the WebGPU kernels bind inputs
//   read-only and outputs read-write, which one dispatch may not do to one
//   buffer), so after each step copyBufferToBuffer moves present -> past in
//   the same queue.
// A step's submit time therefore includes queueing those copies.
//
// A decoder whose manifest entry says kvSharedInPlace (one GroupQueryAttention
// a block) is the exception: under capture its kernel wants each past and its
// present to be ONE buffer, which it then writes in place (onnxruntime's
// group_query_attention.cc: "Graph capture requires past/present KV cache to
// share the same buffer"). So each cache buffer is fed as the past and passed
// as the present's pre-allocated output (fetches), kept registered across runs
// (../ort-kept-buffers.js says why 1.30 and 1.31 need that), and no present ->
// past copy is queued. capture=all's prefill writes its 257 rows into the same
// buffers; capture=on's prefill (not captured) still has its presents copied.

import { DECODER_IO, pastNameOf } from "../contract.js";
import { countDispatches } from "../dispatch-count.js";
import { createTensorBuffer } from "../gpu.js";
import { ORT_VERSION, ort } from "../ort.js";
import { checkKeptRegistered, keepRegistered } from "../ort-kept-buffers.js";
import { createSession } from "../sessions.js";
import { decoderTensors, prefillIds } from "./decoder-tensors.js";

/** @typedef {import("./decoder-tensors.js").Tensors} Tensors */

/**
 * capture=on and capture=all in either realm (decoder-run.js): the decoder
 * file again as the step session, with enableGraphCapture, and the runner
 * createGpuDecoder takes. capturedPrefill: the decoder session given to that
 * runner was created with enableGraphCapture too (capture=all), so its prefill
 * runs from fixed buffers. Returns createSession's answer plus createRunner.
 */
export async function createCapturedSteps({ model, loader, memory, device, outputs, name, profile, capturedPrefill }) {
	const step = await createSession({
		model,
		loader,
		memory,
		device,
		preferredOutputLocation: outputs,
		what: `decoder "${name}" (captured steps)`,
		profile,
		role: "decoder",
		graph: "decoder",
		graphCapture: true,
	});
	return { ...step, createRunner: capturedRunner(step.session, capturedPrefill) };
}

/**
 * A runner for createGpuDecoder (decode-gpu.js) whose steps replay the
 * recorded graph of stepSession. prefillSession: the same decoder file, with
 * capture when capturedPrefill. Returns createRunner(session, spec, waiter,
 * { device, tokenTensor }).
 * @param {import("onnxruntime-web").InferenceSession} stepSession
 * @param {boolean} capturedPrefill
 */
function capturedRunner(stepSession, capturedPrefill) {
	return (prefillSession, spec, waiter, { device, tokenTensor }) => {
		if (!spec.fixedKv)
			throw new Error(`capture=${capturedPrefill ? "all" : "on"} needs a fixed-KV decoder: a growing KV cache changes the step's shapes every step.`);
		const { presentNames, prefillFeeds: plainPrefillFeeds } = decoderTensors(spec);
		const cacheDims = [1, spec.kvHeads, spec.kvSlots, spec.headDim];
		const cacheBytes = spec.kvHeads * spec.kvSlots * spec.headDim * 4;
		const gpuTensor = (label, bytes, dataType, dims) => {
			const buffer = createTensorBuffer(device, `capture ${label}`, bytes);
			return ort.Tensor.fromGpuBuffer(buffer, { dataType, dims });
		};
		const inPlace = spec.kvSharedInPlace;
		/** The cache, by present name: each past's buffer, and in place its present's too. */
		const pasts = {};
		for (const name of presentNames) pasts[name] = gpuTensor(pastNameOf(name), cacheBytes, "float32", cacheDims);
		/**
		 * In place, what a run fetches: each present into its past's buffer, and the
		 * logits (null: onnxruntime's own buffer), which fetches that name no output omit.
		 * @type {Record<string, import("onnxruntime-web").Tensor | null> | undefined}
		 */
		const fetches = inPlace ? { ...pasts, [DECODER_IO.logits]: null } : undefined;
		if (inPlace) for (const name of presentNames) keepRegistered(pasts[name].gpuBuffer);
		let keptChecked = false;
		/** After the first in-place run: the cache's registrations held, or a clear error. */
		const checkKept = () => {
			if (!inPlace || keptChecked) return;
			for (const name of presentNames) checkKeptRegistered(pasts[name].gpuBuffer, `the KV cache buffer ${name}`, ORT_VERSION);
			keptChecked = true;
		};
		const position = gpuTensor(DECODER_IO.positionIds, 4, "int32", [1, 1]);
		const length = gpuTensor(DECODER_IO.pastLength, 8, "int64", [1]);
		const feeds = {
			// A step has no vision tokens: a [1, 0, hidden] tensor, as a GPU buffer too.
			[DECODER_IO.visionEmbeds]: gpuTensor(DECODER_IO.visionEmbeds, 0, "float32", [1, 0, spec.hiddenSize]),
			[DECODER_IO.tokenIds]: tokenTensor,
			[DECODER_IO.positionIds]: position,
			[DECODER_IO.pastLength]: length,
		};
		for (const name of presentNames) feeds[pastNameOf(name)] = pasts[name];

		/** Copies every present (from `source`, tensor by name) into its past buffer, queued. */
		const copyIntoPasts = (source) => {
			const encoder = device.createCommandEncoder({ label: "capture present -> past" });
			for (const name of presentNames) encoder.copyBufferToBuffer(source[name].gpuBuffer, 0, pasts[name].gpuBuffer, 0, cacheBytes);
			device.queue.submit([encoder.finish()]);
		};
		/**
		 * A prefill's presents copied into the step session's pasts (unless it
		 * wrote them in place: `written`); its logits handed to the chooser.
		 */
		const handOver = (counted, written = false) => {
			const prefilled = counted.value;
			if (!written) {
				try {
					copyIntoPasts(prefilled);
				} finally {
					// The copies are submitted: the presents may go back to ORT's pool.
					for (const name of presentNames) prefilled[name].dispose();
				}
			}
			return {
				gpuBuffer: prefilled[DECODER_IO.logits].gpuBuffer,
				release: () => prefilled[DECODER_IO.logits].dispose(),
				dispatches: counted.dispatches,
			};
		};
		/** capture=all: this case's embeddings into the fixed input, then the recorded prefill. */
		const prefillFrom = async (feeds, visionEmbeds) => {
			const target = feeds[DECODER_IO.visionEmbeds].gpuBuffer;
			const bytes = spec.visionTokens * spec.hiddenSize * 4;
			try {
				if (visionEmbeds.location === "gpu-buffer") {
					const encoder = device.createCommandEncoder({ label: "capture vision embeddings -> prefill" });
					encoder.copyBufferToBuffer(visionEmbeds.gpuBuffer, 0, target, 0, bytes);
					device.queue.submit([encoder.finish()]);
				} else {
					device.queue.writeBuffer(target, 0, visionEmbeds.data);
				}
			} finally {
				// The copy or the write is queued: the embeddings may go.
				visionEmbeds.dispose();
			}
			const counted = await waiter.wait(() => countDispatches(() => prefillSession.run(feeds, fetches)));
			checkKept();
			return handOver(counted, inPlace);
		};
		/** The last step's outputs but the in-place presents (the cache itself). @type {Tensors | null} */
		let outputs = null;
		const disposeOutputs = () => {
			for (const tensor of Object.values(outputs ?? {})) tensor?.dispose();
			outputs = null;
		};

		const prefillFeeds = capturedPrefill
			? fixedPrefillFeeds(spec, device, gpuTensor, presentNames, cacheBytes, cacheDims, inPlace ? pasts : null)
			: null;

		return {
			async prefill(visionEmbeds) {
				if (prefillFeeds) return prefillFrom(prefillFeeds, visionEmbeds);
				const plainFeeds = plainPrefillFeeds(visionEmbeds);
				let counted;
				try {
					counted = await waiter.wait(() => countDispatches(() => prefillSession.run(plainFeeds)));
				} finally {
					for (const tensor of Object.values(plainFeeds)) tensor.dispose();
				}
				return handOver(counted);
			},
			async step(at) {
				device.queue.writeBuffer(position.gpuBuffer, 0, Int32Array.of(at));
				device.queue.writeBuffer(length.gpuBuffer, 0, BigInt64Array.of(BigInt(at)));
				disposeOutputs();
				// A replay encodes the recorded dispatches again (browser/dispatch-count.js): counted as any run's.
				const counted = await waiter.wait(() => countDispatches(() => stepSession.run(feeds, fetches)));
				const stepped = counted.value;
				if (inPlace) {
					checkKept();
					outputs = { [DECODER_IO.logits]: stepped[DECODER_IO.logits] };
				} else {
					outputs = stepped;
					copyIntoPasts(stepped);
				}
				return { gpuBuffer: stepped[DECODER_IO.logits].gpuBuffer, release: () => {}, dispatches: counted.dispatches };
			},
			end() {
				disposeOutputs();
			},
		};
	};
}

/**
 * capture=all: the prefill's inputs as gpu-buffer tensors, the same every case.
 * Everything but the vision embeddings is written once here: BOS, the
 * positions 0..V, past length 0, and zero pasts (a new buffer reads as zeros).
 * sharedPasts: in place, the step's cache (by present name) is the prefill's
 * past as well; at past length 0 no row of it is read.
 */
function fixedPrefillFeeds(spec, device, gpuTensor, presentNames, cacheBytes, cacheDims, sharedPasts) {
	const ids = prefillIds(spec);
	/** @type {Tensors} */
	const feeds = {
		[DECODER_IO.visionEmbeds]: gpuTensor(`prefill ${DECODER_IO.visionEmbeds}`, spec.visionTokens * spec.hiddenSize * 4, "float32", [
			1,
			spec.visionTokens,
			spec.hiddenSize,
		]),
		[DECODER_IO.tokenIds]: gpuTensor(`prefill ${DECODER_IO.tokenIds}`, ids.tokenIds.byteLength, "int32", ids.dims.tokenIds),
		[DECODER_IO.positionIds]: gpuTensor(`prefill ${DECODER_IO.positionIds}`, ids.positionIds.byteLength, "int32", ids.dims.positionIds),
		[DECODER_IO.pastLength]: gpuTensor(`prefill ${DECODER_IO.pastLength}`, 8, "int64", [1]),
	};
	for (const name of presentNames)
		feeds[pastNameOf(name)] = sharedPasts?.[name] ?? gpuTensor(`prefill ${pastNameOf(name)}`, cacheBytes, "float32", cacheDims);
	device.queue.writeBuffer(feeds[DECODER_IO.tokenIds].gpuBuffer, 0, ids.tokenIds);
	device.queue.writeBuffer(feeds[DECODER_IO.positionIds].gpuBuffer, 0, ids.positionIds);
	device.queue.writeBuffer(feeds[DECODER_IO.pastLength].gpuBuffer, 0, BigInt64Array.of(0n));
	return feeds;
}
