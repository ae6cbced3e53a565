"""The consumer-facing target table: created from the plan when missing, refused when it drifted.

Creation runs ``table_ddl.create_table_statements``: a CREATE TABLE, then one ADD CONSTRAINT
per enforceable rule, with the very predicates validation evaluates. Those are several Delta
commits, so a creator killed half-way leaves a table with some constraints missing. Such a
table has never held data, so finishing the missing constraints is safe and is what the next
attempt does; a table that already holds data and differs from the plan in any way is refused
with every difference listed, because publishing into it would silently weaken the contract.
"""

from __future__ import annotations

from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from spark_jobs.address import location, resolve, sql_name
from spark_jobs.commits import retry_conflicts
from spark_jobs.history import exists
from spark_jobs.sql_text import quote_identifier
from spark_jobs.table_ddl import (
    compatibility_differences,
    create_table_statements,
    expected_constraints,
)

SETUP_OPERATIONS = {"CREATE TABLE", "ADD CONSTRAINT"}


class TargetDriftError(RuntimeError):
    """The deployed target differs from the plan; ``differences`` lists every one."""

    def __init__(self, address: dict[str, Any], differences: list[str]):
        self.differences = differences
        lines = "\n".join(f"  - {difference}" for difference in differences)
        super().__init__(
            f"target {location(address)} does not match the contract's plan; refusing to"
            f" publish. Differences:\n{lines}"
        )


def deployed_differences(
    spark: SparkSession, plan: dict[str, Any], address: dict[str, Any]
) -> list[str]:
    """``table_ddl.compatibility_differences`` for the table deployed at ``address``."""
    schema = spark.table(sql_name(address)).schema
    fields = [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]
    properties = spark.sql(f"DESCRIBE DETAIL {sql_name(address)}").first()["properties"]
    return compatibility_differences(plan, fields, dict(properties or {}))


def ensure_target(
    spark: SparkSession, plan: dict[str, Any], address: dict[str, Any] | None = None
) -> bool:
    """Make the target exist and match the plan; True when this call created or completed it.

    Raises ``TargetDriftError`` for a target that differs from the plan. Safe to call from
    several runs at once: a lost creation race is retried and then finds the winner's table.
    """
    address = resolve(address or plan["tables"]["target"])
    return retry_conflicts(lambda _: _ensure_once(spark, plan, address), "creating the target")


def _ensure_once(spark: SparkSession, plan: dict[str, Any], address: dict[str, Any]) -> bool:
    if not exists(spark, address):
        try:
            for statement in create_table_statements(plan, address):
                spark.sql(statement)
            return True
        except AnalysisException as exc:
            if "ALREADY_EXISTS" not in str(exc):  # a twin run created it: finish below
                raise
    differences = deployed_differences(spark, plan, address)
    missing = _missing_constraints(plan, differences)
    if not differences:
        return False
    if missing is None or not _never_written(spark, address):
        raise TargetDriftError(address, differences)
    constraints = expected_constraints(plan)
    for name in missing:
        try:
            spark.sql(
                f"ALTER TABLE {sql_name(address)} ADD CONSTRAINT {quote_identifier(name)}"
                f" CHECK ({constraints[name]})"
            )
        except AnalysisException as exc:
            if "ALREADY_EXISTS" not in str(exc):
                raise
    return True


def _missing_constraints(plan: dict[str, Any], differences: list[str]) -> list[str] | None:
    """The constraint names behind ``differences`` when every difference is a missing
    constraint (a half-finished creation), else None."""
    missing = [
        name
        for name in expected_constraints(plan)
        if f"constraint {name!r} is missing from the table" in differences
    ]
    return missing if len(missing) == len(differences) else None


def _never_written(spark: SparkSession, address: dict[str, Any]) -> bool:
    """True when the table's whole history is the gate's own CREATE/ADD CONSTRAINT commits."""
    operations = {
        row["operation"]
        for row in spark.sql(f"DESCRIBE HISTORY {sql_name(address)}").select("operation").collect()
    }
    return operations <= SETUP_OPERATIONS
