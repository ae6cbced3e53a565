"""The DAGs of one contract file: its gate DAG, its daily retention DAG and, with an SLA, its
freshness DAG, built while Airflow parses the contract's stub (``stub_files``).

Parsing is cheap: the contract is compiled once per version of its file (milliseconds, no
Spark, no pyspark import; the stub's two or three DAGs share it) and the task group is built;
nothing else. Settings (``[contract_gate]``, :mod:`contract_gate.config`): ``env`` (the contract
server/environment; default the first server), ``contracts_dir`` (``stub_files``).
"""

from __future__ import annotations

import functools
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Param

from contract_gate import config
from contract_gate.contract.claims import conflicts
from contract_gate.contract.errors import ContractError
from contract_gate.contract_folder import compiled
from contract_gate.dags.dag_doc import render_doc
from contract_gate.dags.freshness_dag import build_freshness_dag
from contract_gate.dags.gate_schedule import gate_schedule
from contract_gate.dags.stub_files import SYNC_COMMAND, stub_contract
from contract_gate.dags.task_group import contract_gate_task_group
from contract_gate.notifications.deadline import decision_deadline
from contract_gate.operators.audit import GateAuditOperator
from contract_gate.operators.retention import GateRetentionOperator
from contract_gate.contract.retry_policy import RetryPolicy
from contract_gate_plan.names import safe_name

START_DATE = datetime(2024, 1, 1, tzinfo=timezone.utc)


def contract_dags(stub_file: str | Path, relative: str, env: str | None = None) -> tuple:
    """(gate DAG, retention DAG, freshness DAG or None) of a stub's contract. Raises the
    contract's error (file, line, YAML path): in a stub, that is the stub's import error only."""
    contract = stub_contract(stub_file, relative)
    if not contract.is_file():
        raise FileNotFoundError(f"{stub_file}: its contract file {contract} does not exist; run "
                                f"`{SYNC_COMMAND}` after removing or moving a contract")
    return contract_dag(contract, env), retention_dag(contract, env), freshness_dag(contract, env)


def refuse_claim_conflicts(contract: str | Path, env: str | None = None) -> None:
    """Raise the contract's ``ContractError`` when another contract of its folder claims one of
    its tables or its id (``contract.claims``): neither gate of such a pair loads, each import
    error naming the other file, while every other contract's DAGs load as before.

    The folder's claims are worked out once per state of the folder (file names and mtimes) and
    process: every contract is compiled once (``compiled``) whichever stub asks first."""
    path = Path(contract).resolve()
    state = tuple(sorted((entry.path, entry.stat().st_mtime_ns) for entry in os.scandir(path.parent)
                         if entry.name.endswith((".yaml", ".yml")) and entry.is_file()))
    issues = _folder_conflicts(state, env).get(str(path))
    if issues:
        raise ContractError(str(path), issues)


@functools.lru_cache(maxsize=8)
def _folder_conflicts(state: tuple, env: str | None) -> dict:
    plans = []
    for file, _ in state:
        try:
            contract = compiled(file, env)
        except Exception:  # noqa: BLE001 - a contract that does not compile is its own DAG file's import error
            continue
        plans += [(contract.loaded, plan) for plan in contract.plans.values()]
    return conflicts(plans)


