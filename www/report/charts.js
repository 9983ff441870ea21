// The report's charts, one set of code for both places that show them: the
// static report `ocr-bench report --out DIR` writes (the records embedded as
// JSON in DIR/index.html, opened from disk) and the page `serve` offers
// (www/report.html, the results file fetched). A classic script, not a module:
// Chromium refuses module scripts on file:// pages.
//
// Plots are Chart.js (window.Chart, its UMD file loaded first): one file that
// runs from file:// and has line, bar and scatter charts in one library (uPlot
// draws only x/y series, ECharts is five times the size).
//
// Each chart's container gets data-points (how many values it plots), the
// timeline's also data-series (its series' labels), and the page's root
// data-report ("ready" or "failed"), so a headless browser can check the
// charts from the DOM alone; a line `REPORT {...}` on the console says the same.
(function () {
	"use strict";

	const MIB = 2 ** 20;
	const PROCESS_TYPES = ["browser", "gpu", "renderer", "utility", "other"];
	const COLORS = ["#4e9af1", "#f1a14e", "#6fd37a", "#e8615a", "#b48ef0", "#e5d15c", "#5cd6d6", "#f07fc0", "#a0a0a0", "#8fbf4f"];
	const color = (index) => COLORS[index % COLORS.length];
	const mib = (bytes) => (bytes == null ? null : bytes / MIB);

	/** Records of JSONL text; lines that are not JSON are skipped, each named in `problems`. */
	function parseJsonl(text) {
		const records = [];
		const problems = [];
		text.split("\n").forEach((line, index) => {
			if (!line.trim()) return;
			try {
				records.push(JSON.parse(line));
			} catch (error) {
				problems.push(`line ${index + 1}: ${error.message}`);
			}
		});
		return { records, problems };
	}

	/** The configuration a run belongs to: browser and query, or the run id less its timestamp under `serve`. */
	function configurationOf(record, summary) {
		const userAgent = summary.environment?.userAgent ?? "";
		const browser = record.browser?.name ?? (/Firefox\//.test(userAgent) ? "firefox" : /Chrome\//.test(userAgent) ? "chromium" : "browser?");
		const query = record.query ?? summary.runId.replace(/-\d+$/, "");
		return `${browser} · ${query === "" ? "(default)" : query}`;
	}

	/**
	 * The finished runs of the benchmark page (a result record whose summary has results and
	 * a configuration), in file order; another page's figures have no `config` and are listed
	 * by `otherPagesList` instead.
	 */
	function collectRuns(records) {
		const runs = [];
		for (const record of records) {
			const summary = record.kind === "result" ? record.summary : null;
			if (!summary?.runId || !Array.isArray(summary.results) || !summary.config) continue;
			runs.push({
				runId: summary.runId,
				file: record.file ?? null,
				configuration: configurationOf(record, summary),
				summary,
				processMemory: record.processMemory ?? null,
			});
		}
		return runs;
	}

	/** The run's configurations in order of first appearance, each with its runs. */
	function byConfiguration(runs) {
		const groups = new Map();
		for (const run of runs) {
			if (!groups.has(run.configuration)) groups.set(run.configuration, []);
			groups.get(run.configuration).push(run);
		}
		return [...groups.entries()].map(([name, members]) => ({ name, runs: members }));
	}

	/** The sampler's phases with their start and end on its clock (ms since the sampler started). */
	function phasesOf(run) {
		const phases = [];
		let start = 0;
		for (const [name, phase] of Object.entries(run.processMemory?.phases ?? {})) {
			phases.push({ name, start, end: start + (phase.durationMs ?? 0), phase });
			start += phase.durationMs ?? 0;
		}
		return phases;
	}

	/** The keys `peak…Bytes` of a phase extent other than RSS and PSS: driver VRAM where the runner recorded it. */
	function extraPeakKeys(extent) {
		return Object.keys(extent ?? {}).filter((key) => /^peak.*Bytes$/.test(key) && key !== "peakRssBytes" && key !== "peakPssBytes" && typeof extent[key] === "number");
	}

	/**
	 * Token times of every case of a run as the core counts them: submit + sync +
	 * the next choice, each batch of stepsPerReadback steps (choose=gpu; an older
	 * record: its config's sync) sharing its one readback wait.
	 */
	function tokenTimes(summary) {
		const times = [];
		const configured = summary.config?.choose === "gpu" ? summary.config?.sync ?? 1 : 1;
		for (const result of summary.results ?? []) {
			const probe = result.decodeProbe ?? {};
			const batch = Math.max(1, probe.stepsPerReadback ?? configured);
			const own = (probe.submitMs ?? []).map((submit, step) => submit + (probe.syncMs?.[step] ?? NaN) + (probe.chooseMs?.[step + 1] ?? NaN));
			for (let start = 0; start < own.length; start += batch) {
				const chunk = own.slice(start, start + batch);
				const share = chunk.reduce((sum, value) => sum + value, 0) / chunk.length;
				if (Number.isFinite(share)) for (let k = 0; k < chunk.length; k += 1) times.push(share);
			}
		}
		return times;
	}

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
			// Each worker's last report, as the page held it at the sample (record.d.ts, RealmMemory).
			for (const [realm, report] of [["vision worker", sample.worker], ["decoder worker", sample.decoderWorker]]) {
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
			if (data.length) datasets.push({ label, data, borderColor: color(datasets.length), backgroundColor: color(datasets.length), pointRadius: 0, borderWidth: 1.5, ...style });
		};
		push("RSS, all processes", steps(phases, (p) => p.total?.peakRssBytes), { borderWidth: 2.5 });
		push("PSS, all processes", steps(phases, (p) => p.total?.peakPssBytes), { borderWidth: 2.5, borderDash: [6, 3] });
		for (const type of PROCESS_TYPES) {
			push(`RSS, ${type}`, steps(phases, (p) => p.byType?.[type]?.peakRssBytes));
			push(`PSS, ${type}`, steps(phases, (p) => p.byType?.[type]?.peakPssBytes), { borderDash: [6, 3], hidden: true });
		}
		// Driver VRAM (NVML) where the runner recorded it; absent on machines without the driver.
		const extra = [...new Set(phases.flatMap((p) => extraPeakKeys(p.phase.total)))];
		for (const key of extra) push(`${key.replace(/^peak|Bytes$/g, "")}, all processes`, steps(phases, (p) => p.total?.[key]), { borderWidth: 2.5, borderDash: [2, 2] });
		for (const [label, data] of pageSeries(run, phases)) push(label, data, { pointRadius: 3, showLine: true, stepped: false });
		return { datasets, phases };
	}

	/** Vertical lines at the phase marks, drawn through Chart.js's plugin hook. */
	const phaseMarks = {
		id: "phaseMarks",
		afterDatasetsDraw(chart, _args, options) {
			const { ctx, chartArea, scales } = chart;
			ctx.save();
			ctx.strokeStyle = "#888";
			ctx.fillStyle = "#bbb";
			ctx.font = "11px monospace";
			ctx.setLineDash([2, 4]);
			for (const phase of options.phases ?? []) {
				const x = scales.x.getPixelForValue(phase.start / 1000);
				if (x < chartArea.left || x > chartArea.right) continue;
				ctx.beginPath();
				ctx.moveTo(x, chartArea.top);
				ctx.lineTo(x, chartArea.bottom);
				ctx.stroke();
				ctx.save();
				ctx.translate(x + 3, chartArea.top + 4);
				ctx.rotate(Math.PI / 2);
				ctx.fillText(phase.name, 0, 0);
				ctx.restore();
			}
			ctx.restore();
		},
	};

	const baseOptions = (xTitle, yTitle) => ({
		animation: false,
		maintainAspectRatio: false,
		color: "#ddd",
		scales: {
			x: { title: { display: true, text: xTitle, color: "#ddd" }, ticks: { color: "#ccc" }, grid: { color: "#333" } },
			y: { title: { display: true, text: yTitle, color: "#ddd" }, ticks: { color: "#ccc" }, grid: { color: "#333" }, beginAtZero: true },
		},
		plugins: { legend: { labels: { color: "#ddd", boxWidth: 12 } } },
	});

	const pointsOf = (datasets) => datasets.reduce((sum, d) => sum + d.data.filter((v) => v != null && (typeof v !== "object" || v.y != null)).length, 0);

	/** A figure with a title, an optional control and a canvas; returns its parts. */
	function figure(root, id, title, caption) {
		const element = document.createElement("figure");
		element.className = "chart";
		element.dataset.chart = id;
		const heading = document.createElement("h2");
		heading.textContent = title;
		const controls = document.createElement("div");
		controls.className = "controls";
		const box = document.createElement("div");
		box.className = "canvas-box";
		const canvas = document.createElement("canvas");
		box.append(canvas);
		const note = document.createElement("figcaption");
		note.textContent = caption;
		element.append(heading, controls, box, note);
		root.append(element);
		return { element, controls, canvas, note };
	}

	function select(controls, label, options, onChange) {
		const wrapper = document.createElement("label");
		wrapper.textContent = `${label} `;
		const input = document.createElement("select");
		options.forEach(([value, text]) => input.add(new Option(text, value)));
		input.addEventListener("change", () => onChange(input.value));
		wrapper.append(input);
		controls.append(wrapper);
		return input;
	}

	/** (a) One run's memory over time with its phase marks; a select picks the run. */
	function timelineChart(root, runs) {
		const parts = figure(root, "timeline", "Memory over a run", "Sampler figures are the peak of each phase (RSS every tick, PSS less often), drawn as steps from the phase's mark to the next; GPU bytes, JS heap and WASM heaps (the page's, and each worker's where the run had one) are the page's own samples between phases, put on the sampler's clock at the baseline mark. Click a legend entry to show or hide it.");
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
		select(parts.controls, "run", runs.map((run, index) => [String(index), `${run.configuration} · ${run.runId}${run.file ? ` (${run.file})` : ""}`]), (value) => show(Number(value)));
		show(0);
	}

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
		const parts = figure(root, "phase-peaks", "Peak memory per phase", "The largest total over all the browser's processes in each phase, the highest over a configuration's runs. PSS is sampled less often than RSS, so a short phase may have no PSS value.");
		const phaseNames = [...new Set(groups.flatMap((g) => g.runs.flatMap((run) => phasesOf(run).map((p) => p.name))))];
		const extra = [...new Set(groups.flatMap((g) => g.runs.flatMap((run) => phasesOf(run).flatMap((p) => extraPeakKeys(p.phase.total)))))];
		const metrics = [["peakPssBytes", "PSS"], ["peakRssBytes", "RSS"], ...extra.map((key) => [key, key.replace(/^peak|Bytes$/g, "")])];
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
		const parts = figure(root, "token-latency", "Per-token latency", "Each point is one decode step (submit + sync + the next token's choice) of a case of the configuration's runs, spread sideways to be seen; the bar is the p50 of all of them.");
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
		const parts = figure(root, "ncer", "nCER per configuration", "Normalized character error rate over the cases (0 is perfect), the mean over the configuration's runs; decoder-only runs have none.");
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
			const gpuParts = [sample.gpu ? windowPeak(sample.gpu) : null, worker?.gpu ? worker.gpu.liveBytes : null, decoder ? windowPeak(decoder.gpu) : null];
			if (gpuParts.some((v) => v != null)) raise(gpu, phase, gpuParts.reduce((a, v) => a + (v ?? 0), 0));
			const wasmParts = [sample.wasmHeaps ? heapBytes(sample.wasmHeaps) : null, worker ? heapBytes(worker.wasmHeaps) : null, decoder ? heapBytes(decoder.wasmHeaps) : null];
			if (wasmParts.some((v) => v != null)) raise(wasm, phase, wasmParts.reduce((a, v) => a + (v ?? 0), 0));
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
		const answers = [environment.adapter, environment.workerAdapter, environment.decoderWorkerAdapter].filter((a) => a != null).map(adapterIsSoftware);
		return answers.includes(true) ? "software" : answers.includes(false) ? "device" : "unknown";
	}

	/** Where each phase's memory went in one run (startup left out: no page sample, no floor). */
	function decompositionOf(run) {
		const { gpu, wasm } = realmBytesByPhase(run.summary.memorySamples);
		const floor = run.processMemory?.floor?.available ? run.processMemory.floor.phases ?? {} : {};
		const driverRead = run.processMemory?.driverGpuMemory?.available === true;
		const placement = gpuPlacement(run.summary);
		const phases = new Map();
		for (const { name, phase } of phasesOf(run)) {
			if (name === "startup") continue;
			const share = { pss: phase.total?.peakPssBytes ?? null, gpu: gpu.get(name) ?? null, wasm: wasm.get(name) ?? null, driverVram: driverRead ? phase.total?.peakDriverGpuBytes ?? null : null, floor: floor[name]?.bytes ?? null };
			share.rest = share.pss == null || placement === "unknown" ? null : share.pss - (share.wasm ?? 0) - (placement === "software" ? share.gpu ?? 0 : 0);
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
		return [
			{ type: "bar", label: "GPU bytes, all realms", data: take("gpu"), backgroundColor: color(0), stack: gpuStack },
			{ type: "bar", label: "WASM heaps, all realms", data: take("wasm"), backgroundColor: color(1), stack: "pss" },
			{ type: "bar", label: "rest of PSS", data: take("rest"), backgroundColor: color(8), stack: "pss" },
			// order -1: drawn last, over the bars (Chart.js draws higher orders first).
			{ type: "line", label: "floor", data: take("floor"), stack: "floor", order: -1, showLine: false, pointStyle: "line", pointRadius: 40, pointBorderWidth: 3, borderColor: "#fff", backgroundColor: "#fff" },
			{ type: "line", label: "driver VRAM", data: take("driverVram"), stack: "vram", order: -1, showLine: false, pointStyle: "crossRot", pointRadius: 8, pointBorderWidth: 2, borderColor: color(3), backgroundColor: color(3) },
		].filter((d) => d.label !== "driver VRAM" || d.data.some((v) => v != null));
	}

	function stackedOptions(xTitle) {
		const options = baseOptions(xTitle, "MiB");
		options.scales.x.stacked = true;
		options.scales.y.stacked = true;
		options.scales.y.beginAtZero = true;
		return options;
	}

	/** Bytes of the shares as the chart shows them, for a headless check. */
	const sharesData = (labels, shares) => JSON.stringify(Object.fromEntries(labels.map((label, i) => [label, shares[i] ?? null])));

	const DECOMPOSITION_CAPTION = "Per phase: the GPU bytes of every realm's WebGPU device, every realm's WebAssembly heaps (onnxruntime and the core) and the rest of PSS (all the browser's processes), of the configuration's run with the highest PSS in the phase; the white mark is the floor (weights + one KV cache + the largest activation). On a software adapter (SwiftShader, llvmpipe/lavapipe, a fallback adapter) the GPU bytes are process memory and the three stack up to PSS; on a real GPU they are device memory, drawn beside PSS, and rest = PSS − WASM.";

	/** (e) One configuration's phases, each a stacked bar of where its memory went. */
	function decompositionChart(root, groups) {
		const parts = figure(root, "decomposition", "Where the memory went, per phase", DECOMPOSITION_CAPTION);
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
		select(parts.controls, "configuration", groups.map((g, index) => [String(index), g.name]), (value) => show(Number(value)));
		show(0);
	}

	/** (f) One phase across configurations: what staged, external weights or gather-opt save. */
	function phaseDecompositionChart(root, groups) {
		const parts = figure(root, "decomposition-across", "One phase across configurations", DECOMPOSITION_CAPTION);
		const perGroup = groups.map(groupDecomposition);
		const phaseNames = [...new Set(perGroup.flatMap((best) => [...best.keys()]))];
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
		const input = select(parts.controls, "phase", phaseNames.map((name) => [name, name]), show);
		const first = phaseNames.includes("decoder-run") ? "decoder-run" : phaseNames[0];
		input.value = first;
		show(first);
	}

	/**
	 * A line above the charts naming the configurations with runs whose verify=wasm
	 * failed (their figures are drawn, but are not results of the configuration);
	 * its data-verification-failed is the number of such runs. Returns that number.
	 */
	function verificationBanner(root, groups) {
		const failed = groups
			.map((group) => ({ name: group.name, count: group.runs.filter((run) => run.summary.verification?.passed === false).length, of: group.runs.length }))
			.filter((group) => group.count > 0);
		const count = failed.reduce((sum, group) => sum + group.count, 0);
		if (!count) return 0;
		const banner = document.createElement("p");
		banner.className = "failed";
		banner.dataset.verificationFailed = String(count);
		banner.textContent = `VERIFICATION FAILED (verify=wasm: a case left the WASM reference), so these runs' figures are not results of their configuration: ${failed.map((group) => `${group.name} (${group.count} of ${group.of} runs)`).join(", ")}`;
		root.append(banner);
		return count;
	}

	/**
	 * Draws every chart of `records` into `root`; returns the points per chart. Throws when
	 * there is no finished run or Chart.js is missing, so the caller can say so.
	 */
	function render(root, records) {
		if (typeof Chart !== "function") throw new Error("Chart.js did not load (npm ci installs it in node_modules/chart.js)");
		const runs = collectRuns(records);
		if (!runs.length) throw new Error("no finished run of the benchmark page (no result record with cases)");
		const groups = byConfiguration(runs);
		root.replaceChildren();
		const verificationFailed = verificationBanner(root, groups);
		timelineChart(root, runs);
		phasePeaksChart(root, groups);
		decompositionChart(root, groups);
		phaseDecompositionChart(root, groups);
		latencyChart(root, groups);
		ncerChart(root, groups);
		const points = {};
		for (const element of root.querySelectorAll("figure.chart")) points[element.dataset.chart] = Number(element.dataset.points);
		root.dataset.report = "ready";
		console.log(`REPORT ${JSON.stringify({ runs: runs.length, configurations: groups.length, points, verificationFailed })}`);
		return points;
	}

	/**
	 * A list above the charts of other pages' results (kept as posted), each in the words
	 * `ocr-bench report` wrote for it: what its figures say and what they lack. Its
	 * data-other-pages is their number. Returns that number.
	 */
	function otherPagesList(root, others) {
		if (!others.length) return 0;
		const section = document.createElement("section");
		section.className = "other-pages";
		section.dataset.otherPages = String(others.length);
		const title = document.createElement("h2");
		title.textContent = "Other pages' results, kept as posted (not drawn: the charts read this page's summary)";
		const list = document.createElement("ul");
		for (const other of others) {
			const item = document.createElement("li");
			item.textContent = `${other.file} · ${other.page ?? "page unknown"} · ${other.runId ?? "no runId"}: ${other.figures}`;
			list.append(item);
		}
		section.append(title, list);
		root.prepend(section);
		return others.length;
	}

	/** Marks `root` failed with the message, on the page and on the console. */
	function fail(root, status, message) {
		root.dataset.report = "failed";
		status.textContent = message;
		status.className = "failed";
		console.error(`REPORT failed: ${message}`);
	}

	window.OcrReport = { parseJsonl, collectRuns, render, fail };

	// The static report: the records are embedded in the page (`ocr-bench report --out`).
	const embedded = document.getElementById("report-data");
	if (embedded) {
		const root = document.getElementById("charts");
		const status = document.getElementById("status");
		try {
			const data = JSON.parse(embedded.textContent);
			const records = data.files.flatMap((file) => file.records.map((record) => ({ ...record, file: file.name })));
			const warnings = data.files.flatMap((file) => file.warnings);
			const others = data.files.flatMap((file) => (file.otherPages ?? []).map((other) => ({ ...other, file: file.name })));
			// A report of other pages' results alone has no chart to draw.
			const othersOnly = others.length > 0 && !collectRuns(records).length;
			if (othersOnly) {
				root.replaceChildren();
				root.dataset.report = "ready";
			}
			const points = othersOnly ? {} : render(root, records);
			const listed = otherPagesList(root, others);
			if (listed) console.log(`REPORT ${JSON.stringify({ otherPages: listed })}`);
			status.textContent = `${data.files.map((f) => f.name).join(", ")}: ${Object.keys(points).length} charts, written ${data.written}${warnings.length ? `; ${warnings.join("; ")}` : ""}`;
			status.className = warnings.length ? "warning" : "done";
		} catch (error) {
			fail(root, status, `Could not draw the report: ${error.message}`);
		}
	}
})();
