// @ts-check
// The decode loop of choose=gpu: the model contract's prefill and steps as in
// decode.js, but the token choice runs on the GPU (the core's GpuTokenChooser,
// wasm/src/gpu_choose.rs) straight from the logits' gpu-buffer, and each step's
// token_ids and position_ids are GPU buffers too, so no step waits for a
// readback. `sync` steps are queued, then one mapAsync reads their chosen ids:
// EOS is looked for there, and the steps queued after it are discarded (not
// counted, not in the probe; their time stays in decodeMs).
//
// The decode probe, kept comparable with decode.js (docs/benchmark-protocol.md,
// "choose=gpu"): submitMs is each step's run() returning, as there; chooseMs is
// the time to queue the choice (encode and submit the dispatch: the GPU runs it
// with the step); syncMs is the readback wait, all of it on the last kept step
// of its batch and 0 on the others, so a step's submit + sync + choose still add
// up to the decode time. The prefill's id is read back on its own
// (prefillSyncMs), so the first token is known as early as with the CPU loop.
import { GpuTokenChooser } from "../../pkg/ocr_bench_core.js";
import { DECODER_IO, pastNameOf } from "../contract.js";
import { countDispatches, uncounted } from "../dispatch-count.js";
import { ort } from "../ort.js";
import { recordBatch } from "./batch-probe.js";
import { decoderTensors } from "./decoder-tensors.js";

/** @typedef {import("./decoder-tensors.js").Tensors} Tensors */

/**
 * The plain way to run the steps: each step's presents are fed back as the
 * next step's pasts (ORT hands them over zero-copy) and every run gets fresh
 * outputs. tokenTensor: the gpu-buffer tensor the chooser writes the next id
 * into. A runner's prefill and step resolve to the step's logits as
 * { gpuBuffer, release, dispatches }; release gives them back once the choice
 * is queued; dispatches counts what onnxruntime encoded for the run.
 */
function feedBackRunner(session, spec, waiter, { device, tokenTensor }) {
	const { presentNames, pastLength, prefillFeeds, disposeOutputs } = decoderTensors(spec);
	const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
	// One id buffer per position, written once (a queue write, not a readback);
	// 16 bytes, the granule onnxruntime-web sizes its own buffers in.
	const positionTensors = [];
	const positionTensor = (position) => {
		if (!positionTensors[position]) {
			const buffer = device.createBuffer({ label: `position ${position}`, size: 16, usage });
			device.queue.writeBuffer(buffer, 0, Int32Array.of(position));
			positionTensors[position] = ort.Tensor.fromGpuBuffer(buffer, { dataType: "int32", dims: [1, 1] });
		}
		return positionTensors[position];
	};
	/** @type {Tensors | null} */
	let outputs = null;
	const logitsOf = (run, dispatches) => ({
		dispatches,
		gpuBuffer: run[DECODER_IO.logits].gpuBuffer,
		release: () => {
			run[DECODER_IO.logits].dispose();
			run[DECODER_IO.logits] = null;
		},
	});
	return {
		async prefill(visionEmbeds) {
			const feeds = prefillFeeds(visionEmbeds);
			let counted;
			try {
				counted = await waiter.wait(() => countDispatches(() => session.run(feeds)));
			} finally {
				for (const tensor of Object.values(feeds)) tensor.dispose();
			}
			outputs = counted.value;
			return logitsOf(outputs, counted.dispatches);
		},
		async step(position) {
			const feeds = {
				[DECODER_IO.visionEmbeds]: new ort.Tensor("float32", new Float32Array(0), [1, 0, spec.hiddenSize]),
				[DECODER_IO.tokenIds]: tokenTensor,
				[DECODER_IO.positionIds]: positionTensor(position),
			};
			if (spec.fixedKv) feeds[DECODER_IO.pastLength] = pastLength(position);
			const presents = outputs;
			if (!presents) throw new Error("A decode step ran before the prefill: there are no presents to feed back.");
			for (const name of presentNames) feeds[pastNameOf(name)] = presents[name];
			let counted;
			try {
				counted = await waiter.wait(() => countDispatches(() => session.run(feeds)));
			} finally {
				feeds[DECODER_IO.visionEmbeds].dispose();
				feeds[DECODER_IO.pastLength]?.dispose();
			}
			disposeOutputs(outputs);
			outputs = counted.value;
			return logitsOf(outputs, counted.dispatches);
		},
		end() {
			disposeOutputs(outputs);
			outputs = null;
		},
	};
}

/**
 * session, spec, waiter: as createDecoder (decode.js). device: the GPUDevice the
 * session runs on. chooser: a GpuTokenChooser of one sequence on that device,
 * or null with forcedToken (scope=decoder: every token forced). sync: steps
 * queued per readback, 1..=64. createRunner(session, spec, waiter, { device,
 * tokenTensor }): how the prefill and steps run; by default the presents are
 * fed back (feedBackRunner), capture=on passes decode-capture.js's.
 * @param {import("onnxruntime-web").InferenceSession} session
 * @param {import("./decoder-tensors.js").DecoderSpec} spec
 * @param {ReturnType<typeof import("../gpu-wait.js").createGpuWaiter>} waiter
 * @param {object} options
 * @param {GPUDevice} options.device
 * @param {GpuTokenChooser | null} options.chooser
 * @param {number | null} [options.forcedToken]
 * @param {number} options.sync
 * @param {typeof feedBackRunner} [options.createRunner]
 */
