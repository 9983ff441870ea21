// @ts-check
// The report's reading of a results file (www/report/charts.js says how the
// parts load): JSONL text into records, the finished runs of the benchmark page
// grouped by configuration, each run's phases on the sampler's clock and its
// token times. The first part loaded: it makes window.OcrReport.
(() => {
	"use strict";

	/** Records of JSONL text; lines that are not JSON are skipped, each named in `problems`. */
	function parseJsonl(text) {
		const records = [];
		const problems = [];
		text.split("\n").forEach((line, index) => {
			if (!line.trim()) return;
			try {
				records.push(JSON.parse(line));
			} catch (error) {
				// JSON.parse throws a SyntaxError.
				problems.push(`line ${index + 1}: ${/** @type {SyntaxError} */ (error).message}`);
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
		return Object.keys(extent ?? {}).filter(
			(key) => /^peak.*Bytes$/.test(key) && key !== "peakRssBytes" && key !== "peakPssBytes" && typeof extent[key] === "number",
		);
	}

	/**
	 * Token times of every case of a run as the core counts them: submit + sync +
	 * the next choice, each batch of stepsPerReadback steps (choose=gpu; an older
	 * record: its config's sync) sharing its one readback wait.
	 */
	function tokenTimes(summary) {
		const times = [];
		const configured = summary.config?.choose === "gpu" ? (summary.config?.sync ?? 1) : 1;
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

	window.OcrReport = { parseJsonl, collectRuns, byConfiguration, phasesOf, extraPeakKeys, tokenTimes };
})();
