// @ts-check
// Charts (b) to (d) of the report (www/report/charts.js), one bar or column
// per configuration: the peak memory per phase, every token time with its p50,
// and nCER.
(() => {
	"use strict";

	const { phasesOf, extraPeakKeys, tokenTimes, mib, color, figure, select, baseOptions, pointsOf } = window.OcrReport;

	/** The largest value of `read` over a configuration's runs, per phase name. */
	function phasePeaks(group, read) {
		const peaks = new Map();
		for (const run of group.runs) {
			for (const { name, phase } of phasesOf(run)) {
				const value = read(phase);
				if (value != null) peaks.set(name, Math.max(peaks.get(name) ?? 0, value));
			}
		}
		return peaks;
	}

	/** (b) Per-phase peaks across configurations, PSS by default; RSS and driver VRAM by the select. */
	function phasePeaksChart(root, groups) {
		const parts = figure(
			root,
			"phase-peaks",
			"Peak memory per phase",
			"The largest total over all the browser's processes in each phase, the highest over a configuration's runs. PSS is sampled less often than RSS, so a short phase may have no PSS value.",
		);
		const phaseNames = [...new Set(groups.flatMap((g) => g.runs.flatMap((run) => phasesOf(run).map((p) => p.name))))];
		const extra = [...new Set(groups.flatMap((g) => g.runs.flatMap((run) => phasesOf(run).flatMap((p) => extraPeakKeys(p.phase.total)))))];
		const metrics = [["peakPssBytes", "PSS"], ["peakRssBytes", "RSS"], ...extra.map((key) => [key, key.replace(/^peak|Bytes$/g, "")])];
		/** @type {import("chart.js").Chart | null} */
		let chart = null;
		const show = (key) => {
			const datasets = groups.map((group, index) => {
				const peaks = phasePeaks(group, (phase) => phase.total?.[key]);
				return { label: group.name, data: phaseNames.map((name) => mib(peaks.get(name))), backgroundColor: color(index) };
			});
			chart?.destroy();
			chart = new Chart(parts.canvas, { type: "bar", data: { labels: phaseNames, datasets }, options: baseOptions("phase", "MiB") });
			parts.element.dataset.points = String(pointsOf(datasets));
		};
		select(parts.controls, "measure", metrics, show);
		show(metrics[0][0]);
	}

	/** (c) Every token time of each configuration's runs, one column per configuration, its p50 marked. */
	function latencyChart(root, groups) {
		const parts = figure(
			root,
			"token-latency",
			"Per-token latency",
			"Each point is one decode step (submit + sync + the next token's choice) of a case of the configuration's runs, spread sideways to be seen; the bar is the p50 of all of them.",
		);
		const datasets = [];
		const medians = [];
		groups.forEach((group, index) => {
			const times = group.runs.flatMap((run) => tokenTimes(run.summary));
			// A fixed sideways spread (no randomness): the same file draws the same picture.
			const data = times.map((ms, i) => ({ x: index + ((i % 9) - 4) * 0.04, y: ms }));
			datasets.push({ label: group.name, data, backgroundColor: color(index), borderColor: color(index), pointRadius: 3 });
			const sorted = [...times].sort((a, b) => a - b);
			if (sorted.length) medians.push({ x: index, y: sorted[Math.floor((sorted.length - 1) / 2)] });
		});
		datasets.push({ label: "p50", data: medians, pointStyle: "line", pointRadius: 22, borderWidth: 3, borderColor: "#fff", backgroundColor: "#fff" });
		const options = baseOptions("configuration", "ms per token");
		Object.assign(options.scales.x, {
			type: "linear",
			min: -0.5,
			max: groups.length - 0.5,
			// One tick per configuration, at its column (the range's own ticks fall between them).
			afterBuildTicks: (axis) => {
				axis.ticks = groups.map((_, index) => ({ value: index }));
			},
			ticks: { color: "#ccc", autoSkip: false, callback: (value) => groups[value]?.name ?? "" },
		});
		new Chart(parts.canvas, { type: "scatter", data: { datasets }, options });
		parts.element.dataset.points = String(pointsOf(datasets.slice(0, -1)));
	}

	/** (d) nCER per configuration: the mean over its runs; none where accuracy does not apply. */
	function ncerChart(root, groups) {
		const parts = figure(
			root,
			"ncer",
			"nCER per configuration",
			"Normalized character error rate over the cases (0 is perfect), the mean over the configuration's runs; decoder-only runs have none.",
		);
		const data = groups.map((group) => {
			const values = group.runs.map((run) => run.summary.nCER).filter((v) => typeof v === "number");
			return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
		});
		const datasets = [{ label: "nCER", data, backgroundColor: groups.map((_, index) => color(index)) }];
		const options = baseOptions("configuration", "nCER");
		options.plugins.legend.display = false;
		new Chart(parts.canvas, { type: "bar", data: { labels: groups.map((g) => g.name), datasets }, options });
		parts.element.dataset.points = String(pointsOf(datasets));
	}

	Object.assign(window.OcrReport, { phasePeaksChart, latencyChart, ncerChart });
})();
