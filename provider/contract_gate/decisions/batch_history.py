"""What a gate hands its validation for the plan's history rules: the last accepted batches'
measures, read from the decision log before the job starts (docs/architecture.md, "History
rules").

The job never reads the decision log: the decision table may be a catalog table the job's
cluster cannot reach with the same rights, and reading it here keeps one reader of the log (this
package) and a job that only reads its batch. No old batch data is read: a batch's row count is
its record's ``rows_landed`` and its null count of a history rule is its record's ``null_counts``.
"""

from __future__ import annotations

from typing import Any

from contract_gate.decisions.record import ObjectScope
from contract_gate.decisions.store import DecisionStore
from contract_gate_plan.batch_history import History
from contract_gate_plan.model import Plan, Rule


def history_rules(plan: Plan) -> list[tuple[Rule, History]]:
    """The plan's history rules, each with its bounds."""
    return [(rule, rule.history) for rule in plan.rules if rule.history is not None]


def accepted_history(plan: Plan, store: DecisionStore) -> dict[str, list[dict[str, Any]]] | None:
    """``{rule id: [{submission_id, rows, nulls}, ...]}``, newest first, for each history rule of
    ``plan`` (``nulls``: the rule's null count, None where the record holds none); None when the
    plan has no history rule."""
    rules = history_rules(plan)
    if not rules:
        return None
    accepted = store.accepted_batches(plan.contract_id, ObjectScope.of(plan),
                                      max(history.batches for _, history in rules))
    return {rule.id: [{"submission_id": decision.submission_id, "rows": decision.rows_landed,
                       "nulls": decision.null_counts.get(rule.id)}
                      for decision in accepted[:history.batches]]
            for rule, history in rules}


def null_counts(plan: Plan, report_rules: list[dict[str, Any]]) -> dict[str, int]:
    """The null rows each ``nullValues`` history rule counted in a report, by rule id: what a
    decision keeps for the batches after it."""
    ids = {rule.id for rule, _ in history_rules(plan) if rule.kind == "metric"}
    return {entry["id"]: entry["failed_rows"] for entry in report_rules
            if entry["id"] in ids and isinstance(entry.get("failed_rows"), int)}
