"""Compare a candidate's schema with the plan's columns without running a Spark action.

Types are compared on Spark's exact type string (``DataType.simpleString``): ``int`` is not
``bigint`` and ``decimal(10,2)`` is not ``decimal(10,3)``. Nothing is ever cast: a producer
sending the wrong type is told so instead of having values silently rounded or nulled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import StructType

from spark_jobs.validation.unfit import UNFIT

_ALIASES = {
    "long": "bigint",
    "integer": "int",
    "short": "smallint",
    "byte": "tinyint",
    "bool": "boolean",
    "real": "float",
    "dec": "decimal",
    "numeric": "decimal",
    "timestamp_ltz": "timestamp",
    # Spark reads CHAR/VARCHAR columns as string; their length is a max_length rule.
    "char": "string",
    "varchar": "string",
}
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")


@dataclass(frozen=True)
class SchemaResult:
    """What the schema check found. ``blocked`` are columns no rule can safely read."""

    policy: str
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    type_mismatches: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        extra_allowed = self.policy == "additive" or not self.unexpected
        return not self.missing and not self.type_mismatches and extra_allowed

    @property
    def blocked(self) -> set[str]:
        return set(self.missing) | {m["column"] for m in self.type_mismatches}

    def as_report(self) -> dict[str, Any]:
        """The report's ``schema`` section. Unexpected columns are listed under both
        policies; only ``strict`` makes them fail (``ok`` says which)."""
        return {
            "ok": self.ok,
            "policy": self.policy,
            "missing": list(self.missing),
            "unexpected": list(self.unexpected),
            "type_mismatches": [dict(m) for m in self.type_mismatches],
        }


def check_schema(plan: dict[str, Any], schema: StructType) -> SchemaResult:
    """Missing, unexpected and mistyped columns of ``schema`` against ``plan['columns']``.

    Names match exactly (case-sensitively), so ``Order_ID`` is not ``order_id``.
    """
    # the unfit-value marker of a CSV/JSON candidate is the gate's own column, not the producer's
    actual = {f.name: f.dataType.simpleString() for f in schema.fields if f.name != UNFIT}
    expected = {c["name"]: normalize_type(c["type"]) for c in plan["columns"]}
    return SchemaResult(
        policy=plan["schema_policy"],
        missing=[name for name in expected if name not in actual],
        unexpected=[name for name in actual if name not in expected],
        type_mismatches=[
            {"column": name, "expected": expected[name], "actual": actual[name]}
            for name in expected
            if name in actual and actual[name] != expected[name]
        ],
    )


def normalize_type(text: str) -> str:
    """A contract's Spark type written the way ``DataType.simpleString`` prints it.

    Accepts what people write in ``physicalType``: any case, spaces, ``long``/``integer``
    aliases, ``decimal`` without precision (Spark's default ``decimal(10,0)``), nested
    ``array<>``, ``map<,>`` and ``struct<name:type,...>``.
    """
    tokens = _tokenize(text)
    try:
        result, position = _parse(tokens, 0)
    except IndexError:
        raise ValueError(f"cannot read Spark type {text!r}") from None
    if position != len(tokens):
        raise ValueError(f"cannot read Spark type {text!r}")
    return result


def _tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise ValueError(f"cannot read Spark type {text!r}")
        tokens.append(match.group(1))
        position = match.end()
    return tokens


def _parse(tokens: list[str], at: int) -> tuple[str, int]:
    if at >= len(tokens):
        raise ValueError("type ends too early")
    name = _ALIASES.get(tokens[at].lower(), tokens[at].lower())
    at += 1
    if name in ("array", "map", "struct"):
        at = _expect(tokens, at, "<")
        parts: list[str] = []
        while tokens[at] != ">":
            if name == "struct":
                field_name = tokens[at]
                if field_name.startswith("`"):
                    field_name = field_name[1:-1].replace("``", "`")
                at = _expect(tokens, at + 1, ":")
                inner, at = _parse(tokens, at)
                parts.append(f"{field_name}:{inner}")
            else:
                inner, at = _parse(tokens, at)
                parts.append(inner)
            if tokens[at] == ",":
                at += 1
        return f"{name}<{','.join(parts)}>", at + 1
    arguments: list[str] = []
    if at < len(tokens) and tokens[at] == "(":
        at += 1
        while tokens[at] != ")":
            if tokens[at] != ",":
                arguments.append(tokens[at])
            at += 1
        at += 1
    if name == "decimal":
        precision = arguments[0] if arguments else "10"
        scale = arguments[1] if len(arguments) > 1 else "0"
        return f"decimal({int(precision)},{int(scale)})", at
    if name == "string":
        return name, at
    return name + (f"({','.join(arguments)})" if arguments else ""), at


def _expect(tokens: list[str], at: int, token: str) -> int:
    if at >= len(tokens) or tokens[at] != token:
        raise ValueError(f"expected {token!r} in Spark type")
    return at + 1
