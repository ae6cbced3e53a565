"""The latest accepted data of a contract's target: newest business value and submission.

Sources, cheapest first and none of them a JVM:

* a path-based Delta target: its transaction log, read through :mod:`contract_gate.delta_tables`
  (in S3 with its bucket's connection, :func:`contract_gate.object_storage.address_storage_options`;
  file statistics give max(column); the newest commit whose ``userMetadata`` is set names the
  submission, the publish step writes it);
* if those statistics are missing or ``deltalake`` cannot read the table: the decision table's
  accepted records;
* a Unity Catalog target: ``SELECT max(column)`` and ``DESCRIBE HISTORY`` on a SQL warehouse.

Only the target and accepted decisions are read, so a quarantined batch never refreshes freshness.
"""

from __future__ import annotations

from contract_gate.delta_tables import StatsMissing, UnreadableTable, column_max, newest_tag, open_table
from contract_gate.freshness.business_time import from_statistic, parse_value
from contract_gate.freshness.databricks_sql import latest_from_warehouse, make_runner
from contract_gate.freshness.decision_log import accepted_decisions
from contract_gate.freshness.latest_value import SOURCE_DECISIONS, SOURCE_DELTA_LOG, LatestAccepted
from contract_gate.object_storage import address_storage_options
from contract_gate_plan.model import Plan


def latest_accepted(plan: Plan, runner=None) -> LatestAccepted:
    """Ask the right source for ``plan``; ``runner`` runs SQL on the warehouse for catalog targets
    (``decisions.unity_catalog.SqlRunner``, made from the gate's execution connection when not given)."""
    if not plan.require_tables().require_target().is_path:
        return latest_from_warehouse(plan, runner or make_runner(plan))
    try:
        return latest_from_delta_log(plan)
    except (StatsMissing, UnreadableTable) as exc:
        return latest_from_decisions(plan, note=f"{exc}; used the decision table")


def latest_from_delta_log(plan: Plan) -> LatestAccepted:
    freshness = plan.require_freshness()
    target = plan.require_tables().require_target()
    table = open_table(target.deltalake_uri, storage_options=address_storage_options(plan, target))
    if table is None:
        return LatestAccepted(None, None, None, SOURCE_DELTA_LOG, "the target table does not exist yet")
    value = column_max(table, freshness.column)
    value = None if value is None else from_statistic(value, freshness.column_type)
    return LatestAccepted(value, newest_tag(table), table.version(), SOURCE_DELTA_LOG)


def latest_from_decisions(plan: Plan, note: str | None = None) -> LatestAccepted:
    column_type = plan.require_freshness().column_type
    accepted = accepted_decisions(plan)
    values = [parse_value(str(row["latest_business_date"]), column_type)
              for row in accepted if row["latest_business_date"] is not None]
    newest = accepted[0] if accepted else {}
    return LatestAccepted(max(values, default=None), newest.get("submission_id"),
                          newest.get("target_version_after"), SOURCE_DECISIONS, note)

