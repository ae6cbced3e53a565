"""The version of a landing given as a catalog table (Unity Catalog, a Hive metastore), without Spark.

A catalog table has no folder here to read, so its newest Delta version is asked of the
Databricks SQL warehouse through the providers' ``DatabricksSqlHook`` (``DESCRIBE HISTORY``, the
newest commit only). The connection is the landing's ``connection``, else the gate's execution
connection, else ``databricks_default``. A landing given by path (also a table name that the
server maps to a path) is read through its Delta log with ``deltalake``
(:func:`contract_gate.submission.delta_version`).

The batch is that version: the submission id derives from it, and a new version is a new batch.
"""

from __future__ import annotations

from typing import Any

from contract_plan.addresses import Address

_MISSING = ("TABLE_OR_VIEW_NOT_FOUND", "DELTA_TABLE_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE")


def catalog_version(landing: Address | dict, runner: Any = None, connection_id: str | None = None) -> int | None:
    """The newest Delta version of the catalog table ``landing``, or None when it does not exist.

    :param runner: what runs the SQL (``query(sql) -> rows``); by default a
        :class:`~contract_gate.decisions.unity_catalog.SqlRunner` on the Databricks connection."""
    landing = Address.of(landing)
    if runner is None:
        from contract_gate.decisions.unity_catalog import SqlRunner  # the Databricks provider, at run time only

        runner = SqlRunner(databricks_conn_id=landing.connection or connection_id or "databricks_default")
    try:
        rows = runner.query(f"DESCRIBE HISTORY {landing.sql_name} LIMIT 1")
    except Exception as exc:  # the engines name a missing table by error class, whatever the exception type
        if any(code in str(exc) for code in _MISSING):
            return None
        raise
    return int(rows[0]["version"]) if rows else None
