"""The screen's choice among candidates (adoption.decide on CPU readings) and its refusals of
arguments it cannot screen, before any model is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.adoption import Reading, decide
from train.screen import READER, main, rank

CHECKPOINT = Path(__file__).resolve().parents[2] / "models" / "checkpoint" / "ocr-bench-default.npz"


def readings(**missed: int) -> dict:
    """Characters missed per set (of 200 each), keyed as the screen keys them."""
    return {
        (READER, "121", "baseline", name.replace("_", "-")): Reading(
            ncer=d / 200, distance=d, characters=200, exact=10, cases=10, extras=0
        )
        for name, d in missed.items()
    }


def test_rank_puts_an_adopted_candidate_first_then_fewer_losses_then_fewer_heldout_misses():
    default = readings(heldout_a=20, sfx=1, lowres=5)
    adopted = readings(heldout_a=18, sfx=1, lowres=5)
    better_heldout_one_loss = readings(heldout_a=10, sfx=3, lowres=5)
    two_losses = readings(heldout_a=5, sfx=3, lowres=8)
    ranks = {
        name: rank(decide(default, candidate), candidate)
        for name, candidate in {
            "adopted": adopted,
            "one loss": better_heldout_one_loss,
            "two losses": two_losses,
        }.items()
    }
    assert ranks["adopted"] == (0, 0, 18)
    assert ranks["one loss"] == (1, 1, 10)
    assert ranks["two losses"] == (1, 2, 5)
    assert sorted(ranks, key=ranks.get) == ["adopted", "one loss", "two losses"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--blend", "0.5", "--candidate", str(CHECKPOINT), str(CHECKPOINT)], "--blend needs exactly one"),
        (["--blend", "1.0"], "strictly between 0 and 1"),
        (["--sets", "no-such-set"], "no evaluation set no-such-set"),
        (["--sets", "hayai13"], "the rule needs a held-out set"),
        (["--jobs", "0"], "both 1 or more"),
    ],
)
def test_refuses_what_it_cannot_screen_and_says_what_is_allowed(tmp_path, capsys, extra, message):
    argv = ["--default", str(CHECKPOINT), "--candidate", str(CHECKPOINT), "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as stopped:
        main(argv + extra)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before writing anything
