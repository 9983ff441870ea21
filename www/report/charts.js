// @ts-check
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
//
// The code is in parts, classic scripts that the page loads in this order
// before this one, each adding its functions to window.OcrReport: runs.js
// (reading the records), chart-kit.js (what every chart is drawn with),
// timeline.js (a), configuration-charts.js (b-d), decomposition.js (e, f).
// This file draws them all (render) and starts the static report.
(() => {
	"use strict";

	const { collectRuns, byConfiguration, timelineChart, phasePeaksChart, decompositionChart, phaseDecompositionChart, latencyChart, ncerChart } =
		window.OcrReport;

	/**
	 * A line above the charts naming the configurations with runs whose verify=wasm
	 * failed (their figures are drawn, but are not results of the configuration);
	 * its data-verification-failed is the number of such runs. Returns that number.
	 */
	function verificationBanner(root, groups) {
		const failed = groups
			.map((group) => ({
				name: group.name,
				count: group.runs.filter((run) => run.summary.verification?.passed === false).length,
				of: group.runs.length,
			}))
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

	Object.assign(window.OcrReport, { render, fail });

	// The static report: the records are embedded in the page (`ocr-bench report --out`).
	const embedded = document.getElementById("report-data");
	if (embedded) {
		// The static report's page (runner/src/report_html) has both.
		const root = /** @type {HTMLElement} */ (document.getElementById("charts"));
		const status = /** @type {HTMLElement} */ (document.getElementById("status"));
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
			fail(root, status, `Could not draw the report: ${error instanceof Error ? error.message : error}`);
		}
	}
})();
