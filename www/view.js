// What a person sees: the configuration, progress while it runs, the results
// table at the end, and any failure in plain words. The log also goes to the
// console, where headless runs read it.

const $ = (selector) => document.querySelector(selector);

function cell(row, text, className) {
	const td = row.insertCell();
	td.textContent = text;
	if (className) td.className = className;
	return td;
}

const ms = (value) => (value == null ? "—" : `${value.toFixed(0)} ms`);
const ratio = (value) => (value == null ? "not applicable" : value.toFixed(4));

export function createView() {
	const logLines = [];
	const log = (message) => {
		logLines.push(`${new Date().toISOString()} ${message}`);
		$("#log").textContent = logLines.join("\n");
		console.log(message);
	};
	return {
		log,
		showConfig(config) {
			$("#config").textContent = Object.entries(config).filter(([key]) => key !== "query").map(([key, value]) => `${key}=${value}`).join("  ");
		},
		phase(name) {
			$("#phase").textContent = name;
			log(`PHASE ${name}`);
		},
		progress(done, total, what) {
			$("#progress").max = total;
			$("#progress").value = done;
			$("#progress-text").textContent = `${done}/${total} ${what}`;
		},
		addCase(result, accuracyApplicable) {
			const row = $("#cases tbody").insertRow();
			cell(row, result.id);
			cell(row, accuracyApplicable ? result.expected : "(synthetic)");
			cell(row, result.actual || "∅");
			cell(row, accuracyApplicable ? String(result.distance) : "n/a", "number");
			cell(row, accuracyApplicable ? (result.exact ? "yes" : "no") : "n/a");
			cell(row, String(result.tokens), "number");
			cell(row, ms(result.visionMs), "number");
			cell(row, ms(result.prefillMs), "number");
			cell(row, ms(result.decodeMs), "number");
			cell(row, ms(result.totalMs), "number");
		},
		showSummary(summary) {
			const lines = [
				["cases", summary.cases],
				["nCER", summary.accuracyApplicable ? ratio(summary.nCER) : "not applicable (decoder-only scope: synthetic input, forced tokens)"],
				["exact", summary.accuracyApplicable ? `${summary.exact}/${summary.cases}` : "not applicable"],
				["median case", ms(summary.medianMs)],
				["peak case", ms(summary.peakCaseMs)],
				["mean case", ms(summary.meanMs)],
				["p90 case", ms(summary.p90Ms)],
				["ms per decode step", summary.msPerToken == null ? "—" : summary.msPerToken.toFixed(1)],
			];
			const table = $("#summary");
			table.replaceChildren();
			for (const [name, value] of lines) {
				const row = table.insertRow();
				cell(row, name);
				cell(row, String(value));
			}
			$("#notes").replaceChildren(...summary.timingNotes.map((note) => Object.assign(document.createElement("li"), { textContent: note })));
			$("#status").textContent = "Finished.";
			$("#status").className = "done";
		},
		showError(error, phase) {
			$("#status").textContent = `Failed during ${phase}: ${error.message}`;
			$("#status").className = "failed";
			log(`FAIL ${error.stack ?? error.message}`);
		},
	};
}
