// @ts-check
// profile=ops: where a session's time goes per operator type, and which nodes
// onnxruntime-web placed off the WebGPU device.
//
// How onnxruntime-web's native WebGPU build reports it, read from 1.30.0's
// sources and dist files; 1.31.1 reports the same way (a profile=ops run in
// Firefox parsed its Node and timestamp events and its placement lines, with
// its decoder's 2 CPU nodes named), so one parser serves both versions
// (ort=). With enableProfiling, session.endProfiling() prints
// a Chrome-trace JSON array on console.log, one line per call, and nothing
// else gets it. "Node" events carry each kernel's CPU-side time with op_name
// and provider (for a WebGPU node that is encoding and dispatch, not the GPU's
// time); when the device has timestamp-query, the EP also writes timestamps
// around every dispatch's compute pass and adds them as "Api" events named
// node&opType&program. With logSeverityLevel 0, session creation logs the node
// placement ("Node(s) placed on [CPUExecutionProvider]…") on console.error.
// ORT binds console.log/error when its WASM starts, so the tap must be in place
// before the first session of the realm: ort.js installs it on import.

/** @type {string[] | null} */
let capturing = null;
let tapped = false;
const VERBOSE_ORT_LINE = /\[[VI]:onnxruntime:/;

/** Wraps console.log and console.error once; they forward unless a capture is on. */
export function installConsoleTap() {
	if (tapped) return;
	tapped = true;
	for (const level of ["log", "error"]) {
		const original = console[level].bind(console);
		console[level] = (...parts) => {
			if (capturing) capturing.push(parts.map(String).join(" "));
			// profile=ops leaves the session logger verbose after creation; its
			// per-run verbose and info lines ("Starting program …" for every
			// kernel) would flood the browser's log and, measured on the H200,
			// slow a hayai13 run past 110 s, so they are dropped.
			else if (!VERBOSE_ORT_LINE.test(String(parts[0]))) original(...parts);
		};
	}
}

/** Runs fn with this realm's console captured; returns { value, lines }. */
export async function captureConsole(fn) {
	/** @type {string[]} */
	const lines = [];
	capturing = lines;
	try {
		return { value: await fn(), lines };
	} finally {
		capturing = null;
	}
}

/** The session options profile=ops adds: the profiler, and the placement log. */
/** @type {import("onnxruntime-web").InferenceSession.SessionOptions} */
export const PROFILE_SESSION_OPTIONS = { enableProfiling: true, logSeverityLevel: 0 };

/** Node placement from the creation log: { providers: { [ep]: count }, offDevice: [{ opType, node, provider }] }. */
export function parsePlacement(lines) {
	const providers = {};
	const offDevice = [];
	/** @type {string | null} */
	let current = null;
	for (const line of lines) {
		const all = /All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)/.exec(line);
		if (all) {
			providers[all[1]] = Number(all[2]);
			current = null;
			continue;
		}
		const some = /Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)/.exec(line);
		if (some) {
			providers[some[1]] = Number(some[2]);
			current = some[1];
			continue;
		}
		const node = /VerifyEachNodeIsAssignedToAnEp\]\s+(\S+) \((.*)\)\s*$/.exec(line);
		if (node && current && !/WebGpu/i.test(current)) offDevice.push({ opType: node[1], node: node[2], provider: current });
	}
	return { providers, offDevice, found: Object.keys(providers).length > 0 };
}

function parseTrace(lines) {
	const start = lines.findIndex((line) => line.trimStart().startsWith("["));
	const end = lines.findLastIndex((line) => line.trimEnd().endsWith("]"));
	if (start < 0 || end < start) return null;
	try {
		return JSON.parse(lines.slice(start, end + 1).join("\n"));
	} catch {
		return null;
	}
}

/**
 * Per op type: CPU-side kernel ms per provider and, where timestamps were
 * written, GPU ms; totals and the number of session runs profiled.
 */
export function summarizeTrace(lines) {
	const events = parseTrace(lines);
	if (!Array.isArray(events))
		return { available: false, reason: "onnxruntime-web printed no profile (endProfiling wrote no JSON array on the console)" };
	const byOp = new Map();
	const entry = (opType) => {
		if (!byOp.has(opType)) byOp.set(opType, { opType, nodes: new Set(), cpuMsByProvider: {}, gpuMs: 0, gpuDispatches: 0 });
		return byOp.get(opType);
	};
	let runs = 0;
	let gpuEvents = 0;
	for (const event of events) {
		if (event.cat === "Session" && event.name === "model_run") runs += 1;
		if (event.cat === "Node" && typeof event.name === "string" && event.name.endsWith("_kernel_time")) {
			const op = entry(event.args?.op_name ?? "unknown");
			const provider = event.args?.provider ?? "unknown";
			op.nodes.add(event.name.slice(0, -"_kernel_time".length));
			op.cpuMsByProvider[provider] = (op.cpuMsByProvider[provider] ?? 0) + event.dur / 1000;
		}
		if (event.cat === "Api" && typeof event.name === "string" && event.name.split("&").length >= 3) {
			const op = entry(event.name.split("&").at(-2));
			op.gpuMs += event.dur / 1000;
			op.gpuDispatches += 1;
			gpuEvents += 1;
		}
	}
	const ops = [...byOp.values()]
		.map((op) => ({ ...op, nodes: op.nodes.size, cpuMs: Object.values(op.cpuMsByProvider).reduce((a, b) => a + b, 0) }))
		.sort((a, b) => b.gpuMs - a.gpuMs || b.cpuMs - a.cpuMs);
	return {
		available: true,
		runs,
		gpuTimestamps: gpuEvents > 0,
		gpuMs: ops.reduce((sum, op) => sum + op.gpuMs, 0),
		cpuKernelMs: ops.reduce((sum, op) => sum + op.cpuMs, 0),
		ops,
	};
}

/** Ends a session's profile and summarises it with the placement seen at creation. */
export async function endProfile(session, placementLines) {
	const { lines } = await captureConsole(() => session.endProfiling());
	return { placement: parsePlacement(placementLines), ...summarizeTrace(lines) };
}
