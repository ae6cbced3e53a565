"""Execute a ValidationPlan on a candidate with the fewest passes the rules allow.

Spark jobs per validation (``depth`` data/all):

* 1 fused aggregate over the candidate: the row count, every row rule, every metric rule
  and every row-count rule, each a ``count_if`` (a predicate that is NULL counts as failing);
* 1 group-by per distinct key set, for all uniqueness rules on those columns;
* 1 query per ``type: sql`` rule;
* 1 more aggregate only when ``rows.invalid`` cannot be folded into the passes above: when
  error-level uniqueness rules span two or more key sets, or one of them has a filter;
* opt-in only: 1 small ``limit`` query per failing rule that gets a value sample.

The number of row rules never adds a pass. (With adaptive query execution Spark submits each
shuffle stage as its own job, and a Delta time-travel read adds one small log-replay job per
query; both scale with the passes above, not with the rules.)
"""

from __future__ import annotations

import math
import time
import uuid
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.candidate import Candidate
from spark_jobs.diagnostics import any_broken
from spark_jobs.plan import load_plan
from spark_jobs.report import Measurement, build_report
from spark_jobs.rules import (
    NOT_EVALUATED,
    Triage,
    column,
    evaluated,
    failing,
    key_columns,
    key_set_id,
    keys_not_null,
    quote,
    triage,
)
from spark_jobs.schema_check import check_schema

DEPTHS = ("schema", "data", "all")


def run_validation(
    spark: SparkSession,
    plan: dict[str, Any] | str,
    candidate: Candidate | DataFrame,
    *,
    depth: str = "all",
    submission_id: str | None = None,
    sample_size: int = 0,
) -> dict[str, Any]:
    """Validate ``candidate`` against ``plan`` and return the report dict.

    ``depth="schema"`` checks the schema only and runs no Spark action; ``"data"`` runs the
    rules but does not fail on the schema verdict; ``"all"`` does both. ``sample_size`` > 0
    adds up to that many failing values per failing row rule, from sample-allowed,
    unclassified columns only.
    """
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    started = time.perf_counter()
    plan = load_plan(plan)
    if isinstance(candidate, DataFrame):
        candidate = Candidate(candidate)
    df = candidate.df
    schema = check_schema(plan, df.schema)
    rules = triage(plan, df, schema, depth)
    timings = {"schema_seconds": time.perf_counter() - started}
    measurements: dict[str, Measurement] = {}
    row_count = invalid = None
    if depth != "schema":
        row_count, invalid = _measure(spark, df, rules, measurements, timings)
        if sample_size > 0:
            _sample(df, plan, rules, measurements, sample_size)
    timings["total_seconds"] = time.perf_counter() - started
    return build_report(
        plan=plan,
        candidate=candidate,
        schema=schema,
        measurements=measurements,
        skipped=rules.skipped,
        row_count=row_count,
        invalid_rows=invalid,
        depth=depth,
        submission_id=submission_id,
        timings=timings,
    )


