"""Whether a candidate checkpoint becomes the default: the adoption rule on two results files.

A checkpoint is adopted only when it reads the held-out sets better than the default and loses
no more than `LOSS_ALLOWED` nCER on any set, held-out ones included, both read in a browser on
the GPU machine (`scripts/train/README.md`, "Adopting a checkpoint"). This reads the result
records of the default's and the candidate's results files (`ocr-bench sweep --param
cases=...`; one or more per side, each side the models built from one checkpoint), pairs their runs by browser,
vision tier, decoder and evaluation set, prints them side by side and says why it decides as it
does. Exit status: 0 adopted, 1 not adopted, 2 the files cannot decide (a run the default holds
that the candidate lacks, no held-out set, a line that is no record).

    cd scripts && ../.venv/bin/python -m train.adoption --default run9.jsonl --candidate run12*.jsonl

"Better on the held-out sets" is fewer characters missed over all of them together (each set
is also held to `LOSS_ALLOWED`), in every browser × tier × decoder both files read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from heldout.make_sets import SETS as HELDOUT_SETS

# The most nCER a candidate may lose on any one set and still be adopted.
LOSS_ALLOWED = 0.005


@dataclass(frozen=True)
class Reading:
    """One run's accuracy on one set, as the page scored it."""

    ncer: float
    distance: int
    characters: int
    exact: int
    cases: int
    extras: int


Key = tuple[str, str, str, str]  # browser, vision tier, decoder, evaluation set


class Undecidable(Exception):
    """The files do not hold what the rule needs; the message says what is missing."""


def read_results(path: Path) -> dict[Key, Reading]:
    """The readings of every result record in a results file; a set read twice in the same
    configuration keeps its last reading (a resumed sweep's)."""
    readings: dict[Key, Reading] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise Undecidable(f"cannot read {path}: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise Undecidable(f"{path}:{number} is not a JSON record ({error})") from error
        if not isinstance(record, dict) or record.get("kind") != "result":
            continue
        summary = record.get("summary")
        if not isinstance(summary, dict) or not summary.get("accuracyApplicable"):
            continue  # a run scored on no evaluation set (a decoder-only run)
        try:
            key = (record["browser"]["name"], summary["tier"], summary["decoderMode"], summary["casesName"])
            readings[key] = Reading(
                ncer=float(summary["nCER"]),
                distance=int(summary["distance"]),
                characters=int(summary["characters"]),
                exact=int(summary["exact"]),
                cases=int(summary["cases"]),
                extras=int(summary.get("trailingExtras", 0)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise Undecidable(f"{path}:{number}: a result record without its accuracy ({error!r})") from error
    return readings


def read_all(paths: list[Path]) -> dict[Key, Reading]:
    """The readings of several results files of one checkpoint, a later file's over an earlier's."""
    readings: dict[Key, Reading] = {}
    for path in paths:
        readings.update(read_results(path))
    return readings


@dataclass(frozen=True)
class Decision:
    adopted: bool
    reasons: list[str]
    table: str
    losses: list[Key]  # the readings that lose more than LOSS_ALLOWED


def decide(default: dict[Key, Reading], candidate: dict[Key, Reading]) -> Decision:
    """The rule on the runs both files hold; `Undecidable` when the candidate lacks a run of
    the default's or no configuration read a held-out set."""
    missing = sorted(set(default) - set(candidate))
    if missing:
        raise Undecidable(
            "the candidate has no reading of "
            + ", ".join(" ".join(key) for key in missing)
            + ": read every set the default read, in the same browser, tier and decoder"
        )
    reasons: list[str] = []
    losses: list[Key] = []
    adopted = True
    rows = ["| browser | tier | decoder | set | default | candidate | change |", "|---|---|---|---|---|---|---|"]
    configurations = sorted({key[:3] for key in default})
    for configuration in configurations:
        keys = sorted(key for key in default if key[:3] == configuration)
        heldout = [key for key in keys if key[3] in HELDOUT_SETS]
        name = " ".join(configuration)
        if not heldout:
            raise Undecidable(f"{name} read no held-out set (one of {', '.join(HELDOUT_SETS)})")
        for key in keys:
            was, now = default[key], candidate[key]
            change = now.ncer - was.ncer
            rows.append(f"| {' | '.join(key)} | {cell(was)} | {cell(now)} | {change:+.4f} |")
            if change > LOSS_ALLOWED + 1e-12:
                adopted = False
                losses.append(key)
                reasons.append(f"{name}: {key[3]} loses {change:.4f} (at most {LOSS_ALLOWED} allowed)")
        missed_before = sum(default[key].distance for key in heldout)
        missed_now = sum(candidate[key].distance for key in heldout)
        characters = sum(default[key].characters for key in heldout)
        pooled = f"{missed_now} characters of {characters} missed on the held-out sets against {missed_before}"
        if missed_now < missed_before:
            reasons.append(f"{name}: {pooled}")
        else:
            adopted = False
            reasons.append(f"{name}: not better on the held-out sets, {pooled}")
    return Decision(adopted, reasons, "\n".join(rows), losses)


def cell(reading: Reading) -> str:
    return (
        f"{reading.ncer:.4f} ({reading.distance}/{reading.characters}), "
        f"{reading.exact}/{reading.cases} exact, {reading.extras} with extras"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--default", type=Path, nargs="+", required=True, help="results files of the default checkpoint's models"
    )
    parser.add_argument(
        "--candidate", type=Path, nargs="+", required=True, help="results files of the candidate's models"
    )
    args = parser.parse_args(argv)
    try:
        default, candidate = read_all(args.default), read_all(args.candidate)
        if not default:
            raise Undecidable(f"{' '.join(map(str, args.default))}: no result scored on an evaluation set")
        decision = decide(default, candidate)
    except Undecidable as error:
        print(f"adoption: cannot decide: {error}", file=sys.stderr)
        return 2
    extra = sorted(set(candidate) - set(default))
    print(decision.table)
    print()
    for reason in decision.reasons:
        print(f"- {reason}")
    if extra:
        print(f"- not weighed (the default has no such run): {', '.join(' '.join(key) for key in extra)}")
    print("adopted" if decision.adopted else "not adopted")
    return 0 if decision.adopted else 1


if __name__ == "__main__":
    sys.exit(main())
