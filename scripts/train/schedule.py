"""The learning rate of each step, and the steps whose weights join the running mean.

Without averaging: linear warm-up, then a cosine down to FLOOR_SHARE of the peak at the last
step. With averaging (`--average-from F`): the cosine reaches the averaging rate at step
F x total and the rate stays there; from that step on, every `every`-th step's weights join a
running mean, and the mean is what the run exports (stochastic weight averaging, Izmailov et
al. 2018: a constant rate keeps the weights moving around the minimum, and their mean lies
nearer its centre than any one of them). Pure Python, so it is tested without torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

FLOOR_SHARE = 0.03  # the cosine's end without averaging, as a share of the peak


@dataclass(frozen=True)
class Schedule:
    peak: float
    warmup: int
    average_from: float = 0.0  # share of the steps before averaging starts; 0: no averaging
    average_lr: float = 0.0
    every: int = 1

    def __post_init__(self) -> None:
        if self.peak <= 0 or self.warmup < 0:
            raise ValueError(
                f"the peak rate must be above 0 and the warm-up at least 0 steps (got {self.peak}, {self.warmup})"
            )
        if self.average_from:
            if not 0 < self.average_from < 1:
                raise ValueError(f"--average-from {self.average_from}: allowed 0 (off) or a share between 0 and 1")
            if not 0 < self.average_lr <= self.peak:
                raise ValueError(f"--average-lr {self.average_lr}: allowed above 0 and at most the peak {self.peak}")
            if self.every < 1:
                raise ValueError(f"--average-every {self.every}: allowed 1 or more steps")

    def averaging_start(self, total: int) -> int | None:
        """The first step whose weights join the mean, or None without averaging."""
        if not self.average_from:
            return None
        return max(self.warmup, int(self.average_from * total))

    def rate(self, step: int, total: int) -> float:
        if step < self.warmup:
            return self.peak * (step + 1) / self.warmup
        start = self.averaging_start(total)
        end, floor = (total, FLOOR_SHARE * self.peak) if start is None else (start, self.average_lr)
        if step >= end:
            return floor
        progress = (step - self.warmup) / max(1, end - self.warmup)
        return floor + (self.peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def joins_mean(self, step: int, total: int) -> bool:
        start = self.averaging_start(total)
        return start is not None and step >= start and (step - start) % self.every == 0
