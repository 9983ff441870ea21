// @ts-check
// The reporting client: everything the page learns goes to the server that
// served it (docs/architecture.md, "Server endpoints"), so a runner can
// follow the run and a crash loses no finished case.

// Under `ocr-bench run` the server takes reports only with the run's secret,
// a cookie the runner's launch URL set; "same-origin" (fetch's default, kept
// explicit here) sends it with every report.
async function post(path, body) {
	const response = await fetch(path, {
		method: "POST",
		credentials: "same-origin",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`The server refused ${path}: HTTP ${response.status}`);
	return response.json();
}

export function createReporter(runId) {
	return {
		start: (details) => post("/benchmark-start", { runId, ...details }),
		mark: (phase) => post("/benchmark-mark", { runId, phase }),
		// A step within the phase under way (the release phase's), sampled as a mark is.
		step: (phase, step) => post("/benchmark-mark", { runId, phase, step }),
		progress: (finishedCase) => post("/benchmark-progress", { runId, case: finishedCase }),
		// Answers with the process memory the server measured per phase.
		result: (summary) => post("/benchmark-result", summary),
		// Best effort: the error being reported may be that the server is gone.
		error: (phase, error) =>
			post("/benchmark-error", { runId, phase, error }).catch((failure) => {
				console.error(`Could not report the error to the server: ${failure.message}`);
			}),
	};
}
