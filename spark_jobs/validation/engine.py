"""Execute a ValidationPlan on a candidate with the fewest passes the rules allow.

One fused pass counts the rows and every row, metric and row-count rule as bits of a per-row
flag word (``flag_words``), carried by the first key set's group-by on its hash (``key_hash``);
each further key set adds a group-by and each ``type: sql`` rule a query, so the number of rules
never adds a pass. Counts mean what the target's CHECK constraints mean: a NULL predicate fails.
The jobs per validation, the exact look at hash groups and the semantics are described in
docs/architecture.md ("The validation engine"). The cross-batch key rule is left
``not_executed`` here: the ``batch_keys`` step measures it against the target.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pyspark.errors import PySparkException

try:  # a Java exception pyspark does not convert (absent from a Spark Connect-only client)
    from py4j.protocol import Py4JJavaError

    SPARK_ERRORS: tuple[type[BaseException], ...] = (PySparkException, Py4JJavaError)
except ImportError:  # pragma: no cover
    SPARK_ERRORS = (PySparkException,)
from pyspark.logger import PySparkLogger
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from spark_jobs.validation.candidate import Candidate
from spark_jobs.validation.diagnostics import any_broken
from spark_jobs.validation import flag_words
from spark_jobs.validation.flag_words import FlagWords
from spark_jobs.validation import key_hash as key_hashing
from spark_jobs.validation.key_hash import hashable, key_hash, merged_keys
from contract_plan.model import Address, Plan, Rule, load_plan
from spark_jobs.runtime.budget import TimeBudget
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
        budget = TimeBudget(spark, plan.limits.validation_seconds, "the rule pass", VALIDATION_SETTING)
        try:
            with budget:  # a TimeBudgetExceeded is no Spark error: it leaves as it is
                row_count, invalid = _measure(spark, df, rules, measurements, timings, references, plan, budget)
                if sample_size > 0:
                    budget.running = "the failing-value samples"
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


VALIDATION_SETTING = "limits.validationSeconds"
QUERY_SETTING = "limits.querySeconds"
FLAG = "__contract_gate_{}"  # reserved names of the columns the passes add
HASH = FLAG.format("key_hash")
COMPLETE = FLAG.format("key_complete")
HUGE_METHOD_LIMIT = "spark.sql.codegen.hugeMethodLimit"
JIT_METHOD_BYTES = 8000
"""HotSpot compiles no method longer than this; Spark's documentation advises it as the limit."""
SORT_AGGREGATE = "spark.sql.execution.replaceHashWithSortAgg"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
INITIAL_PARTITIONS = "spark.sql.adaptive.coalescePartitions.initialPartitionNum"
KEY_PARTITIONS = 16
ADVISORY_PARTITION_SIZE = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
KEY_PARTITION_SIZE = "4m"
READER_BATCH = "spark.sql.parquet.columnarReaderBatchSize"
QUERY_READER_BATCH_ROWS = 64
"""Rows a contract query reads per batch of the candidate. Spark stops a cancelled task only when
it asks its input for the next batch, and a query can spend hours on one batch (a join on a key
every row shares pairs each row with all the others), so small batches let a time budget stop it
at once."""


