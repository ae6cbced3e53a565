"""The consumer-facing target table: created from the plan when missing, refused when it drifted.

The table comes from ``table_ddl``: the plan's columns (NOT NULL where required) and one CHECK
constraint per enforceable rule, with the very predicates validation evaluates. The DDL that
``contract-gate plan --ddl`` prints adds constraints one ALTER TABLE at a time; here the
constraints go into the CREATE TABLE's properties (``delta.constraints.<name>``, where Delta
keeps them anyway), so the table appears in one commit, complete: a creator killed half-way
cannot leave a target without its constraints. Statistics are pinned to the freshness column
and the business key (``delta.dataSkippingStatsColumns``): freshness reads max(business date)
from them without a JVM, and the key MERGEs of publication prune files with them, whatever
the columns' positions (Delta otherwise only keeps statistics for the first 32 columns).
A target that exists and differs from the plan
only by non-breaking changes (a new nullable column, a relaxed or removed rule) is migrated
first (:func:`migrate_target`, statements from ``contract_gate_plan.migration``), unless the gate's
``evolution`` setting is ``manual``; in any other way it is refused with every difference listed,
because publishing into it would silently weaken the contract. Before that, a target must be
this contract's: its ownership properties (``contract_gate_plan.ownership``) are set at creation and
checked on every publish.
"""

from __future__ import annotations

import time
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from contract_gate_plan.addresses import Address
from contract_gate_plan.migration import SCHEMA_VERSION_PROPERTY, Migration, governed_migration, plan_migration
from contract_gate_spark.runtime.errors import NON_EMPTY_LOCATION, NOT_A_DELTA_TABLE, TABLE_EXISTS, has_condition
from contract_gate_spark.steps.commits import retry_conflicts
from contract_gate_spark.steps.history import current_version, exists
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.ownership import owner_properties, require_owner
from contract_gate_plan.spark_types import type_text
from contract_gate_plan.sql_text import quote_identifier, string_literal
from contract_gate_plan.table_ddl import (
    compatibility_differences,
    create_table_statements,
    expected_constraints,
    table_properties,
)


class TargetDriftError(RuntimeError):
    """The deployed target differs from the plan; ``differences`` lists every one."""

    def __init__(self, address: Address, differences: list[str]):
        self.differences = differences
        lines = "\n".join(f"  - {difference}" for difference in differences)
        super().__init__(
            f"target {address.location} does not match the contract's plan; refusing to"
            f" publish. Differences:\n{lines}"
        )


class MigrationNeedsReview(RuntimeError):
    """The target needs a migration and the gate's ``evolution`` setting is ``manual``."""

    def __init__(self, address: Address, migration: Migration):
        self.migration = migration
        statements = "".join(f"  {statement};\n" for statement in migration.statements)
        super().__init__(
            f"target {address.location} needs a migration from contract version {migration.from_version or 'unknown'}"
            f" to {migration.to_version}, and the gate's evolution setting is manual; refusing to publish."
            f" Review and run (or run `contract-gate plan --migrate`):\n{statements}"
        )


def deployed_state(
    spark: SparkSession, plan: Plan, address: Address
) -> tuple[list[tuple[str, str, bool]], dict[str, str]]:
    """The deployed table's fields (name, Spark simpleString type, nullable) and properties.

    Raises ``OwnershipError`` when the table is not this contract's target."""
    # SHOW TBLPROPERTIES reads the table's metadata only; DESCRIBE DETAIL would also size every
    # file of the snapshot (a Spark job, seconds on a cold JVM) for figures nobody reads here.
    # The one read serves the ownership check (first: a table of another contract is not
    # compared, it is refused) and the constraint comparison.
    properties = require_owner(spark, plan, address, "target")
    schema = spark.table(address.sql_name).schema
    return [(f.name, type_text(f.dataType.jsonValue()), f.nullable) for f in schema.fields], properties


def deployed_differences(
    spark: SparkSession, plan: Plan, address: Address
) -> list[str]:
    """``table_ddl.compatibility_differences`` for the table deployed at ``address``."""
    return compatibility_differences(plan, *deployed_state(spark, plan, address))


