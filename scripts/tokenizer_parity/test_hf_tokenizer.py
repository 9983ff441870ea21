"""The core's HfTokenizer (the imported model's wasm module pkg-hf/, in Node) against Hugging Face's own tokenizers:
the same text for every id sequence of fixture/cases.json, with the special tokens skipped and
kept, for a tokenizer of each model kind (make_fixture.py says how they were made, and why the
Python package is not run here live). The special ids (specialIds) are read through the same
boundary.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixture"
LOAD_CORE = ROOT / "tests" / "parity" / "load-core.mjs"
WASM = ROOT / "pkg-hf" / "ocr_bench_hf_bg.wasm"
KINDS = {"wordpiece": "WordPiece", "bpe_byte_level": "BPE", "bpe_metaspace": "BPE", "unigram": "Unigram"}
MAX_TOKENIZER_BYTES = 50_000

# Reads {tokenizers: {kind: path}, cases: [...]} from argv[2] and writes, per case, the core's
# text or the message it threw; per tokenizer, its model kind and vocabulary size; and specialIds'
# answer for each pair of config texts.
NODE_SCRIPT = """
import { readFileSync, writeFileSync } from "node:fs";
const { loadHfCore } = await import(process.argv[1]);
const core = await loadHfCore();
const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const tokenizers = {};
const kinds = {};
for (const [kind, path] of Object.entries(job.tokenizers)) {
	tokenizers[kind] = core.HfTokenizer.fromJson(readFileSync(path, "utf8"));
	kinds[kind] = { model: tokenizers[kind].model, vocabSize: tokenizers[kind].vocabSize };
}
const texts = job.cases.map(({ tokenizer, ids, skipSpecial }) => {
	try {
		return { text: tokenizers[tokenizer].decode(Uint32Array.from(ids), skipSpecial) };
	} catch (error) {
		return { error: String(error.message) };
	}
});
// The special ids through the same boundary: generation_config.json given, then missing.
const ids = job.specialIds.map(({ generationConfig, config }) => {
	try {
		return core.specialIds(generationConfig, config);
	} catch (error) {
		return { error: String(error.message) };
	}
});
writeFileSync(process.argv[3], JSON.stringify({ kinds, texts, ids }));
"""


# A VisionEncoderDecoder's files: the ids in generation_config.json, and, without it, in
# config.json's decoder; then a config that sets no start.
TROCR_CONFIG = json.dumps(
    {
        "model_type": "vision-encoder-decoder",
        "decoder": {"decoder_start_token_id": 2, "eos_token_id": 2, "pad_token_id": 1},
    }
)
SPECIAL_ID_CONFIGS = [
    {"generationConfig": json.dumps({"decoder_start_token_id": 0, "eos_token_id": [2, 3]}), "config": TROCR_CONFIG},
    {"generationConfig": None, "config": TROCR_CONFIG},
    {"generationConfig": None, "config": json.dumps({"eos_token_id": 2})},
]


def load_fixture() -> dict:
    return json.loads((FIXTURE / "cases.json").read_text(encoding="utf-8"))


CASES = load_fixture()["cases"]


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> dict:
    """The core's answers for every case and, per tokenizer, for an id past its vocabulary, from one Node run."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the wasm core cannot run (scripts/setup installs it)")
    if not WASM.is_file():
        pytest.skip(f"{WASM} is missing: build the core with scripts/build-wasm")
    tmp = tmp_path_factory.mktemp("tokenizer")
    past_the_end = [
        {
            "tokenizer": kind,
            "ids": [0, len(json.loads((FIXTURE / f"{kind}.json").read_text(encoding="utf-8"))["model"]["vocab"])],
            "skipSpecial": True,
        }
        for kind in KINDS
    ]
    job = {
        "tokenizers": {kind: str(FIXTURE / f"{kind}.json") for kind in KINDS},
        "cases": CASES + past_the_end,
        "specialIds": SPECIAL_ID_CONFIGS,
    }
    (tmp / "job.json").write_text(json.dumps(job), encoding="utf-8")
    subprocess.run(
        [
            "node",
            "--input-type=module",
            "-e",
            NODE_SCRIPT,
            LOAD_CORE.as_uri(),
            str(tmp / "job.json"),
            str(tmp / "out.json"),
        ],
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    return json.loads((tmp / "out.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "index",
    range(len(CASES)),
    ids=[f"{c['tokenizer']} | {c['what']} | skip {c['skipSpecial']} | {i}" for i, c in enumerate(CASES)],
)
def test_decode_matches_tokenizers(core: dict, index: int) -> None:
    case, answer = CASES[index], core["texts"][index]
    assert answer == {"text": case["text"]}, f"ids {case['ids']}"


def test_an_id_past_the_vocabulary_is_refused(core: dict) -> None:
    for answer in core["texts"][len(CASES) :]:
        assert "is not in tokenizer.json's vocabulary" in answer.get("error", ""), answer


def test_the_core_reads_each_model_kind(core: dict) -> None:
    assert {kind: answer["model"] for kind, answer in core["kinds"].items()} == KINDS
    for kind, answer in core["kinds"].items():
        stored = json.loads((FIXTURE / f"{kind}.json").read_text(encoding="utf-8"))
        assert answer["vocabSize"] == len(stored["model"]["vocab"]), kind


def test_the_fixture_covers_what_it_claims() -> None:
    fixture = load_fixture()
    # The version crate/Cargo.toml pins for the core.
    assert fixture["tokenizers"] == "0.23.2"
    for kind in KINDS:
        assert (FIXTURE / f"{kind}.json").stat().st_size < MAX_TOKENIZER_BYTES, kind
        cases = [case for case in CASES if case["tokenizer"] == kind]
        # Special tokens in the ids change the text only when they are kept.
        kept = {tuple(case["ids"]): case["text"] for case in cases if not case["skipSpecial"]}
        assert any(case["skipSpecial"] and case["text"] != kept[tuple(case["ids"])] for case in cases), (
            f"{kind}: no case where skipping the special tokens changes the text"
        )
        assert any(any("\u3040" <= ch <= "\u30ff" for ch in case["text"]) for case in cases), f"{kind}: no kana"
    metaspace = json.loads((FIXTURE / "bpe_metaspace.json").read_text(encoding="utf-8"))
    byte_ids = {metaspace["model"]["vocab"][f"<0x{byte:02X}>"] for byte in range(256)}
    assert metaspace["model"]["byte_fallback"]
    assert any(
        case["tokenizer"] == "bpe_metaspace" and case["what"] == "unseen characters" and byte_ids & set(case["ids"])
        for case in CASES
    ), "no sequence with byte-fallback pieces"
    assert any(case["tokenizer"] == "bpe_byte_level" and "\ufffd" in case["text"] for case in CASES), (
        "no byte-level sequence that cuts a character short"
    )


def test_special_ids_cross_the_boundary(core: dict) -> None:
    given, missing, no_start = core["ids"]
    assert given == {"decoderStart": 0, "eos": [2, 3], "pad": 1, "bos": None}
    assert missing == {"decoderStart": 2, "eos": [2], "pad": 1, "bos": None}
    assert "neither `decoder_start_token_id` nor `bos_token_id` is set in config.json;" in no_start["error"]
