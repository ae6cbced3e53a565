"""Execute a ValidationPlan on a candidate with the fewest passes the rules allow.

Spark jobs per validation (``depth`` data/all):

* 1 fused pass over the candidate: the row count, every row rule, every metric rule and
  every row-count rule, each a ``count_if`` (a predicate that is NULL counts as failing),
  together with the group-by of the first key set for uniqueness rules;
* 1 group-by per further distinct key set;
* 2 small jobs (a look) per key set whose batch has duplicate keys (below);
* 1 query per ``type: sql`` rule;
* 1 more aggregate only when ``rows.invalid`` cannot be folded into the passes above: when
  error-level uniqueness rules span two or more key sets, or one of them has a filter;
* opt-in only: 1 small ``limit`` query per failing rule that gets a value sample.

A key set is grouped on a 64-bit hash of its columns (``key_hash``), not on the columns: a
long is cheaper to hash, compare and shuffle than strings and dates. A hash group of one row is
one key; when hash groups of two or more rows exist (duplicates, or keys whose hashes
collide), a look broadcasts those groups' hashes and reads only the key columns of their rows,
grouped on the columns (``key_hash.merged_keys``). Only when that look finds a hash group
holding distinct keys is the key set counted again on its columns. So a batch without duplicate keys costs no more
job, a batch with duplicates two small ones, and no collision changes a count.

The number of row rules never adds a pass. (With adaptive query execution Spark submits each
shuffle stage as its own job, and a Delta time-travel read adds one small log-replay job per
query; both scale with the passes above, not with the rules.)

Semantics, the same as the Delta CHECK constraints built from the same predicates:

* a row fails a rule when ``NOT coalesce(predicate, false)``: NULL is a failure;
* NaN sorts above every number, +Infinity included, and NaN = NaN (Spark's ordering): NaN
  passes ``x >= 0`` and fails ``x <= 100``; -Infinity fails a minimum. A contract that must
  reject NaN says so with its own rule (``NOT isnan(x)``);
* a percent threshold divides by the rows the rule evaluated (its ``filter``); with none
  evaluated the percentage is 0;
* uniqueness counts every row of a group of 2+ evaluated rows; as in SQL, a row with a NULL
  key part is never a duplicate, unless the rule says ``nulls_distinct: false`` (then NULL key
  parts compare equal);
* ``rows.invalid`` counts rows failing at least one error-level row or uniqueness rule;
  dataset rules (row counts, metrics with a real tolerance) and query rules judge the batch and
  mark no row. A metric with zero tolerance (``mustBe: 0``...) is compiled as a row rule.

The cross-batch key rule (``key.unique_across_batches``, scope ``target``) needs the target, not
the batch: it is reported ``not_executed``, which does not fail the outcome, and the gate's
``batch_keys`` step (``spark_jobs.commands.chains``) measures it and fills its entry.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from functools import reduce
from typing import Any

from pyspark.errors import PySparkException

try:  # a Java exception pyspark does not convert (absent from a Spark Connect-only client)
    from py4j.protocol import Py4JJavaError

    SPARK_ERRORS: tuple[type[BaseException], ...] = (PySparkException, Py4JJavaError)
except ImportError:  # pragma: no cover
    SPARK_ERRORS = (PySparkException,)
from pyspark.logger import PySparkLogger
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from spark_jobs.validation.candidate import Candidate
from spark_jobs.validation.diagnostics import any_broken
from spark_jobs.validation.key_hash import hashable, key_hash, merged_keys, suspect_hashes
from contract_plan.model import Address, Plan, Rule, load_plan
from spark_jobs.runtime.errors import error_condition
from spark_jobs.validation.report import Measurement, build_report, query_result
from spark_jobs.validation.rule_columns import (
    NOT_EVALUATED,
    Triage,
    column,
    evaluated,
    failing,
    key_set_id,
    keys_not_null,
    triage,
)
from spark_jobs.validation.schema_compare import check_schema
from contract_plan.sql_allowlist import SqlRefused, bind_query

DEPTHS = ("schema", "data", "all")

# pyspark logs the message of every query error it converts, on stderr; Spark builds some of
# them from the data (CAST_INVALID_INPUT quotes the value). The engine names the condition only.
# A filter, not ``disabled``: any later logging.config.dictConfig (Airflow's, in a task process
# that runs the engine in-process) sets ``disabled`` back to False on every existing logger.
for _name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
    PySparkLogger.getLogger(_name).addFilter(lambda record: False)


class ValidationFailed(RuntimeError):
    """Spark failed while evaluating the plan; the message names Spark's error condition only."""


