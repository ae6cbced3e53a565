"""Judge a measured number against a rule's threshold, exactly.

Percentages are compared as fractions, not floats, so "5 failed rows of 100 must be less
than 5 percent" fails and "4 of 100" passes on every platform: a threshold sitting exactly on
its limit must not flip on a rounding error.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

Number = int | float | Fraction

_COMPARE = {
    "mustBe": lambda x, v: x == v,
    "mustNotBe": lambda x, v: x != v,
    "mustBeGreaterThan": lambda x, v: x > v,
    "mustBeGreaterOrEqualTo": lambda x, v: x >= v,
    "mustBeLessThan": lambda x, v: x < v,
    "mustBeLessOrEqualTo": lambda x, v: x <= v,
    "mustBeBetween": lambda x, v: v[0] <= x <= v[1],
    "mustNotBeBetween": lambda x, v: not v[0] <= x <= v[1],
}


def exact(value: Any) -> Fraction:
    """A plan or query number as an exact fraction (``0.1`` means one tenth, not the float)."""
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def percent(failed: int, evaluated: int) -> Fraction:
    """Failed rows as a percentage of the rows the rule evaluated; 0 when it evaluated none."""
    return Fraction(100 * failed, evaluated) if evaluated else Fraction(0)


def satisfies(measured: Number, operator: str, value: Any) -> bool:
    """Whether ``measured`` meets the threshold ``operator`` ``value`` (``mustBeBetween`` bounds,
    a pair, are inclusive)."""
    limit = [exact(v) for v in value] if isinstance(value, (list, tuple)) else exact(value)
    return bool(_COMPARE[operator](exact(measured), limit))
