"""``databricks``: a one-time Databricks job run (``runs/submit``) of the Spark side's wheel, through
:class:`~contract_gate.hooks.databricks.DatabricksWorkspaceHook` (``databricks-sdk``), waited for by
deferring on :class:`~contract_gate.triggers.databricks_run.DatabricksRunTrigger` (the worker slot
is free while Databricks works).

The Spark side deploys itself: the runner builds the wheel of ``contract_gate_spark`` and
``contract_gate_plan`` (:mod:`contract_gate.runners.spark_side_wheel`; its name holds a digest
of its contents), and uploads it to ``<volume>/wheels/`` unless the Files API finds it there
already, so each provider version is uploaded once. The run's one task is a
``python_wheel_task`` (entry point ``contract-gate-job``) that installs the wheel:

* **serverless** jobs compute (neither ``existing_cluster_id`` nor ``new_cluster`` given): the
  wheel is a dependency of the run's environment (``environments[].spec.dependencies``, with
  ``environment_version``). Serverless runs Spark Connect only; the Spark side takes its
  Spark Connect path there, the one the ``spark_connect`` mode runs;
* a new **job cluster** (``new_cluster``, a cluster spec; the runner's Spark settings join its
  ``spark_conf`` and the contract and submission its ``custom_tags``): the wheel is a task library;
* an **existing** all-purpose cluster (``existing_cluster_id``): the wheel is a task library.

The job's files live in a Unity Catalog volume (``volume``, ``/Volumes/<catalog>/<schema>/<volume>``,
optionally with a folder): the plan (and the report, for outcome steps) are uploaded with the
Files API to ``<volume>/runs/<contract>/<submission>``, the job reads and writes them through
the volume's ``/Volumes/...`` path, and the result and report are downloaded when the run has
ended; then the run's folder in the volume is deleted (the local work folder holds it all, and
the retention DAG prunes that one). A failed run's folder stays in the volume, to look into,
until the retention DAG removes it with the local ones (``[contract_gate] work_dir_days``).
The Files API has no per-call size limit a plan could reach.

Mode settings come from the operator's ``runner_options``, else from the ``contract_gate`` key of
the Databricks connection's extra (so generated DAGs need no code), e.g. ``{"contract_gate":
{"volume": "/Volumes/main/contract_gate/work", "warehouse_id": ..., "principal": ...}}``.
For catalog tables, every successful run ends with the contract's Unity Catalog GRANTs
(``unity_catalog.grants``), issued on the SQL warehouse ``warehouse_id``.

A validation run carries ``timeout_seconds`` (``GateJob.time_limit``), so Databricks ends a run
whose in-Spark budget could not stop it; a killed task cancels its run (``on_kill``, and the
trigger's ``on_kill`` for a deferred one). A worker lost without a word cancels nothing, and its
run goes on: the task's next try cancels it before it submits its own, and the record task
cancels every run of the submission still going, and waits for its end, before it writes the
decision (:meth:`DatabricksRunner.end_orphaned_jobs`), so no run commits after the decision.
A run stopped by a budget leaves its stop record in the work folder (``contract_gate_plan.limits``):
the Spark side's, downloaded from the volume, or one naming the run when Databricks ended it at
its timeout.

Tested against a local emulation of the Jobs, Files and Statement Execution APIs that parses
every request with the installed SDK's own models (``tests/jobs_api_emulator.py``),
not against a Databricks workspace.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from databricks.sdk.errors import DatabricksError
from databricks.sdk.service import compute, jobs

import contract_gate
from contract_gate.airflow_compat import default_deferrable
from contract_gate.hooks.databricks import DEFAULT_CONN_ID, DatabricksWorkspaceHook, run_event
from contract_gate.runners.base import END_WAIT, Deferral, GateJob, GateJobError, GateRunner, is_run_of
from contract_gate.runners.spark_side_wheel import DISTRIBUTION, ENTRY_POINT, wheel_for
from contract_gate.triggers.databricks_run import DatabricksRunTrigger
from contract_gate.unity_catalog.grants import apply_access
from contract_gate_plan.addresses import Address
from contract_gate_plan.limits import STOP_RECORD, Stop, write_stop
from contract_gate_plan.model import load_plan
from contract_gate_plan.restricted import write_private_text

TASK_KEY = "contract_gate"
ENVIRONMENT_KEY = "contract_gate"
DEFAULT_ENVIRONMENT_VERSION = "4"
# Settings of the DBFS-based mode this one replaced: named in the error, with what replaces them.
_REPLACED = {"python_file": "the runner deploys the Spark side itself (a wheel in the volume)",
             "work_dir": "volume (a Unity Catalog volume, /Volumes/<catalog>/<schema>/<volume>)"}


class DatabricksRunner(GateRunner):
    """Submit the gate job as a Databricks run.

    :param volume: the Unity Catalog volume (``/Volumes/<catalog>/<schema>/<volume>[/folder]``) for
        the Spark side's wheel and the jobs' plan, report and result files.
    :param existing_cluster_id: run on this all-purpose cluster.
    :param new_cluster: a job cluster spec (``spark_version``, ``node_type_id``, ``num_workers``...).
    :param environment_version: the serverless environment version (when no cluster is given).
    :param polling_period_seconds: how often the run's state is asked.
    :param deferrable: defer while the run is going, else poll in the worker; default the
        connection's ``deferrable``, else Airflow's ``[operators] default_deferrable``.
    :param warehouse_id: the SQL warehouse that runs the contract's GRANTs (catalog tables only).
    :param principal: the gate's own principal (the jobs' service principal), granted its tables.
    """

    mode = "databricks"
    conn_id: str  # the Databricks connection: ``databricks_default`` unless one is given

    def __init__(
        self,
        *,
        volume: str | None = None,
        existing_cluster_id: str | None = None,
        new_cluster: dict | None = None,
        environment_version: str | None = None,
        polling_period_seconds: int | None = None,
        deferrable: bool | None = None,
        warehouse_id: str | None = None,
        principal: str | None = None,
        **kwargs,
    ) -> None:
        replaced = [name for name in _REPLACED if name in kwargs]
        for name in replaced:
            kwargs.pop(name)
        super().__init__(**kwargs)
        self.conn_id = self.conn_id or DEFAULT_CONN_ID
        given = {"volume": volume, "existing_cluster_id": existing_cluster_id, "new_cluster": new_cluster,
                 "environment_version": environment_version, "polling_period_seconds": polling_period_seconds,
                 "deferrable": deferrable, "warehouse_id": warehouse_id, "principal": principal}
        options = {**self.hook().settings(), **{k: v for k, v in given.items() if v is not None}}
        replaced += [name for name in _REPLACED if name in options and name not in replaced]
        if replaced:
            raise ValueError("the databricks mode no longer takes " + "; ".join(
                f"{name} (replaced by {_REPLACED[name]})" for name in replaced))
        self.volume = checked_volume(options.get("volume"), self.conn_id)
        if "existing_cluster_id" in options and "new_cluster" in options:
            raise ValueError("the databricks mode runs on one compute: give existing_cluster_id or new_cluster, "
                             "not both (neither: serverless)")
        self.existing_cluster_id = options.get("existing_cluster_id")
        self.new_cluster = options.get("new_cluster")
        self.environment_version = str(options.get("environment_version", DEFAULT_ENVIRONMENT_VERSION))
        self.polling_period_seconds = int(options.get("polling_period_seconds", 30))
        self.deferrable = bool(options.get("deferrable", default_deferrable()))
        self.warehouse_id = options.get("warehouse_id")
        self.principal = options.get("principal")
        self._run_id: int | None = None

    @property
    def compute(self) -> str:
        """``serverless``, ``job cluster`` or ``existing cluster``."""
        if self.existing_cluster_id:
            return "existing cluster"
        return "job cluster" if self.new_cluster else "serverless"

    def hook(self) -> DatabricksWorkspaceHook:
        return DatabricksWorkspaceHook(self.conn_id)

    def runs_folder(self, gate: str) -> str:
        """``<volume>/runs/<gate>``: the volume folders of the gate's runs."""
        return posixpath.join(self.volume, "runs", gate)

    def remote_dir(self, job: GateJob) -> str:
        """``<volume>/runs/<gate>/<submission id>``: mirrors the local work folder."""
        return posixpath.join(self.runs_folder(job.workdir.parent.name), job.workdir.name)

    def deploy_spark_side(self, hook: DatabricksWorkspaceHook) -> str:
        """The volume path of this provider version's Spark side wheel, uploaded unless it is there."""
        wheel = wheel_for(contract_gate.__version__)
        path = posixpath.join(self.volume, "wheels", wheel.filename)
        if not hook.exists(path):
            hook.upload(path, wheel.data)
            self.log.info("Spark side deployed: %s", path)
        return path

    def submission(self, job: GateJob, wheel: str, parameters: list[str]) -> dict[str, Any]:
        """The ``runs/submit`` request: its one task and, on serverless, its environment."""
        task = jobs.SubmitTask(task_key=TASK_KEY, python_wheel_task=jobs.PythonWheelTask(
            package_name=DISTRIBUTION, entry_point=ENTRY_POINT, parameters=parameters))
        environments = None
        if self.existing_cluster_id:
            task.existing_cluster_id = self.existing_cluster_id
            task.libraries = [compute.Library(whl=wheel)]
        elif self.new_cluster:
            spec = dict(self.new_cluster)
            spec["spark_conf"] = {**spec.get("spark_conf", {}), **self.spark_conf}
            spec["custom_tags"] = {**spec.get("custom_tags", {}), **run_tags(job)}
            task.new_cluster = compute.ClusterSpec.from_dict(spec)
            task.libraries = [compute.Library(whl=wheel)]
        else:
            task.environment_key = ENVIRONMENT_KEY
            environments = [jobs.JobEnvironment(environment_key=ENVIRONMENT_KEY, spec=compute.Environment(
                environment_version=self.environment_version, dependencies=[wheel]))]
        return {"run_name": job.name, "tasks": [task], "environments": environments,
                "timeout_seconds": job.time_limit or None}

    def start(self, job: GateJob) -> dict | Deferral:
        hook = self.hook()
        if job.arguments.get("--submission-id"):  # a job of a submission: its name is its own
            self.end_runs(hook, lambda name: name == job.name, "an earlier try of this job, still going")
        wheel = self.deploy_spark_side(hook)
        remote = self.remote_dir(job)
        local = str(job.workdir)
        for path in sorted(job.workdir.glob("*.json")):
            hook.upload(posixpath.join(remote, path.name), path.read_bytes())
        parameters = [f"{remote}{arg[len(local):]}" if arg.startswith(local) else arg for arg in job.argv()]
        self._run_id = hook.submit_run(**self.submission(job, wheel, parameters))
        self.log.info("gate job %s: Databricks run %s submitted on %s (%s)", job.steps, self._run_id, self.compute,
                      hook.get_run(self._run_id).run_page_url)
        if self.deferrable:
            return Deferral(trigger=DatabricksRunTrigger(self.conn_id, self._run_id, self.polling_period_seconds))
        return self.finish(job, self.wait(hook, self._run_id))

    def wait(self, hook: DatabricksWorkspaceHook, run_id: int) -> dict:
        while (event := run_event(hook, run_id)) is None:
            time.sleep(self.polling_period_seconds)
        return event

    def finish(self, job: GateJob, event: dict) -> dict:
        if event.get("result_state") != jobs.RunResultState.SUCCESS.value:
            self.keep_stop(job, event["run_id"], event.get("result_state"))
            error = event.get("error") or ""
            raise GateJobError(f"Databricks run {event['run_id']} of gate job {job.steps} ended "
                               f"{event.get('life_cycle_state')}/{event.get('result_state')}: "
                               f"{event.get('state_message', '')}" + (f"\n{error}" if error else ""))
        hook = self.hook()
        remote = self.remote_dir(job)
        outputs = [Path(str(value)) for value in job.arguments.values() if str(value).endswith(".json")]
        if job.result_path is not None:
            outputs.append(job.result_path)
        for path in outputs:
            if path.parent == job.workdir and path.name != "plan.json":
                path.write_bytes(hook.download(posixpath.join(remote, path.name)))
        # everything the run wrote is in the local work folder now, and the next job of the
        # submission uploads what it reads again: the volume keeps no copy (a failed run's stays).
        # A run that succeeded must not fail over its leftovers: a refused delete is only logged.
        try:
            hook.remove_folder(remote)
        except DatabricksError as exc:
            self.log.warning("the files of Databricks run %s stay in %s: %s", event["run_id"], remote, exc)
        result = job.read_result()
        self.grant_access(hook, job, result)
        return result

    def keep_stop(self, job: GateJob, run_id: int, result_state: str | None) -> None:
        """The stop record of a run a time budget ended, in the local work folder."""
        if result_state == jobs.RunResultState.TIMEDOUT.value:
            write_stop(job.workdir, Stop(f"Databricks run {run_id}", job.time_limit or 0, "the run's timeout_seconds"))
            return
        try:
            record = self.hook().download(posixpath.join(self.remote_dir(job), STOP_RECORD))
        except FileNotFoundError:  # the run failed for another reason
            return
        write_private_text(job.workdir / STOP_RECORD, record.decode("utf-8"))

    def grant_access(self, hook: DatabricksWorkspaceHook, job: GateJob, result: dict) -> None:
        """After every successful run, the contract's access boundary on its catalog tables
        (``unity_catalog.grants``): the run may have created a table, and a grant
        revoked by hand is restored. Path-based tables have no grants to give."""
        plan = load_plan(Path(job.arguments["--plan"]))
        if not plan.gated or plan.require_tables().require_target().is_path:
            return
        if not self.warehouse_id:
            raise GateJobError(f"contract {plan.contract_id} has catalog tables, so its access boundary is "
                               "granted in Unity Catalog: set warehouse_id (a SQL warehouse for the GRANTs) in the "
                               f"contract_gate extra of connection {self.conn_id!r}")
        warehouse_id = self.warehouse_id
        staged = Address.of(result["candidate"]) if isinstance(result.get("candidate"), dict) else None
        issued = apply_access(plan, lambda statement: hook.run_statement(statement, warehouse_id), self.principal,
                              staged.location if staged is not None and not staged.is_path else None)
        self.log.info("access boundary of %s: %d statement(s) issued", plan.contract_id, len(issued))

    def prune_remote_folders(self, gate: str, unchanged_since: datetime) -> list[str]:
        """The volume folders a successful run's ``finish`` did not delete (a failed or cancelled
        run's, kept to look into, or one whose delete was refused) go once no file in them was
        written since ``unchanged_since``. A run in flight wrote its plan when it started, so its
        folder stays; so does a folder a re-run of its submission has written to since."""
        hook = self.hook()
        removed = []
        for folder in sorted(hook.folders(self.runs_folder(gate))):
            changed = hook.last_change(folder)
            if changed is not None and changed >= unchanged_since:
                continue
            hook.remove_folder(folder)
            removed.append(posixpath.basename(folder))
        return removed

    def end_orphaned_jobs(self, contract_id: str, submission_id: str, folder: Path) -> list[str]:
        """Cancel the runs of the submission still going (their task's worker was lost) and wait
        for their end; the names of those it ended."""
        return self.end_runs(self.hook(), lambda name: is_run_of(name, contract_id, submission_id),
                             "outlived its task")

    def end_runs(self, hook: DatabricksWorkspaceHook, wanted: Callable[[str], bool], why: str) -> list[str]:
        """Cancel each active one-time run whose name is ``wanted`` and wait until it has ended."""
        ended = []
        for run in hook.active_runs():
            name = run.run_name or ""
            if run.run_id is None or not wanted(name):
                continue
            self.log.warning("Databricks run %s (%s): %s; cancelling it and waiting for its end", run.run_id, name, why)
            try:
                hook.end_run(run.run_id, END_WAIT)
            except TimeoutError as exc:
                raise GateJobError(f"Databricks run {run.run_id} ({name}) still goes {END_WAIT} after its cancel: "
                                   "nothing is decided while it may commit; retry the task once it has "
                                   "ended") from exc
            ended.append(name)
        return ended

    def on_kill(self) -> None:
        if self._run_id is not None:
            self.hook().cancel_run(self._run_id)


def checked_volume(volume: Any, conn_id: str) -> str:
    """``volume`` as ``/Volumes/<catalog>/<schema>/<volume>[/folder]``, without a trailing slash."""
    text = str(volume or "").rstrip("/")
    parts = text.split("/")
    if not text.startswith("/Volumes/") or len(parts) < 5 or not all(parts[1:]) or ".." in parts:
        raise ValueError("the databricks mode needs volume: a Unity Catalog volume for the Spark side and the "
                         "jobs' files, /Volumes/<catalog>/<schema>/<volume>, in the contract_gate extra of "
                         f"connection {conn_id!r} (got {volume!r})")
    return text


def run_tags(job: GateJob) -> dict[str, str]:
    """The tags of a run's job cluster: which contract and submission it gates."""
    tags = {"contract_gate_contract": job.workdir.parent.name, "contract_gate_steps": job.steps}
    submission = job.arguments.get("--submission-id")
    if submission:
        tags["contract_gate_submission"] = str(submission)
    return tags
