// What the page's scripts share through `window`: the result the runner reads, and the
// report's parts (www/report/*.js), classic scripts that meet on window.OcrReport.

interface Window {
	/** The run's summary, or its error, read by the runner's WebDriver targets once __benchmarkDone is set. */
	__benchmarkResult?: unknown;
	__benchmarkDone?: boolean;
	/**
	 * The report's functions, each part adding its own (www/report/charts.js says the order). Classic
	 * scripts cannot import one another's types, so their signatures are not checked across parts.
	 */
	// biome-ignore lint/suspicious/noExplicitAny: the parts' functions and objects, typed where each is defined
	OcrReport: Record<string, any>;
}

/** chart.js's UMD build, loaded by report.html before the report's parts. */
declare const Chart: typeof import("chart.js").Chart;
