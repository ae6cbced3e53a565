"""Rule forms: each ODCS / DQX construct -> one plan rule with a Spark SQL predicate.

Predicates are TRUE for a valid row and never rely on NULL meaning "valid": a value check on a
nullable column is written ``(col IS NULL OR <check>)`` and NULL-ness is left to ``required``.
For ``float``/``double`` columns range checks also refuse NaN, because Spark orders NaN above
every number (so ``NaN >= 0`` would otherwise pass).
"""

from __future__ import annotations

import datetime
import decimal

from contract_gate_plan.spark_types import INTEGRAL, is_numeric
from contract_gate_plan.sql_allowlist import check_expression
from contract_gate_plan.sql_text import quote_identifier, string_literal
from contract_gate.contract.sql_literals import identifiers, number_literal

# Blank = empty or only these characters. Java regex: \s is [ \t\n\x0B\f\r]; \p{Z} is every Unicode
# space separator (U+0020, U+00A0 no-break space, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
# U+205F, U+3000); plus U+0085 (next line), U+200B (zero-width space), U+FEFF (BOM).
BLANK_CHARACTERS_REGEX = r"^[\s\p{Z}\x{85}\x{200B}\x{FEFF}]*$"
NOT_BLANK_MODES = ("whitespace", "spaces")

OPERATORS = ("mustBe", "mustNotBe", "mustBeGreaterThan", "mustBeGreaterOrEqualTo", "mustBeLessThan",
             "mustBeLessOrEqualTo", "mustBeBetween", "mustNotBeBetween")
TEMPORAL = ("date", "timestamp", "timestamp_ntz")


class RuleError(ValueError):
    """A rule that cannot be compiled; ``key`` is the YAML key (or list of keys) under the rule's path."""

    def __init__(self, message: str, key: str | int | list | None = None):
        super().__init__(message)
        self.key = key

    def keys(self) -> list:
        return self.key if isinstance(self.key, list) else ([] if self.key is None else [self.key])


def nullable_check(column: str, check: str) -> str:
    return f"({quote_identifier(column)} IS NULL OR {check})"


def max_length_shortcut(column: str, length: int) -> str:
    """A ``maxLength`` rule's ``passes_when``: a string of at most ``length`` bytes has at most
    ``length`` characters (a character takes 1 to 4 bytes), and its byte length is a field of
    the string, where counting its characters reads every byte."""
    return f"octet_length({quote_identifier(column)}) <= {length}"


def literal_for(value, column_type: str, key=None) -> str:
    """A literal of ``column_type`` for a bound or list item; raise RuleError when it cannot be one."""
    if is_numeric(column_type):
        return _number_literal(value, column_type, key)
    if column_type in TEMPORAL:
        parse_temporal(value, column_type, key)
        keyword = {"date": "DATE", "timestamp": "TIMESTAMP", "timestamp_ntz": "TIMESTAMP_NTZ"}[column_type]
        return f"{keyword} {string_literal(value)}"
    if column_type == "string":
        if not isinstance(value, str):
            raise RuleError(f"expected a string (column type string), got {value!r}", key)
        return string_literal(value)
    if column_type == "boolean":
        if not isinstance(value, bool):
            raise RuleError(f"expected true or false (column type boolean), got {value!r}", key)
        return "TRUE" if value else "FALSE"
    raise RuleError(f"values cannot be compared with column type {column_type}", key)


def _number_literal(value, column_type: str, key) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuleError(f"expected a number (column type {column_type}), got {value!r}", key)
    if column_type in INTEGRAL and isinstance(value, float) and not value.is_integer():
        raise RuleError(f"expected a whole number (column type {column_type}), got {value!r}", key)
    try:
        return number_literal(value)
    except ValueError as exc:
        raise RuleError(str(exc), key) from exc


def parse_temporal(value, column_type: str, key=None):
    """The Python date/datetime of an ISO bound for a date or timestamp column."""
    if not isinstance(value, str):
        raise RuleError(f"expected an ISO {column_type} (column type {column_type}), got {value!r}", key)
    try:
        if column_type == "date":
            return datetime.date.fromisoformat(value)
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError as exc:
        example = "YYYY-MM-DD" if column_type == "date" else "YYYY-MM-DDTHH:MM:SS[+HH:MM]"
        raise RuleError(f"expected an ISO {column_type} ({example}), got {value!r}", key) from exc
    if column_type == "timestamp_ntz" and parsed.tzinfo is not None:
        raise RuleError(f"a timestamp_ntz bound has no time zone, got {value!r}", key)
    return parsed


