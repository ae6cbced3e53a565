"""Compare a candidate's schema with the plan's columns without running a Spark action.

Types are compared on Spark's exact type string (``DataType.simpleString``): ``int`` is not
``bigint`` and ``decimal(10,2)`` is not ``decimal(10,3)``. Nothing is ever cast: a producer
sending the wrong type is told so instead of having values silently rounded or nulled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import StructType

from contract_gate_plan import references
from contract_gate_plan.model import Plan
from contract_gate_plan.spark_types import type_text
from contract_gate_spark.validation.unparseable_values import UNFIT


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


def check_schema(plan: Plan, schema: StructType) -> SchemaResult:
    """Missing, unexpected and mistyped columns of ``schema`` against ``plan.columns``.

    Names match exactly (case-sensitively), so ``Order_ID`` is not ``order_id``.
    """
    # the unfit-value marker of a CSV/JSON candidate and the foreign keys' flags are the gate's
    # own columns, not the producer's
    actual = {f.name: type_text(f.dataType.jsonValue()) for f in schema.fields
              if f.name != UNFIT and not f.name.startswith(references.FLAG_PREFIX)}
    expected = {c.name: c.type for c in plan.columns}  # already type text (contract_gate_plan.spark_types)
    return SchemaResult(
        policy=plan.schema_policy,
        missing=[name for name in expected if name not in actual],
        unexpected=[name for name in actual if name not in expected],
        type_mismatches=[
            {"column": name, "expected": expected[name], "actual": actual[name]}
            for name in expected
            if name in actual and actual[name] != expected[name]
        ],
    )

