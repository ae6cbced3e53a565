"""A run-level Deadline Alert for the gate DAG: tell someone when a gate has not decided in time.

Airflow 3.3 evaluates ``DAG(deadline=DeadlineAlert(...))`` in the scheduler: a run of the gate
DAG that has not *succeeded* ``decisionDeadlineMinutes`` after it was queued is a missed
deadline, and Airflow runs the callback once for that run (a run that succeeds in time has its
deadline removed). The callback is a :class:`SyncCallback`, so it runs on the executor (the
LocalExecutor supports callbacks in 3.3; check ``supports_callbacks`` for others) with the
same notifiers the freshness alerts use, named in the contract's gate settings. Airflow 3.1's
Deadline Alerts take no SyncCallback: there the gate DAG has no deadline, and says so in the log.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from contract_gate import airflow_compat
from contract_gate.notifications import notifier_keys
from contract_gate.notifications.dispatch import AlertDeliveryError, deliver
from contract_gate_plan.model import Plan

if TYPE_CHECKING:
    from airflow.sdk.definitions.deadline import DeadlineAlert

log = logging.getLogger(__name__)


def decision_deadline(plan: Plan) -> DeadlineAlert | None:
    """The ``deadline`` argument for the contract's gate DAG, or None when the contract sets no
    ``alerts.decisionDeadlineMinutes`` or names no notifiers."""
    minutes, notifiers = plan.alerts.get("decisionDeadlineMinutes"), plan.notifiers
    if not minutes or not notifiers:
        return None
    if not airflow_compat.DEADLINE_ALERTS:
        log.warning("contract %r: alerts.decisionDeadlineMinutes needs Airflow 3.2 or later (a deadline "
                    "callback on the executor); this Airflow runs the gate DAG without a decision deadline",
                    plan.contract_id)
        return None
    return airflow_compat.DeadlineAlert(
        reference=airflow_compat.DeadlineReference.DAGRUN_QUEUED_AT,
        interval=timedelta(minutes=minutes),
        callback=airflow_compat.SyncCallback(
            notify_gate_overdue,
            kwargs={
                "contract_id": plan.contract_id,
                "contract_version": plan.contract_version,
                "environment": plan.environment,
                "deadline_minutes": minutes,
                "notifiers": notifiers,
            },
        ),
        name=f"{plan.contract_id} decision deadline",
    )


def notify_gate_overdue(contract_id: str, contract_version: str, environment: str | None,
                        deadline_minutes: int, notifiers: list[dict], context: dict | None = None) -> None:
    """Deadline callback: one notification per configured notifier.

    ``context`` is what the scheduler passes to deadline callbacks: ``dag_run`` (the run as the
    REST API shows it: ``dag_run_id``, ``queued_at``, ``conf``...) and ``deadline`` (``deadline_time``)."""
    context = dict(context or {})
    dag_run = context.get("dag_run") or {}
    deadline = context.get("deadline") or {}
    submission = (dag_run.get("conf") or {}).get("submission_id")
    where = f"contract {contract_id!r}" + (f" (environment {environment})" if environment else "")
    payload = {
        "event": "decision_overdue",
        "contract_id": contract_id,
        "contract_version": contract_version,
        "environment": environment,
        "dag_id": dag_run.get("dag_id"),
        "run_id": dag_run.get("dag_run_id"),
        "submission_id": submission,
        "queued_at": dag_run.get("queued_at"),
        "deadline_time": str(deadline["deadline_time"]) if deadline.get("deadline_time") else None,
        "deadline_minutes": deadline_minutes,
        "title": f"contract-gate: {contract_id} gate has not decided in time",
        "message": (f"The gate run {dag_run.get('dag_run_id')} of {where}"
                    + (f" for submission {submission}" if submission else "")
                    + f" has not completed successfully within {deadline_minutes} min of being queued "
                    + f"({dag_run.get('queued_at')}). Check the run and the decision table."),
    }
    failures = deliver(dict(zip(notifier_keys(notifiers), notifiers)), payload)
    if failures:
        raise AlertDeliveryError(f"decision-deadline alert not delivered to: {', '.join(failures)}")
