// @ts-check
// The completion floor of a dedicated worker, measured in the probe phase
// (www/probe.js) so that no model phase holds it. A worker's WebGPU device is
// made in its model phase and lives only there (the vision worker's ends with
// vision-release; the decoder worker starts in decoder-load), so the floor is
// measured here, in a worker of the same kind, on a device made as theirs are
// and through a waiter with the run's poll and kickMs; the page terminates
// this worker once it has answered.
//
// Protocol: browser/worker-host.js's, one call: floor.

import { measureCompletionFloor } from "../browser/completion-floor.js";
import { createDevice, requestGpuAdapter } from "../browser/gpu.js";
import { createGpuWaiter } from "../browser/gpu-wait.js";
import { serveWorker } from "../browser/worker-host.js";

/** @type {GPUDevice | null} */
let device = null;

const handlers = {
	/** payload: { poll, kickMs } as the page resolved them from the query. */
	async floor({ poll, kickMs }) {
		if (device) throw new Error("The probe worker measures one floor only.");
		const realmDevice = await createDevice(await requestGpuAdapter());
		device = realmDevice;
		const waiter = createGpuWaiter(realmDevice, { poll, kickMs });
		try {
			return { completionFloor: await measureCompletionFloor(realmDevice, waiter) };
		} finally {
			waiter.close();
			realmDevice.destroy();
		}
	},
};

await serveWorker("probe-worker", handlers, () => device);
