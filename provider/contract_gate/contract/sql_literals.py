"""Literals the compiler writes into the plan: exact number literals, and the columns an expression names.

Identifier quoting and string literals are in ``contract_gate_plan.sql_text``; contract SQL is parsed,
checked against an allow-list and re-rendered by ``contract_gate_plan.sql_allowlist``.
"""

from __future__ import annotations

import decimal
import math

from contract_gate_plan.sql_allowlist import column_names

_MAX_DECIMAL_DIGITS = 38


def number_literal(value: int | float) -> str:
    """An exact Spark literal for a YAML number: an integer, or a decimal (``BD``) for fractions so
    that ``0.1`` means 0.1 and not the double nearest to it. Numbers beyond Spark's 38-digit
    decimals become double literals (``D``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    exact = decimal.Decimal(repr(value) if isinstance(value, float) else value)
    if exact == exact.to_integral_value():
        text = str(int(exact))
        if len(text.lstrip("-")) <= _MAX_DECIMAL_DIGITS:
            return text
    else:
        text = format(exact.normalize(), "f")
        if len(text.lstrip("-").replace(".", "")) <= _MAX_DECIMAL_DIGITS:
            return text + "BD"
    return repr(float(value)) + "D"


def identifiers(expression: str) -> set[str]:
    """The names an expression uses as columns (each part of ``a.b``)."""
    return column_names(expression)
