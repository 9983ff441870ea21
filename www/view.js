// @ts-check
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
const fine = (value) => (value == null ? "—" : `${value.toFixed(value < 10 ? 2 : 1)} ms`);
const spread = (stats) => (stats ? `p50 ${fine(stats.p50Ms)} · p90 ${fine(stats.p90Ms)} · max ${fine(stats.maxMs)}` : "—");

/** Whether a floor was measured in this run or reused from the runner's probe cache (www/probe-cache.js). */
function floorOrigin(source) {
	if (!source) return "";
	return source.origin === "reused" ? `; reused, measured ${source.measuredAt}` : "; measured";
}

/** The decode probe's lines of the summary table. */
function probeLines(summary) {
	const probe = summary.decodeProbe;
	if (!probe) return [];
	const floor = summary.completion?.page?.dispatchReadback;
	const lines = [
		["per token", spread(probe.tokenLatency)],
		["  submit / sync / choose (p50)", `${fine(probe.submit?.p50Ms)} / ${fine(probe.sync?.p50Ms)} / ${fine(probe.choose?.p50Ms)}`],
		["time to first token", spread(probe.timeToFirstToken)],
		["tokens per second", probe.tokensPerSecond == null ? "—" : probe.tokensPerSecond.toFixed(1)],
		[
			"completion floor (page)",
			floor
				? `${fine(floor.p50Ms)} (dispatch + readback), ${fine(summary.completion.page.emptyQueue?.p50Ms)} (empty queue); poll=${summary.poll.mode}${floorOrigin(summary.completion.page.source)}`
				: "—",
		],
		["completion", summary.completion?.check?.verdict ?? "—"],
	];
	if (probe.gpuMsPerDecoderRun != null) lines.push(["GPU time per decoder run (timestamps)", fine(probe.gpuMsPerDecoderRun)]);
	if (summary.repeats?.count > 1) {
		const token = summary.repeats.interval.tokenP50Ms;
		lines.push([
			"per-token p50 across repeats",
			token?.halfWidth == null ? "—" : `${fine(token.mean)} ± ${fine(token.halfWidth)} (95 %, ${token.n} repeats)`,
		]);
	}
	for (const [session, profile] of Object.entries(summary.profile ?? {})) {
		if (!profile?.available) continue;
		const top = profile.ops
			.slice(0, 5)
			.map((op) => `${op.opType} ${profile.gpuTimestamps ? fine(op.gpuMs) : fine(op.cpuMs)}`)
			.join(", ");
		const off = profile.placement.offDevice.map((node) => node.opType);
		lines.push([`${session}: top ops (${profile.gpuTimestamps ? "GPU" : "CPU-side"})`, top || "—"]);
		lines.push([
			`${session}: nodes off WebGPU`,
			off.length ? `${off.length}: ${[...new Set(off)].join(", ")}` : profile.placement.found ? "none" : "placement not logged",
		]);
	}
	return lines;
}
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
			$("#config").textContent = Object.entries(config)
				.filter(([key]) => key !== "query")
				.map(([key, value]) => `${key}=${value}`)
				.join("  ");
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
				// Read on past the end of the text: the expected text, then extra characters.
				["trailing extras", summary.accuracyApplicable ? `${summary.trailingExtras}/${summary.cases}` : "not applicable"],
				...Object.entries(summary.perStyle ?? {}).map(([style, s]) => [
					`nCER, style ${style}`,
					`${ratio(s.nCER)} (${s.exact}/${s.cases} exact, ${s.trailingExtras} trailing extras)`,
				]),
				["median case", ms(summary.medianMs)],
				["peak case", ms(summary.peakCaseMs)],
				["mean case", ms(summary.meanMs)],
				["p90 case", ms(summary.p90Ms)],
				["ms per decode step", summary.msPerToken == null ? "—" : summary.msPerToken.toFixed(1)],
				...probeLines(summary),
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
