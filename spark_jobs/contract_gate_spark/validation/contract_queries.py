"""The contract's ``type: sql`` rules, each query run once against the candidate (and the gate's
reference tables) as temporary views."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from contract_gate_plan.model import Address, Plan, Rule
from contract_gate_plan.sql_allowlist import SqlRefused, bind_query
from contract_gate_plan.states import RuleStatus
from contract_gate_spark.runtime.budget import TimeBudget
from contract_gate_spark.runtime.errors import error_condition
from contract_gate_spark.validation.pass_settings import query_settings
from contract_gate_spark.validation.report import Measurement, query_result
from contract_gate_spark.validation.rule_columns import Triage
from contract_gate_spark.validation.spark_errors import SPARK_ERRORS

QUERY_SETTING = "limits.querySeconds"


def run_queries(
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
    stopped by either, or cancelled from outside (a killed task), stops the validation
    (``StepStopped``), it is not a failed query.
    """
    views = {"object": f"contract_gate_candidate_{uuid.uuid4().hex}"}
    df.createOrReplaceTempView(views["object"])
    failed_references = {}
    for alias, address in references.items():
        if any("{" + alias + "}" in rule.require_query() for rule in queries):
            views[alias] = f"contract_gate_reference_{alias}_{uuid.uuid4().hex}"
            try:
                read_reference(spark, address).createOrReplaceTempView(views[alias])
            except SPARK_ERRORS as exc:
                failed_references[alias] = error_condition(exc)
    try:
        with query_settings(spark):
            for rule in queries:
                unreadable = [a for a in failed_references if "{" + a + "}" in rule.require_query()]
                if unreadable:
                    rules.skipped[rule.id] = (
                        RuleStatus.NOT_EVALUATED, f"reference {unreadable[0]} cannot be read: {failed_references[unreadable[0]]}")
                    continue
                names = {**views, **({"property": rule.columns[0]} if rule.columns else {})}
                budget.running = f"rule {rule.id!r}"
                try:
                    query = bind_query(rule.require_query(), names)
                    with TimeBudget(spark, plan.limits.query_seconds, budget.running, QUERY_SETTING):
                        result = spark.sql(f"SELECT * FROM ({query}) AS contract_gate_query")
                        first = result.first()
                except SqlRefused as exc:
                    rules.skipped[rule.id] = (RuleStatus.NOT_EVALUATED, f"query refused: {exc}")
                    continue
                except SPARK_ERRORS as exc:
                    budget.check(exc)  # cancelled by the validation's budget or from outside: not a failed query
                    rules.skipped[rule.id] = (RuleStatus.NOT_EVALUATED, f"query failed: {error_condition(exc)}")
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