def bound_value(value, column_type: str):
    """A Python value that orders like the column's values (for minimum <= maximum checks)."""
    if is_numeric(column_type):
        return decimal.Decimal(repr(value) if isinstance(value, float) else value)
    if column_type == "string":  # Spark orders strings by their UTF-8 bytes: Python's code point order
        return value
    return parse_temporal(value, column_type)


def comparison(column: str, column_type: str, operator: str, bound_sql: str) -> str:
    col = quote_identifier(column)
    check = f"{col} {operator} {bound_sql}"
    if column_type in ("float", "double"):
        check = f"(NOT isnan({col}) AND {check})"
    return nullable_check(column, check)


RANGE_OPTIONS = {  # logicalTypeOptions key -> (rule kind, SQL operator)
    "minimum": ("minimum", ">="),
    "maximum": ("maximum", "<="),
    "exclusiveMinimum": ("exclusive_minimum", ">"),
    "exclusiveMaximum": ("exclusive_maximum", "<"),
}


def not_blank(column: str, mode) -> str:
    col = quote_identifier(column)
    if mode is True or mode == "whitespace":
        return nullable_check(column, f"NOT {col} RLIKE {string_literal(BLANK_CHARACTERS_REGEX)}")
    if mode == "spaces":
        # Spark's trim removes only U+0020 spaces.
        return nullable_check(column, f"trim({col}) <> ''")
    raise RuleError(f"notBlank must be one of {', '.join(NOT_BLANK_MODES)}, true or false, got {mode!r}")


def not_blank_shortcut(column: str) -> str:
    """A ``notBlank`` rule's ``passes_when`` (either mode): a string whose first byte is a
    printable ASCII character other than the space, ``!`` to ``~``, starts with a character no
    blank string holds. Strings compare byte by byte (a plan's string columns have no collation:
    the compiler refuses one, and a collated candidate column fails the type check), so this
    reads one byte, where the predicate decodes the string for its regular expression."""
    col = quote_identifier(column)
    return f"{col} >= '!' AND {col} <= '~'"


def in_list(column: str, literals: list[str]) -> str:
    return f"{quote_identifier(column)} IN ({', '.join(literals)})"


def threshold_from(entry: dict, percent_allowed: bool = True) -> dict:
    """The comparison a quality entry puts on its measured value (JSON schema ensured exactly one
    operator, and two distinct numbers for the between operators)."""
    operator = next(op for op in OPERATORS if op in entry)
    value = entry[operator]
    unit = entry.get("unit", "rows")
    if unit not in ("rows", "percent"):
        raise RuleError(f"unit must be 'rows' or 'percent', got {unit!r}", "unit")
    if unit == "percent" and not percent_allowed:
        raise RuleError("unit percent needs a count of rows to divide; this rule measures a number: use rows", "unit")
    numbers = value if operator in ("mustBeBetween", "mustNotBeBetween") else [value]
    for number in numbers:
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise RuleError(f"{operator} needs a number, got {number!r}", operator)
    if len(numbers) == 2 and numbers[0] > numbers[1]:
        raise RuleError(f"{operator} needs the smaller number first, got {value!r}", operator)
    if unit == "percent":
        for number in numbers:
            if not 0 <= number <= 100:
                raise RuleError(f"a percent threshold must be between 0 and 100, got {number!r}", operator)
    return {"operator": operator, "value": value, "unit": unit}


def custom_expression(text, key="implementation") -> str:
    """A contract-supplied boolean row expression, refused unless the allow-list accepts it; the
    plan gets the text rendered from the checked tree, never the contract's own."""
    try:
        return f"({check_expression(text)})"
    except ValueError as exc:
        raise RuleError(f"unsafe or invalid expression: {exc}", key) from exc


def referenced_columns(expression: str, columns: list[str]) -> list[str]:
    """Columns an expression mentions (bare or back-quoted), in contract order; like Spark's
    default resolution, case-insensitively."""
    names = {name.lower() for name in identifiers(expression)}
    return [name for name in columns if name.lower() in names]
