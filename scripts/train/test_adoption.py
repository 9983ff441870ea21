"""The adoption rule on results files in the runner's format (a recorded run's result record,
its accuracy fields set per case of the rule)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from train.adoption import LOSS_ALLOWED, Undecidable, decide, main, read_results

RECORDED = Path(__file__).resolve().parents[2] / "runner" / "tests" / "data" / "h200-default-hayai13.jsonl"


def recorded_result() -> dict:
    for line in RECORDED.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "result":
            return record
    raise AssertionError(f"{RECORDED} holds no result record")


TEMPLATE = recorded_result()


def result(cases_name: str, distance: int, characters: int = 200, decoder: str = "baseline") -> dict:
    record = copy.deepcopy(TEMPLATE)
    summary = record["summary"]
    summary.update(
        casesName=cases_name,
        decoderMode=decoder,
        distance=distance,
        characters=characters,
        nCER=distance / characters,
    )
    return record


def write(path: Path, records: list[dict]) -> Path:
    # Marks and other records between the results, as a sweep writes them.
    lines = [json.dumps({"kind": "mark", "phase": "startup"})]
    lines += [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_rule(tmp_path: Path, default: list[dict], candidate: list[dict], capsys) -> tuple[int, str]:
    status = main(
        [
            "--default",
            str(write(tmp_path / "d.jsonl", default)),
            "--candidate",
            str(write(tmp_path / "c.jsonl", candidate)),
        ]
    )
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_the_recorded_file_reads_as_its_run() -> None:
    readings = read_results(RECORDED)
    assert list(readings) == [("firefox", "121", "baseline", "hayai13")]
    reading = readings[("firefox", "121", "baseline", "hayai13")]
    assert (reading.distance, reading.characters, reading.exact, reading.cases) == (0, 238, 13, 13)


def test_better_on_the_held_out_sets_and_no_set_worse_is_adopted(tmp_path: Path, capsys) -> None:
    default = [result("heldout-a", 30), result("heldout-b", 70), result("lowres", 16)]
    candidate = [result("heldout-a", 24), result("heldout-b", 71), result("lowres", 16)]
    status, out = run_rule(tmp_path, default, candidate, capsys)
    assert status == 0, out
    assert "95 characters of 400 missed on the held-out sets against 100" in out
    assert out.strip().splitlines()[-1] == "adopted"


def test_a_set_worse_by_more_than_the_allowed_loss_refuses(tmp_path: Path, capsys) -> None:
    # One character of 200 is exactly the allowed loss; two are over it.
    assert 1 / 200 == LOSS_ALLOWED
    default = [result("heldout-a", 30), result("sfx", 1), result("lowres", 16)]
    allowed = [result("heldout-a", 20), result("sfx", 2), result("lowres", 16)]
    assert run_rule(tmp_path, default, allowed, capsys)[0] == 0
    over = [result("heldout-a", 20), result("sfx", 3), result("lowres", 16)]
    status, out = run_rule(tmp_path, default, over, capsys)
    assert status == 1
    assert "sfx loses 0.0100 (at most 0.005 allowed)" in out
    assert out.strip().splitlines()[-1] == "not adopted"


def test_a_held_out_set_is_held_to_the_allowed_loss_too(tmp_path: Path, capsys) -> None:
    default = [result("heldout-a", 30), result("heldout-c", 40)]
    candidate = [result("heldout-a", 10), result("heldout-c", 44)]
    status, out = run_rule(tmp_path, default, candidate, capsys)
    assert status == 1
    assert "heldout-c loses 0.0200" in out


def test_not_better_on_the_held_out_sets_together_refuses(tmp_path: Path, capsys) -> None:
    default = [result("heldout-a", 30), result("heldout-b", 70)]
    candidate = [result("heldout-a", 31), result("heldout-b", 69)]
    status, out = run_rule(tmp_path, default, candidate, capsys)
    assert status == 1
    assert "not better on the held-out sets, 100 characters of 400 missed on the held-out sets against 100" in out


def test_every_configuration_is_weighed_on_its_own(tmp_path: Path) -> None:
    default = [result("heldout-a", 30), result("heldout-a", 30, decoder="nbits-int4")]
    candidate = [result("heldout-a", 20), result("heldout-a", 35, decoder="nbits-int4")]
    decision = decide(
        read_results(write(tmp_path / "d.jsonl", default)), read_results(write(tmp_path / "c.jsonl", candidate))
    )
    assert not decision.adopted
    assert "firefox 121 baseline: 20 characters of 200 missed on the held-out sets against 30" in decision.reasons
    assert "firefox 121 nbits-int4: heldout-a loses 0.0250 (at most 0.005 allowed)" in decision.reasons


def test_a_run_the_candidate_lacks_cannot_be_decided(tmp_path: Path, capsys) -> None:
    default = [result("heldout-a", 30), result("lowres", 16)]
    status, out = run_rule(tmp_path, default, [result("heldout-a", 20)], capsys)
    assert status == 2
    assert "the candidate has no reading of firefox 121 baseline lowres" in out


def test_no_held_out_set_cannot_be_decided(tmp_path: Path, capsys) -> None:
    status, out = run_rule(tmp_path, [result("lowres", 16)], [result("lowres", 10)], capsys)
    assert status == 2
    assert "read no held-out set (one of heldout-a, heldout-b, heldout-c)" in out


def test_a_line_that_is_no_record_names_its_place(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(result("heldout-a", 1)) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(Undecidable, match=r"broken.jsonl:2 is not a JSON record"):
        read_results(path)


def test_one_sides_readings_may_come_from_several_files(tmp_path: Path, capsys) -> None:
    default = write(tmp_path / "d.jsonl", [result("heldout-a", 30), result("lowres", 16)])
    first = write(tmp_path / "c1.jsonl", [result("heldout-a", 20)])
    second = write(tmp_path / "c2.jsonl", [result("lowres", 16)])
    status = main(["--default", str(default), "--candidate", str(first), str(second)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "| firefox | 121 | baseline | lowres | 0.0800 (16/200), 13/13 exact, 0 with extras |" in out
