"""Retention: drop old candidates and old quarantined rows, as the contract's gate settings say.

Candidates and quarantined rows hold data the consumers must not see, possibly classified,
so keeping them longer than needed is a liability: ``gate.retention.candidateDays`` after it
was frozen a candidate table is dropped, and quarantined rows older than ``quarantineDays``
are deleted and then vacuumed (a Delta DELETE alone keeps the files readable by time travel;
VACUUM removes files deleted longer ago than the table's ``deletedFileRetentionDuration``,
seven days by default, so the data is physically gone at most that long after the delete).

Delta landing is pinned, never copied: there is nothing of it to clean up here. Only tables
whose ownership properties say they are this contract's candidates or quarantine are touched
(``contract_gate_plan.ownership``).

The same code serves classic and Spark Connect sessions. Catalog candidates are dropped in SQL.
Path candidates are found by the engine's own file listing (any session can ask for it) and
removed through the file system this process shares with the engine: a local folder, or the
shared volume of a cluster (the compose stack's lakehouse). Only on an object store does removal
need Hadoop's FileSystem, which lives in the JVM of a classic session; over Spark Connect such a
candidate is an error that names it (catalog tables keep their candidates in a schema).
"""

from __future__ import annotations

import logging
import os
import posixpath
import shutil
from datetime import datetime, timedelta, timezone
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from contract_gate_plan.addresses import Address, glob_literal
from contract_gate_spark.runtime.errors import has_condition
from contract_gate_spark.runtime.session import child_session, is_connect
from contract_gate_spark.steps.history import exists
from contract_gate_plan.ownership import CONTRACT, ROLE, ownership_problem, read_properties, require_owner
from contract_gate_plan.model import Plan, load_plan
from contract_gate_spark.steps.quarantine import QUARANTINED_AT
from contract_gate_plan.restricted import local_folder, local_path, restrict_tree
from contract_gate_plan.sql_text import quote_identifier, quote_qualified

DEFAULT_DAYS = {"candidateDays": 7, "quarantineDays": 90}
LOGGER = logging.getLogger("contract_gate.retention")


def retention_days(plan: Plan) -> dict[str, int]:
    configured = plan.retention
    return {key: int(configured.get(key, default)) for key, default in DEFAULT_DAYS.items()}


def cleanup(
    spark: SparkSession, plan: Plan | dict[str, Any] | str, now: datetime | None = None
) -> dict[str, Any]:
    """Apply both retention rules for one contract. ``now`` (UTC) is for tests.

    Returns ``{"candidates_dropped": [locations], "quarantine_rows_deleted": int}``.
    """
    plan = load_plan(plan)
    now = now or datetime.now(timezone.utc)
    days = retention_days(plan)
    return {
        "candidates_dropped": drop_old_candidates(spark, plan, now - timedelta(days=days["candidateDays"])),
        "quarantine_rows_deleted": delete_old_quarantine(
            spark, plan, now - timedelta(days=days["quarantineDays"])
        ),
    }


def drop_old_candidates(spark: SparkSession, plan: Plan, cutoff: datetime) -> list[str]:
    """Drop this contract's candidates (``<object>__*``) frozen before ``cutoff``. A table there
    that does not carry this contract's candidate properties is left alone (logged when it
    carries none: a candidate frozen before ownership properties, to be claimed or removed by
    hand)."""
    dropped = []
    for address in _candidates(spark, plan):
        properties = read_properties(spark, address)
        problem = ownership_problem(properties, address.location, address.sql_name, plan.contract_id,
                                    "candidate")
        if problem is not None:
            if not any(key in properties for key in (CONTRACT, ROLE)):
                LOGGER.warning("retention: %s", problem)
            continue
        history = spark.sql(f"DESCRIBE HISTORY {address.sql_name}")
        (row,) = history.agg(F.min(F.unix_micros("timestamp"))).collect()  # a global aggregate: one row
        frozen = row[0]
        if frozen >= _micros(cutoff):
            continue
        if address.is_path:
            candidates = posixpath.dirname(plan.candidate("x").location)
            planted = _planted(address.location, candidates)
            if planted is not None:  # not a folder the stage step made: never removed
                LOGGER.warning("retention: %s", planted)
                continue
            _delete_folder(spark, address.location, candidates)
        else:
            spark.sql(f"DROP TABLE IF EXISTS {quote_qualified(address.location)}")
        dropped.append(address.location)
    return dropped


def delete_old_quarantine(spark: SparkSession, plan: Plan, cutoff: datetime) -> int:
    """Delete quarantined rows older than ``cutoff`` and vacuum; returns the rows deleted."""
    table = plan.require_tables().require_quarantine()
    if not exists(spark, table):
        return 0
    require_owner(spark, plan, table, "quarantine")  # DELETE and VACUUM write: our quarantine only
    metrics = spark.sql(
        f"DELETE FROM {table.sql_name} WHERE unix_micros({quote_identifier(QUARANTINED_AT)}) < {_micros(cutoff)}"
    ).first()
    deleted = int(metrics[0]) if metrics is not None else 0
    if deleted:
        _vacuum(spark, table)
    private = local_folder(table)
    if private:  # the DELETE's new files, owner-only like the rest (contract_gate_plan.restricted)
        restrict_tree(private)
    return deleted


