"""compare_onnx.py, the script behind docs/accuracy.md's onnxruntime-CPU rows, run on the
first case of hayai13 over every vision tier and decoder variant built from the trained
checkpoint: it must read it exactly, choose PyTorch's tokens, and print what it measured.
docs/accuracy.md's hayai13 row has 13/13 for every combination; one case (16 characters) takes
about 12 s here, three took 34.
"""

from __future__ import annotations

import json

import pytest

from ocrmodel import build_models
from ocrmodel.conftest import _reusable
from ocrmodel.variants import DECODER_VARIANTS, VISION_VARIANTS
from train import compare_onnx
from train.scoring import eval_cases, normalise

CASES = 1
CHARACTERS = 16  # the first case's, normalised


@pytest.fixture(scope="module")
def trained_build(tmp_path_factory):
    """models/generated when it holds the current build of the checkpoint, else a fresh one (~10 s)."""
    info = _reusable(build_models.DEFAULT_OUT)
    if info is not None and info["weightsSource"]["kind"] == "checkpoint":
        return build_models.DEFAULT_OUT
    out = tmp_path_factory.mktemp("trained") / "generated"
    build_models.main(
        [
            "--checkpoint",
            str(build_models.DEFAULT_CHECKPOINT),
            "--out",
            str(out),
            "--manifest",
            str(out.parent / "manifest.json"),
        ]
    )
    assert json.loads((out / "build-info.json").read_text())["weightsSource"]["kind"] == "checkpoint"
    return out


def test_every_variant_reads_the_first_hayai13_cases_exactly(trained_build, capsys):
    tiers = [variant.tier for variant in VISION_VARIANTS]
    decoders = [variant.name for variant in DECODER_VARIANTS]
    results = compare_onnx.main(
        [
            "--build",
            str(trained_build),
            "--set",
            "hayai13",
            "--limit",
            str(CASES),
            "--vision",
            *tiers,
            "--decoder",
            *decoders,
        ]
    )
    printed = capsys.readouterr().out.splitlines()
    cases = eval_cases("hayai13", CASES)
    characters = sum(len(normalise(case["expected"])) for case in cases)
    assert characters == CHARACTERS
    assert [(r["tier"], r["decoder"]) for r in results] == [(t, d) for t in tiers for d in decoders]
    for result, line in zip(results, printed, strict=True):
        assert [case["actual"] for case in result["results"]] == [case["expected"] for case in cases]
        assert (result["nCER"], result["distance"], result["characters"], result["exact"]) == (
            0.0,
            0,
            CHARACTERS,
            CASES,
        )
        assert result["samePyTorchTokens"] == CASES
        assert line.startswith(
            f"hayai13 tier={result['tier']} decoder={result['decoder']}: nCER 0.0000 (0/{CHARACTERS}), "
            f"exact {CASES}/{CASES}, trailing extras 0/{CASES}, PyTorch tokens identical in {CASES}/{CASES} cases, "
        )
    assert len(printed) == len(results)  # no "differs from PyTorch" lines


def test_bad_arguments_are_refused_with_what_is_allowed(trained_build, capsys):
    for arguments, message in (
        (["--set", "missing"], "no evaluation set 'missing'"),
        (["--limit", "-1"], "allowed: 0 (every case) or a positive count"),
        (["--vision", "999"], "unknown vision tier '999'"),
    ):
        with pytest.raises(SystemExit):
            compare_onnx.main(["--build", str(trained_build), *arguments])
        assert message in capsys.readouterr().err