def _measure(
    spark: SparkSession,
    df: DataFrame,
    rules: Triage,
    measurements: dict[str, Measurement],
    timings: dict[str, float],
    references: Mapping[str, Address],
    plan: Plan,
    budget: TimeBudget,
) -> tuple[int, int]:
    """Run the passes, fill ``measurements``; return (row count, invalid rows). ``budget`` is
    told which pass or query runs, for the stop's message should it run out.

    Every row and metric predicate is evaluated once, into a bit of a flag word
    (``flag_words``). Each group of the first key set's group-by carries its words' spans, so
    the scan, the rules and the key are one pass; when that key set holds the only error-level
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
    words = FlagWords(_flags(counted), [f"failed{counted.index(r)}" for r in error_row_rules])

    with _pass_settings(spark):
        clock = time.perf_counter()
        if first_set is None:
            result, _ = _aggregate(df, words, None, fold=False, hashed=False)
        else:
            result, invalid = _key_set_pass(df, first_set, measurements, words=words, fold=fold)
        if not error_sets:
            invalid = result["broken"]
        _fill(counted, result, measurements)
        timings["main_pass_seconds"] = time.perf_counter() - clock

        clock = time.perf_counter()
        for group_rules in key_sets:
            if group_rules is not first_set:
                budget.running = f"the key pass of rule {group_rules[0].id!r}"
                _key_set_pass(df, group_rules, measurements)
        if error_sets and not fold:
            budget.running = "the invalid-row count"
            marking = error_row_rules + [r for s in error_sets for r in s if r.severity == "error"]
            marked = df.select(any_broken(marking).alias("broken"))  # windows cannot nest in aggregates
            invalid = marked.agg(F.count_if("broken")).collect()[0][0]
        timings["other_passes_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    queries = rules.by_scope("query")
    if queries:
        _run_queries(spark, df, queries, measurements, rules, references, plan, budget)
    timings["sql_seconds"] = time.perf_counter() - clock
    return result["rows"], invalid


@contextmanager
def _pass_settings(spark: SparkSession) -> Iterator[None]:
    """The session's settings for the passes, each put back as it was afterwards.

    * ``spark.sql.codegen.hugeMethodLimit`` at most 8000: whole-stage code generation steps
      back for a stage whose generated method HotSpot would not compile, instead of leaving
      the JVM to interpret it;
    * ``spark.sql.execution.replaceHashWithSortAgg``: the key's rows, sorted on their hash
      after the shuffle (``_key_groups``), are grouped by one sort aggregate instead of a
      partial and a final hash aggregate, each of which would insert every row into a hash
      map of its own. From Spark 4.3 that sort aggregate also runs in generated code (on by
      default there);
    * at least ``KEY_PARTITIONS`` partitions after the key's shuffle
      (``spark.sql.adaptive.coalescePartitions.initialPartitionNum``), which adaptive execution
      coalesces into partitions of about ``KEY_PARTITION_SIZE`` (a small batch's into one).
      Every task of the key's group-by writes one file per partition for the summary's
      shuffle, so more partitions cost more files than they save.
    """
    wanted = {}
    if _setting(spark, HUGE_METHOD_LIMIT, 65535) > JIT_METHOD_BYTES:
        wanted[HUGE_METHOD_LIMIT] = JIT_METHOD_BYTES
    wanted[SORT_AGGREGATE] = "true"
    shuffle_partitions = _setting(spark, SHUFFLE_PARTITIONS, 200)
    if _setting(spark, INITIAL_PARTITIONS, shuffle_partitions) < KEY_PARTITIONS:
        wanted[INITIAL_PARTITIONS] = KEY_PARTITIONS
    wanted[ADVISORY_PARTITION_SIZE] = KEY_PARTITION_SIZE
    with _settings(spark, wanted):
        yield


@contextmanager
def _settings(spark: SparkSession, wanted: Mapping[str, Any]) -> Iterator[None]:
    """``wanted`` set in the session for the block, each setting put back as it was afterwards."""
    previous = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, str(value))
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _setting(spark: SparkSession, key: str, default: int) -> int:
    """A whole-number setting of the session; ``default`` when unset, and a value that is not a
    number (Databricks' ``auto`` partitions) counts as already high enough."""
    value = spark.conf.get(key, None)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return 1 << 30


def _key_sets(group_rules: list[Rule]) -> dict[tuple[str, ...], list[Rule]]:
    key_sets: dict[tuple[str, ...], list[Rule]] = {}
    for rule in group_rules:
        key_sets.setdefault(key_set_id(rule.columns), []).append(rule)
    return key_sets


def _flags(counted: list[Rule]) -> dict[str, Column]:
    """Per-row booleans: each rule failing, each filter selecting."""
    flags = {}
    for index, rule in enumerate(counted):
        if rule.kind != "row_count":
            flags[f"failed{index}"] = failing(rule)
        if rule.filter:
            flags[f"evaluated{index}"] = evaluated(rule)
    return flags


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


def _key_set_pass(
    df: DataFrame,
    rules: list[Rule],
    measurements: dict[str, Measurement],
    *,
    words: FlagWords | None = None,
    fold: bool = False,
) -> tuple[dict[str, int], int | None]:
    """One group-by on a key set for all its uniqueness rules, with ``words`` counted in the
    same aggregate; returns (the flag counts and rows, invalid rows).

    A row fails a uniqueness rule when its group holds 2+ evaluated rows: every row of the group
    counts. With ``fold``, also counts the invalid rows of the whole candidate: a group with an
    error-level duplicate is invalid entire, any other group contributes its broken rows.
    Without it, invalid rows are ``None``.

    Groups on the key's hash (``key_hash``) where the key's types allow. When hash groups of
    2+ rows exist, a look at those groups' key columns follows (``merged_keys``); when one of
    them merged distinct keys, or there are too many to name, counts the key set again grouped
    on its columns (the flag counts come from the first pass).
    """
    keys = rules[0].columns
    hashed = hashable(df.schema, keys)
    counts, key_result = _aggregate(df, words, rules, fold=fold, hashed=hashed)
    suspects = key_result.get("suspects")
    if suspects and merged_keys(df, keys, suspects):
        key_result = _key_totals_on_columns(df, words, rules, fold=fold)
    for index, rule in enumerate(rules):
        measurements[rule.id] = Measurement(
            failed_rows=key_result[f"failed{index}"] or 0,
            evaluated_rows=key_result[f"evaluated{index}"] or 0,
            duplicate_groups=key_result[f"groups{index}"] or 0,
        )
    invalid = (key_result["invalid"] or 0) if fold else None
    return {**counts, "rows": key_result["rows"] or 0}, invalid


def _aggregate(
    df: DataFrame,
    words: FlagWords | None,
    key_rules: list[Rule] | None,
    *,
    fold: bool,
    hashed: bool,
) -> tuple[dict[str, int], dict[str, Any]]:
    """One aggregate over ``df``: its rows grouped on the key set of ``key_rules`` (or, without
    one, on their flag words); returns (the flag counts and rows, the key set's totals, empty
    without ``key_rules``).

    Each key group carries its size and its words' spans (``FlagWords.spans``); the groups are
    aggregated once more on their spans, size class and, for a hash group of 2+ rows, its hash
    (a suspect for ``merged_keys``), and the driver adds those few rows up.
    """
    if not key_rules:
        return _flag_counts(df, words), {}
    summary = _key_groups(df, words, key_rules, fold=fold, hashed=hashed)
    limit = key_hashing.LOOK_LIMIT + flag_words.FLAG_SETS + 1
    rows = _first_rows(summary, limit + 1)
    if len(rows) > limit:  # more suspects or spans than the driver reads: count on the columns
        key_result = _key_totals_on_columns(df, words, key_rules, fold=fold)
        return (_flag_totals(df, words) if words else {}), key_result
    # by position: the summary holds a row per suspect, and a Row looks a name up in a list
    position = {name: index for index, name in enumerate(summary.columns)}
    labels = {SIZE_CLASS, SUSPECT, *(words.all_names + words.any_names if words else [])}
    key_result: dict[str, Any] = {
        name: sum(row[index] or 0 for row in rows)
        for name, index in position.items() if name not in labels
    }
    suspect = position[SUSPECT]
    key_result["suspects"] = [row[suspect] for row in rows if row[suspect] is not None]
    if words is None:
        return {}, key_result
    spans: dict[tuple[Any, ...], list[int]] = {}  # suspects that share a span are read as one
    shared = [position[name] for name in words.all_names]
    raised = [position[name] for name in words.any_names]
    size_class, rows_at, groups_at = position[SIZE_CLASS], position["rows"], position["groups"]
    for row in rows:
        span = (tuple(row[i] for i in shared), tuple(row[i] for i in raised), row[size_class])
        sizes = spans.setdefault(span, [0, 0])
        sizes[0] += row[rows_at]
        sizes[1] += row[groups_at]
    counts = words.read([(*span, in_span, groups) for span, (in_span, groups) in spans.items()])
    return (counts if counts is not None else _flag_totals(df, words)), key_result


SIZE_CLASS = FLAG.format("size_class")
GROUP_HASH = FLAG.format("group_hash")
SUSPECT = FLAG.format("suspect")


def _key_groups(
    df: DataFrame,
    words: FlagWords | None,
    key_rules: list[Rule],
    *,
    fold: bool,
    hashed: bool,
    spans: bool = True,
) -> DataFrame:
    """The rows grouped on the key set (its hash, or its columns), then the groups grouped on
    their spans, size class and suspect hash, each such row with the key set's totals over its
    groups; without ``spans``, one row of the key set's totals.

    A hash group is mostly one row, so aggregating before the shuffle would keep a map entry
    per row and save nothing: the rows are shuffled on the hash first, sorted on it, and
    grouped in that order.
    """
    keys = key_rules[0].columns
    if hashed:
        key_columns, per_row = [HASH], [key_hash(keys).alias(HASH)]
    else:
        key_columns = [FLAG.format(f"key{n}") for n in range(len(keys))]
        per_row = [column(k).alias(name) for k, name in zip(keys, key_columns)]
    group_aggregates = [F.count(F.lit(1)).alias("size")]
    for index, rule in enumerate(key_rules):
        if rule.filter:  # unfiltered rules share "size"
            selected = FLAG.format(f"selected{index}")
            per_row.append(evaluated(rule).alias(selected))
            group_aggregates.append(F.count_if(selected).alias(f"size{index}"))
    if _nulls_distinct(key_rules):
        per_row.append(keys_not_null(keys).alias(COMPLETE))
        group_aggregates.append(F.count_if(COMPLETE).alias("complete"))
    if words is not None:
        per_row += words.columns()
        if fold:
            group_aggregates.append(F.count_if(words.broken()).alias("broken"))
        if spans:
            group_aggregates += words.spans()
    rows = df.select(*per_row)
    if hashed:
        # Sorted after the shuffle, the rows are grouped in one streaming sort aggregate
        # (``_pass_settings``). first(hash) is the group's own hash; as an order-dependent
        # aggregate it keeps Spark's optimizer from dropping the sort below the group-by.
        rows = rows.repartition(HASH).sortWithinPartitions(HASH)
        group_aggregates.append(F.first(HASH).alias(GROUP_HASH))
    groups = rows.groupBy(*key_columns).agg(*group_aggregates)
    totals = [F.sum("size").alias("rows"), F.count(F.lit(1)).alias("groups")]
    totals += _group_totals(key_rules, fold, F.col("complete") > 0)
    if not spans:
        return groups.agg(*totals)  # one row: the key set's totals
    span_names = words.all_names + words.any_names if words is not None else []
    suspect = F.col("size") > 1
    if all(rule.nulls_distinct for rule in key_rules):  # a group of keys with NULL parts is no duplicate
        suspect = suspect & (F.col("complete") > 0)
    labelled = groups.select(
        "*",
        F.least(F.col("size"), F.lit(3)).alias(SIZE_CLASS),
        (F.when(suspect, F.col(GROUP_HASH)) if hashed else F.lit(None).cast("long")).alias(SUSPECT),
    )
    return labelled.groupBy(*span_names, SIZE_CLASS, SUSPECT).agg(*totals)


def _key_totals_on_columns(
    df: DataFrame, words: FlagWords | None, key_rules: list[Rule], *, fold: bool
) -> dict[str, Any]:
    """The key set's totals with the rows grouped on its columns: exact whatever the hashes."""
    totals = _key_groups(df, words if fold else None, key_rules, fold=fold, hashed=False, spans=False)
    return totals.collect()[0].asDict()


def _flag_counts(df: DataFrame, words: FlagWords) -> dict[str, int]:
    """The flag counts of a batch without a key set: its rows grouped on their words."""
    per_words = df.select(*words.columns()).groupBy(*words.names).agg(F.count(F.lit(1)).alias("rows"))
    rows = _first_rows(per_words, flag_words.FLAG_SETS + 1)
    if len(rows) > flag_words.FLAG_SETS:  # a batch crafted to raise that many sets of flags
        return _flag_totals(df, words)
    exact = [tuple(row[name] for name in words.names) for row in rows]
    return words.read([(w, w, 1, row["rows"], row["rows"]) for w, row in zip(exact, rows)])


def _first_rows(df: DataFrame, count: int) -> list[Row]:
    """Up to ``count`` rows in one job: ordered, the limit is a top-k per partition, where a
    plain ``limit`` reads partitions in rounds, one job each."""
    return df.orderBy(df.columns[0]).limit(count).collect()


def _flag_totals(df: DataFrame, words: FlagWords) -> dict[str, int]:
    """The flag counts one aggregate function each: one more aggregate over the batch."""
    return df.select(*words.columns()).agg(*words.totals()).collect()[0].asDict()


def _nulls_distinct(rules: list[Rule]) -> bool:
    return any(rule.nulls_distinct for rule in rules)


def _group_totals(rules: list[Rule], fold: bool, key_complete: Column) -> list[Column]:
    """Over the groups: failing and evaluated rows and duplicate groups per rule, and with
    ``fold`` the invalid rows. ``key_complete``: the group's key has no NULL part."""
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
    if fold:
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


def _run_queries(
    spark: SparkSession,
    df: DataFrame,
    queries: list[Rule],
    measurements: dict[str, Measurement],
    rules: Triage,
    references: Mapping[str, Address],
    plan: Plan,
    budget: TimeBudget,
) -> None:
    """Each ``type: sql`` rule once, against the candidate (and the gate's references) as
    temporary views.

    What runs is the query re-checked and rendered by the allow-list (``bind_query``) with
    its placeholders bound to the views, wrapped as a subquery. A query that fails is
    ``not_evaluated`` with Spark's error condition as the reason, never Spark's message. Each
    query runs under its own budget (``limits.querySeconds``) inside the validation's: a query
    stopped by either stops the validation (``TimeBudgetExceeded``), it is not a failed query.
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
        with _settings(spark, {READER_BATCH: QUERY_READER_BATCH_ROWS}):
            for rule in queries:
                unreadable = [a for a in failed_references if "{" + a + "}" in rule.query]
                if unreadable:
                    rules.skipped[rule.id] = (
                        NOT_EVALUATED, f"reference {unreadable[0]} cannot be read: {failed_references[unreadable[0]]}")
                    continue
                names = {**views, **({"property": rule.columns[0]} if rule.columns else {})}
                budget.running = f"rule {rule.id!r}"
                try:
                    query = bind_query(rule.query, names)
                    with TimeBudget(spark, plan.limits.query_seconds, budget.running, QUERY_SETTING):
                        result = spark.sql(f"SELECT * FROM ({query}) AS contract_gate_query")
                        first = result.first()
                except SqlRefused as exc:
                    rules.skipped[rule.id] = (NOT_EVALUATED, f"query refused: {exc}")
                    continue
                except SPARK_ERRORS as exc:
                    budget.check()  # cancelled by the validation's budget: not a failed query
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
    return address.read(spark.read.format("delta"))


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
