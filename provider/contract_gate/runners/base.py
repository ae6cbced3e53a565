"""The runner interface: where a gate job's Spark runs, behind one operator interface.

A *gate job* is one invocation of ``spark_jobs/contract_gate_spark/commands/gate_job.py`` running one or more chained gate
steps (``stage+validate``, ``publish``, ``split``...) in one Spark session (docs/gate-steps.md).
Operators build the job; a runner decides where it executes. Swapping the execution mode
(``local``, ``spark_submit``, ``databricks``) changes the runner only, never the operator, the
plan or the step semantics.

A runner either finishes the job inside ``start`` (blocking modes) and returns its result, or
returns a :class:`Deferral` when the job runs remotely and the worker slot should be given back
while it runs; the operator then defers on the trigger and calls ``finish`` on resumption.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar


END_WAIT = timedelta(minutes=10)
"""How long an orphaned job may take to end once told to (a Databricks job cluster tears down
within a minute or two, a standalone driver within seconds)."""


class GateJobError(RuntimeError):
    """The gate job itself failed (not the data): the message carries the Spark-side error."""


class GateJobStopped(GateJobError):
    """The gate job was stopped from outside (``StepState.STOPPED``: its task was killed, timed
    out or told to stop), whatever the job did meanwhile: no verdict follows from it."""


def run_name(contract_id: str, steps: str, submission_id: str) -> str:
    """The name of a submission's gate job (its Spark application, its Databricks run):
    ``contract-gate <contract id> <steps> <submission id>``; :func:`is_run_of` finds a
    submission's jobs by it."""
    return f"contract-gate {contract_id} {steps} {submission_id}"


def is_run_of(name: str, contract_id: str, submission_id: str) -> bool:
    """``name`` is the name :func:`run_name` gives a job of ``submission_id`` of ``contract_id``."""
    return name.startswith(f"contract-gate {contract_id} ") and name.endswith(f" {submission_id}")


@dataclass(frozen=True)
class GateJob:
    """One ``gate_job.py`` invocation.

    :param steps: the chained sub-command, e.g. ``"stage+validate"``.
    :param arguments: the sub-command's options, e.g. ``{"--plan": "...", "--submission-id": "..."}``;
        a value of ``None`` is left out, ``True`` is a bare flag.
    :param workdir: the submission's folder (plan, report, results; the runner's scratch files).
    :param writes_result: the step writes a result JSON (``--result``); ``validate`` only
        writes its report.
    :param name: a readable application name (Spark UI, Databricks run name).
    :param time_limit: seconds the whole job may run, for an engine that can end a run from
        outside (a Databricks run's ``timeout_seconds``); the Spark side enforces the plan's
        budgets itself (``contract_gate_spark.runtime.budget``).
    """

    steps: str
    arguments: dict[str, Any]
    workdir: Path
    writes_result: bool = True
    name: str = "contract-gate"
    time_limit: int | None = None

    @property
    def tag(self) -> str:
        """The Spark tag of the job's queries (a submission id is letters, digits, '_', '.', '-'):
        the ``spark_connect`` runner interrupts this submission's queries on the server by it."""
        return f"contract-gate-{self.arguments.get('--submission-id') or 'job'}"

    @property
    def result_path(self) -> Path | None:
        return self.workdir / f"{self.steps.replace('+', '_')}.result.json" if self.writes_result else None

    def argv(self) -> list[str]:
        """The command line after the script: ``steps --opt value ... [--result path]``."""
        options = dict(self.arguments)
        if self.result_path is not None:
            options["--result"] = self.result_path
        argv = [self.steps]
        for option, value in options.items():
            if value is None or value is False:
                continue
            argv.append(option)
            if value is not True:
                argv.append(str(value))
        return argv

    @contextmanager
    def scratch(self) -> Iterator[Path]:
        """A folder of this job's own for Spark's scratch files (rows of the batch) on this
        machine: owner-only in the submission's owner-only work folder (two jobs of one submission
        may run at once), removed when the job ends, however it ends; a worker killed with
        SIGKILL leaves it there, still owner-only."""
        folder = Path(tempfile.mkdtemp(prefix="spark-", dir=self.workdir))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def read_result(self) -> dict:
        if self.result_path is None:
            return {}
        try:
            return json.loads(self.result_path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise GateJobError(f"gate job {self.steps!r} finished without writing {self.result_path}") from exc


@dataclass(frozen=True)
class Deferral:
    """The runner waits remotely: the operator defers on ``trigger``, whose event goes to
    ``finish`` (so the event must carry what ``finish`` needs, e.g. the remote run id)."""

    trigger: Any


class GateRunner(ABC):
    """Runs gate jobs somewhere Spark lives. Created in ``execute``, never at DAG parse time.

    :param conn_id: the Airflow connection of the mode (ignored by ``local``).
    :param spark_conf: extra Spark settings for the job.
    :param credentials: Spark settings that hold secrets (a bucket's S3A credentials): handed to
        the job in an owner-only file, never on a command line (:mod:`contract_gate.runners.job_credentials`).
    :param log: the task's logger; the job's output is streamed into it.
    """

    mode: ClassVar[str]

    def __init__(
        self,
        *,
        conn_id: str | None = None,
        spark_conf: dict[str, str] | None = None,
        credentials: dict[str, str] | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.conn_id = conn_id
        self.spark_conf = dict(spark_conf or {})
        self.credentials = dict(credentials or {})
        self.log = log or logging.getLogger(f"contract_gate.runners.{self.mode}")

    @abstractmethod
    def start(self, job: GateJob) -> dict | Deferral:
        """Run ``job``: its result dict when done here, or a :class:`Deferral` to wait remotely."""

    def finish(self, job: GateJob, event: dict) -> dict:
        """Turn the trigger's event into the job's result (deferring modes only)."""
        raise NotImplementedError(f"the {self.mode} runner never defers")

    def prune_remote_folders(self, gate: str, unchanged_since: datetime) -> list[str]:
        """Remove the copies of ``gate``'s run folders this mode keeps away from this machine, in
        which nothing changed since ``unchanged_since``; returns their names (submission ids).
        Only ``databricks`` keeps any (a failed run's folder in the volume): the other modes'
        jobs read and write the local work folder itself."""
        return []

    def end_orphaned_jobs(self, contract_id: str, submission_id: str, folder: Path) -> list[str]:
        """End the jobs of ``submission_id`` that outlived their task (a worker lost without a word
        stops nothing) and return once they have ended, so that none commits after the decision
        the caller writes next; returns their names. ``folder`` is the submission's work folder.

        ``databricks`` cancels the submission's active runs, found by name; ``spark_submit`` kills
        the standalone cluster-mode drivers its work folder lists. The other jobs end with their
        task: a job whose driver runs on this worker (``local``, a client-mode driver), which the job
        lock fences until it has (``contract_gate.work_folders.job_fence``); a ``spark_connect`` job,
        whose watcher stops its queries on the server (``contract_gate.runners.connect_fence``). A
        YARN or Kubernetes cluster-mode driver is left to its time budget."""
        return []

    def on_kill(self) -> None:
        """Stop the running job; the task was killed (timeout, mark-failed, shutdown)."""
