// @ts-check
// Charts (e) and (f) of the report (www/report/charts.js): where each phase's
// memory went (the GPU bytes and WASM heaps of every realm, the rest of PSS,
// the floor, driver VRAM), per phase of one configuration and per configuration
// in one phase.
(() => {
	"use strict";

	const { phasesOf, mib, color, figure, select, pointsOf, stackedOptions } = window.OcrReport;

	/**
	 * The phase a page sample closes and whether the vision worker still lives at it, as
	 * runner/src/memory_model/page_gpu.rs reads them (keep the two alike; tests/report_html.rs
	 * checks the chart's figures against the runner's).
	 */
	function phaseOfSample(label) {
		const fixed = {
			baseline: ["baseline", false],
			"vision-session-ready": ["vision-load", false],
			"vision-worker-session-ready": ["vision-load", true],
			"all-vision-embeddings-ready": ["vision-encode", true],
			"vision-worker-terminated": ["vision-release", true],
			"decoder-session-ready": ["decoder-load", false],
			released: ["release", false],
		};
		if (fixed[label]) return fixed[label];
		return label.startsWith("after-case-") ? ["decoder-run", false] : null;
	}

	const windowPeak = (gpu) => gpu.windowPeakBytes ?? gpu.liveBytes;
	const heapBytes = (heaps) => (heaps ?? []).reduce((sum, heap) => sum + (heap.bytes ?? 0), 0);

	/** The decoder worker counts from its load to its close (in release only its close's report). */
	function decoderWorkerCounts(sample, phase) {
		const gpu = sample.decoderWorker?.gpu;
		if (!gpu) return false;
		return phase === "decoder-load" || phase === "decoder-run" || (phase === "release" && gpu.deviceDestroyed === true);
	}

	/** GPU bytes and WASM heaps of every realm per phase, the largest over the phase's samples. */
	function realmBytesByPhase(samples) {
		const gpu = new Map();
		const wasm = new Map();
		const raise = (map, phase, value) => map.set(phase, Math.max(map.get(phase) ?? 0, value));
		for (const sample of samples ?? []) {
			const found = phaseOfSample(sample.label);
			if (!found) continue;
			const [phase, workerAlive] = found;
			const worker = workerAlive ? sample.worker : null;
			const decoder = decoderWorkerCounts(sample, phase) ? sample.decoderWorker : null;
			const gpuParts = [
				sample.gpu ? windowPeak(sample.gpu) : null,
				worker?.gpu ? worker.gpu.liveBytes : null,
				decoder ? windowPeak(decoder.gpu) : null,
			];
			if (gpuParts.some((v) => v != null))
				raise(
					gpu,
					phase,
					gpuParts.reduce((a, v) => a + (v ?? 0), 0),
				);
			const wasmParts = [
				sample.wasmHeaps ? heapBytes(sample.wasmHeaps) : null,
				worker ? heapBytes(worker.wasmHeaps) : null,
				decoder ? heapBytes(decoder.wasmHeaps) : null,
			];
			if (wasmParts.some((v) => v != null))
				raise(
					wasm,
					phase,
					wasmParts.reduce((a, v) => a + (v ?? 0), 0),
				);
		}
		return { gpu, wasm };
	}

	/** One adapter: software, a real GPU (false), or unknown (null); the runner's rule. */
	function adapterIsSoftware(adapter) {
		if (typeof adapter?.software === "boolean") return adapter.software;
		const named = ["description", "vendor", "architecture", "device"].some((key) => /swiftshader|llvmpipe|lavapipe/i.test(adapter?.[key] ?? ""));
		if (adapter?.isFallbackAdapter === true || named) return true;
		return typeof adapter?.isFallbackAdapter === "boolean" ? adapter.isFallbackAdapter : null;
	}

	/** Whether the run's GPU bytes are process memory (inside PSS): "software", "device" or "unknown". */
	function gpuPlacement(summary) {
		const environment = summary.environment ?? {};
		const answers = [environment.adapter, environment.workerAdapter, environment.decoderWorkerAdapter]
			.filter((a) => a != null)
			.map(adapterIsSoftware);
		return answers.includes(true) ? "software" : answers.includes(false) ? "device" : "unknown";
	}

	/** Where each phase's memory went in one run (startup left out: no page sample, no floor). */
	function decompositionOf(run) {
		const { gpu, wasm } = realmBytesByPhase(run.summary.memorySamples);
		const floor = run.processMemory?.floor?.available ? (run.processMemory.floor.phases ?? {}) : {};
		const driverRead = run.processMemory?.driverGpuMemory?.available === true;
		const placement = gpuPlacement(run.summary);
		const phases = new Map();
		for (const { name, phase } of phasesOf(run)) {
			if (name === "startup") continue;
			const share = {
				pss: phase.total?.peakPssBytes ?? null,
				gpu: gpu.get(name) ?? null,
				wasm: wasm.get(name) ?? null,
				driverVram: driverRead ? (phase.total?.peakDriverGpuBytes ?? null) : null,
				floor: floor[name]?.bytes ?? null,
			};
			share.rest =
				share.pss == null || placement === "unknown" ? null : share.pss - (share.wasm ?? 0) - (placement === "software" ? (share.gpu ?? 0) : 0);
			phases.set(name, share);
		}
		return { placement, phases };
	}

	/** Per phase, the share of the configuration's run with the highest PSS in it (the first where none has PSS). */
	function groupDecomposition(group) {
		const best = new Map();
		for (const run of group.runs) {
			const { placement, phases } = decompositionOf(run);
			for (const [name, share] of phases) {
				const held = best.get(name);
				if (!held || (share.pss ?? -1) > (held.pss ?? -1)) best.set(name, { ...share, placement });
			}
		}
		return best;
	}

	/** Stacked bars of GPU / WASM / rest with the floor as a marker, one bar per label. */
	function decompositionDatasets(shares) {
		const placement = shares.find((s) => s)?.placement ?? "unknown";
		// On a real GPU the device's bytes are outside PSS: a bar of their own beside it.
		const gpuStack = placement === "software" ? "pss" : "device";
		const take = (key) => shares.map((s) => mib(s?.[key] ?? null));
		/** @type {import("chart.js").ChartDataset<"bar" | "line", (number | null)[]>[]} */
		const datasets = [
			{ type: "bar", label: "GPU bytes, all realms", data: take("gpu"), backgroundColor: color(0), stack: gpuStack },
			{ type: "bar", label: "WASM heaps, all realms", data: take("wasm"), backgroundColor: color(1), stack: "pss" },
			{ type: "bar", label: "rest of PSS", data: take("rest"), backgroundColor: color(8), stack: "pss" },
			// order -1: drawn last, over the bars (Chart.js draws higher orders first).
			{
				type: "line",
				label: "floor",
				data: take("floor"),
				stack: "floor",
				order: -1,
				showLine: false,
				pointStyle: "line",
				pointRadius: 40,
				pointBorderWidth: 3,
				borderColor: "#fff",
				backgroundColor: "#fff",
			},
			{
				type: "line",
				label: "driver VRAM",
				data: take("driverVram"),
				stack: "vram",
				order: -1,
				showLine: false,
				pointStyle: "crossRot",
				pointRadius: 8,
				pointBorderWidth: 2,
				borderColor: color(3),
				backgroundColor: color(3),
			},
		];
		return datasets.filter((d) => d.label !== "driver VRAM" || d.data.some((v) => v != null));
	}

	/** Bytes of the shares as the chart shows them, for a headless check. */
	const sharesData = (labels, shares) => JSON.stringify(Object.fromEntries(labels.map((label, i) => [label, shares[i] ?? null])));

	const DECOMPOSITION_CAPTION =
		"Per phase: the GPU bytes of every realm's WebGPU device, every realm's WebAssembly heaps (onnxruntime and the core) and the rest of PSS (all the browser's processes), of the configuration's run with the highest PSS in the phase; the white mark is the floor (weights + one KV cache + the largest activation). On a software adapter (SwiftShader, llvmpipe/lavapipe, a fallback adapter) the GPU bytes are process memory and the three stack up to PSS; on a real GPU they are device memory, drawn beside PSS, and rest = PSS − WASM.";

	/** (e) One configuration's phases, each a stacked bar of where its memory went. */
	function decompositionChart(root, groups) {
		const parts = figure(root, "decomposition", "Where the memory went, per phase", DECOMPOSITION_CAPTION);
		/** @type {import("chart.js").Chart | null} */
		let chart = null;
		const show = (index) => {
			const best = groupDecomposition(groups[index]);
			const labels = [...best.keys()];
			const shares = labels.map((name) => best.get(name));
			const datasets = decompositionDatasets(shares);
			chart?.destroy();
			chart = new Chart(parts.canvas, { type: "bar", data: { labels, datasets }, options: stackedOptions("phase") });
			parts.element.dataset.points = String(pointsOf(datasets));
			parts.element.dataset.series = JSON.stringify(datasets.map((d) => d.label));
			parts.element.dataset.configuration = groups[index].name;
			parts.element.dataset.values = sharesData(labels, shares);
		};
		select(
			parts.controls,
			"configuration",
			groups.map((g, index) => [String(index), g.name]),
			(value) => show(Number(value)),
		);
		show(0);
	}

	/** (f) One phase across configurations: what staged, external weights or gather-opt save. */
	function phaseDecompositionChart(root, groups) {
		const parts = figure(root, "decomposition-across", "One phase across configurations", DECOMPOSITION_CAPTION);
		const perGroup = groups.map(groupDecomposition);
		const phaseNames = [...new Set(perGroup.flatMap((best) => [...best.keys()]))];
		/** @type {import("chart.js").Chart | null} */
		let chart = null;
		const show = (phase) => {
			const shares = perGroup.map((best) => best.get(phase) ?? null);
			const labels = groups.map((g) => g.name);
			const datasets = decompositionDatasets(shares);
			chart?.destroy();
			chart = new Chart(parts.canvas, { type: "bar", data: { labels, datasets }, options: stackedOptions("configuration") });
			parts.element.dataset.points = String(pointsOf(datasets));
			parts.element.dataset.series = JSON.stringify(datasets.map((d) => d.label));
			parts.element.dataset.phase = phase;
			parts.element.dataset.values = sharesData(labels, shares);
		};
		const input = select(
			parts.controls,
			"phase",
			phaseNames.map((name) => [name, name]),
			show,
		);
		const first = phaseNames.includes("decoder-run") ? "decoder-run" : phaseNames[0];
		input.value = first;
		show(first);
	}

	Object.assign(window.OcrReport, { decompositionChart, phaseDecompositionChart });
})();