def run_validation(
    spark: SparkSession,
    plan: Plan | dict[str, Any] | str,
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
    rules = triage(plan, df, schema, depth, submission=submission_id is not None)  # a gate's batch
    timings = {"schema_seconds": time.perf_counter() - started}
    measurements: dict[str, Measurement] = {}
    row_count = invalid = None
    if depth != "schema":
        references = plan.tables.references if plan.tables else {}
        try:
            row_count, invalid = _measure(spark, df, rules, measurements, timings, references)
            if sample_size > 0:
                _sample(df, plan, rules, measurements, sample_size)
        except SPARK_ERRORS as exc:  # Spark's message may quote a value: name its condition only
            raise ValidationFailed(f"validation failed in Spark: {error_condition(exc)}") from None
    timings["total_seconds"] = time.perf_counter() - started
    return build_report(
        plan=replace(plan, rules=tuple(rules.considered)),  # with a CSV/JSON input's type rules
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


FLAG = "__contract_gate_{}"  # reserved names of the per-row flag columns
BROKEN = FLAG.format("broken")
HASH = FLAG.format("key_hash")


def _measure(
    spark: SparkSession,
    df: DataFrame,
    rules: Triage,
    measurements: dict[str, Measurement],
    timings: dict[str, float],
    references: Mapping[str, Address],
) -> tuple[int, int]:
    """Run the passes, fill ``measurements``; return (row count, invalid rows).

    Every row and metric predicate is evaluated once, into a flag column. Without uniqueness
    rules the flags are counted by one aggregate. With them, the flags are counted as a side
    effect (``observe``) of the first key set's group-by, which reads the candidate anyway:
    scan and group-by are one pass, and when that key set holds the only error-level
    uniqueness rules it also counts ``rows.invalid`` from the same flags.
    """
    counted = rules.by_scope("row", "dataset")
    error_row_rules = [r for r in rules.by_scope("row") if r.severity == "error"]
    key_sets = list(_key_sets(rules.by_scope("group")).values())
    error_sets = [s for s in key_sets if any(r.severity == "error" for r in s)]
    fold = len(error_sets) == 1 and not any(
        r.filter for r in error_sets[0] if r.severity == "error"
    )
    first_set = error_sets[0] if fold else (key_sets[0] if key_sets else None)

    clock = time.perf_counter()
    flagged = df.select("*", *_flags(counted))
    error_flags = [F.col(FLAG.format(f"failed{counted.index(r)}")) for r in error_row_rules]
    flagged = flagged.withColumn(BROKEN, reduce(lambda a, b: a | b, error_flags, F.lit(False)))
    totals = [total.alias(name) for name, total in _totals(counted).items()]
    invalid = None
    if first_set is None:
        result = flagged.agg(*totals).collect()[0].asDict()
    else:
        observation = Observation(FLAG.format(uuid.uuid4().hex))
        observed = flagged.observe(observation, *totals)
        rows, invalid = _group_pass(
            observed, first_set, F.col(BROKEN) if fold else None, measurements, again=flagged
        )
        # Spark records no observation for an empty input: then every count is 0.
        result = observation.get if rows else dict.fromkeys(_totals(counted), 0)
    if not error_sets:
        invalid = result["broken"]
    _fill(counted, result, measurements)
    timings["main_pass_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    for group_rules in key_sets:
        if group_rules is not first_set:
            _group_pass(df, group_rules, None, measurements)
    if error_sets and not fold:
        marking = error_row_rules + [r for s in error_sets for r in s if r.severity == "error"]
        marked = df.select(any_broken(marking).alias("broken"))  # windows cannot nest in aggregates
        invalid = marked.agg(F.count_if("broken")).collect()[0][0]
    timings["other_passes_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    queries = rules.by_scope("query")
    if queries:
        _run_queries(spark, df, queries, measurements, rules, references)
    timings["sql_seconds"] = time.perf_counter() - clock
    return result["rows"], invalid


def _key_sets(group_rules: list[Rule]) -> dict[tuple[str, ...], list[Rule]]:
    key_sets: dict[tuple[str, ...], list[Rule]] = {}
    for rule in group_rules:
        key_sets.setdefault(key_set_id(rule.columns), []).append(rule)
    return key_sets


def _flags(counted: list[Rule]) -> list[Column]:
    """Per-row booleans: each rule failing, each filter selecting."""
    flags = []
    for index, rule in enumerate(counted):
        if rule.kind != "row_count":
            flags.append(failing(rule).alias(FLAG.format(f"failed{index}")))
        if rule.filter:
            flags.append(evaluated(rule).alias(FLAG.format(f"evaluated{index}")))
    return flags


def _totals(counted: list[Rule]) -> dict[str, Column]:
    """The aggregates over the flag columns: rows, failures and evaluated rows per rule."""
    totals = {"rows": F.count(F.lit(1)), "broken": F.count_if(F.col(BROKEN))}
    for index, rule in enumerate(counted):
        if rule.kind != "row_count":
            totals[f"failed{index}"] = F.count_if(F.col(FLAG.format(f"failed{index}")))
        if rule.filter:
            totals[f"evaluated{index}"] = F.count_if(F.col(FLAG.format(f"evaluated{index}")))
    return totals


def _fill(
    counted: list[Rule], result: dict[str, Any], measurements: dict[str, Measurement]
) -> None:
    for index, rule in enumerate(counted):
        evaluated_rows = result.get(f"evaluated{index}", result["rows"])
        if rule.kind == "row_count":
            measurements[rule.id] = Measurement(evaluated_rows=evaluated_rows, value=evaluated_rows)
        else:
            measurements[rule.id] = Measurement(
                failed_rows=result[f"failed{index}"], evaluated_rows=evaluated_rows
            )


def _group_pass(
    df: DataFrame,
    rules: list[Rule],
    broken: Column | None,
    measurements: dict[str, Measurement],
    again: DataFrame | None = None,
) -> tuple[int, int | None]:
    """One group-by on a key set for all its uniqueness rules; returns (rows, invalid rows).

    A row fails when its group holds 2+ evaluated rows: every row of the group counts. With
    ``broken`` (a per-row flag: an error row rule fails), also counts the invalid rows of the
    whole candidate: a group with an error-level duplicate is invalid entire, any other group
    contributes its broken rows. Without it, invalid rows are ``None``.

    Groups on the key's hash (``key_hash``) where the key's types allow. When hash groups of
    2+ rows exist, a look at those groups' key columns follows (``merged_keys``); when
    one of them merged distinct keys, or there are too many to name, counts again grouped on
    the key columns (``again``: ``df`` without side effects such as an ``observe``; the rule
    totals come from the first pass).
    """
    keys = rules[0].columns
    if hashable(df.schema, keys):
        groups = df.groupBy(key_hash(keys).alias(HASH)).agg(
            *_group_aggregates(rules, broken),
            *([F.count_if(keys_not_null(keys)).alias("complete")] if _nulls_distinct(rules) else []),
        )
        totals = _group_totals(rules, broken, F.col("complete") > 0)
        totals.append(suspect_hashes(F.col(HASH), F.col("size") > 1).alias("suspects"))
        result = groups.agg(*totals).collect()[0].asDict()
        df = again if again is not None else df
        if not result["suspects"] or not merged_keys(df, keys, result["suspects"]):
            return _group_result(rules, broken, result, measurements)
    groups = df.groupBy(*map(column, keys)).agg(*_group_aggregates(rules, broken))
    totals = _group_totals(rules, broken, keys_not_null(keys))
    return _group_result(rules, broken, groups.agg(*totals).collect()[0].asDict(), measurements)


def _nulls_distinct(rules: list[Rule]) -> bool:
    return any(rule.nulls_distinct for rule in rules)


def _group_aggregates(rules: list[Rule], broken: Column | None) -> list[Column]:
    """Per group: its size, the evaluated rows of each filtered rule, its broken rows."""
    aggregates = [F.count(F.lit(1)).alias("size")]
    for index, rule in enumerate(rules):
        if rule.filter:  # unfiltered rules share "size"
            aggregates.append(F.count_if(evaluated(rule)).alias(f"size{index}"))
    if broken is not None:
        aggregates.append(F.count_if(broken).alias("broken"))
    return aggregates


def _group_totals(rules: list[Rule], broken: Column | None, key_complete: Column) -> list[Column]:
    """Over the groups: failing and evaluated rows and duplicate groups per rule, the rows,
    and with ``broken`` the invalid rows. ``key_complete``: the group's key has no NULL part."""
    duplicate = {}
    totals = []
    for index, rule in enumerate(rules):
        size = F.col(f"size{index}" if rule.filter else "size")
        duplicate[index] = size > 1
        if rule.nulls_distinct:
            duplicate[index] = duplicate[index] & key_complete
        totals += [
            F.sum(F.when(duplicate[index], size).otherwise(0)).alias(f"failed{index}"),
            F.sum(size).alias(f"evaluated{index}"),
            F.count_if(duplicate[index]).alias(f"groups{index}"),
        ]
    totals.append(F.sum("size").alias("rows"))
    if broken is not None:
        any_error_duplicate = F.lit(False)
        for index, rule in enumerate(rules):
            if rule.severity == "error":
                any_error_duplicate = any_error_duplicate | duplicate[index]
        totals.append(
            F.sum(F.when(any_error_duplicate, F.col("size")).otherwise(F.col("broken"))).alias(
                "invalid"
            )
        )
    return totals


def _group_result(
    rules: list[Rule],
    broken: Column | None,
    result: dict[str, Any],
    measurements: dict[str, Measurement],
) -> tuple[int, int | None]:
    for index, rule in enumerate(rules):
        measurements[rule.id] = Measurement(
            failed_rows=result[f"failed{index}"] or 0,
            evaluated_rows=result[f"evaluated{index}"] or 0,
            duplicate_groups=result[f"groups{index}"],
        )
    return result["rows"] or 0, None if broken is None else result["invalid"] or 0


def _run_queries(
    spark: SparkSession,
    df: DataFrame,
    queries: list[Rule],
    measurements: dict[str, Measurement],
    rules: Triage,
    references: Mapping[str, Address],
) -> None:
    """Each ``type: sql`` rule once, against the candidate (and the gate's references) as
    temporary views.

    What runs is the query re-checked and rendered by the allow-list (``bind_query``) with
    its placeholders bound to the views, wrapped as a subquery. A query that fails is
    ``not_evaluated`` with Spark's error condition as the reason, never Spark's message.
    """
    views = {"object": f"contract_gate_candidate_{uuid.uuid4().hex}"}
    df.createOrReplaceTempView(views["object"])
    failed_references = {}
    for alias, address in references.items():
        if any("{" + alias + "}" in rule.query for rule in queries):
            views[alias] = f"contract_gate_reference_{alias}_{uuid.uuid4().hex}"
            try:
                read_reference(spark, address).createOrReplaceTempView(views[alias])
            except SPARK_ERRORS as exc:
                failed_references[alias] = error_condition(exc)
    try:
        for rule in queries:
            unreadable = [a for a in failed_references if "{" + a + "}" in rule.query]
            if unreadable:
                rules.skipped[rule.id] = (
                    NOT_EVALUATED, f"reference {unreadable[0]} cannot be read: {failed_references[unreadable[0]]}")
                continue
            names = {**views, **({"property": rule.columns[0]} if rule.columns else {})}
            try:
                query = bind_query(rule.query, names)
                result = spark.sql(f"SELECT * FROM ({query}) AS contract_gate_query")
                first = result.first()
            except SqlRefused as exc:
                rules.skipped[rule.id] = (NOT_EVALUATED, f"query refused: {exc}")
                continue
            except SPARK_ERRORS as exc:
                rules.skipped[rule.id] = (NOT_EVALUATED, f"query failed: {error_condition(exc)}")
                continue
            measurements[rule.id] = (
                Measurement(value_type="no row") if first is None
                else query_result(first[0], result.schema.fields[0].dataType.simpleString())
            )
    finally:
        for view in views.values():
            spark.catalog.dropTempView(view)


def read_reference(spark: SparkSession, address: Address) -> DataFrame:
    """A reference table of the gate settings (a Delta table by name or path, resolved in the
    plan), as it is now."""
    if address["kind"] == "path":
        return spark.read.format("delta").load(address["path"])
    return spark.read.table(address["name"])


def _sample(
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
