"""Quarantine: rejected rows, with the ids of the rules they broke, out of the consumers' way.

The quarantine table holds the plan's columns plus ``_errors``/``_warnings`` (the engine's
diagnostics: rule id, columns, message — never values), ``_submission_id``,
``_contract_version`` and ``_quarantined_at`` (what retention deletes by). One quarantine
table serves every batch of a contract, so its shape is the plan's, not each batch's:

* ``rows="invalid"`` (row-level split) writes the rows the engine's ``split`` marks invalid,
  from the same pinned candidate version that was validated and published from;
* ``rows="all"`` (the batch is rejected) writes every row with its row diagnostics, plus the
  batch-level failures from the report (dataset, query and target rules such as
  ``key.unique_across_batches``, a failed schema check) on every row. A batch whose schema
  broke is stored as far as the plan's columns go — missing columns empty, mistyped values
  cast where they can be — and the untouched batch stays in its candidate table until
  candidate retention removes it.

Writes are tagged and idempotent exactly like publication (``contract_gate_spark.steps.commits``): a retry
writes again, Delta skips it, and the step says ``already_quarantined`` (no history is read before
the write, only the newest commit after it, or the whole history when Delta skipped). The table
is created with this contract's ownership properties, and a table that is not this contract's
quarantine (another contract's target or quarantine, a table the gate did not create) is
refused before anything is written to it (``contract_gate_plan.ownership``).
"""

from __future__ import annotations

from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StringType, StructField, StructType, TimestampType

from contract_gate_plan import keys_across_batches
from contract_gate_plan.addresses import Address
from contract_gate_spark.runtime.errors import TABLE_EXISTS, has_condition
from contract_gate_spark.steps.columns import add_missing_columns
from contract_gate_spark.steps.commits import own_commit_version, retry_conflicts, tagged_session
from contract_gate_spark.validation.diagnostics import DIAGNOSTIC_TYPE, ERRORS, WARNINGS, annotate, split
from contract_gate_spark.validation.references import pinned_in_report, with_found_flags
from contract_gate_spark.steps.history import exists, find_submission, just_committed
from contract_gate_plan.ownership import owner_properties, properties_clause, require_owner
from contract_gate_plan.model import Plan, load_plan
from contract_gate_spark.steps.publish import read_pinned
from contract_gate_plan.restricted import local_folder, make_private_folder, restrict_tree, statistics_properties
from contract_gate_spark.validation.rule_columns import triage
from contract_gate_spark.validation.schema_compare import check_schema
from contract_gate_plan.table_ddl import table_properties
from contract_gate_plan.spark_types import type_text
from contract_gate_plan.sql_text import quote_identifier

ROWS = ("all", "invalid")
SUBMISSION = "_submission_id"
CONTRACT_VERSION = "_contract_version"
QUARANTINED_AT = "_quarantined_at"
SCHEMA_RULE = "schema"
BATCH_SCOPES = ("dataset", "query", keys_across_batches.SCOPE)  # rules that judge the batch, no row


def quarantine(
    spark: SparkSession,
    plan: Plan | dict[str, Any] | str,
    submission_id: str,
    candidate: Address | dict[str, Any] | str,
    version: int,
    report: dict[str, Any] | None,
    rows: str = "all",
) -> dict[str, Any]:
    """Quarantine the candidate's rejected rows; see the module docs.

    Returns ``{"status": "quarantined" | "already_quarantined", "rows", "version"}`` where
    ``version`` is the quarantine table's version holding this submission's rows.
    """
    plan = load_plan(plan)
    if rows not in ROWS:
        raise ValueError(f"rows must be one of {', '.join(ROWS)}, not {rows!r}")
    table = plan.require_tables().require_quarantine()
    candidate = Address.of(candidate)

    def attempt(_: int) -> dict[str, Any]:
        session = tagged_session(spark, plan, submission_id)
        df = read_pinned(session, plan, candidate, version)
        # foreign keys read their targets at the versions the report judged
        df = with_found_flags(session, df, pinned_in_report(plan, report))
        rejected = split(df, plan)[1] if rows == "invalid" else _all_rows(plan, df, report)
        prepare_quarantine(spark, plan)
        _append(_shape(plan, rejected, submission_id), table)  # Delta skips a submission already quarantined
        committed = own_commit_version(session) is not None
        # the newest commit is ours when we made it; Delta's skip means an older one, searched for
        look = just_committed if committed else find_submission
        done = look(spark, table, submission_id)
        if done is None:
            raise RuntimeError(f"quarantine {table.location} has no commit of {submission_id}")
        return {"status": "quarantined" if committed else "already_quarantined", "rows": done.rows_written(),
                "version": done.version}

    result = retry_conflicts(attempt, f"quarantining {submission_id}")
    private = local_folder(table)
    if private:
        restrict_tree(private)
    return result


