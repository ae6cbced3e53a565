"""Audit the decision log against the gated tables' histories (``contract_gate.decisions.audit``),
daily in the retention DAG: the task fails, naming every disagreement, when they do not agree.

It only reads the tables: a commit without its decision is recorded by the next gate run's
recovery (or by ``contract-gate audit --repair``), everything else needs a person. What it found
(clean, or how many disagreements of which kinds, and when) is the status page's audit line: the
task keeps it in the status folder (``contract_gate.freshness.locations.audit_status_dir``)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from contract_gate import decisions
from contract_gate.airflow_compat import AirflowFailException
from contract_gate.freshness.locations import audit_status_dir
from contract_gate.freshness.status import StatusStore
from contract_gate.operators.base import ContractGateBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context


class GateAuditOperator(ContractGateBaseOperator):
    """Audit one gated object's decisions; pushes the audit (``AuditResult.as_dict``)."""

    ui_color = "#fdecea"

    def execute(self, context: Context) -> dict[str, Any]:
        plan = self.load_plan()
        result = decisions.audit_decisions(plan)
        self.log.info("audit of %s (%s): %d final decision(s), %d tagged commit(s), %d disagreement(s)",
                      result.contract_id, result.object, result.decisions, result.commits, len(result.findings))
        StatusStore(audit_status_dir(plan)).write(result.status(plan.names.gate, datetime.now(timezone.utc)))
        if result.findings:
            context["ti"].xcom_push(key="return_value", value=result.as_dict())
            raise AirflowFailException("the decision log disagrees with the tables: " + "; ".join(
                f"{finding.kind}: {finding.message}" for finding in result.findings))
        return result.as_dict()