def migrate_target(
    spark: SparkSession, plan: Plan | dict[str, Any], address: Address | dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """Migrate a deployed target whose differences from the plan are non-breaking; None when
    there is no table yet or nothing to migrate, else the migration (``Migration.as_json``)
    with the table's versions before and after.

    Each statement runs only when the table's state, read again just before it, says it has
    not run yet, so a run after a kill at any point, or a twin run, finishes the same migration.
    Breaking differences are migrated only when the contract's major version went up since the
    table's schema version and the evolution setting is ``breaking: allow`` (then the result
    names its ``consumers``). Raises ``TargetDriftError`` for the others (the table is not
    touched) and ``MigrationNeedsReview`` when the gate's evolution setting is ``manual``."""
    plan = load_plan(plan)
    address = Address.of(address) if address else plan.require_tables().require_target()
    if not exists(spark, address):
        return None
    evolution = plan.gate.get("evolution") or {}
    fields, properties = deployed_state(spark, plan, address)
    migration, allowed = governed_migration(plan, fields, properties, address)
    if migration.breaking:
        raise TargetDriftError(address, [*compatibility_differences(plan, fields, properties),
                                         *(f"breaking: {line}" for line in migration.breaking), BREAKING_HINT])
    if not migration.steps:
        return None
    if evolution.get("apply") == "manual":
        raise MigrationNeedsReview(address, migration)
    before = current_version(spark, address)
    for step in migration.steps:
        if step.done(*deployed_state(spark, plan, address)):
            continue
        try:
            spark.sql(step.statement)
        except Exception:
            if not step.done(*deployed_state(spark, plan, address)):  # a twin run applied it meanwhile
                raise
    return {**migration.as_json(), "consumers": list(evolution.get("consumers") or []) if allowed else [],
            "target_version_before": before, "target_version_after": current_version(spark, address)}


def migration_columns(plan: Plan, schema: StructType) -> list[str]:
    """The plan's columns that its migration would add to a table of ``schema``: its new
    nullable columns (``contract_gate_plan.migration``), in the plan's order."""
    fields = [(f.name, type_text(f.dataType.jsonValue()), f.nullable) for f in schema.fields]
    return [step.name for step in plan_migration(plan, fields, {}).steps if step.action == "add_column"]


def as_migrated(plan: Plan, df: DataFrame, table: StructType | None = None) -> tuple[DataFrame, list[str]]:
    """``df`` as the plan's migration would leave the rows of a table of schema ``table``
    (default ``df``'s own): the columns it adds, as NULLs of the plan's types, and their names.
    A batch read from before a contract version added a column is judged as the migrated
    target holds it, not as missing the column."""
    types = {column.name: column.type for column in plan.columns}
    added = [name for name in migration_columns(plan, table or df.schema) if name not in df.columns]
    return df.withColumns({name: F.lit(None).cast(types[name]) for name in added}), added


BREAKING_HINT = ("to publish a breaking change: give the contract a new major version and set the gate's "
                 "evolution.breaking to newTarget (a new table <target>_v<major>, the old one kept) or allow "
                 "(changed in place, evolution.consumers naming who it breaks); `contract-gate diff OLD NEW` "
                 "lists the changes")


def ensure_target(
    spark: SparkSession, plan: Plan | dict[str, Any], address: Address | dict[str, Any] | None = None
) -> bool:
    """Make the target exist and match the plan; True when this call created it.

    Raises ``OwnershipError`` for a table that is not this contract's target (owned by another
    contract, in another role, or by nobody), ``TargetDriftError`` for a target that differs
    from the plan. Safe to call from
    several runs at once: a lost creation race is retried and then finds the winner's table.
    """
    plan = load_plan(plan)
    address = Address.of(address) if address else plan.require_tables().require_target()
    return retry_conflicts(lambda _: _ensure_once(spark, plan, address), "creating the target")


def create_statement(plan: Plan, address: Address) -> str:
    """``table_ddl``'s CREATE TABLE with the CHECK constraints as table properties."""
    create = create_table_statements(plan, address)[0]
    head = create.partition("\nTBLPROPERTIES (")[0]  # table_ddl renders properties last
    properties = {
        **owner_properties(plan.contract_id, "target"),
        SCHEMA_VERSION_PROPERTY: plan.contract_version,
        **table_properties(plan),
        **{f"delta.constraints.{name}": check for name, check in expected_constraints(plan).items()},
    }
    statistics = [plan.freshness.column] if plan.freshness else []
    statistics += [key for key in plan.key if key not in statistics]
    if statistics:
        properties["delta.dataSkippingStatsColumns"] = ",".join(map(quote_identifier, statistics))
    if not properties:
        return head
    rendered = ", ".join(f"{string_literal(k)} = {string_literal(v)}" for k, v in properties.items())
    return f"{head}\nTBLPROPERTIES ({rendered})"


def _ensure_once(spark: SparkSession, plan: Plan, address: Address) -> bool:
    created = False
    if not exists(spark, address):
        try:
            spark.sql(create_statement(plan, address))
            created = True
        except AnalysisException as exc:
            # a twin run created it, or is committing its creation right now: its folder (or the
            # catalog entry) exists before its first commit does, so wait for it, then check it
            if not (has_condition(exc, (*TABLE_EXISTS, *NON_EMPTY_LOCATION)) and _appears(spark, address)):
                raise
    differences = _differences_once_readable(spark, plan, address)
    if differences:
        raise TargetDriftError(address, differences)
    return created


def _differences_once_readable(
    spark: SparkSession, plan: Plan, address: Address, seconds: float = 30.0
) -> list[str]:
    """``deployed_differences``, waiting up to ``seconds`` for a twin's new table to resolve.

    Seen in CI with three publishes racing in one session (its threads share Delta's cached
    log of the path): right after a twin run's creation commit, the table was seen (then by
    ``DESCRIBE HISTORY``), and ``SHOW TBLPROPERTIES`` of the same path still said it was missing."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return deployed_differences(spark, plan, address)
        except AnalysisException as exc:
            if not has_condition(exc, NOT_A_DELTA_TABLE) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _appears(spark: SparkSession, address: Address, seconds: float = 30.0) -> bool:
    """Whether a table another writer is creating at ``address`` shows up within ``seconds``
    (its folder exists before its first commit does)."""
    deadline = time.monotonic() + seconds
    while not exists(spark, address):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