def quarantine_schema(plan: Plan) -> StructType:
    """The quarantine table's columns: the plan's (typed as the plan says), diagnostics, tags."""
    return StructType([
        *(StructField(column.name, DataType.fromDDL(column.type)) for column in plan.columns),
        StructField(ERRORS, DataType.fromDDL(DIAGNOSTIC_TYPE)),
        StructField(WARNINGS, DataType.fromDDL(DIAGNOSTIC_TYPE)),
        StructField(SUBMISSION, StringType()),
        StructField(CONTRACT_VERSION, StringType()),
        StructField(QUARANTINED_AT, TimestampType()),
    ])


def prepare_quarantine(spark: SparkSession, plan: Plan | dict[str, Any]) -> None:
    """Make the plan's quarantine table ready for its rows, writing no row: created when missing,
    refused when it is not this contract's quarantine, given the columns this contract version
    added (the quarantine follows the contract's evolution as the target does), and its
    statistics kept off classified columns. Safe to repeat and to run twice at once: each column
    is added only when the table, read again just before, lacks it. A split runs it before its
    publish, so no schema or ownership problem of the quarantine can fail the split after the
    valid rows were committed."""
    plan = load_plan(plan)
    table = plan.require_tables().require_quarantine()
    private = local_folder(table)
    if private:  # owner-only before its first file exists (contract_gate_plan.restricted)
        make_private_folder(private)
    schema = quarantine_schema(plan)
    _create_if_missing(spark, plan, table, schema)
    require_owner(spark, plan, table, "quarantine")  # another contract's table: refused, unwritten
    # a column a later contract version dropped stays: the rows quarantined under it keep their values
    add_missing_columns(spark, table, schema.fields)
    _keep_statistics_private(spark, plan, table, schema)


def _all_rows(plan: Plan, df: DataFrame, report: dict[str, Any] | None) -> DataFrame:
    """Every row, diagnosed as far as the schema allows, plus the batch-level failures."""
    schema = check_schema(plan, df.schema)
    diagnosed = annotate(df, triage(plan, df, schema, "all").runnable)
    batch = _batch_failures(plan, report)
    return diagnosed.withColumns(
        {name: F.concat(F.col(name), _entries(batch[name])) for name in (ERRORS, WARNINGS)}
    )


def _batch_failures(
    plan: Plan, report: dict[str, Any] | None
) -> dict[str, list[tuple[str, list[str], str]]]:
    """(rule id, columns, message) per severity for what failed the batch as a whole."""
    failures: dict[str, list[tuple[str, list[str], str]]] = {ERRORS: [], WARNINGS: []}
    if report is None:
        return failures
    schema = report.get("schema") or {}
    if schema.get("ok") is False:
        columns = [*schema.get("missing", []), *[m["column"] for m in schema.get("type_mismatches", [])]]
        if schema.get("policy") == "strict":
            columns += schema.get("unexpected", [])
        failures[ERRORS].append((SCHEMA_RULE, columns, "the batch does not have the contract's schema"))
    described = {rule.id: rule.description for rule in plan.rules}
    for entry in report.get("rules", []):  # the report's entries: dicts
        if entry["scope"] in BATCH_SCOPES and entry.get("passed") is False:
            message = described.get(entry["id"]) or f"{entry['kind']} check {entry['id']} failed"
            severity = ERRORS if entry["severity"] == "error" else WARNINGS
            failures[severity].append((entry["id"], list(entry["columns"]), message))
    return failures


