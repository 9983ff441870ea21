"""The imported-model oracle (hf_oracle.py) against PyTorch generate()'s ids on the committed test
model (models/hf-test/vit-trocr-tiny/expected-ids.json, made by hf_test_model.make), and
against a wrong token rule."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from ocrmodel import hf_oracle

MODEL = Path(__file__).resolve().parents[2] / "models" / "hf-test" / "vit-trocr-tiny"
EXPECTED = json.loads((MODEL / "expected-ids.json").read_text(encoding="utf-8"))


def readings(rule: hf_oracle.TokenRule | None = None, sets=None) -> dict[str, dict[str, dict]]:
    return {
        name: {r["id"]: r for r in hf_oracle.read(MODEL, name, EXPECTED["maxNewTokens"], rule)["results"]}
        for name in sets or EXPECTED["sets"]
    }


def export_rule() -> hf_oracle.TokenRule:
    config = json.loads((MODEL / "config.json").read_text(encoding="utf-8"))
    generation = json.loads((MODEL / "generation_config.json").read_text(encoding="utf-8"))
    return hf_oracle.TokenRule.from_config(generation, config)


def test_the_oracle_reads_pytorch_generates_ids():
    read = readings()
    for name, cases in EXPECTED["sets"].items():
        for case_id, expected in cases.items():
            got = read[name][case_id]
            assert (got["tokenIds"], got["ended"]) == (expected["tokenIds"], expected["ended"]), f"{name}/{case_id}"
            assert got["text"] == expected["text"], f"{name}/{case_id}"
    # The reference has both endings, so both are checked.
    assert {case["ended"] for cases in EXPECTED["sets"].values() for case in cases.values()} == {"eos", "maxTokens"}


@pytest.mark.parametrize("change", [{"repetition_penalty": None}])
def test_a_wrong_token_rule_reads_other_ids(change):
    rule = export_rule()
    assert rule.repetition_penalty and rule.no_repeat_ngram_size, "the test model sets both rules"
    # The two short sets are enough to show a difference, and read in a fraction of the time.
    short = ("smoke2", "hayai13")
    read = readings(dataclasses.replace(rule, **change), short)
    differing = [
        f"{name}/{case_id}"
        for name in short
        for case_id, expected in EXPECTED["sets"][name].items()
        if read[name][case_id]["tokenIds"] != expected["tokenIds"]
    ]
    assert differing, f"dropping {change} changed no reading: the test cannot tell the rule is applied"


def test_a_folder_without_a_decoder_is_refused(tmp_path):
    for name in ("config.json", "generation_config.json", "preprocessor_config.json", "encoder_model.onnx"):
        shutil.copy(MODEL / name, tmp_path / name)
    with pytest.raises(ValueError, match="no decoder_model_merged.onnx and no pair"):
        hf_oracle.read(tmp_path, "smoke2", 4)


def test_beam_search_is_refused():
    with pytest.raises(ValueError, match="num_beams=4: only greedy decoding is read"):
        hf_oracle.TokenRule.from_config({"decoder_start_token_id": 2, "eos_token_id": 3, "num_beams": 4}, {})
