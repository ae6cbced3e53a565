"""Row diagnostics: which rules each row breaks, for quarantine and the row-level split.

``_errors`` and ``_warnings`` are plain column expressions (plus a window per key set for
uniqueness), so they cost nothing until the rows are written. A row is invalid exactly when
``_errors`` is not empty; ``valid`` and ``invalid`` are the two sides of that one test on the
same rows, so together they always equal the input: nothing lost, nothing twice.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from contract_gate_plan.model import Plan, Rule, load_plan
from contract_gate_plan.states import RuleStatus
from contract_gate_spark.validation.rule_columns import (
    column,
    evaluated,
    failing,
    keys_not_null,
    triage,
)
from contract_gate_spark.validation.schema_compare import check_schema

ERRORS = "_errors"
WARNINGS = "_warnings"
DIAGNOSTIC_TYPE = "array<struct<rule_id:string,columns:array<string>,message:string>>"


def message(rule: Rule) -> str:
    """A rule's human text: the contract's description, else what kind of check failed."""
    return rule.description or f"{rule.kind} check {rule.id} failed"


def duplicated(rule: Rule) -> Column:
    """TRUE for an evaluated row sharing its key with another evaluated row.

    As in SQL, a row with a NULL key part is never a duplicate, unless the rule says
    ``nulls_distinct: false``: then NULL key parts compare equal (group-by semantics).
    """
    keys = rule.columns
    group_size = F.count_if(evaluated(rule)).over(Window.partitionBy(*map(column, keys)))
    condition = evaluated(rule) & (group_size > 1)
    if rule.nulls_distinct:
        condition = condition & keys_not_null(keys)
    return condition


def broken(rule: Rule) -> Column:
    """TRUE for a row the rule marks: failing its predicate, or part of a duplicate group."""
    return duplicated(rule) if rule.scope == "group" else failing(rule)


def annotate(df: DataFrame, rules: list[Rule]) -> DataFrame:
    """``df`` plus ``_errors``/``_warnings`` for ``rules`` (row and group scope only)."""
    entries: dict[str, list[Column]] = {"error": [], "warning": []}
    for rule in rules:
        if rule.scope not in ("row", "group"):
            continue
        entry = F.struct(
            F.lit(rule.id).alias("rule_id"),
            F.array(*[F.lit(name) for name in rule.columns]).cast("array<string>").alias("columns"),
            F.lit(message(rule)).alias("message"),
        )
        entries[rule.severity].append(F.when(broken(rule), entry))
    return df.withColumns(
        {ERRORS: _compact(entries["error"]), WARNINGS: _compact(entries["warning"])}
    )


def any_broken(rules: list[Rule]) -> Column:
    """TRUE for a row that at least one of ``rules`` marks."""
    return reduce(lambda a, b: a | b, (broken(rule) for rule in rules), F.lit(False))


def _compact(entries: list[Column]) -> Column:
    if not entries:
        return F.array().cast(DIAGNOSTIC_TYPE)
    return F.filter(F.array(*entries), lambda entry: entry.isNotNull())


def diagnose(df: DataFrame, plan: Plan | dict[str, Any] | str) -> DataFrame:
    """``df`` with ``_errors`` and ``_warnings`` for every rule that can run on it."""
    plan = load_plan(plan)
    return annotate(df, triage(plan, df, check_schema(plan, df.schema), "all").runnable)


def split(df: DataFrame, plan: Plan | dict[str, Any] | str) -> tuple[DataFrame, DataFrame]:
    """(valid, invalid): valid rows with the input's columns only (ready to publish), invalid
    rows with ``_errors``/``_warnings`` (ready to quarantine).

    Refuses a candidate whose schema check fails or on which an error rule cannot run:
    splitting rows that were never checked would publish them unchecked.
    """
    plan = load_plan(plan)
    schema = check_schema(plan, df.schema)
    if not schema.ok:
        raise ValueError(f"cannot split rows: the schema check failed {schema.as_report()}")
    plan_rules = triage(plan, df, schema, "all")
    unchecked = [
        rule_id
        for rule_id, (status, _) in plan_rules.skipped.items()
        if status == RuleStatus.NOT_EVALUATED
        and next(r for r in plan.rules if r.id == rule_id).severity == "error"
    ]
    if unchecked:
        raise ValueError(f"cannot split rows: error rules cannot run: {', '.join(unchecked)}")
    diagnosed = annotate(df, plan_rules.runnable)
    invalid = diagnosed.filter(F.size(ERRORS) > 0)
    valid = diagnosed.filter(F.size(ERRORS) == 0).drop(ERRORS, WARNINGS)
    return valid, invalid