def _entries(items: list[tuple[str, list[str], str]]) -> Column:
    if not items:
        return F.array().cast(DIAGNOSTIC_TYPE)
    return F.array(
        *[
            F.struct(
                F.lit(rule_id).alias("rule_id"),
                F.array(*[F.lit(c) for c in columns]).cast("array<string>").alias("columns"),
                F.lit(message).alias("message"),
            )
            for rule_id, columns, message in items
        ]
    )


def _shape(plan: Plan, df: DataFrame, submission_id: str) -> DataFrame:
    """``df`` as rows of :func:`quarantine_schema`: the plan's columns cast where they can be."""
    present = {field.name: field.dataType for field in df.schema.fields}
    columns = []
    for column in plan.columns:
        wanted = DataType.fromDDL(column.type)
        if column.name not in present:
            value = F.lit(None).cast(wanted)
        elif present[column.name] == wanted:
            value = F.col(quote_identifier(column.name))
        else:
            value = F.col(quote_identifier(column.name)).try_cast(wanted)
        columns.append(value.alias(column.name))
    return df.select(
        *columns,
        F.col(ERRORS),
        F.col(WARNINGS),
        F.lit(submission_id).alias(SUBMISSION),
        F.lit(plan.contract_version).alias(CONTRACT_VERSION),
        F.current_timestamp().alias(QUARANTINED_AT),
    )


def _create_if_missing(
    spark: SparkSession, plan: Plan, table: Address, schema: StructType
) -> None:
    """Create the quarantine table untagged, so its first rows get Delta's idempotency record
    (a CREATE TABLE AS SELECT would not) and its creation is not mistaken for a submission."""
    if exists(spark, table):
        return
    columns = ", ".join(f"{quote_identifier(f.name)} {type_text(f.dataType.jsonValue())}" for f in schema.fields)
    properties = {**owner_properties(plan.contract_id, "quarantine"), **table_properties(plan),
                  **_statistics(plan, schema)}
    statement = (f"CREATE TABLE IF NOT EXISTS {table.sql_name} ({columns}) USING DELTA"
                 f" TBLPROPERTIES ({properties_clause(properties)})")
    try:
        spark.sql(statement)
    except AnalysisException as exc:
        if not has_condition(exc, TABLE_EXISTS):  # a concurrent quarantine created it first
            raise


def _statistics(plan: Plan, schema: StructType) -> dict[str, str]:
    """Delta statistics only for unclassified columns (``contract_gate_plan.restricted``)."""
    fields = [(f.name, f.dataType.simpleString()) for f in schema.fields]
    return statistics_properties(plan.columns, fields, (SUBMISSION, CONTRACT_VERSION, QUARANTINED_AT))


def _keep_statistics_private(spark: SparkSession, plan: Plan, table: Address,
                             schema: StructType) -> None:
    """A quarantine created before, or by a contract version that classified fewer columns,
    gets the statistics setting of this one before rows are added (files already written keep
    theirs until retention deletes them)."""
    wanted = _statistics(plan, schema)
    found = {row["key"]: row["value"] for row in spark.sql(f"SHOW TBLPROPERTIES {table.sql_name}").collect()}
    if any(found.get(key) != value for key, value in wanted.items()):
        spark.sql(f"ALTER TABLE {table.sql_name} SET TBLPROPERTIES ({properties_clause(wanted)})")


def _append(df: DataFrame, table: Address) -> None:
    """Append to a table :func:`prepare_quarantine` gave every column of ``df``."""
    table.write(df.write.format("delta").mode("append"))
