"""The decision log (docs/architecture.md, "The decision log"): one final record per submission,
written without Spark.

* ``record_decision(plan, record)`` / ``final_decision(plan, submission_id)``: what the record
  task and the submission task call; dicts in, dicts out (XCom-ready). Both keep to the plan's
  object (``ObjectScope``): a contract of several objects has one decision per object.
* ``recover_missing_decisions(plan)``: finds publishes and quarantines in the gated tables'
  commit histories that have no final decision and records them.
* ``store_for(plan)`` / ``history_for(plan)``: a path-based Delta table (``deltalake``) or a
  Unity Catalog table (Databricks SQL hook), chosen by the plan's ``tables`` addresses.
* ``audit_decisions(plan)``: every disagreement between the decision log and the gated tables'
  histories (``contract_gate.decisions.audit``); ``repair=True`` first records what recovery would.
* ``upkeep_decisions(plan)``: the retention DAG's daily care of the table for the plan's
  contract (compaction, checkpoint, log retention; see ``DecisionStore.upkeep``).

Importing this package imports neither pyspark nor Airflow, nor ``deltalake``: the path
store's module is imported when a path store is built.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from contract_gate.decisions import audit, recovery
from contract_gate.decisions.record import (
    FINAL_OUTCOMES,
    OUTCOMES,
    PUBLISHED_OUTCOMES,
    Decision,
    ObjectScope,
)
from contract_gate.decisions.store import DecisionStore, TableHistory
from contract_gate.decisions.unity_catalog import SqlRunner, UnityCatalogDecisionStore, UnityCatalogHistory
from contract_gate.object_storage import storage_options
from contract_gate_plan.addresses import Address
from contract_gate_plan.model import Plan

__all__ = [
    "FINAL_OUTCOMES",
    "OUTCOMES",
    "PUBLISHED_OUTCOMES",
    "Decision",
    "DecisionStore",
    "ObjectScope",
    "TableHistory",
    "audit_decisions",
    "decision_store",
    "failed_count",
    "failed_runs",
    "final_decision",
    "history_for",
    "record_decision",
    "recover_missing_decisions",
    "store_for",
    "upkeep_decisions",
]


def _connection(plan: Plan, databricks_conn_id: str | None) -> str:
    return databricks_conn_id or plan.connection_id or "databricks_default"


def store_for(plan: Plan, databricks_conn_id: str | None = None) -> DecisionStore:
    """The store for the plan's ``tables.decisions``."""
    return decision_store(plan.require_tables().require_decisions(), _connection(plan, databricks_conn_id), plan.document["tables"])


def decision_store(address: Address, databricks_conn_id: str | None, tables: dict[str, Any]) -> DecisionStore:
    """The store of the decision table at ``address``; ``tables``: the plan's addresses as it
    writes them, whose connections reach an object-storage bucket."""
    if address.is_path:
        from contract_gate.decisions.delta_path import DeltaPathDecisionStore  # deltalake and pyarrow: on first use

        return DeltaPathDecisionStore(address, storage_options(tables, address.as_document()))
    return UnityCatalogDecisionStore(address.location, SqlRunner(databricks_conn_id=databricks_conn_id or "databricks_default"))


def history_for(plan: Plan, databricks_conn_id: str | None = None) -> TableHistory:
    """Reads the commit history of ``plan``'s target (path: ``deltalake``; catalog: SQL)."""
    if plan.require_tables().require_target().is_path:
        from contract_gate.decisions.delta_path import DeltaPathHistory  # deltalake and pyarrow: on first use

        return DeltaPathHistory(lambda address: storage_options(plan.document["tables"], address.as_document()))
    return UnityCatalogHistory(SqlRunner(databricks_conn_id=_connection(plan, databricks_conn_id)))


def record_decision(plan: Plan, record: dict[str, Any] | Decision,
                    store: DecisionStore | None = None) -> dict[str, Any]:
    """Record one decision; returns the record that stands for the submission (see
    ``DecisionStore.record``) as a JSON-safe dict."""
    decision = record if isinstance(record, Decision) else Decision.from_record(record)
    return (store or store_for(plan)).record(decision, ObjectScope.of(plan)).as_dict()


def final_decision(plan: Plan, submission_id: str,
                   store: DecisionStore | None = None) -> dict[str, Any] | None:
    """The submission's final record as a dict, or None."""
    found = (store or store_for(plan)).final(submission_id, plan.contract_id, ObjectScope.of(plan))
    return None if found is None else found.as_dict()


def failed_runs(plan: Plan, submission_id: str, store: DecisionStore | None = None) -> int:
    """How many runs recorded a (non-final) ``failed`` decision for the submission: one record per run."""
    return failed_count((store or store_for(plan)).records(submission_id=submission_id, contract_id=plan.contract_id,
                                                          scope=ObjectScope.of(plan)))


def failed_count(records: list[Decision]) -> int:
    """The runs among ``records`` (one submission's) that ended with a non-final ``failed`` decision."""
    return sum(1 for record in records if record.outcome == "failed" and not record.final)


def recover_missing_decisions(
    plan: Plan,
    store: DecisionStore | None = None,
    history: TableHistory | None = None,
    *,
    min_age: timedelta | None = None,
) -> list[dict[str, Any]]:
    """Record the final decisions missing for publishes/quarantines found in ``plan``'s
    tables' commit histories (see ``contract_gate.decisions.recovery``); returns them."""
    recovered = recovery.recover_missing_decisions(
        plan, store or store_for(plan), history or history_for(plan),
        min_age=recovery.DEFAULT_MIN_AGE if min_age is None else min_age,
    )
    return [decision.as_dict() for decision in recovered]


def audit_decisions(
    plan: Plan,
    store: DecisionStore | None = None,
    history: TableHistory | None = None,
    *,
    repair: bool = False,
    settle: timedelta | None = None,
    unfinished_after: timedelta | None = None,
) -> audit.AuditResult:
    """Audit ``plan``'s object (see ``contract_gate.decisions.audit``); with ``repair``, record
    what recovery would first. ``settle`` defaults to recovery's minimum age."""
    run = audit.repair if repair else audit.audit
    return run(plan, store or store_for(plan), history or history_for(plan),
               settle=recovery.DEFAULT_MIN_AGE if settle is None else settle,
               unfinished_after=audit.DEFAULT_UNFINISHED_AFTER if unfinished_after is None else unfinished_after)


def upkeep_decisions(plan: Plan, store: DecisionStore | None = None) -> dict[str, Any]:
    """Keep the decision table small for ``plan``'s contract; returns what was done."""
    return (store or store_for(plan)).upkeep(plan.contract_id)
