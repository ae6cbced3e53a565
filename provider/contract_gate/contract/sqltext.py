"""Everything that turns contract text into Spark SQL text.

Identifiers are always back-quoted and literals always escaped, so a column called ``select``
or an enum value ``x') OR 1=1 --`` stays what it is. Where a contract supplies SQL itself
(``type: sql`` queries, ``engine: spark-sql`` and DQX expressions, filters and limits), the text
is parsed, checked against an allow-list and re-rendered by ``spark_jobs.sql_allowlist``; the
plan holds the rendered text, never the contract's, and the Spark side checks it again.
"""

from __future__ import annotations

import decimal
import math

from spark_jobs.sql_allowlist import SqlRefused, check_expression, check_query, column_names, is_deterministic  # noqa: F401  (re-exported)
from spark_jobs.sql_text import quote_identifier, quote_qualified, string_literal  # noqa: F401  (re-exported)

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
