// @ts-check
// Chart (a) of the report (www/report/charts.js): one run's memory over time,
// the sampler's per-phase peaks as steps and the page's own samples, with the
// phase marks.
(() => {
	"use strict";

	const { phasesOf, extraPeakKeys, mib, color, figure, select, baseOptions, phaseMarks, pointsOf } = window.OcrReport;

	const PROCESS_TYPES = ["browser", "gpu", "renderer", "utility", "other"];

	/** A step line: the value held from a phase's start to its end. */
	function steps(phases, read) {
		const points = [];
		for (const { start, end, phase } of phases) {
			const value = read(phase);
			if (value == null) continue;
			points.push({ x: start / 1000, y: mib(value) }, { x: end / 1000, y: mib(value) });
		}
		return points;
	}

	/**
	 * The page's own samples on the sampler's clock: the page's clock starts at navigation, the
	 * sampler's before the browser, so the page's `baseline` sample is put at the baseline mark.
	 */
	function pageSeries(run, phases) {
		const samples = run.summary.memorySamples ?? [];
		const baselinePhase = phases.find((p) => p.name === "baseline");
		const baselineSample = samples.find((s) => s.label === "baseline");
		const offset = baselinePhase && baselineSample ? baselinePhase.start - baselineSample.atMs : 0;
		const series = new Map();
		const add = (name, atMs, bytes) => {
			if (typeof bytes !== "number") return;
			if (!series.has(name)) series.set(name, []);
			series.get(name).push({ x: (atMs + offset) / 1000, y: mib(bytes) });
		};
		for (const sample of samples) {
			add("GPU bytes, page", sample.atMs, sample.gpu?.liveBytes);
			add("JS heap used", sample.atMs, sample.usedJSHeapSize);
			for (const heap of sample.wasmHeaps ?? []) add(`WASM heap, page ${heap.label}`, sample.atMs, heap.bytes);
			// Each worker's last report, as the page held it at the sample (crate/src/types.d.ts, RealmMemory).
			for (const [realm, report] of [
				["vision worker", sample.worker],
				["decoder worker", sample.decoderWorker],
			]) {
				add(`GPU bytes, ${realm}`, sample.atMs, report?.gpu?.liveBytes);
				for (const heap of report?.wasmHeaps ?? []) add(`WASM heap, ${realm} ${heap.label}`, sample.atMs, heap.bytes);
			}
		}
		return series;
	}

	function timelineDatasets(run) {
		const phases = phasesOf(run);
		const datasets = [];
		const push = (label, data, style = {}) => {
			if (data.length)
				datasets.push({
					label,
					data,
					borderColor: color(datasets.length),
					backgroundColor: color(datasets.length),
					pointRadius: 0,
					borderWidth: 1.5,
					...style,
				});
		};
		push(
			"RSS, all processes",
			steps(phases, (p) => p.total?.peakRssBytes),
			{ borderWidth: 2.5 },
		);
		push(
			"PSS, all processes",
			steps(phases, (p) => p.total?.peakPssBytes),
			{ borderWidth: 2.5, borderDash: [6, 3] },
		);
		for (const type of PROCESS_TYPES) {
			push(
				`RSS, ${type}`,
				steps(phases, (p) => p.byType?.[type]?.peakRssBytes),
			);
			push(
				`PSS, ${type}`,
				steps(phases, (p) => p.byType?.[type]?.peakPssBytes),
				{ borderDash: [6, 3], hidden: true },
			);
		}
		// Driver VRAM (NVML) where the runner recorded it; absent on machines without the driver.
		const extra = [...new Set(phases.flatMap((p) => extraPeakKeys(p.phase.total)))];
		for (const key of extra)
			push(
				`${key.replace(/^peak|Bytes$/g, "")}, all processes`,
				steps(phases, (p) => p.total?.[key]),
				{ borderWidth: 2.5, borderDash: [2, 2] },
			);
		for (const [label, data] of pageSeries(run, phases)) push(label, data, { pointRadius: 3, showLine: true, stepped: false });
		return { datasets, phases };
	}

	/** (a) One run's memory over time with its phase marks; a select picks the run. */
	function timelineChart(root, runs) {
		const parts = figure(
			root,
			"timeline",
			"Memory over a run",
			"Sampler figures are the peak of each phase (RSS every tick, PSS less often), drawn as steps from the phase's mark to the next; GPU bytes, JS heap and WASM heaps (the page's, and each worker's where the run had one) are the page's own samples between phases, put on the sampler's clock at the baseline mark. Click a legend entry to show or hide it.",
		);
		/** @type {import("chart.js").Chart | null} */
		let chart = null;
		const show = (index) => {
			const run = runs[index];
			const { datasets, phases } = timelineDatasets(run);
			const options = baseOptions("seconds since the sampler started", "MiB");
			options.scales.x.type = "linear";
			options.plugins.phaseMarks = { phases };
			chart?.destroy();
			chart = new Chart(parts.canvas, { type: "line", data: { datasets }, options, plugins: [phaseMarks] });
			parts.element.dataset.points = String(pointsOf(datasets));
			parts.element.dataset.run = run.runId;
			parts.element.dataset.series = JSON.stringify(datasets.map((d) => d.label));
			const driver = run.processMemory?.driverGpuMemory;
			parts.note.dataset.driver = driver && driver.available === false ? `driver VRAM not recorded: ${driver.reason ?? "unavailable"}` : "";
		};
		select(
			parts.controls,
			"run",
			runs.map((run, index) => [String(index), `${run.configuration} · ${run.runId}${run.file ? ` (${run.file})` : ""}`]),
			(value) => show(Number(value)),
		);
		show(0);
	}

	Object.assign(window.OcrReport, { timelineChart });
})();