def _vacuum(spark: SparkSession, table: Address) -> None:
    """VACUUM lists the table's folder with ``parallelPartitionDiscovery.parallelism`` tasks,
    10000 by default: a long run of empty tasks on a small local table. A quarantine table is
    small, so the listing runs with as many tasks as a shuffle has (in a child session, to
    leave the caller's conf alone; a setting any session, classic or Connect, can read)."""
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    if partitions is None:  # Spark always defaults it; None would be a broken session
        raise RuntimeError("the session has no spark.sql.shuffle.partitions to size VACUUM's listing by")
    session = child_session(spark)
    session.conf.set("spark.sql.sources.parallelPartitionDiscovery.parallelism", partitions)
    session.sql(f"VACUUM {table.sql_name}").collect()


def _candidates(spark: SparkSession, plan: Plan) -> list[Address]:
    """Every existing candidate of this contract's object in the candidate schema."""
    probe = plan.candidate("x")
    prefix = f"{plan.object}__"
    if probe.is_path:
        folder = posixpath.dirname(probe.location)
        found = [Address(kind="path", path=path) for path in _list_folders(spark, folder)
                 if posixpath.basename(path).startswith(prefix)]
        return [address for address in found if exists(spark, address)]
    schema = probe.location.rsplit(".", 1)[0]
    tables = spark.sql(f"SHOW TABLES IN {quote_qualified(schema)}").collect()
    return [
        Address(kind="table", name=f"{schema}.{row['tableName']}")
        for row in tables
        if row["tableName"].lower().startswith(prefix.lower())
    ]


class RetentionError(RuntimeError):
    """A candidate that retention should remove and cannot: it names the candidate and why."""


_NO_MATCH = ("PATH_NOT_FOUND",)  # a folder, or a pattern, with nothing in it


def _list_folders(spark: SparkSession, folder: str) -> list[str]:
    """The Delta table folders directly under ``folder``, listed by the engine: the files of each
    sub-folder's ``_delta_log``, read as a ``binaryFile`` source without their content (only
    their paths are selected). Spark lists them with Hadoop's FileSystem on its driver, so an
    object store works too, from a classic session or a Spark Connect client alike. ``folder``
    comes from a contract: its glob characters are escaped, it is a folder, not a pattern."""
    logs_pattern = f"{glob_literal(folder.rstrip('/'))}/*/_delta_log/*"
    try:
        logs = spark.read.format("binaryFile").load(logs_pattern).select("path").collect()
    except Exception as exc:  # noqa: BLE001 - only "nothing there" is an answer; the rest re-raised
        if has_condition(exc, _NO_MATCH):
            return []
        raise
    return sorted({row["path"].rsplit("/_delta_log/", 1)[0] for row in logs})


def _planted(folder: str, candidates: str) -> str | None:
    """Why the local ``folder`` is not one the stage step made in ``candidates`` (a link to a
    table elsewhere, which the listing followed), or None."""
    local, parent = local_path(folder), local_path(candidates)
    if local is None or parent is None or not os.path.lexists(local):
        return None
    if os.path.islink(local) or os.path.dirname(os.path.realpath(local)) != os.path.realpath(parent):
        return f"{folder} is a link or lies outside {candidates}; it is left in place"
    return None


def _delete_folder(spark: SparkSession, folder: str, candidates: str) -> None:
    """Remove the candidate table at ``folder``, a sub-folder of the ``candidates`` folder."""
    local, parent = local_path(folder), local_path(candidates)
    if local is not None and parent is not None:
        if not os.path.isdir(local):
            raise RetentionError(f"retention: candidate {folder} is not reachable from this process; the"
                                 " gate removes path candidates through storage it shares with Spark")
        shutil.rmtree(local)
        return
    if is_connect(spark):
        raise RetentionError(
            f"retention: candidate {folder} is on an object store, which a Spark Connect client cannot"
            " remove a folder from; with catalog tables the candidates are tables in a schema beside"
            " the target, dropped in SQL; or run retention in another execution mode")
    jvm = spark.sparkContext._jvm  # a classic session: Hadoop's FileSystem, which knows every store
    if jvm is None:
        raise RetentionError(f"retention: candidate {folder} is on an object store, and the session's JVM is gone")
    path = jvm.org.apache.hadoop.fs.Path(folder)
    path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)


def _micros(moment: datetime) -> int:
    """Microseconds since the epoch: compared in Spark, so no session time zone applies."""
    return int(moment.timestamp() * 1_000_000)
