// @ts-check
// Every GPU wait of a realm goes through one waiter, so that poll=kick can keep
// the browser's GPU completion moving while something waits.
//
// Why: Firefox learns that GPU work is done on a 100 ms timer (Mozilla bug
// 1870699, POLL_TIME_MS in WebGPUParent.cpp), and a queue submit makes it look
// at once. Measured on an NVIDIA H200 in Firefox ESR 153 with the baseline
// decoder: an empty-queue onSubmittedWorkDone() took 100.1 ms and a decode step
// 100.1 ms; with an empty submit at most every 0.5 ms while a wait was pending,
// 0.50 ms and 12.7 ms (every 2 ms: 16.1 ms). A submit on every macrotask with
// no throttle flooded the IPC and never finished, and on lavapipe it took the
// CPU from the GPU process (a step went from 1.5 to 5.7 s): hence the throttle,
// and kicking only while a wait is pending. jwmcglynn/donner PR #1161 does the same.

/** @typedef {ReturnType<typeof createGpuWaiter>} GpuWaiter */

/**
 * poll: "none" (plain awaits, the seed's behaviour) or "kick"; kickMs: the
 * least time between two kicks.
 */
export function createGpuWaiter(device, { poll = /** @type {import("../pkg/ocr_bench_core.js").Poll} */ ("none"), kickMs = 0.5 } = {}) {
	let pending = 0;
	let kicks = 0;
	let lastKick = -Infinity;
	let looping = false;
	// A MessageChannel turn is a macrotask without setTimeout's 4 ms clamp on
	// nested timers, so the loop can look at the clock every fraction of a ms.
	const channel = poll === "kick" ? new MessageChannel() : null;
	if (channel) {
		channel.port1.onmessage = () => {
			if (pending <= 0) {
				looping = false;
				return;
			}
			const now = performance.now();
			if (now - lastKick >= kickMs) {
				device.queue.submit([]);
				kicks += 1;
				lastKick = now;
			}
			channel.port2.postMessage(0);
		};
	}
	return {
		poll,
		kickMs: poll === "kick" ? kickMs : null,
		/**
		 * Runs start() (which returns a promise that waits on the GPU) with the queue kicked meanwhile.
		 * @template T
		 * @param {() => Promise<T>} start
		 * @returns {Promise<T>}
		 */
		async wait(start) {
			if (!channel) return start();
			pending += 1;
			if (!looping) {
				looping = true;
				channel.port2.postMessage(0);
			}
			try {
				return await start();
			} finally {
				pending -= 1;
			}
		},
		get kicks() {
			return kicks;
		},
		close() {
			channel?.port1.close();
			channel?.port2.close();
		},
	};
}
