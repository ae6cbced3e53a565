"""A new contract version previewed against the batches the gate accepted: which batches (the
newest accepted decisions in the decision log, read without Spark) and the result as text. The
re-validation itself runs on Spark (``contract_gate_spark.steps.preview``); ``contract-gate preview`` and
``ContractPreviewOperator`` both use these."""

from __future__ import annotations

from typing import Any

from contract_gate import decisions
from contract_gate_plan.model import Plan


def accepted_batches(plan: Plan, last: int) -> list[dict[str, Any]]:
    """The ``last`` newest accepted decisions of ``plan``'s contract and object, newest first."""
    records = decisions.store_for(plan).records(contract_id=plan.contract_id, scope=decisions.ObjectScope.of(plan))
    return [record.as_dict() for record in records if record.outcome in decisions.PUBLISHED_OUTCOMES][:last]


def render(result: dict[str, Any]) -> str:
    """``contract_gate_spark.steps.preview.preview``'s result for a person: per batch the verdict and its
    failing rules, per rule the batches and rows it would have failed (counts, no values)."""
    contract = result["contract"]
    lines = [f"contract {contract['id']} {contract['version']} over the last {len(result['batches'])} accepted batch(es)"]
    for batch in result["batches"]:
        lines.append(f"  {batch['submission_id']} (accepted under {batch['accepted_under']}, {batch['source']}): "
                     f"{batch['rows']} rows -> {batch['outcome'].upper()}")
        schema = batch["schema"]
        for kind in ("missing", "unexpected", "type_mismatches"):
            if schema[kind]:
                lines.append(f"    schema {kind.replace('_', ' ')}: {', '.join(schema[kind])}")
        lines += [f"    {rule['id']} ({rule['severity']}): "
                  f"{'-' if rule['failed_rows'] is None else rule['failed_rows']} rows" for rule in batch["failing_rules"]]
    if result["rules"]:
        lines.append("per rule: batches, rows it would have failed")
        lines += [f"  {rule['id']} ({rule['severity']}): {rule['batches']} batch(es), {rule['failed_rows']} rows"
                  for rule in result["rules"]]
    lines.append(f"would have rejected {result['rejected_batches']} of {len(result['batches'])} batch(es)")
    return "\n".join(lines)


def empty_result(plan: Plan) -> dict[str, Any]:
    """The result when there is no accepted batch to preview."""
    return {"contract": dict(plan.document["contract"]), "batches": [], "rules": [], "rejected_batches": 0}