export function createGpuDecoder(session, spec, waiter, { device, chooser, forcedToken = null, sync, createRunner = feedBackRunner }) {
	const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
	let tokenBuffer;
	if (chooser) tokenBuffer = chooser.tokenBuffer;
	else {
		if (forcedToken === null) throw new Error("The GPU decode loop needs a chooser or a forced token.");
		tokenBuffer = device.createBuffer({ label: "forced token", size: 16, usage });
		device.queue.writeBuffer(tokenBuffer, 0, Int32Array.of(forcedToken));
	}
	const tokenTensor = ort.Tensor.fromGpuBuffer(tokenBuffer, { dataType: "int32", dims: [1, 1] });
	const runner = createRunner(session, spec, waiter, { device, tokenTensor });
	// What the chooser reads back for a step without a candidate.
	const NO_CANDIDATE = chooser ? GpuTokenChooser.NO_CANDIDATE : null;
	const noCandidate = (step) =>
		new Error(`No token can be chosen at decode step ${step}: every score is NaN, -Infinity or blocked (the GPU chooser's readback marked it).`);

	/** Queues the choice from a step's logits; returns the time it took to queue. */
	const choose = (logits) => {
		const started = performance.now();
		// The choice's own dispatch is the harness's, not onnxruntime's: left out of the counts.
		if (chooser) uncounted(() => chooser.choose(logits.gpuBuffer));
		const ms = performance.now() - started;
		// The dispatch is submitted: the logits buffer may go back to its owner.
		logits.release();
		return ms;
	};
	/** The last `count` chosen ids, on the CPU. */
	const readIds = async (count, knownIds) => {
		if (chooser) return Array.from(await waiter.wait(() => chooser.readChosen(count)));
		await waiter.wait(() => device.queue.onSubmittedWorkDone());
		return knownIds(count);
	};
	const forcedIds = (count) => new Array(count).fill(forcedToken);

	/**
	 * visionEmbeds: a [1,V,hidden] tensor (disposed here). Returns what decode.js
	 * returns: the tokens, the seed's times and the probe.
	 */
	return async function decode(visionEmbeds, { maxTokens }) {
		const started = performance.now();
		chooser?.reset();
		const prefillLogits = await runner.prefill(visionEmbeds);
		const prefillSubmitMs = performance.now() - started;
		/** @type {import("./decode.js").DecodeProbe} */
		const probe = {
			prefillSubmitMs,
			prefillSyncMs: 0,
			submitMs: [],
			syncMs: [],
			chooseMs: [],
			stepsPerReadback: sync,
			prefillDispatches: prefillLogits.dispatches,
			stepDispatches: [],
		};
		/** @type {number[]} */
		const tokens = [];
		let decodeSteps = 0;
		let decodeStarted = performance.now();
		try {
			probe.chooseMs.push(choose(prefillLogits));
			const syncStarted = performance.now();
			const [first] = await readIds(1, forcedIds);
			probe.prefillSyncMs = performance.now() - syncStarted;
			decodeStarted = performance.now();
			if (first === NO_CANDIDATE) throw noCandidate(0);
			let ended = first === spec.eos;
			if (!ended) tokens.push(first);
			while (!ended && tokens.length < maxTokens) {
				// Each step makes one token: never queue more than maxTokens allows.
				const batch = Math.min(sync, maxTokens - tokens.length);
				/** @type {{ submitMs: number, dispatches: number, chooseMs: number }[]} */
				const times = [];
				for (let index = 0; index < batch; index += 1) {
					const position = spec.visionTokens + 1 + decodeSteps + index;
					const stepStarted = performance.now();
					const logits = await runner.step(position);
					const submitMs = performance.now() - stepStarted;
					times.push({ submitMs, dispatches: logits.dispatches, chooseMs: choose(logits) });
				}
				const syncStarted = performance.now();
				const ids = await readIds(batch, forcedIds);
				const syncMs = performance.now() - syncStarted;
				let kept = 0;
				for (const id of ids) {
					kept += 1;
					if (id === NO_CANDIDATE) throw noCandidate(decodeSteps + kept);
					if (id === spec.eos) {
						ended = true;
						break;
					}
					tokens.push(id);
				}
				recordBatch(probe, times, kept, syncMs);
				decodeSteps += kept;
			}
		} finally {
			runner.end();
		}
		const now = performance.now();
		return {
			tokens,
			decodeSteps,
			prefillMs: probe.prefillSubmitMs + probe.prefillSyncMs,
			decodeMs: now - decodeStarted,
			decodeTotalMs: now - started,
			probe,
		};
	};
}
