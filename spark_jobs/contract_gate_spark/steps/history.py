"""A gated table's Delta history, read for what the gate tagged into it.

Delta has no multi-table transaction, so the target's own commit log is the durable truth of
what was published: every gate commit carries its submission id as ``userMetadata``. Publish
asks it "which commit was this submission's?" when Delta skipped its write (or for a plain
append's row count), quarantine "is this submission already here?", and recovery "which
publishes have no decision?".
"""

from __future__ import annotations

from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from contract_gate_plan.addresses import Address
from contract_gate_plan.tagged_commit import TaggedCommit
from contract_gate_spark.runtime.errors import NOT_A_DELTA_TABLE, has_condition


# DESCRIBE HISTORY of a path that holds no Delta table (missing, empty, or a folder of other
# files) says DELTA_TABLE_ONLY_OPERATION where DESCRIBE DETAIL says one of NOT_A_DELTA_TABLE.
NO_HISTORY = (*NOT_A_DELTA_TABLE, "DELTA_TABLE_ONLY_OPERATION")


def _history(spark: SparkSession, address: Address | dict[str, Any], limit: int | None = None) -> DataFrame | None:
    """The table's ``DESCRIBE HISTORY`` (its newest ``limit`` commits), None without a table.

    Delta SQL, which any session offers (a Spark Connect client has no DeltaTable API). The
    history, not ``DESCRIBE DETAIL``: DETAIL sizes every file of the snapshot in a Spark job on
    each new version, where the history reads the log alone."""
    address = Address.of(address)
    if not address.is_path and not spark.catalog.tableExists(address.location):
        return None
    try:  # a command: it runs here, so a missing table raises here
        return spark.sql(f"DESCRIBE HISTORY {address.sql_name}" + (f" LIMIT {int(limit)}" if limit else ""))
    except AnalysisException as exc:
        if has_condition(exc, NO_HISTORY):
            return None
        raise


def exists(spark: SparkSession, address: Address | dict[str, Any]) -> bool:
    """True when ``address`` holds a Delta table (a folder of stray files is not one).

    A path is probed with ``SHOW TBLPROPERTIES``, which reads the table's metadata only:
    ``DESCRIBE HISTORY ... LIMIT 1`` runs a Spark job. The probe is also the read that the
    ownership and drift checks make next, so a table this says exists is one they can read."""
    address = Address.of(address)
    if not address.is_path:
        return spark.catalog.tableExists(address.location)
    try:  # a command: it runs here, so a missing table raises here
        spark.sql(f"SHOW TBLPROPERTIES {address.sql_name}")
    except AnalysisException as exc:
        if has_condition(exc, NOT_A_DELTA_TABLE):
            return False
        raise
    return True


def current_version(spark: SparkSession, address: Address | dict[str, Any]) -> int | None:
    """The table's latest version, or None when there is no table yet."""
    latest = _history(spark, address, limit=1)
    if latest is None:
        return None
    newest = latest.first()
    assert newest is not None  # a Delta table has at least one commit
    return int(newest["version"])


def tagged_commits(
    spark: SparkSession, address: Address | dict[str, Any], submission_id: str | None = None
) -> list[TaggedCommit]:
    """Commits carrying a submission id (only ``submission_id``'s when given), oldest first.

    Reads what the Delta log still holds: commit files older than the table's
    ``delta.logRetentionDuration`` (30 days by default) are gone from history, while Delta's
    idempotency records survive in checkpoints.
    """
    history = _history(spark, address)
    if history is None:
        return []
    history = history.where(F.col("userMetadata").isNotNull())
    if submission_id is not None:
        history = history.where(F.col("userMetadata") == submission_id)
    return _commits(history)


def just_committed(spark: SparkSession, address: Address | dict[str, Any], submission_id: str) -> TaggedCommit | None:
    """The commit ``submission_id`` made to the table, for a step that has just written it (or
    whose earlier attempt did): the table's newest commit is looked at first (one ``LIMIT 1``
    query however long the history), the whole history only when the newest is not it
    (another writer's commit came after, or Delta skipped the write because an earlier
    attempt had made it)."""
    history = _history(spark, address, limit=1)
    latest = [] if history is None else _commits(history)
    if latest and latest[0].submission_id == submission_id:
        return latest[0]
    return find_submission(spark, address, submission_id)


def _commits(history: DataFrame) -> list[TaggedCommit]:
    rows = history.select("version", "timestamp", "operation", "userMetadata", "operationMetrics").collect()
    rows.sort(key=lambda row: row["version"])  # here, not in Spark: a sort there is one more job
    return [
        TaggedCommit(
            version=int(row["version"]),
            timestamp=row["timestamp"],
            operation=row["operation"],
            submission_id=row["userMetadata"],
            metrics=dict(row["operationMetrics"] or {}),
        )
        for row in rows
    ]


def find_submission(
    spark: SparkSession, address: Address | dict[str, Any], submission_id: str
) -> TaggedCommit | None:
    """The commit ``submission_id`` made to the table, or None. Idempotent writes guarantee
    at most one; should history ever show two, the first is the publish that counts."""
    commits = tagged_commits(spark, address, submission_id)
    return commits[0] if commits else None