def contract_dag(contract: str | Path, env: str | None = None):
    """The gate DAG of one contract. Raises the contract's error (file, line, YAML path) when
    it does not compile: in a stub, that is the stub's import error and nobody else's."""
    env = env or config.get("env")
    contract_plans = compiled(contract, env)
    refuse_claim_conflicts(contract, env)
    gated = contract_plans.gated
    if not gated:
        reasons = "; ".join(f"{name}: {reason}" for name, reason in contract_plans.not_gated.items())
        raise ValueError(f"{contract}: no schema object has a landing, so there is nothing to gate ({reasons})")
    plans = list(gated.values())
    plan = plans[0]
    params = {
        "submission_id": Param(None, type=["null", "string"], description="Default: derived from the landed batch."),
        "landing": Param(None, type=["null", "string"], description="Read this path instead of the contract's landing."),
        "landing_format": Param(None, type=["null", "string"], enum=[None, "csv", "json", "parquet", "delta"],
                                description="Format of the landing override."),
        "rerun_of": Param(None, type=["null", "string"], description="The submission this run re-runs."),
        "correction": Param(False, type="boolean", description="Re-run a published submission, replacing its keys."),
    }
    if len(plans) > 1:  # the overrides above name one object's batch: which one must be said
        params["object"] = Param(None, type=["null", "string"], enum=[None, *(p.object for p in plans)],
                                 description="The object the overrides above apply to (required with any "
                                             "of them); the other objects gate their landings as usual.")
    deadline = decision_deadline(plan)
    optional: dict[str, Any] = {"deadline": deadline} if deadline is not None else {}
    with DAG(
        dag_id=plan.names.dag_id,
        description=f"contract gate: {plan.contract_name or plan.contract_id} {plan.contract_version}",
        schedule=gate_schedule(plans),  # cron, preset, or the landings' watched Assets (``gate_schedule``)
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        default_args=RetryPolicy.of(plan.gate).task_arguments(),  # faults end final by themselves (``retries``)
        is_paused_upon_creation=config.get_flag("dags_paused_at_creation"),  # unset: Airflow's [core] setting
        params=params,
        doc_md="\n".join(render_doc(p, Path(contract), contract_plans.loaded.model.description if i == 0 else None)
                          for i, p in enumerate(plans)),
        tags=sorted({_tag(t) for t in ("contract-gate", plan.contract_domain, f"v{plan.contract_version}") if t}),
        **optional,
    ) as dag:
        for each in plans:
            contract_gate_task_group(
                contract,
                group_id=each.names.group,
                prefix_group_id=len(plans) > 1,  # one object: the task ids it always had
                env=env,
                plan=each,
                object_name=each.object if len(plans) > 1 else None,
                submission_id="{{ params.submission_id or '' }}",
                landing="{{ params.landing or '' }}",
                landing_format="{{ params.landing_format or '' }}",
                rerun_of="{{ params.rerun_of or '' }}",
                correction="{{ params.correction }}",
                overrides_for="{{ params.object or '' }}" if len(plans) > 1 else None,
            )
    return dag


def _tag(text: str) -> str:
    """An Airflow tag from contract text: at most 100 characters, derived like the DAG id."""
    return safe_name(str(text))


def retention_dag(contract: str | Path, env: str | None = None):
    """``<contract id>__retention``: once a day, drop the contract's candidates and quarantined
    rows that are past ``retention.candidateDays`` / ``retention.quarantineDays``. A DAG of its
    own so the gate runs keep their two Spark jobs; one run at a time, no catch-up (each run
    applies the retention as of its own day)."""
    env = env or config.get("env")
    gated = compiled(contract, env).gated
    if not gated:
        return None
    refuse_claim_conflicts(contract, env)  # retention deletes: never for a table another contract claims
    plan = next(iter(gated.values()))
    retention = plan.retention
    with DAG(
        dag_id=f"{plan.names.dag_id}__retention",
        description=f"retention of {plan.contract_id}: candidates {retention.get('candidateDays', 7)} d, "
                    f"quarantined rows {retention.get('quarantineDays', 90)} d",
        schedule="@daily",
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        tags=sorted({_tag(t) for t in ("contract-gate", "retention", plan.contract_domain) if t}),
        is_paused_upon_creation=config.get_flag("dags_paused_at_creation"),  # unset: Airflow's [core] setting
    ) as dag:
        for name, each in gated.items():  # one object: the task ids it always had
            suffix = "" if len(gated) == 1 else f"__{each.names.group}"
            object_name = name if len(gated) > 1 else None
            GateRetentionOperator(task_id=f"apply_retention{suffix}", contract=str(contract), env=env,
                                  object_name=object_name)
            # beside the retention, not after it: a failed cleanup must not hide a disagreement
            GateAuditOperator(task_id=f"audit_decisions{suffix}", contract=str(contract), env=env,
                              object_name=object_name)
    return dag


def freshness_dag(contract: str | Path, env: str | None = None):
    """The contract's freshness DAG (``freshness_dag``), None without an SLA."""
    env = env or config.get("env")
    return build_freshness_dag(contract, env=env, plans=list(compiled(contract, env).gated.values()))
