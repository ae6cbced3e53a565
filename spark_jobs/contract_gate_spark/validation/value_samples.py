"""Failing values of the failing row rules, for a report that asks for samples: only from columns
the contract allows sampling and does not classify."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pyspark.sql import DataFrame

from contract_gate_plan.model import Plan
from contract_gate_spark.validation.report import Measurement
from contract_gate_spark.validation.rule_columns import Triage, column, failing


def sample_failing_values(
    df: DataFrame,
    plan: Plan,
    rules: Triage,
    measurements: dict[str, Measurement],
    size: int,
) -> None:
    """Up to ``size`` failing values per failing row rule, from columns that allow it."""
    allowed = {
        c.name
        for c in plan.columns
        if c.sample_allowed is True and c.classification is None
    }
    for rule in rules.by_scope("row"):
        names = [name for name in rule.columns if name in allowed]
        measured = measurements[rule.id]
        if not names or not measured.failed_rows:
            continue
        rows = df.filter(failing(rule)).select(*map(column, names)).limit(size).collect()
        measured.sample = {name: [_json_value(row[i]) for row in rows] for i, name in enumerate(names)}


def _json_value(value: Any) -> Any:
    """A sampled value as JSON can hold it: dates ISO, decimals and non-finite floats as text."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal) or (isinstance(value, float) and not math.isfinite(value)):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
