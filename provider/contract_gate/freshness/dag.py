"""The small generated DAG that checks one contract's freshness on its own schedule.

Separate from the gate DAG because freshness must be checked exactly when no batch arrives:
a gate that is never triggered would never notice. One task, no Spark; the schedule is the
gate setting ``alerts.freshnessSchedule`` (default hourly); one run at a time, so two checks
never race on the status record.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from airflow.sdk import DAG

from contract_gate.contract.compiler import compile_plans
from contract_gate.operators.freshness import FreshnessCheckOperator

START_DATE = datetime(2024, 1, 1, tzinfo=timezone.utc)


def freshness_dag_id(contract_id: str) -> str:
    return f"{contract_id}__freshness"


def build_freshness_dag(contract_path: str | Path, env: str | None = None,
                        plans: list[dict] | None = None) -> DAG | None:
    """The freshness DAG for a contract: one check per gated object with a freshness/latency SLA,
    or None when no object has one. Compiling raises
    :class:`~contract_gate.contract.errors.ContractError` for a broken contract, like the gate DAG
    does; ``plans`` are the contract's gated objects already compiled for ``env``."""
    if plans is None:
        plans = list(compile_plans(contract_path, env=env).gated.values())
    several = len(plans) > 1
    plans = [plan for plan in plans if plan["freshness"] is not None]
    if not plans:
        return None
    plan, contract = plans[0], plans[0]["contract"]
    freshness = plan["freshness"]
    dag = DAG(
        dag_id=freshness_dag_id(plan["names"]["dag_id"]),
        description=f"Freshness SLA of {contract['id']}: " + ", ".join(
            f"{p['freshness']['column']} at most {p['freshness']['value']} {p['freshness']['unit']} old" for p in plans),
        schedule=plan["gate"]["alerts"]["freshnessSchedule"],
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        tags=[tag for tag in ("contract-gate", "freshness", contract.get("domain")) if tag],
        doc_md="\n\n".join(_doc(p) for p in plans),
        default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    )
    with dag:
        for each in plans:  # one object: the task id it always had
            FreshnessCheckOperator(task_id=f"check_freshness__{each['names']['group']}" if several else "check_freshness",
                                   contract=str(contract_path), env=env, object_name=each["object"] if several else None)
    return dag


def _doc(plan: dict) -> str:
    freshness = plan["freshness"]
    target = plan["tables"]["target"]
    where = target.get("path") or target.get("name")
    notifiers = plan["gate"]["alerts"]["notifiers"]
    return "\n".join([
        f"### Freshness of `{plan['contract']['id']}` {plan['contract']['version']}",
        "",
        f"The latest accepted `{freshness['column']}` ({freshness['column_type']}) in `{where}` must be at most "
        f"**{freshness['value']} {freshness['unit']}** old ({freshness['property']} SLA, "
        f"{freshness['max_age_seconds']} s). A date counts from the end of its UTC day.",
        "",
        f"Alerts once per stale episode, and when fresh again, through: "
        + (", ".join(f"`{ref['class']}`" for ref in notifiers) or "no notifiers configured") + ".",
    ])
