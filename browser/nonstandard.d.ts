// Browser APIs the DOM and WebWorker libraries of TypeScript do not declare: each is
// feature-detected where it is read (Chromium has both; Firefox neither).

/** Chromium's JS heap figures (https://developer.mozilla.org/docs/Web/API/Performance/memory). */
interface ChromiumMemoryInfo {
	jsHeapSizeLimit: number;
	totalJSHeapSize: number;
	usedJSHeapSize: number;
}

interface Performance {
	readonly memory?: ChromiumMemoryInfo;
	/** https://wicg.github.io/performance-measure-memory/ (cross-origin isolated Chromium only). */
	measureUserAgentSpecificMemory?(): Promise<{ bytes: number }>;
}
