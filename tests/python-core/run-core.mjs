// Runs the page's wasm core (pkg/) on inputs that a Python test generated, so the test can
// require the Python evaluation code to give the same answers.
//
//   node tests/python-core/run-core.mjs REQUEST.json [LOGITS.f32]
//
// REQUEST.json: {
//   "choose": [{"tokens": [id, ...]}, ...],   // one decoding state per case, BOS implied
//   "normalize": [text, ...],
//   "editDistance": [[left, right], ...],
//   "summarize": [[{"id", "expected", "actual"}, ...], ...]   // one list per evaluation set
// }   (every key optional)
// LOGITS.f32: one little-endian float32 vector of the vocabulary's size per "choose" case,
// back to back (models/vocab.json's length + 4 values each).
//
// Prints one JSON object with the same keys: "choose" holds the chosen id or {"error": message}
// per case, "contentIds" the ids the core's Vocabulary calls content, "size" the vocabulary's
// size, "summarize" the core's summary of each set (its accuracy fields only).
import { readFileSync } from "node:fs";
import { loadCore, loadVocabulary } from "../parity/load-core.mjs";

const [requestPath, logitsPath] = process.argv.slice(2);
if (!requestPath) {
	console.error("usage: node tests/python-core/run-core.mjs REQUEST.json [LOGITS.f32]");
	process.exit(2);
}
const request = JSON.parse(readFileSync(requestPath, "utf8"));
const core = await loadCore();
const vocabulary = new core.Vocabulary(loadVocabulary());
const size = vocabulary.size;
const reply = { size };

const contentIds = [];
for (let id = 0; id < size; id += 1) if (vocabulary.isContent(id)) contentIds.push(id);
reply.contentIds = contentIds;

if (request.choose) {
	if (!logitsPath) throw new Error("\"choose\" cases need the logits file as the second argument");
	const bytes = readFileSync(logitsPath);
	const expectedBytes = request.choose.length * size * 4;
	if (bytes.byteLength !== expectedBytes) {
		throw new Error(`${logitsPath} has ${bytes.byteLength} bytes; ${request.choose.length} cases of ${size} float32 need ${expectedBytes}`);
	}
	// Copy into an aligned buffer: a Buffer from readFileSync may start at any byte offset.
	const all = new Float32Array(new Uint8Array(bytes).buffer);
	const chooser = new core.TokenChooser(vocabulary);
	reply.choose = request.choose.map(({ tokens }, index) => {
		chooser.reset();
		for (const id of tokens) chooser.push(id);
		try {
			return chooser.choose(all.subarray(index * size, (index + 1) * size));
		} catch (error) {
			return { error: String(error.message ?? error) };
		}
	});
}
if (request.normalize) reply.normalize = request.normalize.map((text) => core.normalize(text));
if (request.editDistance) reply.editDistance = request.editDistance.map(([left, right]) => core.editDistance(left, right));
if (request.summarize) {
	reply.summarize = request.summarize.map((set) => {
		const summary = core.summarize(set.map((c) => ({ ...c, totalMs: 0 })));
		const { cases, nCER, distance, characters, exact, trailingExtras, perCase } = summary;
		return { cases, nCER, distance, characters, exact, trailingExtras, perCase };
	});
}
process.stdout.write(JSON.stringify(reply));
