// @ts-check
// The vision worker's side of the test-only fault injection
// (www/fault-injection.js): the page, which alone arms a fault, sends its
// kind with the encode call it fires at.

/** Carries out `fault` (a kind, or null) inside the handler of `call`; `device` is the worker's. */
export async function injectFault(fault, call, device) {
	// The worker's own GPUDevice destroyed: the encode that follows fails on a lost device.
	if (fault === "worker-device-lost") device.destroy();
	if (fault === "worker-throw") throw new Error(`The vision worker threw during ${call} (injected fault worker-throw).`);
	if (fault === "worker-terminate") {
		// As a crash would: no answer, no error event; only the worker's lifetime lock lets go.
		self.close();
		await new Promise(() => {});
	}
}
