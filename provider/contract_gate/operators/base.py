"""What every gate operator shares: the contract, the plan, the runner and the work folder.

The plan is compiled in ``execute`` (a few milliseconds, no Spark), never at parse time, so
every task judges against the contract as it is when the task runs; tasks that hand results
to each other check the plan fingerprint so a contract edited mid-run cannot publish data
validated against an older version.

Spark-running operators build a :class:`~contract_gate.runners.GateJob` and hand it to the
runner of the execution mode; a deferring runner (Databricks) makes the task defer and resume
in ``execute_complete`` with the same result handling.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from contract_gate import config
from contract_gate.config import gate_home, work_root
from contract_gate.contract.compiler import compile_plan
from contract_gate.object_storage import spark_job_storage
from contract_gate.runners import RUNNERS, Deferral, GateJob, GateRunner, get_runner
from contract_gate.work_folders import submission_folder
from contract_gate_plan import keys_across_batches
from contract_gate_plan.document import render_plan
from contract_gate_plan.model import Plan, load_plan
from contract_gate_plan.restricted import make_private_folder, write_private_text

if TYPE_CHECKING:
    from airflow.sdk import Context


def as_correction(plan: Plan) -> Plan:
    """The plan of a correction re-run: publication mode ``replace_keys``, with its own
    fingerprint, so every task of the run agrees on the plan it validated and publishes. As the
    compiler writes it for ``replace_keys``: without the cross-batch key rule, since a correction
    is meant to carry keys the target holds."""
    document = plan.document
    gate = {**document["gate"], "publication": {**document["gate"]["publication"], "mode": "replace_keys"}}
    rules = [rule for rule in document["rules"] if rule["kind"] != keys_across_batches.KIND]
    # without its fingerprint: load_plan computes the correction's own
    corrected = {key: value for key, value in document.items() if key != "fingerprint"}
    return load_plan({**corrected, "gate": gate, "rules": rules})


def resolve_contract(contract: str) -> Path:
    path = Path(contract)
    return path if path.is_absolute() else gate_home() / path


def compile_gate_plan(contract: str, env: str | None, object_name: str | None) -> Plan:
    """The plan of one schema object of a contract file as it is now (a few milliseconds, no
    Spark): ``object_name``, else the contract's only (gated) object."""
    return compile_plan(resolve_contract(contract), env=env or None, object_name=object_name or None)


