// @ts-check
// The completion floor of a realm's device: how long the browser takes to say
// that GPU work is done when there is (almost) none. Decode steps that take a
// whole multiple of it are the browser's completion timer, not the model
// (the core's completionCheck says so). Measured in the probe phase
// (www/probe.js) on a device of the realm's own, through a waiter made as the
// run's are, so poll=kick is in the figure.

const WARMUP_ROUNDS = 3;
const ROUNDS = 20;

// One workgroup that bumps a counter: the least GPU work that still needs a
// pipeline, a dispatch and a readback, as a decode step's logits do.
const BUMP_SHADER = `
@group(0) @binding(0) var<storage, read_write> counter: array<u32, 4>;
@compute @workgroup_size(1)
fn main() { counter[0] = counter[0] + 1u; }
`;

/**
 * The raw samples, in ms: { rounds, warmupRounds, emptyQueueMs, dispatchReadbackMs,
 * poll, kickMs, kicks, probeMs (every round, warm-up included, and the pipeline) }.
 * The page's core turns them into statistics (the workers do not load the core).
 */
export async function measureCompletionFloor(device, waiter) {
	const probeStarted = performance.now();
	const kicksBefore = waiter.kicks;
	const emptyQueue = [];
	for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
		const started = performance.now();
		await waiter.wait(() => device.queue.onSubmittedWorkDone());
		if (round >= WARMUP_ROUNDS) emptyQueue.push(performance.now() - started);
	}

	const storage = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
	const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
	const dispatchReadback = [];
	try {
		const pipeline = await device.createComputePipelineAsync({
			layout: "auto",
			compute: { module: device.createShaderModule({ code: BUMP_SHADER }), entryPoint: "main" },
		});
		const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: storage } }] });
		let expected = 0;
		for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
			const started = performance.now();
			const encoder = device.createCommandEncoder();
			const pass = encoder.beginComputePass();
			pass.setPipeline(pipeline);
			pass.setBindGroup(0, bindGroup);
			pass.dispatchWorkgroups(1);
			pass.end();
			encoder.copyBufferToBuffer(storage, 0, readback, 0, 16);
			device.queue.submit([encoder.finish()]);
			await waiter.wait(() => readback.mapAsync(GPUMapMode.READ));
			const counter = new Uint32Array(readback.getMappedRange())[0];
			readback.unmap();
			if (round >= WARMUP_ROUNDS) dispatchReadback.push(performance.now() - started);
			expected += 1;
			// A pipeline the device silently rejected would leave the counter at 0:
			// then nothing the floor says about GPU work holds.
			if (counter !== expected)
				throw new Error(
					`The completion-floor probe read ${counter} after ${expected} dispatches: this WebGPU device did not run a one-line compute shader.`,
				);
		}
	} finally {
		storage.destroy();
		readback.destroy();
	}
	return {
		rounds: ROUNDS,
		warmupRounds: WARMUP_ROUNDS,
		emptyQueueMs: emptyQueue,
		dispatchReadbackMs: dispatchReadback,
		poll: waiter.poll,
		kickMs: waiter.kickMs,
		kicks: waiter.kicks - kicksBefore,
		probeMs: performance.now() - probeStarted,
	};
}
