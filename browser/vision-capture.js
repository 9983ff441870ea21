// @ts-check
// capture=all: the vision encoder as one graph that onnxruntime-web's WebGPU EP
// records once and replays (enableGraphCapture), as the decoder's steps and
// prefill are (browser/decoding/decode-capture.js). A captured run binds the
// same buffers every time, so:
// - the pixels go into one fixed GPU buffer, written with queue.writeBuffer
//   before each run (a queue write is ordered before the replay's submit);
// - the embeddings come out in onnxruntime's own buffer, the same every
//   replay: the next image overwrites them. The vision worker reads them back
//   before it takes the next image; the page, whose embeddings wait for a
//   decoder (a pool's realms take cases while others decode), copies them into
//   a buffer of their own (detach), which it can read back (getData) when a
//   decoder worker takes them (realm=worker): a tensor made from a GPU buffer
//   has no downloader unless it is given one, and getData then throws "The
//   current tensor is not created with a specified data downloader" (1.30.0
//   and 1.31.1 alike).

import { createTensorBuffer } from "./gpu.js";
import { ort } from "./ort.js";

/** @typedef {ReturnType<typeof capturedVisionIo>} CapturedVisionIo */

/**
 * device: the GPUDevice the vision session runs on; dims: the pixels' [1, 3,
 * size, size]; waiter: the realm's GPU waiter (a readback's mapAsync goes
 * through it). Returns { input(values): the fixed gpu-buffer tensor holding
 * `values` (a Float32Array of the pixels), detach(embeds): a gpu-buffer
 * tensor on a buffer of its own holding a copy of `embeds` (disposed here),
 * which reads back with getData and destroys that buffer when disposed,
 * release(): the input buffer destroyed, with the session }.
 * @param {GPUDevice} device
 * @param {number[]} dims
 * @param {import("./gpu-wait.js").GpuWaiter} waiter
 */
export function capturedVisionIo(device, dims, waiter) {
	const bytes = dims.reduce((product, dim) => product * dim, 1) * 4;
	const buffer = createTensorBuffer(device, "capture vision pixels", bytes);
	const input = ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims });
	return {
		input(values) {
			device.queue.writeBuffer(buffer, 0, values);
			return input;
		},
		detach(embeds) {
			const size = embeds.dims.reduce((product, dim) => product * dim, 1) * 4;
			const own = createTensorBuffer(device, "vision embeddings (copied out of the replay's buffer)", size);
			const encoder = device.createCommandEncoder({ label: "capture vision embeddings -> own buffer" });
			encoder.copyBufferToBuffer(embeds.gpuBuffer, 0, own, 0, size);
			device.queue.submit([encoder.finish()]);
			const dims = [...embeds.dims];
			// The copy is queued: the replay's output may go back to onnxruntime.
			embeds.dispose();
			const download = async () => {
				const readback = device.createBuffer({ label: "vision embeddings readback", size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
				try {
					const copy = device.createCommandEncoder({ label: "vision embeddings -> readback" });
					copy.copyBufferToBuffer(own, 0, readback, 0, size);
					device.queue.submit([copy.finish()]);
					await waiter.wait(() => readback.mapAsync(GPUMapMode.READ));
					return new Float32Array(readback.getMappedRange().slice(0));
				} finally {
					readback.destroy();
				}
			};
			return ort.Tensor.fromGpuBuffer(own, { dataType: "float32", dims, download, dispose: () => own.destroy() });
		},
		release() {
			buffer.destroy();
		},
	};
}
