// @ts-check
// Test-only fault injection (docs/benchmark-protocol.md, "Fault injection").
// `inject=KIND@POINT[:N]` in the page's URL arms one fault. It is read here and
// cut out of the query before the core parses it, so it never appears in the
// configuration, and it is armed only once the server has confirmed it with
// the run's secret: `ocr-bench run` started with OCR_BENCH_INJECT sends its
// own page to that URL and says yes; a page opened by hand, or under `serve`,
// is refused and fails. The page calls the hooks at a few named points; the
// fault fires once, at the N-th case of the plan (1-based, default 1).
import { withCause } from "../browser/errors.js";

export const PARAMETER = "inject";
const CONFIRM_PATH = "/__ocr-bench/inject";

/** Each kind and the points it can fire at (www/main.js, www/schedules.js). */
export const KINDS = {
	// The page stops reporting: it waits for ever (the runner's --timeout ends it).
	hang: ["case", "encode"],
	// The page's GPUDevice destroyed: at the start of a case, or after its prefill.
	"device-lost": ["case", "decode"],
	// The vision worker throws in its encode handler (schedule=staged).
	"worker-throw": ["encode"],
	// The vision worker closes itself in its encode handler, answering nothing.
	"worker-terminate": ["encode"],
	// The vision worker destroys its own GPUDevice in its encode handler.
	"worker-device-lost": ["encode"],
	// The case's WebGPU decode (choose=cpu, in the page or the decoder worker)
	// made to leave the WASM reference (browser/decoding/divergence.js): one logit, the chosen
	// token, or one KV slot. verify=wasm must then fail the run.
	"diverge-logit": ["decode"],
	"diverge-token": ["decode"],
	"diverge-kv": ["decode"],
};

/** The kinds that perturb the decode (browser/decoding/divergence.js). */
const isDivergence = (kind) => kind.startsWith("diverge-");

const allowed = () =>
	Object.entries(KINDS)
		.map(([kind, points]) => `${kind}@${points.join("|")}`)
		.join(", ");

/** `KIND@POINT[:N]` as { kind, point, caseNumber }, or an error naming what is allowed. */
export function parseInjection(spec) {
	const match = /^([a-z-]+)@([a-z]+)(?::(\d+))?$/.exec(spec);
	const caseNumber = match?.[3] === undefined ? 1 : Number(match[3]);
	if (!match || !KINDS[match[1]]?.includes(match[2]) || !(caseNumber >= 1 && caseNumber <= 10000)) {
		throw new Error(`inject=${spec} is not a fault this page knows; allowed: KIND@POINT[:N] with N a case number from 1, one of ${allowed()}.`);
	}
	return { kind: match[1], point: match[2], caseNumber };
}

/** The query without its inject= pair (spelled as given), and that pair's value. */
export function splitQuery(search) {
	const body = search.startsWith("?") ? search.slice(1) : search;
	/** @type {string | null} */
	let spec = null;
	const kept = body.split("&").filter((pair) => {
		const [key, value = ""] = pair.split("=");
		if (decodeURIComponent(key) !== PARAMETER) return true;
		spec = decodeURIComponent(value);
		return false;
	});
	const rest = kept.filter((pair) => pair !== "").join("&");
	return { configSearch: rest ? `?${rest}` : "", spec };
}

/**
 * The page's faults: one armed from inject= (createFaults), or none (NO_FAULTS).
 * @typedef {object} Faults
 * @property {string | null} spec
 * @property {boolean} fired
 * @property {(point: string, caseNumber: number, where?: { device?: GPUDevice | null }) => Promise<string | null>} at
 * @property {(config: import("../pkg/ocr_bench_core.js").Config) => void} checkConfig
 * @property {(caseNumber: number, next: (logits: Float32Array, step: number) => number, device: () => GPUDevice | null) => (logits: Float32Array, step: number) => number} duringDecode
 * @property {(caseNumber: number) => string | null} divergence
 * @property {(error: Error) => Error} annotate
 */

