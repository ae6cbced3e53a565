"""History rules, named and judged once for both sides (docs/contracts.md, "History rules").

A ``rowCount`` or ``nullValues`` (``unit: percent``) quality entry may bound a batch against the
last ``batches`` accepted batches of its object: the measure must lie within a factor ``within``
of their median. The compiler checks the bounds (a contract is hostile input: a huge ``batches``
would read the whole decision log, an infinite factor would pass everything); the plan check
checks them again; the provider reads the accepted batches' measures from the decision log
before the job starts and hands them to the validation as data (``--history``); the engine
measures the batch in its fused pass and judges it here. A batch is never judged on a history
shorter than ``batches``: it gets a warning that says so instead.

A row count must lie in ``[median / within, median * within]`` (a batch of 1% of the usual
volume is as suspect as 100 times it); a null share must be at most ``median * within`` (fewer
nulls than usual is never a fault). The measures are counts and shares only, never values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

SETTING = "history"
"""The key in a quality entry's ``contractGate`` custom property."""
MAX_BATCHES = 100
ROW_COUNT = "row_count"
NULL_SHARE = "null_share"
MEASURE_OF_KIND = {"row_count": ROW_COUNT, "metric": NULL_SHARE}


class HistoryError(ValueError):
    """A history setting out of bounds; ``key`` is where, under ``history``."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class History:
    batches: int
    within: float | int

    def as_json(self) -> dict[str, Any]:
        return {"batches": self.batches, "within": self.within}


def history_of(value: Any) -> History:
    """The checked ``{batches, within}`` of a contract or a plan; raises :class:`HistoryError`."""
    if not isinstance(value, dict):
        raise HistoryError("history must be a mapping {batches: N, within: F}")
    unknown = sorted(set(value) - {"batches", "within"}, key=str)
    if unknown:
        raise HistoryError(f"unknown history setting {unknown[0]!r} (batches, within)", str(unknown[0]))
    batches, within = value.get("batches"), value.get("within")
    if isinstance(batches, bool) or not isinstance(batches, int) or not 1 <= batches <= MAX_BATCHES:
        raise HistoryError(f"history.batches must be a whole number from 1 to {MAX_BATCHES}, not {batches!r}",
                           "batches")
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not math.isfinite(within) or within <= 1:
        raise HistoryError(f"history.within must be a finite factor above 1, not {within!r}", "within")
    return History(batches, within)


def median(values: Sequence[int | Fraction]) -> Fraction:
    ordered = sorted(Fraction(v) for v in values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def share(nulls: int, rows: int) -> Fraction:
    """Null rows as a percentage of the batch's rows (0 for an empty batch)."""
    return Fraction(100 * nulls, rows) if rows else Fraction(0)


@dataclass(frozen=True)
class Judgement:
    """A history rule's verdict: ``passed`` None while the history is too short."""

    passed: bool | None
    accepted: int
    median: Fraction | None
    reason: str

    def as_report(self, history: History) -> dict[str, Any]:
        return {**history.as_json(), "accepted": self.accepted,
                "median": None if self.median is None else _number(self.median)}


def judge(measure: str, measured: Fraction, past: list[Fraction], history: History) -> Judgement:
    """``measured`` (a row count or a null share in percent) against the measures of the last
    accepted batches, newest first (``past``: at most ``history.batches`` are read)."""
    past = past[:history.batches]
    unit = "rows" if measure == ROW_COUNT else "% nulls"
    if len(past) < history.batches:
        return Judgement(None, len(past), None,
                         f"the history is too short: {len(past)} of the {history.batches} accepted batches "
                         "the rule compares with; not judged until there are")
    mid = median(past)
    within = Fraction(str(history.within)) if isinstance(history.within, float) else Fraction(history.within)
    if measure == ROW_COUNT:
        low, high = mid / within, mid * within
        passed = low <= measured <= high
        bounds = f"{_text(low)} to {_text(high)} {unit}"
    else:
        passed = measured <= mid * within
        bounds = f"at most {_text(mid * within)}{unit}"
    words = (f"{_text(measured)}{' ' if measure == ROW_COUNT else ''}{unit} against a median of {_text(mid)}"
             f"{' ' if measure == ROW_COUNT else ''}{unit} of the last {history.batches} accepted batches, "
             f"within a factor {history.within}: {bounds}")
    return Judgement(passed, len(past), mid, words)


def _number(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


def _text(value: Fraction) -> str:
    number = _number(value)
    return str(number) if isinstance(number, int) else f"{number:.4g}"