def _measure(
    spark: SparkSession,
    df: DataFrame,
    rules: Triage,
    measurements: dict[str, Measurement],
    timings: dict[str, float],
) -> tuple[int, int]:
    """Run the passes, fill ``measurements``; return (row count, invalid rows)."""
    error_row_rules = [r for r in rules.by_scope("row") if r["severity"] == "error"]
    key_sets = _key_sets(rules.by_scope("group"))
    error_key_sets = [
        rules_ for rules_ in key_sets.values() if any(r["severity"] == "error" for r in rules_)
    ]
    fold_in_group = len(error_key_sets) == 1 and not any(
        r.get("filter") for r in error_key_sets[0] if r["severity"] == "error"
    )

    clock = time.perf_counter()
    row_count, invalid = _fused_scan(
        df, rules.by_scope("row", "dataset"), error_row_rules, not error_key_sets, measurements
    )
    timings["scan_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    for group_rules in key_sets.values():
        folded = fold_in_group and group_rules is error_key_sets[0]
        group_invalid = _group_pass(df, group_rules, error_row_rules if folded else None, measurements)
        if folded:
            invalid = group_invalid
    if error_key_sets and not fold_in_group:
        marking = error_row_rules + [r for r in rules.by_scope("group") if r["severity"] == "error"]
        flagged = df.select(any_broken(marking).alias("broken"))  # windows cannot nest in aggregates
        invalid = flagged.agg(F.count_if("broken")).collect()[0][0]
    timings["group_by_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    queries = rules.by_scope("query")
    if queries:
        _run_queries(spark, df, queries, measurements, rules)
    timings["sql_seconds"] = time.perf_counter() - clock
    return row_count, invalid


def _key_sets(group_rules: list[dict[str, Any]]) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    key_sets: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for rule in group_rules:
        key_sets.setdefault(key_set_id(key_columns(rule)), []).append(rule)
    return key_sets


def _fused_scan(
    df: DataFrame,
    rules: list[dict[str, Any]],
    error_row_rules: list[dict[str, Any]],
    count_invalid: bool,
    measurements: dict[str, Measurement],
) -> tuple[int, int | None]:
    """One aggregate for the row count, every row/metric/row-count rule and invalid rows."""
    aggregates = [F.count(F.lit(1)).alias("rows")]
    for index, rule in enumerate(rules):
        if rule["kind"] != "row_count":
            aggregates.append(F.count_if(failing(rule)).alias(f"failed{index}"))
        if rule.get("filter"):
            aggregates.append(F.count_if(evaluated(rule)).alias(f"evaluated{index}"))
    if count_invalid:
        aggregates.append(F.count_if(any_broken(error_row_rules)).alias("invalid"))
    result = df.agg(*aggregates).collect()[0].asDict()
    for index, rule in enumerate(rules):
        evaluated_rows = result.get(f"evaluated{index}", result["rows"])
        if rule["kind"] == "row_count":
            measurements[rule["id"]] = Measurement(evaluated_rows=evaluated_rows, value=evaluated_rows)
        else:
            measurements[rule["id"]] = Measurement(
                failed_rows=result[f"failed{index}"], evaluated_rows=evaluated_rows
            )
    return result["rows"], result.get("invalid")


def _group_pass(
    df: DataFrame,
    rules: list[dict[str, Any]],
    error_row_rules: list[dict[str, Any]] | None,
    measurements: dict[str, Measurement],
) -> int | None:
    """One group-by on a key set for all its uniqueness rules.

    A row fails when its group holds 2+ evaluated rows: every row of the group counts. With
    ``error_row_rules`` given, also returns the invalid rows of the whole candidate: a group
    with an error-level duplicate is invalid entire, any other group contributes the rows
    that break an error row rule.
    """
    keys = key_columns(rules[0])
    aggregates = [F.count(F.lit(1)).alias("size")]
    for index, rule in enumerate(rules):
        if rule.get("filter"):  # unfiltered rules share "size"
            aggregates.append(F.count_if(evaluated(rule)).alias(f"size{index}"))
    if error_row_rules is not None:
        aggregates.append(F.count_if(any_broken(error_row_rules)).alias("broken"))
    groups = df.groupBy(*map(column, keys)).agg(*aggregates)

    duplicate = {}
    totals = []
    for index, rule in enumerate(rules):
        size = F.col(f"size{index}" if rule.get("filter") else "size")
        duplicate[index] = size > 1
        if rule.get("nulls_distinct"):
            duplicate[index] = duplicate[index] & keys_not_null(keys)
        totals += [
            F.sum(F.when(duplicate[index], size).otherwise(0)).alias(f"failed{index}"),
            F.sum(size).alias(f"evaluated{index}"),
            F.count_if(duplicate[index]).alias(f"groups{index}"),
        ]
    if error_row_rules is not None:
        any_error_duplicate = F.lit(False)
        for index, rule in enumerate(rules):
            if rule["severity"] == "error":
                any_error_duplicate = any_error_duplicate | duplicate[index]
        totals.append(
            F.sum(F.when(any_error_duplicate, F.col("size")).otherwise(F.col("broken"))).alias(
                "invalid"
            )
        )
    result = groups.agg(*totals).collect()[0].asDict()
    for index, rule in enumerate(rules):
        measurements[rule["id"]] = Measurement(
            failed_rows=result[f"failed{index}"] or 0,
            evaluated_rows=result[f"evaluated{index}"] or 0,
            duplicate_groups=result[f"groups{index}"],
        )
    return None if error_row_rules is None else result["invalid"] or 0


def _run_queries(
    spark: SparkSession,
    df: DataFrame,
    queries: list[dict[str, Any]],
    measurements: dict[str, Measurement],
    rules: Triage,
) -> None:
    """Each ``type: sql`` rule once, against the candidate as a temporary view.

    The query is wrapped as a subquery, so only a query can run: a DDL or DML statement, or
    a second statement, is a parse error, reported on the rule as ``not_evaluated``.
    """
    view = f"contract_gate_candidate_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(view)
    try:
        for rule in queries:
            query = rule["query"].replace("{object}", quote(view))
            if rule["columns"]:
                query = query.replace("{property}", quote(rule["columns"][0]))
            try:
                result = spark.sql(f"SELECT * FROM ({query}) AS contract_gate_query")
            except AnalysisException as exc:
                rules.skipped[rule["id"]] = (
                    NOT_EVALUATED,
                    f"query does not analyse: {str(exc).splitlines()[0]}",
                )
                continue
            first = result.first()
            measurements[rule["id"]] = Measurement(value=None if first is None else first[0])
    finally:
        spark.catalog.dropTempView(view)


def _sample(
    df: DataFrame,
    plan: dict[str, Any],
    rules: Triage,
    measurements: dict[str, Measurement],
    size: int,
) -> None:
    """Up to ``size`` failing values per failing row rule, from columns that allow it."""
    allowed = {
        c["name"]
        for c in plan["columns"]
        if c.get("sample_allowed") is True and c.get("classification") is None
    }
    for rule in rules.by_scope("row"):
        names = [name for name in rule["columns"] if name in allowed]
        measured = measurements[rule["id"]]
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