class ContractGateBaseOperator(BaseOperator):
    """Base of the gate operators.

    :param contract: path of the ODCS contract file (relative paths resolve against
        the gate's home, ``contract_gate.config.gate_home``). (templated)
    :param env: the contract's server/environment to resolve table addresses for; default the
        first server. (templated)
    :param submission_id: the submission this task works on. (templated)
    :param object_name: the schema object this gate guards; default the contract's only
        (gated) object. (templated)
    """

    template_fields: tuple[str, ...] = ("contract", "env", "submission_id", "object_name")
    ui_color = "#e8f0fe"

    def __init__(self, *, contract: str, submission_id: str | None = None, env: str | None = None,
                 object_name: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.contract = contract
        self.env = env
        self.submission_id = submission_id
        self.object_name = object_name

    def load_plan(self) -> Plan:
        plan = compile_gate_plan(self.contract, self.env, self.object_name)
        if not plan.gated:
            raise ValueError(f"{self.contract}: the contract has no contractGate settings, so nothing to gate")
        return plan

    def workdir(self, plan: Plan) -> Path:
        folder = submission_folder(plan, self.submission_id)
        for level in (work_root(), folder.parent, folder):  # each owner-only from its creation
            make_private_folder(level)
        return folder

    @staticmethod
    def check_fingerprint(plan: Plan, handed: dict | None, what: str) -> None:
        expected = (handed or {}).get("plan_fingerprint")
        if expected and expected != plan.fingerprint:
            raise ValueError(
                f"the contract changed since {what} ({expected} -> {plan.fingerprint}); "
                "re-run the submission so it is validated against the current contract"
            )


def pick_execution(mode: str | None, conn_id: str | None, plan: Plan) -> tuple[str | None, str | None]:
    """The execution mode and connection of a gate job: the task's own ``execution_mode``, else
    the deployment's ``[contract_gate] execution_mode`` (one switch that points every gate at a
    Spark Connect server or a cluster, as the compose stack does), else the contract's
    ``execution.mode``. The contract's ``connectionId`` belongs to the contract's mode, so it is
    used only when that mode is the one chosen; otherwise the runner takes its default connection."""
    execution = plan.execution
    deployment = config.get("execution_mode")
    if deployment is not None and deployment not in RUNNERS:
        raise ValueError(f"{config.describe('execution_mode')}={deployment!r} is not an execution mode; "
                         f"use one of {', '.join(sorted(RUNNERS))}")
    mode = mode or deployment or execution.get("mode")
    contract_conn_id = execution.get("connectionId") if mode == execution.get("mode") else None
    return mode, conn_id or contract_conn_id


class SparkGateOperator(ContractGateBaseOperator):
    """A gate operator whose work is a Spark job, run by the execution mode's runner.

    :param execution_mode: ``local`` (default), ``spark_submit`` or ``databricks``; default
        ``[contract_gate] execution_mode``, else the contract's ``execution.mode``.
    :param conn_id: the mode's Airflow connection; default the contract's
        ``execution.connectionId`` (when the contract's mode is the one used), else the mode's
        default connection.
    :param spark_conf: extra Spark settings for the job.
    :param runner_options: settings of the execution mode's runner, e.g. for ``databricks``
        ``{"volume": ..., "existing_cluster_id": ...}`` (see :mod:`contract_gate.runners`). (templated)
    :param submission: the submission resolved by the submission task (its XCom). (templated)
    """

    template_fields = (*ContractGateBaseOperator.template_fields, "spark_conf", "runner_options", "submission")
    template_fields_renderers = {"spark_conf": "json", "runner_options": "json"}

    def __init__(
        self,
        *,
        execution_mode: str | None = None,
        conn_id: str | None = None,
        spark_conf: dict[str, str] | None = None,
        runner_options: dict | None = None,
        submission: dict | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.runner_options = runner_options
        self.submission = submission
        self.execution_mode = execution_mode
        self.conn_id = conn_id
        self.spark_conf = spark_conf
        self._runner: GateRunner | None = None
        self.lineage_result: Any = None

    def load_plan(self) -> Plan:
        plan = super().load_plan()
        return as_correction(plan) if (self.submission or {}).get("correction") else plan

    # Subclasses: what to run, and what to make of its result.
    def build_job(self, context: Context, plan: Plan) -> GateJob:
        raise NotImplementedError

    def handle_result(self, context: Context, plan: Plan, result: dict) -> Any:
        raise NotImplementedError

    def make_runner(self, plan: Plan) -> GateRunner:
        mode, conn_id = pick_execution(self.execution_mode, self.conn_id, plan)
        # the S3 credentials go to the runner only, never into a templated (rendered, stored) field
        storage = spark_job_storage(plan.document["tables"], mode)
        spark_conf = {**storage.conf, **(self.spark_conf or {})}
        kwargs: dict[str, Any] = {"conn_id": conn_id, "spark_conf": spark_conf, "credentials": storage.credentials,
                                  "log": self.log, **(self.runner_options or {})}
        if (mode or "local") == "local":
            kwargs["cwd"] = str(gate_home())
        return get_runner(mode, **kwargs)

    def execute(self, context: Context) -> Any:
        plan = self.load_plan()
        job = self.build_job(context, plan)
        self._runner = self.make_runner(plan)
        outcome = self._runner.start(job)
        if isinstance(outcome, Deferral):
            self.defer(trigger=outcome.trigger, method_name="execute_complete")
        self.lineage_result = self.handle_result(context, plan, outcome)  # for the OpenLineage facets
        return self.lineage_result

    def execute_complete(self, context: Context, event: dict) -> Any:
        """Resume after the runner's trigger fired: the job is rebuilt from the same inputs
        (deterministic), the event says how the remote run ended."""
        plan = self.load_plan()
        job = self.build_job(context, plan)
        result = self.make_runner(plan).finish(job, event)
        self.lineage_result = self.handle_result(context, plan, result)  # for the OpenLineage facets
        return self.lineage_result

    def on_kill(self) -> None:
        if self._runner is not None:
            self._runner.on_kill()

    def write_plan(self, plan: Plan, folder: Path) -> Path:
        path = folder / "plan.json"
        write_private_text(path, render_plan(plan.document))
        return path

