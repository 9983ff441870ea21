// How a batch of GPU-chosen steps lands in the decode probe: one readback ends the batch, so
// its wait is the last kept step's and the steps before it waited 0; steps queued past an
// EOS or a step without a candidate were never read, and are not recorded.

/**
 * @param {{ submitMs: number[], syncMs: number[], chooseMs: number[], stepDispatches: number[] }} probe
 * @param {{ submitMs: number, chooseMs: number, dispatches: number }[]} times each queued step's, in order
 * @param {number} kept the steps read back and kept
 * @param {number} syncMs the readback's wait
 */
export function recordBatch(probe, times, kept, syncMs) {
	for (const [index, time] of times.slice(0, kept).entries()) {
		probe.submitMs.push(time.submitMs);
		probe.syncMs.push(index === kept - 1 ? syncMs : 0);
		probe.chooseMs.push(time.chooseMs);
		probe.stepDispatches.push(time.dispatches);
	}
}
