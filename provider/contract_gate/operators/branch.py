"""Branch on the validation summary: publish, quarantine, or split the batch by row.

The decision follows the contract's violation policy:

* ``reject_batch``: any failed error rule (or a failed schema check) quarantines the batch;
* ``split_rows``: valid rows are published and invalid rows quarantined, but only when every
  failed error rule marks individual rows (row or key-group scope: each invalid row carries its
  rule ids), the schema is intact, some row is valid, and the invalid share does not exceed
  ``maxInvalidShare``. Otherwise the whole batch is quarantined: a failed dataset rule (row
  count, a metric over the batch, a SQL check) says nothing about which rows to keep.

Warnings never block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contract_gate.airflow_compat import BaseBranchOperator
from contract_gate.operators.base import compile_gate_plan
from contract_gate_plan.states import Outcome

if TYPE_CHECKING:
    from airflow.sdk import Context

    from contract_gate_plan.model import Plan

PUBLISH, QUARANTINE, SPLIT = "publish", "quarantine", "split"
ROW_SCOPES = ("row", "group")


def decide(plan: Plan, summary: dict) -> tuple[str, str]:
    """(``publish`` | ``quarantine`` | ``split``, the reason in words)."""
    if summary["outcome"] not in (Outcome.PASS, Outcome.WARN, Outcome.FAIL):  # a stopped validation
        raise ValueError(f"validation outcome {summary['outcome']!r} is no verdict: nothing to publish or quarantine")
    if summary["outcome"] != Outcome.FAIL:
        return PUBLISH, f"validation outcome {summary['outcome']}"
    violations = plan.violations
    if violations.get("policy") != "split_rows":
        return QUARANTINE, "the contract rejects a batch with any failed error rule (reject_batch)"
    if not summary["schema_ok"]:
        return QUARANTINE, "the schema check failed, so no row can be trusted"
    blocking = [r for r in summary["failing_rules"] if r["severity"] == "error"]
    dataset_level = sorted(r["id"] for r in blocking if r["scope"] not in ROW_SCOPES or r["status"] != "evaluated")
    if dataset_level:
        return QUARANTINE, f"failed rules judge the whole batch, not rows: {', '.join(dataset_level)}"
    rows = summary["rows"]
    total = (rows["valid"] or 0) + (rows["invalid"] or 0)
    if not rows["valid"]:
        return QUARANTINE, "no row is valid"
    share = rows["invalid"] / total
    limit = violations.get("maxInvalidShare")
    if limit is not None and share > limit:
        return QUARANTINE, f"{share:.1%} of rows are invalid, above maxInvalidShare {limit:.1%}"
    return SPLIT, f"{rows['invalid']} of {total} rows are invalid; the valid rows are published"


class GateBranchOperator(BaseBranchOperator):
    """Follow the branch :func:`decide` picks. Pushes ``{decision, reason}``.

    :param contract: path of the contract (for its violation policy). (templated)
    :param env: the contract environment. (templated)
    :param object_name: the schema object gated; default the contract's only (gated) object. (templated)
    :param summary: the validation summary (the validate task's XCom). (templated)
    :param publish_task_id: task id of the publish branch.
    :param quarantine_task_id: task id of the quarantine branch.
    :param split_task_id: task id of the split branch (publish valid, quarantine invalid).
    """

    template_fields = ("contract", "env", "summary", "object_name")

    def __init__(self, *, contract: str, summary: dict, env: str | None = None, publish_task_id: str,
                 quarantine_task_id: str, split_task_id: str, object_name: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.contract = contract
        self.env = env
        self.object_name = object_name
        self.summary = summary
        self.branches = {PUBLISH: publish_task_id, QUARANTINE: quarantine_task_id, SPLIT: split_task_id}

    def choose_branch(self, context: Context) -> str:
        plan = compile_gate_plan(self.contract, self.env, self.object_name)
        decision, reason = decide(plan, self.summary)
        self.log.info("submission %s: %s (%s)", self.summary["submission_id"], decision, reason)
        context["ti"].xcom_push(key="decision", value={"decision": decision, "reason": reason})
        return self.branches[decision]
