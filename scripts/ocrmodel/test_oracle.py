"""The reading oracle (oracle.py) on its own:

- on smoke2 it reads what the numpy reference reads from the same files' weights
  (reference.vision_forward over the int4 tier's unpacked weights, ReferenceDecoder over the
  baseline decoder's dequantized weights), up to the first near tie it reports;
- a near tie (the two best scores after the repetition penalty within NEAR_TIE) is reported
  with both ids and the gap, a wider gap is not, and the penalty is applied before comparing;
- a forced prefix is kept and the choices after it are the oracle's own;
- the command prints what read() returns and refuses bad arguments in words.
"""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from ocrmodel import oracle, reference, spec
from ocrmodel.build_models import VOCAB
from ocrmodel.conftest import decoder_weights_from_file, vision_weights_from_file
from ocrmodel.decode import ReferenceDecoder, content_ids, greedy_loop
from ocrmodel.variants import decoder_variant, vision_variant

SET = "smoke2"
# smoke2's strings are five characters: with trained weights EOS is the sixth choice.
MAX_TOKENS = 8


@pytest.fixture(scope="module")
def reading(build) -> dict:
    return oracle.read(build.manifest_path, SET, "121", "baseline", MAX_TOKENS)


def test_reads_as_the_numpy_reference(build, reading):
    vision_weights = vision_weights_from_file(build.embedded(vision_variant("121").file))
    decoder = ReferenceDecoder(decoder_weights_from_file(build.embedded(decoder_variant("baseline").file)))
    content = content_ids(VOCAB)
    cases = oracle.scoring.eval_cases(SET)
    assert [result["id"] for result in reading["results"]] == [case["id"] for case in cases]
    for case, result in zip(cases, reading["results"], strict=True):
        pixels = oracle.scoring.preprocess(oracle.scoring.EVAL_DIR / SET / case["image"])
        embeds = reference.vision_forward(vision_weights, pixels)
        expected = greedy_loop(partial(decoder.prefill, embeds), decoder.step, MAX_TOKENS, content)
        # Past a near tie float32 rounding may fairly take either path.
        agreed = min((tie["position"] for tie in result["nearTies"]), default=MAX_TOKENS + 1)
        print(
            f"case {case['id']}: oracle {result['tokenIds']} {result['text']!r}, reference {expected}, "
            f"gaps {result['gaps']}"
        )
        assert result["tokenIds"][:agreed] == expected[:agreed]
        if not result["nearTies"]:
            assert result["tokenIds"] == expected
        assert result["ended"] == ("maxTokens" if len(result["tokenIds"]) == MAX_TOKENS else "eos")
        assert result["forced"] == 0
        choices = len(result["tokenIds"]) + (result["ended"] == "eos")
        assert len(result["gaps"]) == choices and min(result["gaps"]) >= 0


def test_near_ties_are_reported_after_the_penalty():
    logits = np.full(spec.VOCAB_IDS, -5.0, dtype=np.float32)
    logits[[10, 11]] = [2.0, 2.0 - 5e-4]
    recorder = oracle.TieRecorder([])
    assert recorder(logits, [spec.BOS_ID], [], set()) == 10
    (tie,) = recorder.near_ties
    assert (tie["position"], tie["chosen"], tie["runnerUp"]) == (0, 10, 11)
    assert tie["gap"] == pytest.approx(5e-4, abs=1e-6)
    assert recorder.gaps == [tie["gap"]]

    # A gap twice the margin is no tie; its gap still says how close it came.
    logits[11] = 2.0 - 2 * oracle.NEAR_TIE
    recorder = oracle.TieRecorder([])
    assert recorder(logits, [spec.BOS_ID], [], set()) == 10
    assert recorder.near_ties == []
    assert recorder.gaps == [pytest.approx(2 * oracle.NEAR_TIE, abs=1e-6)]

    # Id 12 scores 3.0 before the penalty and 2.5 after it, as an id already in the sequence:
    # 4e-4 below id 10, a near tie that the raw logits (0.5 apart) do not show.
    logits = np.full(spec.VOCAB_IDS, -5.0, dtype=np.float32)
    logits[[10, 12]] = [2.5004, 3.0]
    recorder = oracle.TieRecorder([])
    assert recorder(logits, [spec.BOS_ID, 12], [12], set()) == 10
    assert [(t["position"], t["chosen"], t["runnerUp"]) for t in recorder.near_ties] == [(1, 10, 12)]


def test_forced_tokens_are_kept_and_not_judged():
    logits = np.full(spec.VOCAB_IDS, -5.0, dtype=np.float32)
    logits[[10, 11]] = [2.0, 2.0]
    recorder = oracle.TieRecorder([30, 31])
    assert recorder(logits, [spec.BOS_ID], [], set()) == 30
    assert recorder(logits, [spec.BOS_ID, 30], [30], set()) == 31
    assert recorder.near_ties == [] and recorder.gaps == []
    assert recorder(logits, [spec.BOS_ID, 30, 31], [30, 31], set()) == 10
    assert [t["position"] for t in recorder.near_ties] == [2]


def test_a_prefix_is_read_on_from(build, reading):
    first = reading["results"][0]
    again = oracle.read(build.manifest_path, SET, "121", "baseline", MAX_TOKENS, first["id"], first["tokenIds"][:1])
    (result,) = again["results"]
    assert result["id"] == first["id"] and result["forced"] == 1
    if not any(tie["position"] >= 1 for tie in first["nearTies"]):
        assert result["tokenIds"] == first["tokenIds"]
    assert all(tie["position"] >= 1 for tie in result["nearTies"])
    assert len(result["gaps"]) == len(result["tokenIds"]) + (result["ended"] == "eos") - 1
    other = next(token for token in sorted(content_ids(VOCAB)) if token != first["tokenIds"][0])
    diverted = oracle.read(build.manifest_path, SET, "121", "baseline", MAX_TOKENS, first["id"], [other])
    assert diverted["results"][0]["tokenIds"][0] == other


def test_the_command_prints_the_reading_and_refuses_bad_arguments(build, capsys):
    arguments = ["--manifest", str(build.manifest_path), "--cases", SET, "--tier", "121", "--max-tokens", "2"]
    returned = oracle.main([*arguments, "--decoder", "fixed-kv"])
    printed = json.loads(capsys.readouterr().out)
    assert printed == returned
    assert printed["nearTie"] == oracle.NEAR_TIE and printed["decoder"] == "fixed-kv"
    assert [len(result["tokenIds"]) <= 2 for result in printed["results"]] == [True, True]
    for bad, words in [
        (["--decoder", "baseline2"], "has no decoder 'baseline2'; it has ['baseline'"),
        (["--decoder", "baseline", "--max-tokens", "0"], "--max-tokens 0: allowed 1.."),
        (["--decoder", "baseline", "--prefix", "960"], "name it with --case"),
        (["--decoder", "baseline", "--case", "1", "--prefix", "960,x"], "separated by commas"),
        (["--decoder", "baseline", "--case", "1", "--prefix", str(spec.EOS_ID)], "the vocabulary's characters"),
        (["--decoder", "baseline", "--case", "9"], "smoke2 has no such case"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            oracle.main([*arguments, *bad])
        assert exit_info.value.code == 2
        assert words in capsys.readouterr().err, bad