/** @type {Faults} */
export const NO_FAULTS = {
	spec: null,
	fired: false,
	at: async () => null,
	checkConfig: () => {},
	duringDecode: (_caseNumber, next) => next,
	divergence: () => null,
	annotate: (error) => error,
};

/**
 * The page's query split in two, and its faults: none without inject=; with
 * it, the server's confirmation first (a refusal throws, naming why).
 */
export async function armFaults(search, log) {
	const { configSearch, spec } = splitQuery(search);
	if (spec === null) return { configSearch, faults: NO_FAULTS };
	const fault = parseInjection(spec);
	const response = await fetch(CONFIRM_PATH, {
		method: "POST",
		credentials: "same-origin",
		headers: { "Content-Type": "application/json" },
		body: JSON.stringify({ inject: spec }),
	});
	const answer = await response.json().catch(() => ({}));
	if (!response.ok) {
		throw new Error(
			`inject=${spec} was refused (HTTP ${response.status}: ${answer.error ?? "no reason given"}). Fault injection is test-only: only the page that \`ocr-bench run\` opened with OCR_BENCH_INJECT set may arm a fault.`,
		);
	}
	log(`FAULT armed: inject=${spec}`);
	return { configSearch, faults: createFaults(spec, fault, log) };
}

/** @returns {Faults} */
function createFaults(spec, fault, log) {
	/** @type {Faults} */
	const faults = {
		spec,
		fired: false,
		/**
		 * The hook at `point` for case `caseNumber`: fires the fault if it is this
		 * one's. Returns the kind a worker has to carry out itself, else null.
		 * @param {string} point
		 * @param {number} caseNumber
		 * @param {{ device?: GPUDevice | null }} [where] the device a GPU fault acts on
		 */
		async at(point, caseNumber, { device } = {}) {
			if (!fire(point, caseNumber, device)) return null;
			if (fault.kind === "hang") {
				log(`FAULT hang: case ${caseNumber} never ends and nothing more is reported`);
				return new Promise(() => {});
			}
			return fault.kind.startsWith("worker-") ? fault.kind : null;
		},
		/** Refuses, before anything loads, a fault that the configuration's decode cannot carry. */
		checkConfig(config) {
			// choose is left out of the config at its default, cpu.
			if (isDivergence(fault.kind) && config.choose === "gpu") {
				throw new Error(
					`inject=${spec}: the divergence faults perturb the decode loop that reads the logits on the CPU (choose=cpu); with choose=gpu the logits and tokens stay on the GPU. Use choose=cpu (verify=wasm requires it too).`,
				);
			}
		},
		/** The token chooser of case `caseNumber`, firing at its first choice (after the prefill). */
		duringDecode(caseNumber, next, device) {
			if (fault.kind !== "device-lost" || fault.point !== "decode" || fault.caseNumber !== caseNumber) return next;
			return (logits, step) => {
				if (step === 0) fire("decode", caseNumber, device());
				return next(logits, step);
			};
		},
		/** The divergence kind for the decode of case `caseNumber` (fired), or null. */
		divergence(caseNumber) {
			if (!isDivergence(fault.kind) || !fire("decode", caseNumber)) return null;
			return fault.kind;
		},
		/** A failure after the fault fired says so. */
		annotate(error) {
			return faults.fired ? withCause(`${error.message} [after the injected fault inject=${spec}]`, error) : error;
		},
	};
	const fire = (point, caseNumber, device) => {
		if (faults.fired || point !== fault.point || caseNumber !== fault.caseNumber) return false;
		faults.fired = true;
		log(`FAULT injected: inject=${spec}`);
		if (fault.kind === "device-lost") {
			if (!device) throw new Error(`inject=${spec}: the page holds no WebGPU device at ${point} of case ${caseNumber}.`);
			device.destroy();
		}
		return true;
	};
	return faults;
}
