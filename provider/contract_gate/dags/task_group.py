"""The gate as a task group, for DAG authors who add it after their own step::

    from contract_gate.task_group import contract_gate_task_group

    with DAG("orders_pipeline", ...):
        load = SparkSubmitOperator(...)          # writes lakehouse/landing/orders
        load >> contract_gate_task_group(contract="contracts/orders.yaml")

Tasks (JVM starts on the local default: two per submission, at most):

    submission ─► stage_validate ─► branch ─┬► publish ─────┐
         │          (1 Spark job)           ├► quarantine ──┼► record_decision
         │                                  └► split ───────┘   (no Spark, always runs)
         └──────────────────────────────────────────────────────────┘

The generated per-contract DAGs (:mod:`contract_gate.dags.contract_dags`) are this group and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow.sdk import Asset, TaskGroup, TriggerRule

from contract_gate.asset_uris import table_uri
from contract_gate.operators.base import compile_gate_plan
from contract_gate.operators.branch import GateBranchOperator
from contract_gate.operators.publish import GatePublishOperator
from contract_gate.operators.quarantine import GateQuarantineOperator
from contract_gate.operators.record import GateRecordDecisionOperator
from contract_gate.operators.split import GateSplitOperator
from contract_gate.operators.submission import GateSubmissionOperator
from contract_gate.operators.validate import GateValidateOperator
from contract_gate_plan.migration import versioned_suffix
from contract_gate_plan.model import Plan

TASK_IDS = ("submission", "stage_validate", "branch", "publish", "quarantine", "split", "record_decision")


def target_asset(plan: Plan) -> Asset:
    """The Asset a publication updates: the target table (``file://`` URI for a path table),
    named per object and environment (``contract_gate_plan.names``)."""
    target = plan.require_tables().target
    if target is None:
        raise ValueError(f"object {plan.object!r} has no target table to publish to")
    if target.is_path:
        uri = target.location if "://" in target.location else Path(target.location).as_uri()
    else:
        uri = table_uri(target.location)
    # a new versioned target (evolution.breaking: newTarget) is a new Asset; the old one keeps its name
    gate, at, environment = plan.names.asset.partition("@")
    suffix = versioned_suffix((plan.gate.get("evolution") or {}).get("breaking"), plan.contract_version)
    return Asset(name=gate + suffix + at + environment, uri=uri, group="contract_gate")


def contract_gate_task_group(
    contract: str | Path,
    *,
    group_id: str = "contract_gate",
    prefix_group_id: bool = True,
    env: str | None = None,
    submission_id: str | None = None,
    landing: str | None = None,
    landing_format: str | None = None,
    rerun_of: str | None = None,
    correction: bool | str = False,
    overrides_for: str | None = None,
    execution_mode: str | None = None,
    conn_id: str | None = None,
    spark_conf: dict[str, str] | None = None,
    runner_options: dict | None = None,
    plan: Plan | None = None,
    object_name: str | None = None,
    **task_kwargs: Any,
) -> TaskGroup:
    """Add the gate for ``contract`` to the current DAG and return its task group.

    :param contract: the contract file. A relative path resolves against the gate's home
        (``contract_gate.config.gate_home``), at parse time and at run time alike.
    :param submission_id, landing, landing_format, rerun_of, correction, overrides_for: see
        :class:`~contract_gate.operators.submission.GateSubmissionOperator` (all templated).
    :param execution_mode, conn_id, spark_conf, runner_options: see
        :class:`~contract_gate.operators.base.SparkGateOperator`.
    :param plan: the compiled plan, when the caller has it already (the DAG factory); it is
        only used at parse time for the target's Asset.
    :param object_name: the schema object to gate; default the contract's only (gated) object.
    :param task_kwargs: passed to every task (``retries``, ``pool``, ``owner``...).
    """
    contract = str(contract)
    if plan is None:
        plan = compile_gate_plan(contract, env, object_name)
    common = {"contract": contract, "env": env, "object_name": object_name, **task_kwargs}
    spark: dict[str, Any] = {"execution_mode": execution_mode, "conn_id": conn_id, "spark_conf": spark_conf,
             "runner_options": runner_options}
    asset = target_asset(plan)
    with TaskGroup(group_id=group_id, prefix_group_id=prefix_group_id) as group:
        submission = GateSubmissionOperator(
            task_id="submission", submission_id=submission_id, landing=landing, landing_format=landing_format,
            rerun_of=rerun_of, correction=correction, overrides_for=overrides_for, **common,
        )
        validate = GateValidateOperator(task_id="stage_validate", stage=True, submission=submission.output,
                                        **spark, **common)
        # an XComArg while the DAG is built; Airflow renders it into the summary dict each task's
        # ``summary`` parameter takes before the task runs
        summary: Any = validate.output
        branch = GateBranchOperator(
            task_id="branch", summary=summary, publish_task_id=group.child_id("publish"),
            quarantine_task_id=group.child_id("quarantine"), split_task_id=group.child_id("split"), **common,
        )
        outcomes = [
            GatePublishOperator(task_id="publish", submission=submission.output, summary=summary,
                                outlets=[asset], **spark, **common),
            GateQuarantineOperator(task_id="quarantine", submission=submission.output, summary=summary,
                                   **spark, **common),
            GateSplitOperator(task_id="split", submission=submission.output, summary=summary,
                              outlets=[asset], **spark, **common),
        ]
        record = GateRecordDecisionOperator(
            task_id="record_decision", trigger_rule=TriggerRule.ALL_DONE,
            task_ids={name: group.child_id(name) for name in TASK_IDS if name != "record_decision"},
            execution_mode=execution_mode, conn_id=conn_id, runner_options=runner_options, **common,
        )
        branch >> outcomes
        [submission, validate, branch, *outcomes] >> record
    return group
