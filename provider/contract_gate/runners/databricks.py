"""``databricks``: a one-time Databricks job run (``runs/submit``, ``spark_python_task``) through
the databricks provider's ``DatabricksHook``, waited for by deferring on the provider's
``DatabricksExecutionTrigger`` (the worker slot is free while the cluster works).

The Spark side must be deployed where the cluster can read it (a workspace folder, a volume or
DBFS holding the installed ``contract_gate_spark/`` and ``contract_gate_plan/`` side by side, so
``gate_job.py`` imports both packages from the folder two levels above it); ``python_file`` names
``contract_gate_spark/commands/gate_job.py`` there. The job's files travel through DBFS: the plan (and
the report, for outcome steps) are uploaded with the DBFS API to ``work_dir``, the job reads
and writes them through the cluster's ``/dbfs`` mount, and the result and report are read back
with the DBFS API when the run has ended. DBFS's JSON API is used because it is what
``DatabricksHook`` can call (JSON bodies); plans and reports are far below its 1 MB per call
limit, and reads are paged anyway.

Mode settings come from the operator's ``runner_options``, else from the ``contract_gate`` key
of the Databricks connection's extra (so generated DAGs need no code: the deployment's cluster
and paths live with the connection), e.g. ``{"host": ..., "token": ..., "contract_gate":
{"python_file": ..., "existing_cluster_id": ..., "warehouse_id": ..., "principal": ...}}``.
For catalog tables, every successful run ends with the contract's Unity Catalog GRANTs
(``unity_catalog.grants``), issued on the SQL warehouse ``warehouse_id``.

A validation run carries ``timeout_seconds`` (``GateJob.time_limit``), so Databricks ends a run
whose in-Spark budget could not stop it; a killed task cancels its run (``on_kill``, and the
provider's trigger for a deferred one). A run stopped by a budget leaves its stop record in the
work folder (``contract_gate_plan.limits``): the Spark side's, read back from DBFS, or one naming the
run when Databricks ended it at its timeout.

Tested against a local emulation of the Jobs and DBFS endpoints on 127.0.0.1 (see
``tests/airflow/_jobs_api_emulator.py``), not against a Databricks workspace.
"""

from __future__ import annotations

import base64
import posixpath
import time
from importlib.metadata import version
from pathlib import Path

from airflow.exceptions import AirflowException
from airflow.providers.databricks.hooks.databricks import DatabricksHook, RunState
from airflow.providers.databricks.triggers.databricks import DatabricksExecutionTrigger
from airflow.sdk import BaseHook

from contract_gate.runners.base import Deferral, GateJob, GateJobError, GateRunner
from contract_gate.unity_catalog.grants import apply_access, statement_runner
from contract_gate_plan.addresses import Address
from contract_gate_plan.limits import STOP_RECORD, Stop, write_stop
from contract_gate_plan.model import load_plan
from contract_gate_plan.restricted import write_private_text

DEFAULT_CONN_ID = "databricks_default"
DBFS_PUT = ("POST", "2.0/dbfs/put")
DBFS_READ = ("GET", "2.0/dbfs/read")
READ_CHUNK = 1 << 20


