"""The learning-rate schedule and the steps that join the running mean (schedule.py)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from train.schedule import FLOOR_SHARE, Schedule

TOTAL = 2000


def test_without_averaging_the_rate_warms_up_then_falls_to_the_floor_at_the_last_step() -> None:
    schedule = Schedule(peak=5e-4, warmup=100)
    rates = [schedule.rate(step, TOTAL) for step in range(TOTAL + 1)]
    assert rates[0] == pytest.approx(5e-4 / 100)
    assert rates[99] == pytest.approx(5e-4)
    assert rates[100] == pytest.approx(5e-4)
    assert all(later <= earlier for earlier, later in pairwise(rates[100:]))
    assert rates[TOTAL] == pytest.approx(FLOOR_SHARE * 5e-4)
    assert not any(schedule.joins_mean(step, TOTAL) for step in range(TOTAL))
    assert schedule.averaging_start(TOTAL) is None


def test_with_averaging_the_rate_meets_the_averaging_rate_and_stays_there() -> None:
    schedule = Schedule(peak=5e-4, warmup=100, average_from=0.25, average_lr=2e-4, every=25)
    assert schedule.averaging_start(TOTAL) == 500
    before = [schedule.rate(step, TOTAL) for step in range(100, 500)]
    assert all(later <= earlier for earlier, later in pairwise(before))
    assert before[-1] > 2e-4
    assert all(schedule.rate(step, TOTAL) == 2e-4 for step in range(500, TOTAL))


def test_every_nth_step_from_the_start_joins_the_mean() -> None:
    schedule = Schedule(peak=5e-4, warmup=100, average_from=0.25, average_lr=2e-4, every=25)
    joined = [step for step in range(TOTAL) if schedule.joins_mean(step, TOTAL)]
    assert joined == list(range(500, TOTAL, 25))


def test_averaging_never_starts_inside_the_warm_up() -> None:
    schedule = Schedule(peak=5e-4, warmup=300, average_from=0.1, average_lr=1e-4, every=1)
    assert schedule.averaging_start(TOTAL) == 300
    assert schedule.rate(299, TOTAL) == pytest.approx(5e-4)
    assert schedule.rate(300, TOTAL) == 1e-4


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"average_from": 1.0, "average_lr": 1e-4}, "--average-from 1.0: allowed 0 (off) or a share between 0 and 1"),
        ({"average_from": 0.5, "average_lr": 0.0}, "--average-lr 0.0: allowed above 0 and at most the peak"),
        ({"average_from": 0.5, "average_lr": 1e-3}, "--average-lr 0.001: allowed above 0 and at most the peak"),
        ({"average_from": 0.5, "average_lr": 1e-4, "every": 0}, "--average-every 0: allowed 1 or more steps"),
    ],
)
def test_settings_outside_their_range_are_refused_with_what_is_allowed(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Schedule(peak=5e-4, warmup=100, **settings)
