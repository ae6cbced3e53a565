"""The small generated DAG that checks one contract's freshness on its own schedule.

Separate from the gate DAG because freshness must be checked exactly when no batch arrives:
a gate that is never triggered would never notice. One task, no Spark; the schedule is the
gate setting ``alerts.freshnessSchedule`` (default hourly); one run at a time, so two checks
never race on the status record.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from airflow.sdk import DAG

from contract_gate import config
from contract_gate.contract.compiler import compile_plans
from contract_gate.operators.freshness import FreshnessCheckOperator
from contract_gate_plan.model import Freshness, Plan

START_DATE = datetime(2024, 1, 1, tzinfo=timezone.utc)


def freshness_dag_id(contract_id: str) -> str:
    return f"{contract_id}__freshness"


def build_freshness_dag(contract_path: str | Path, env: str | None = None,
                        plans: list[Plan] | None = None) -> DAG | None:
    """The freshness DAG for a contract: one check per gated object with a freshness/latency SLA,
    or None when no object has one. Compiling raises
    :class:`~contract_gate.contract.errors.ContractError` for a broken contract, like the gate DAG
    does; ``plans`` are the contract's gated objects already compiled for ``env``."""
    if plans is None:
        plans = list(compile_plans(contract_path, env=env).gated.values())
    several = len(plans) > 1
    plans = [plan for plan in plans if plan.freshness is not None]
    if not plans:
        return None
    plan = plans[0]
    dag = DAG(
        dag_id=freshness_dag_id(plan.names.dag_id),
        description=f"Freshness SLA of {plan.contract_id}: " + ", ".join(
            f"{p.freshness.column} at most {p.freshness.value} {p.freshness.unit} old" for p in plans if p.freshness),
        schedule=plan.alerts["freshnessSchedule"],
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        tags=[tag for tag in ("contract-gate", "freshness", plan.contract_domain) if tag],
        doc_md="\n\n".join(_doc(p, p.freshness) for p in plans if p.freshness is not None),
        default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
        is_paused_upon_creation=config.get_flag("dags_paused_at_creation"),  # unset: Airflow's [core] setting
    )
    with dag:
        for each in plans:  # one object: the task id it always had
            FreshnessCheckOperator(task_id=f"check_freshness__{each.names.group}" if several else "check_freshness",
                                   contract=str(contract_path), env=env, object_name=each.object if several else None)
    return dag


def _doc(plan: Plan, freshness: Freshness) -> str:
    target = plan.require_tables().target
    where = target.location if target is not None else ""
    notifiers = plan.notifiers
    return "\n".join([
        f"### Freshness of `{plan.contract_id}` {plan.contract_version}",
        "",
        f"The latest accepted `{freshness.column}` ({freshness.column_type}) in `{where}` must be at most "
        f"**{freshness.value} {freshness.unit}** old ({freshness.sla_property} SLA, "
        f"{freshness.max_age_seconds} s). A date counts from the end of its UTC day.",
        "",
        "Alerts once per stale episode, and when fresh again, through: "
        + (", ".join(f"`{ref['class']}`" for ref in notifiers) or "no notifiers configured") + ".",
    ])
