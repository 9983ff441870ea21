// @ts-check
// Shows the runs of a results JSONL (what `ocr-bench serve|run|sweep`
// appends, one record per line) side by side: one column per run, finished
// or failed. ?file= names the file (served from the repository root). The
// configuration rows are the core's parameters (pkg/), in its order.
// Each fact is read from the one record that holds it (runner/README.md,
// "Results file"): the run id at a record's top (a result's in its summary),
// the configuration in the summary (the start record's for a failed run),
// the adapter and ORT version in the start record. Below the table, the
// charts of www/report/charts.js (loaded first, as window.OcrReport), the same
// as in the static report `ocr-bench report --out DIR` writes.

import { messageOf } from "../browser/errors.js";

// report.html has each element this script looks up.
const element = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));

const params = new URLSearchParams(location.search);
const file = params.get("file") ?? "/results/results.jsonl";
/** @type {HTMLInputElement} */ (document.querySelector("#source [name=file]")).value = file;

const mib = (bytes) => (bytes == null ? "—" : `${(bytes / 2 ** 20).toFixed(0)} MiB`);
const ms = (value) => (value == null ? "—" : `${Math.round(value)} ms`);
const fixed = (value, digits) => (value == null ? "—" : Number(value).toFixed(digits));

/** One entry per runId: its result, or its error, and what it was run on. */
function collectRuns(records) {
	const runs = new Map();
	for (const record of records) {
		const runId = record.kind === "result" ? record.summary?.runId : record.runId;
		if (!runId) continue;
		const run = runs.get(runId) ?? { runId, cases: 0 };
		runs.set(runId, run);
		run.browser ??= record.browser;
		run.query ??= record.query;
		if (record.kind === "start") {
			run.start = record.body;
			run.machine = record.machine;
		}
		if (record.kind === "progress") run.cases += 1;
		// The page's own phase; the sampler's when the page named none.
		if (record.kind === "error") run.error = { phase: record.body?.phase ?? record.phase, ...record.body?.error };
		if (record.kind === "result") {
			run.summary = record.summary;
			run.processMemory = record.processMemory;
		}
	}
	return [...runs.values()].filter((run) => run.summary || run.error);
}

/** "RSS / PSS" peaks of all processes over the phase; PSS is sampled less often and may be absent. */
function phasePeak(run, phase) {
	const total = run.processMemory?.phases?.[phase]?.total;
	if (!total) return "—";
	return total.peakPssBytes == null ? `${mib(total.peakRssBytes)} / —` : `${mib(total.peakRssBytes)} / ${mib(total.peakPssBytes)}`;
}

function rows(runs, parameterNames) {
	const config = (key) => (run) => (run.summary ?? run.start)?.config?.[key] ?? "—";
	const summary = (read) => (run) => (run.summary ? read(run.summary) : "—");
	const phases = [...new Set(runs.flatMap((run) => Object.keys(run.processMemory?.phases ?? {})))];
	return [
		[
			"browser",
			(run) => {
				const { name = "", version = "" } = run.browser ?? {};
				return (version.toLowerCase().includes(name.toLowerCase()) ? version : `${name} ${version}`).trim() || "—";
			},
		],
		...parameterNames.map((key) => [key, config(key)]),
		["status", (run) => (run.error ? `FAILED in ${run.error.phase}: ${run.error.message}` : "finished")],
		["nCER", summary((s) => (s.accuracyApplicable === false ? "n/a" : fixed(s.nCER, 4)))],
		["exact", summary((s) => (s.accuracyApplicable === false ? "n/a" : `${s.exact}/${s.cases}`))],
		["trailing extras", summary((s) => (s.accuracyApplicable === false || s.trailingExtras == null ? "n/a" : `${s.trailingExtras}/${s.cases}`))],
		["median case", summary((s) => ms(s.medianMs))],
		["peak case", summary((s) => ms(s.peakCaseMs))],
		["ms per decode step", summary((s) => fixed(s.msPerToken, 1))],
		["first-case prefill", summary((s) => ms(s.results?.[0]?.prefillMs))],
		["vision session", summary((s) => ms(s.sessionMs?.vision))],
		["decoder session", summary((s) => ms(s.sessionMs?.decoder))],
		["wall", summary((s) => ms(s.wallMs))],
		...phases.map((phase) => [`peak RSS / PSS: ${phase}`, (run) => phasePeak(run, phase)]),
		[
			"adapter",
			(run) => {
				const adapter = run.start?.adapter;
				return adapter
					? `${adapter.vendor} ${adapter.architecture} ${adapter.features?.includes("shader-f16") ? "(shader-f16)" : "(no shader-f16)"}`
					: "—";
			},
		],
		["onnxruntime-web", (run) => run.start?.ortVersion ?? "—"],
		["runId", (run) => run.runId],
	];
}

function render(runs, parameterNames) {
	const table = /** @type {HTMLTableElement} */ (document.querySelector("#runs"));
	table.replaceChildren();
	for (const [name, read] of rows(runs, parameterNames)) {
		const values = runs.map((run) => String(read(run)));
		const row = table.insertRow();
		const differs = new Set(values).size > 1;
		const th = document.createElement("th");
		th.textContent = differs ? `◆ ${name}` : name;
		row.append(th);
		for (const value of values) {
			const td = row.insertCell();
			// Long errors are cut in the table; the whole text is the cell's tooltip.
			td.textContent = value.length > 200 ? `${value.slice(0, 200)}…` : value;
			td.title = value;
			if (value.startsWith("FAILED")) td.className = "failed";
		}
	}
}

/** The parameter names from the core; a core that cannot load is reported, not hidden. */
async function loadParameterNames() {
	try {
		const core = await import("../pkg/ocr_bench_core.js");
		await core.default();
		return core.parameters().map((parameter) => parameter.name);
	} catch (error) {
		throw new Error(`the core could not load (scripts/build-wasm writes pkg/): ${messageOf(error)}`);
	}
}

try {
	const parameterNames = await loadParameterNames();
	const response = await fetch(file);
	if (!response.ok)
		throw new Error(
			`HTTP ${response.status}${response.status === 404 ? " (no runs recorded yet? ./scripts/bench writes results/results.jsonl)" : ""}`,
		);
	const { records, problems } = window.OcrReport.parseJsonl(await response.text());
	const runs = collectRuns(records);
	render(runs, parameterNames);
	const status = element("#status");
	status.textContent = `${runs.length} run(s) from ${file}${problems.length ? `; unreadable lines skipped: ${problems.join("; ")}` : ""}.`;
	status.className = problems.length ? "failed" : "done";
	// A file of failed runs only still has its table; the charts say why they are missing.
	try {
		window.OcrReport.render(element("#charts"), records);
	} catch (error) {
		const note = document.createElement("p");
		window.OcrReport.fail(element("#charts"), note, `No charts: ${messageOf(error)}`);
		element("#charts").replaceChildren(note);
	}
} catch (error) {
	const status = element("#status");
	status.textContent = `Could not show ${file}: ${messageOf(error)}`;
	status.className = "failed";
}
