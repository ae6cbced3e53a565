"""Freshness of a Unity Catalog target through a Databricks SQL warehouse.

A catalog table's files are the catalog's business, so the warehouse is asked instead: one
``SELECT max(column)`` (answered from Delta statistics on Databricks, no data scan) and one
``DESCRIBE HISTORY`` for the newest commit carrying a submission id. The value comes back as
text or epoch microseconds, never as a driver-specific datetime, so the session time zone of
the warehouse cannot shift it.

The statements go where every statement of the gate goes: the Statement Execution API on the
connection's SQL warehouse (``warehouse_id``), through
:class:`~contract_gate.decisions.unity_catalog.SqlRunner`. Tested with the runner replaced by local
Spark SQL + Delta, which runs the exact statements this module sends
(``tests/freshness/test_databricks_sql.py``); not against a Databricks SQL warehouse.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from typing import Any

from contract_gate.decisions.unity_catalog import SqlRunner
from contract_gate.freshness.business_time import parse_value
from contract_gate.freshness.latest_value import SOURCE_WAREHOUSE, LatestAccepted
from contract_gate_plan.model import Plan
from contract_gate_plan.sql_text import quote_identifier, quote_qualified

DEFAULT_CONNECTION = "databricks_default"
HISTORY_LIMIT = 100  # commits searched for the newest submission id


def max_value_sql(table: str, column: str, column_type: str) -> str:
    value = f"max({quote_identifier(column)})"
    if column_type == "timestamp":
        value = f"unix_micros({value})"  # an instant, whatever the session time zone
    return f"SELECT CAST({value} AS STRING) AS latest FROM {quote_qualified(table)}"


def history_sql(table: str) -> str:
    return f"DESCRIBE HISTORY {quote_qualified(table)} LIMIT {HISTORY_LIMIT}"


def latest_from_warehouse(plan: Plan, runner: Any) -> LatestAccepted:
    """``runner``: runs a query on the warehouse (``query(sql) -> rows as dicts``)."""
    table = plan.require_tables().require_target().location
    freshness = plan.require_freshness()
    [row] = runner.query(max_value_sql(table, freshness.column, freshness.column_type))
    text = row["latest"]
    value: date | datetime | None = None
    if text is not None:
        if freshness.column_type == "timestamp":
            value = datetime.fromtimestamp(int(text) / 1_000_000, tz=timezone.utc)
        else:
            value = parse_value(text, freshness.column_type)
    history = runner.query(history_sql(table))
    version = max((int(row["version"]) for row in history), default=None)
    submission = next((row["userMetadata"] for row in history if row.get("userMetadata")), None)
    return LatestAccepted(value, submission, version, SOURCE_WAREHOUSE)


def make_runner(plan: Plan) -> SqlRunner:
    """Statements on the SQL warehouse of the gate's execution connection (its ``warehouse_id``)."""
    return SqlRunner(databricks_conn_id=plan.connection_id or DEFAULT_CONNECTION)