class DatabricksRunner(GateRunner):
    """Submit the gate job as a Databricks run.

    :param python_file: where the cluster finds ``contract_gate_spark/commands/gate_job.py``
        (e.g. ``/Workspace/Shared/contract_gate/contract_gate_spark/commands/gate_job.py``).
    :param existing_cluster_id: run on this cluster; else ``new_cluster`` is created for the run.
    :param new_cluster: a cluster spec (``spark_version``, ``node_type_id``, ``num_workers``...).
    :param work_dir: DBFS folder for the job's plan, report and result files.
    :param polling_period_seconds: how often the trigger asks for the run's state.
    :param deferrable: defer while the run is going (default); else poll in the worker.
    :param warehouse_id: the SQL warehouse that runs the contract's GRANTs (catalog tables only).
    :param principal: the gate's own principal (the jobs' service principal), granted its tables.
    """

    mode = "databricks"
    conn_id: str  # the Databricks connection: ``databricks_default`` unless one is given

    def __init__(
        self,
        *,
        python_file: str | None = None,
        existing_cluster_id: str | None = None,
        new_cluster: dict | None = None,
        work_dir: str | None = None,
        polling_period_seconds: int | None = None,
        deferrable: bool | None = None,
        warehouse_id: str | None = None,
        principal: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.conn_id = self.conn_id or DEFAULT_CONN_ID
        given = {"python_file": python_file, "existing_cluster_id": existing_cluster_id, "new_cluster": new_cluster,
                 "work_dir": work_dir, "polling_period_seconds": polling_period_seconds, "deferrable": deferrable,
                 "warehouse_id": warehouse_id, "principal": principal}
        options = {**self.connection_options(), **{k: v for k, v in given.items() if v is not None}}
        if not options.get("python_file"):
            raise ValueError("the databricks mode needs python_file: where the cluster finds contract_gate_spark/commands/gate_job.py")
        if ("existing_cluster_id" in options) == ("new_cluster" in options):
            raise ValueError("the databricks mode needs exactly one of existing_cluster_id or new_cluster")
        self.python_file = options["python_file"]
        if "existing_cluster_id" in options:
            self.cluster = {"existing_cluster_id": options["existing_cluster_id"]}
        else:
            spec = options["new_cluster"]
            self.cluster = {"new_cluster": {**spec, "spark_conf": {**spec.get("spark_conf", {}), **self.spark_conf}}}
        self.work_dir = options.get("work_dir", "dbfs:/contract_gate/runs").removeprefix("dbfs:")
        self.polling_period_seconds = int(options.get("polling_period_seconds", 30))
        self.deferrable = bool(options.get("deferrable", True))
        self.warehouse_id = options.get("warehouse_id")
        self.principal = options.get("principal")
        self._run_id: int | None = None

    def connection_options(self) -> dict:
        """The ``contract_gate`` settings in the connection's extra."""
        return dict(BaseHook.get_connection(self.conn_id).extra_dejson.get("contract_gate") or {})

    def hook(self):
        return DatabricksHook(self.conn_id, caller="contract_gate")

    def remote_dir(self, job: GateJob) -> str:
        """``<work_dir>/<contract id>/<submission id>``: mirrors the local work folder."""
        return posixpath.join(self.work_dir, job.workdir.parent.name, job.workdir.name)

    def start(self, job: GateJob) -> dict | Deferral:
        hook = self.hook()
        remote = self.remote_dir(job)
        local = str(job.workdir)
        for path in sorted(job.workdir.glob("*.json")):
            self.put(hook, posixpath.join(remote, path.name), path.read_bytes())
        parameters = [f"/dbfs{remote}{arg[len(local):]}" if arg.startswith(local) else arg for arg in job.argv()]
        run = {
            "run_name": job.name,
            **({"timeout_seconds": job.time_limit} if job.time_limit else {}),
            "tasks": [{"task_key": "contract_gate",
                       "spark_python_task": {"python_file": self.python_file, "parameters": parameters},
                       # the allow-list of contract SQL (contract_gate_plan.sql_allowlist) needs sqlglot
                       "libraries": [{"pypi": {"package": f"sqlglot=={version('sqlglot')}"}}],
                       **self.cluster}],
        }
        self._run_id = hook.submit_run(run)
        self.log.info("gate job %s: Databricks run %s submitted (%s)", job.steps, self._run_id,
                      hook.get_run_page_url(self._run_id))
        if self.deferrable:
            trigger = DatabricksExecutionTrigger(run_id=self._run_id, databricks_conn_id=self.conn_id,
                                                 polling_period_seconds=self.polling_period_seconds)
            return Deferral(trigger=trigger)
        return self.finish(job, {"run_id": self._run_id, **self.wait(hook, self._run_id)})

    def wait(self, hook, run_id: int) -> dict:
        while True:
            state = hook.get_run_state(run_id)
            if state.is_terminal:
                return {"run_state": state.to_json(), "errors": []}
            time.sleep(self.polling_period_seconds)

    def finish(self, job: GateJob, event: dict) -> dict:
        state = RunState.from_json(event["run_state"])
        if not state.is_successful:
            self.keep_stop(job, event["run_id"], state.result_state)
            errors = "; ".join(str(error.get("error")) for error in event.get("errors") or [])
            raise GateJobError(f"Databricks run {event['run_id']} of gate job {job.steps} ended "
                               f"{state.life_cycle_state}/{state.result_state}: {state.state_message}"
                               + (f"\n{errors}" if errors else ""))
        hook = self.hook()
        remote = self.remote_dir(job)
        outputs = [Path(str(value)) for value in job.arguments.values() if str(value).endswith(".json")]
        if job.result_path is not None:
            outputs.append(job.result_path)
        for path in outputs:
            if path.parent == job.workdir and path.name != "plan.json":
                path.write_bytes(self.read(hook, posixpath.join(remote, path.name)))
        result = job.read_result()
        self.grant_access(hook, job, result)
        return result

    def keep_stop(self, job: GateJob, run_id: int, result_state: str) -> None:
        """The stop record of a run a time budget ended, in the local work folder."""
        if result_state == "TIMEDOUT":
            write_stop(job.workdir, Stop(f"Databricks run {run_id}", job.time_limit or 0, "the run's timeout_seconds"))
            return
        try:
            record = self.read(self.hook(), posixpath.join(self.remote_dir(job), STOP_RECORD))
        except AirflowException:  # no such file: the run failed for another reason
            return
        write_private_text(job.workdir / STOP_RECORD, record.decode("utf-8"))

    def grant_access(self, hook, job: GateJob, result: dict) -> None:
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
        staged = Address.of(result["candidate"]) if isinstance(result.get("candidate"), dict) else None
        issued = apply_access(plan, statement_runner(hook, self.warehouse_id), self.principal,
                              staged.location if staged is not None and not staged.is_path else None)
        self.log.info("access boundary of %s: %d statement(s) issued", plan.contract_id, len(issued))

    def on_kill(self) -> None:
        if self._run_id is not None:
            self.hook().cancel_run(self._run_id)

    @staticmethod
    def put(hook, path: str, data: bytes) -> None:
        # DatabricksHook has no DBFS method of its own; _do_api_call is its generic REST call.
        hook._do_api_call(DBFS_PUT, {"path": path, "contents": base64.b64encode(data).decode(), "overwrite": True})

    @staticmethod
    def read(hook, path: str) -> bytes:
        data, offset = b"", 0
        while True:
            page = hook._do_api_call(DBFS_READ, {"path": path, "offset": offset, "length": READ_CHUNK})
            chunk = base64.b64decode(page.get("data", ""))
            data += chunk
            offset += len(chunk)
            if page.get("bytes_read", 0) < READ_CHUNK:
                return data

