"""Execute a ValidationPlan on a candidate with the fewest passes the rules allow.

One fused pass counts the rows and every row, metric and row-count rule as bits of a per-row
flag word (``flag_words``), carried by the first key set's group-by on its hash (``key_passes``,
``key_hash``); each further key set adds a group-by and each ``type: sql`` rule a query
(``contract_queries``), so the number of rules never adds a pass. The passes run under the
session settings of ``pass_settings``. Counts mean what the target's CHECK constraints mean: a
NULL predicate fails. The jobs per validation, the exact look at hash groups and the semantics
are described in docs/architecture.md ("The validation engine"). The cross-batch key rule is left
``not_executed`` here: the ``batch_keys`` step measures it against the target.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pyspark.logger import PySparkLogger
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_gate_plan.model import Address, Plan, Rule, load_plan
from contract_gate_plan.states import RuleStatus
from contract_gate_spark.runtime.budget import StepStopped, TimeBudget
from contract_gate_spark.runtime.errors import error_condition
from contract_gate_spark.validation.candidate import Candidate
from contract_gate_spark.validation.contract_queries import run_queries
from contract_gate_spark.validation.diagnostics import any_broken
from contract_gate_spark.validation.flag_words import FlagWords
from contract_gate_spark.validation.key_passes import flag_counts, key_set_pass, rules_by_key_set
from contract_gate_spark.validation.pass_settings import pass_settings
from contract_gate_spark.validation.references import Pinned, pin, reference_rules, with_found_flags
from contract_gate_spark.validation.report import Measurement, build_report
from contract_gate_spark.validation.rule_columns import Triage, evaluated, failing, triage
from contract_gate_spark.validation.schema_compare import SchemaResult, check_schema
from contract_gate_spark.validation.spark_errors import SPARK_ERRORS
from contract_gate_spark.validation.value_samples import sample_failing_values

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
    history: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Validate ``candidate`` against ``plan`` and return the report dict.

    ``depth="schema"`` checks the schema only and runs no Spark action; ``"data"`` runs the
    rules but does not fail on the schema verdict; ``"all"`` does both. ``sample_size`` > 0
    adds up to that many failing values per failing row rule, from sample-allowed,
    unclassified columns only. ``history``: the last accepted batches' measures of each history
    rule, read by the gate from its decision log (``validation.history_rules``); without it a
    history rule says it was not judged on its history.

    A validation stopped by a time budget or from outside raises :class:`StepStopped` with its
    partial report (``report``): the rules measured before the stop, every other one ``stopped``,
    outcome ``stopped``.
    """
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    started = time.perf_counter()
    plan = load_plan(plan)
    if isinstance(candidate, DataFrame):
        candidate = Candidate(candidate)
    df = candidate.df
    schema = check_schema(plan, df.schema)
    pinned, unreadable = _pin_references(spark, plan, schema, depth)
    df = with_found_flags(spark, df, pinned)
    rules = triage(plan, df, schema, depth, submission=submission_id is not None,  # a gate's batch
                   many_batches=candidate.many_batches)
    for rule_id, reason in unreadable.items():
        rules.skipped[rule_id] = (RuleStatus.NOT_EVALUATED, reason)
        rules.runnable = [rule for rule in rules.runnable if rule.id != rule_id]
    timings = {"schema_seconds": time.perf_counter() - started}
    measurements: dict[str, Measurement] = {}
    row_count = invalid = None
    if depth != "schema":
        references = plan.tables.references if plan.tables else {}
        budget = TimeBudget(spark, plan.limits.validation_seconds, "the rule pass", VALIDATION_SETTING)
        try:
            try:
                with budget:  # a StepStopped is no Spark error: it leaves as it is
                    row_count, invalid = _measure(spark, df, rules, measurements, timings, references, plan, budget)
                    if sample_size > 0:
                        budget.running = "the failing-value samples"
                        sample_failing_values(df, plan, rules, measurements, sample_size)
            except SPARK_ERRORS as exc:  # Spark's message may quote a value: name its condition only
                budget.check(exc)  # a pass cancelled from outside: a stop, not a failure
                raise ValidationFailed(f"validation failed in Spark: {error_condition(exc)}") from None
        except StepStopped as stop:
            # what was measured stays; every rule left is stopped, so the partial report has no verdict
            for rule in rules.runnable:
                if rule.id not in measurements:
                    rules.skipped[rule.id] = (RuleStatus.STOPPED, stop.stop.describe())
            stop.report = _with_pinned(_report(plan, candidate, schema, rules, measurements, None, None, depth,
                                               submission_id, timings, started, history), pinned)
            raise
    return _with_pinned(_report(plan, candidate, schema, rules, measurements, row_count, invalid, depth,
                                submission_id, timings, started, history), pinned)


