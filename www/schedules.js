// @ts-check
// The three ways a run can hold its sessions, behind the same three methods,
// so that main.js reads as one flow:
//   load(plan)        every model phase before decoder-run (vision-load … decoder-load)
//   embeds(item, i)   the vision embeddings for the plan's i-th run, its vision times, and
//                     whether a later run reuses the same embeddings (reused)
//   profiles()        profile=ops: the vision session's profile (the decoder's is main.js's)
// staged:   vision in a worker, every plan item encoded there, the worker
//           terminated before the decoder loads (the only way to give its WASM heap back);
// resident: both sessions in the page, vision run per case;
// decoder:  the decoder-only scope: zero embeddings, no vision at all.
import { countDispatches } from "../browser/dispatch-count.js";
import { ort } from "../browser/ort.js";
import { startVisionWorker } from "./worker-client.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * run: what main.js shares with a schedule: { config, capability, visionEntry,
 * visionNames (the family's vision tensor names, browser/contract.js visionIoOf),
 * family, enter(phase), memory, owned, loadVision(), loadDecoder(), loadPixels(testCase),
 * waiter(), environment, sessionMs, view, faults (www/fault-injection.js) }.
 */
export function createSchedule(run) {
	if (run.config.scope === "decoder") return decoderOnly(run);
	return run.config.schedule === "staged" ? staged(run) : resident(run);
}

function decoderOnly(run) {
	const { capability } = run;
	return {
		name: "decoder-only",
		async load() {
			await run.enter("decoder-load");
			await run.loadDecoder();
		},
		async embeds() {
			// realm=worker: the decoder worker makes its own zeros; none cross postMessage.
			if (run.config.realm === "worker") return { visionEmbeds: null, vision: { visionMs: 0 } };
			const zeros = new Float32Array(capability.visionTokens * capability.hiddenSize);
			return { visionEmbeds: new ort.Tensor("float32", zeros, [1, capability.visionTokens, capability.hiddenSize]), vision: { visionMs: 0 } };
		},
		async profiles() {
			return {};
		},
	};
}

function resident(run) {
	const { capability, owned } = run;
	return {
		name: "resident",
		async load() {
			await run.enter("vision-load");
			await run.loadVision();
			await run.enter("decoder-load");
			await run.loadDecoder();
		},
		async embeds(item, index) {
			await run.faults.at("encode", index + 1, { device: owned.device });
			const values = await run.loadPixels(item.testCase);
			const waiter = run.waiter();
			const started = performance.now();
			// capture=all: the pixels written into the recorded graph's fixed input (browser/vision-capture.js), timed as run()'s upload is.
			const pixels = owned.visionIo
				? owned.visionIo.input(values)
				: new ort.Tensor("float32", values, [1, 3, capability.imageSize, capability.imageSize]);
			const { value: output, dispatches: visionDispatches } = await waiter.wait(() =>
				countDispatches(() => owned.vision.run({ [run.visionNames.pixels]: pixels })),
			);
			const visionCallMs = performance.now() - started;
			// run() returns once the work is submitted, not done (measured: it returned
			// after 28 ms of 73.9 s of GPU work in headless Chromium on SwiftShader,
			// 0.4-1.0 s early in Firefox on lavapipe); wait on the queue ORT submitted to.
			await waiter.wait(() => owned.device.queue.onSubmittedWorkDone());
			const vision = { visionMs: performance.now() - started, visionCallMs, visionDispatches };
			if (owned.visionIo) return { visionEmbeds: owned.visionIo.detach(output[run.visionNames.embeds]), vision };
			pixels.dispose();
			return { visionEmbeds: output[run.visionNames.embeds], vision };
		},
		async profiles() {
			return run.profileVision ? { vision: await run.profileVision() } : {};
		},
	};
}

function staged(run) {
	const { config, capability, visionEntry, owned } = run;
	// Embeddings per case id (repeats of a case give the same ones), freed after
	// the plan's last use of that case; vision times per plan item.
	const embeddings = new Map();
	const lastUse = new Map();
	const visionMs = [];
	const visionDispatches = [];
	let visionProfile = null;
	return {
		name: "staged",
		async load(plan) {
			await run.enter("vision-load");
			owned.worker = await startVisionWorker();
			const ready = await owned.worker.call("init", {
				tier: config.tier,
				model: visionEntry.model,
				requires: visionEntry.requires,
				loader: config.loader,
				memory: config.memory,
				poll: config.poll,
				kickMs: config.kickMs,
				profile: config.profile,
				capture: config.capture === "all",
				family: run.family,
			});
			run.sessionMs.vision = ready.createMs;
			run.noteSession(ready.session);
			run.environment.workerAdapter = ready.adapter;
			run.noteWorkerMemory(ready.memory);
			await run.memory.sample("vision-worker-session-ready");
			await run.enter("vision-encode");
			for (const [index, item] of plan.entries()) {
				run.view.progress(index, plan.length, `encoding ${item.testCase.id}`);
				const fault = await run.faults.at("encode", index + 1);
				const pixels = await run.loadPixels(item.testCase);
				const encoded = await owned.worker.call("encode", { pixels, size: capability.imageSize, fault }, [pixels.buffer]);
				visionMs.push(encoded.visionMs);
				visionDispatches.push(encoded.visionDispatches);
				run.noteWorkerMemory(encoded.memory);
				embeddings.set(item.testCase.id, encoded);
				lastUse.set(item.testCase.id, index);
			}
			await run.memory.sample("all-vision-embeddings-ready");
			await run.enter("vision-release");
			if (config.profile === "ops") visionProfile = await owned.worker.call("profile", {});
			const closed = await owned.worker.call("close", {});
			run.noteWorkerMemory(closed.memory);
			owned.worker.terminate();
			owned.worker = null;
			await sleep(100);
			await run.memory.sample("vision-worker-terminated");
			await run.enter("decoder-load");
			await run.loadDecoder();
		},
		async embeds(item, index) {
			const { values, dims } = embeddings.get(item.testCase.id);
			const reused = lastUse.get(item.testCase.id) !== index;
			if (!reused) embeddings.delete(item.testCase.id);
			return {
				visionEmbeds: new ort.Tensor("float32", values, dims),
				vision: { visionMs: visionMs[index], visionDispatches: visionDispatches[index] },
				reused,
			};
		},
		async profiles() {
			return visionProfile ? { vision: visionProfile } : {};
		},
	};
}
