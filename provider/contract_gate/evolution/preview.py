"""A new contract version previewed against the batches the gate accepted: which batches (the
newest accepted decisions in the decision log, read without Spark), what the gate would decide
about each under the new version, compared with what it recorded, and the result as text. The
re-validation itself runs on Spark (``contract_gate_spark.steps.preview``); ``contract-gate preview`` and
``ContractPreviewOperator`` both use these.

Like is compared with like: the new decision is the gate's branch (``decide``: published, split,
quarantined) on the re-validation, and its published rows are compared with the recorded ones
(a batch read from its candidate is the whole batch; one read from the target is only the rows
it published, so there every row is compared). A batch the new version splits the way it was
split is no change; only a batch of which the new version would publish fewer rows counts as
rejected (``rejected_batches``), and that is what fails a preview."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contract_gate import decisions
from contract_gate_plan.model import Plan

Decide = Callable[[Plan, dict], tuple[str, str]]
"""The gate's branch (``contract_gate.operators.branch.decide``): a summary to (branch, reason)."""
SAME, MORE, FEWER = "same", "rejects more", "rejects fewer"


def accepted_batches(plan: Plan, last: int) -> list[dict[str, Any]]:
    """The ``last`` newest accepted decisions of ``plan``'s contract and object, newest first
    (the store's one query of accepted batches, which history rules read too)."""
    accepted = decisions.store_for(plan).accepted_batches(plan.contract_id, decisions.ObjectScope.of(plan), last)
    return [record.as_dict() for record in accepted]


def judge(plan: Plan, result: dict[str, Any], batches: list[dict[str, Any]], decide: Decide) -> dict[str, Any]:
    """``contract_gate_spark.steps.preview.preview``'s ``result`` with, per batch, what the gate
    would decide (``gate``), what it recorded (``recorded``, from ``batches``, the decision
    records) and the ``change`` between the two, and ``rejected_batches``: how many it would
    reject more of (see the module docs)."""
    recorded = {batch["submission_id"]: batch for batch in batches}
    judged = [_judge_batch(plan, batch, recorded[batch["submission_id"]], decide) for batch in result["batches"]]
    return {**result, "batches": judged, "rejected_batches": sum(batch["change"] == MORE for batch in judged)}


def _judge_batch(plan: Plan, batch: dict[str, Any], record: dict[str, Any], decide: Decide) -> dict[str, Any]:
    rows, valid = batch["rows"], batch["rows_valid"] or 0
    summary = {"outcome": batch["outcome"], "schema_ok": batch["schema"]["ok"], "failing_rules": batch["failing_rules"],
               "rows": {"valid": batch["rows_valid"], "invalid": batch["rows_invalid"]}}
    branch, reason = decide(plan, summary)
    published = {"publish": rows, "split": valid}.get(branch, 0)
    whole = batch["source"].startswith("candidate")  # else the target's rows: only those it published
    was = (record.get("rows_published") or 0) if whole else rows
    change = SAME if published == was else MORE if published < was else FEWER
    return {**batch, "gate": {"decision": branch, "reason": reason, "rows_published": published},
            "recorded": {"outcome": record.get("outcome"), "rows_published": record.get("rows_published"),
                         "rows_quarantined": record.get("rows_quarantined")},
            "change": change}


def _said(decision: str, published: int | None, rows: int | None) -> str:
    """``published``, ``split N of M`` (N of M rows published) or ``quarantined``."""
    if decision == "split":
        return f"split {published} of {rows}"
    return {"publish": "published", "quarantine": "quarantined"}.get(decision, decision)


def render(result: dict[str, Any]) -> str:
    """:func:`judge`'s result for a person: per batch what the gate recorded and would decide now,
    and its failing rules, per rule the batches and rows it would have failed (counts, no values)."""
    contract = result["contract"]
    lines = [f"contract {contract['id']} {contract['version']} over the last {len(result['batches'])} accepted batch(es)"]
    for batch in result["batches"]:
        recorded, gate = batch["recorded"], batch["gate"]
        landed = (recorded["rows_published"] or 0) + (recorded["rows_quarantined"] or 0)
        lines.append(f"  {batch['submission_id']} (accepted under {batch['accepted_under']}, {batch['source']}): "
                     f"{batch['rows']} rows; recorded {_said(recorded['outcome'], recorded['rows_published'], landed)}, "
                     f"would be {_said(gate['decision'], gate['rows_published'], batch['rows'])} -> "
                     f"{batch['change'].upper()}")
        if batch["added_columns"]:
            lines.append(f"    added since (NULL, as the migration leaves them): {', '.join(batch['added_columns'])}")
        schema = batch["schema"]
        for kind in ("missing", "unexpected", "type_mismatches"):
            if schema[kind]:
                lines.append(f"    schema {kind.replace('_', ' ')}: {', '.join(schema[kind])}")
        lines += [f"    {rule['id']} ({rule['severity']}): "
                  f"{'-' if rule['failed_rows'] is None else rule['failed_rows']} rows"
                  + (f"; {rule['reason']}" if rule.get("reason") else "") for rule in batch["failing_rules"]]
    if result["rules"]:
        lines.append("per rule: batches, rows it would have failed")
        lines += [f"  {rule['id']} ({rule['severity']}): {rule['batches']} batch(es), {rule['failed_rows']} rows"
                  for rule in result["rules"]]
    lines += [f"  {gone['submission_id']}: not read again: {gone['reason']}" for gone in result.get("unreadable", [])]
    lines.append(f"would reject more than the gate did in {result['rejected_batches']} of "
                 f"{len(result['batches'])} batch(es)")
    return "\n".join(lines)


def empty_result(plan: Plan) -> dict[str, Any]:
    """The result when there is no accepted batch to preview."""
    return {"contract": dict(plan.document["contract"]), "batches": [], "rules": [], "rejected_batches": 0}