def _pin_references(spark: SparkSession, plan: Plan, schema: SchemaResult,
                    depth: str) -> tuple[dict[str, Pinned], dict[str, str]]:
    """The referenced targets' versions this validation reads (foreign keys on columns that are
    there with their type), and why a reference cannot be read."""
    unusable = set(schema.missing) | {mismatch["column"] for mismatch in schema.type_mismatches}
    found = [rule for rule in reference_rules(plan.rules) if not set(rule.columns) & unusable]
    if depth == "schema" or not found:
        return {}, {}
    return pin(spark, found)


def _with_pinned(report: dict[str, Any], pinned: dict[str, Pinned]) -> dict[str, Any]:
    """The report, each foreign key's entry naming the referenced target and the version read."""
    for entry in report["rules"]:
        if entry["id"] in pinned:
            entry["reference"] = pinned[entry["id"]].as_report()
    return report


def _report(plan: Plan, candidate: Candidate, schema: SchemaResult, rules: Triage,
            measurements: dict[str, Measurement], row_count: int | None, invalid: int | None, depth: str,
            submission_id: str | None, timings: dict[str, float], started: float,
            history: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
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
        history=history,
    )


VALIDATION_SETTING = "limits.validationSeconds"


def _measure(
    spark: SparkSession,
    df: DataFrame,
    rules: Triage,
    measurements: dict[str, Measurement],
    timings: dict[str, float],
    references: Mapping[str, Address],
    plan: Plan,
    budget: TimeBudget,
) -> tuple[int, int | None]:
    """Run the passes, fill ``measurements``; return (row count, invalid rows). ``budget`` is
    told which pass or query runs, for the stop's message should it run out.

    Every row and metric predicate is evaluated once, into a bit of a flag word
    (``flag_words``). Each group of the first key set's group-by carries its words' spans, so
    the scan, the rules and the key are one pass; when that key set holds the only error-level
    uniqueness rules it also counts ``rows.invalid`` from the same flags.
    """
    counted = rules.by_scope("row", "dataset")
    error_row_rules = [r for r in rules.by_scope("row") if r.severity == "error"]
    key_sets = list(rules_by_key_set(rules.by_scope("group")).values())
    error_sets = [s for s in key_sets if any(r.severity == "error" for r in s)]
    fold = len(error_sets) == 1 and not any(
        r.filter for r in error_sets[0] if r.severity == "error"
    )
    first_set = error_sets[0] if fold else (key_sets[0] if key_sets else None)
    words = FlagWords(_flags(counted), [f"failed{counted.index(r)}" for r in error_row_rules])

    with pass_settings(spark):
        clock = time.perf_counter()
        if first_set is None:
            result = flag_counts(df, words)
        else:
            result, invalid = key_set_pass(df, first_set, measurements, words=words, fold=fold)
        if not error_sets:
            invalid = result["broken"]
        _fill(counted, result, measurements)
        timings["main_pass_seconds"] = time.perf_counter() - clock

        clock = time.perf_counter()
        for group_rules in key_sets:
            if group_rules is not first_set:
                budget.running = f"the key pass of rule {group_rules[0].id!r}"
                key_set_pass(df, group_rules, measurements)
        if error_sets and not fold:
            budget.running = "the invalid-row count"
            marking = error_row_rules + [r for s in error_sets for r in s if r.severity == "error"]
            marked = df.select(any_broken(marking).alias("broken"))  # windows cannot nest in aggregates
            invalid = marked.agg(F.count_if("broken")).collect()[0][0]
        timings["other_passes_seconds"] = time.perf_counter() - clock

    clock = time.perf_counter()
    queries = rules.by_scope("query")
    if queries:
        run_queries(spark, df, queries, measurements, rules, references, plan, budget)
    timings["sql_seconds"] = time.perf_counter() - clock
    return result["rows"], invalid


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
