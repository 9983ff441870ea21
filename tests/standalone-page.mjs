// What every page the runner opens with `--page` shares (tests/gpu-choose,
// tests/image-input, bench/core): a log on the page and in the console, its
// reports to the runner's server, and the done flag the runner waits for.

/** name: the page's name, used in its run id and as the phase of its error. */
export function standalonePage(name) {
	const output = document.querySelector("#log");
	const runId = `${name}-${Date.now()}`;
	const log = (line) => {
		output.textContent += `\n${line}`;
		console.log(line);
	};
	const post = async (path, body) => {
		const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
		if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status}`);
	};
	return {
		runId,
		log,
		/** The page's figures: kept where the runner reads them, and posted. */
		async report(result) {
			window.__benchmarkResult = result;
			await post("/benchmark-result", result);
		},
		/** Runs the page; an error is logged and posted as the page's, and the page is done either way. */
		async run(body) {
			try {
				await body();
			} catch (error) {
				log(`FAIL ${error?.stack ?? error}`);
				await post("/benchmark-error", {
					runId, phase: name, error: { name: error?.name, message: String(error?.message ?? error), stack: error?.stack },
				}).catch((postError) => log(`FAIL reporting the error: ${postError}`));
			} finally {
				window.__benchmarkDone = true;
			}
		},
	};
}
