"""``local`` (the default): spark-submit in local mode, in a subprocess of the Airflow worker.

Nothing to install beyond ``pip``: spark-submit comes with pyspark, and Delta's jars are the
ones ``python -m contract_gate_spark.runtime.jars`` put in the Ivy cache (or ``.jars/``). When they are on disk
they go on the driver's class path, which skips Ivy's resolution (a few seconds per JVM start)
and lets the class archive hold Delta's classes too (in local mode the driver runs every
task, so its class path is the job's); ``--packages`` is the fallback. Spark's own logging is
set to WARN so the task log shows the gate's lines and real problems, not thousands of INFO
lines, and the JVM is tuned for a short job (the command line of :mod:`contract_gate.local_spark.submit`,
and the class archive of :mod:`contract_gate.local_spark.class_archive` when it has been built); the
job loads the Delta snapshots its steps will read on a second thread (``contract_gate_spark.commands.warm_up``).

A job dies with its task: it watches the task's process and ends its whole process group when
the task is gone (``contract_gate_spark.runtime.task_watch``), so a task killed with SIGKILL leaves no
JVM behind; and while any process of it lives, it holds its submission's lock, which the
decision waits for (:mod:`contract_gate.work_folders.job_fence`), so an orphan cannot commit after the verdict.
Spark's scratch files (rows of the batch) go to a folder of the job's own in the submission's
owner-only work folder, removed when the job ends, however it ends; a worker killed with SIGKILL
leaves it there, still owner-only.
"""

from __future__ import annotations

import os
from pathlib import Path

from contract_gate.local_spark import class_archive
from contract_gate.local_spark.installation import gate_job_script, spark_home
from contract_gate.local_spark.submit import local_start_conf, submit_argv, submit_environment
from contract_gate_spark.runtime.task_watch import TASK_PID_ENV
from contract_gate.runners.base import GateJob, GateRunner
from contract_gate.runners.job_credentials import PropertiesFile
from contract_gate.work_folders.job_fence import hold_for_job
from contract_gate.runners.process import StreamedProcess


class LocalRunner(GateRunner):
    """spark-submit ``--master local[N]`` on this worker; blocks until the job ends.

    :param cores: local cores for Spark (default: all of this machine's).
    :param class_archive: map the class archive into the JVM when it has been built.
    """

    mode = "local"

    def __init__(self, *, cores: int | None = None, cwd: str | None = None, class_archive: bool = True,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.cores = cores or os.cpu_count() or 1
        self.cwd = cwd or os.getcwd()
        self.class_archive = class_archive
        self._process: StreamedProcess | None = None
        self._credentials: PropertiesFile | None = None

    def submit_argv(self, script: Path | str, arguments: list[str], scratch: Path, name: str,
                    properties_file: Path | None = None) -> list[str]:
        """``spark-submit`` in local mode with Delta, quiet logging and this runner's settings
        (its credentials in ``properties_file``)."""
        archive = class_archive.java_options() if self.class_archive else ""
        conf = local_start_conf(scratch, self.cores, self.spark_conf, archive_options=archive)
        return submit_argv(script, arguments, conf, name, properties_file=properties_file)

    def environment(self) -> dict[str, str]:
        # the job watches this task's process and ends itself with it (contract_gate_spark.runtime.task_watch)
        return {**submit_environment(), TASK_PID_ENV: str(os.getpid())}

    def start(self, job: GateJob) -> dict:
        self._credentials = PropertiesFile(self.credentials, spark_home())
        with job.scratch() as scratch, self._credentials as properties_file:
            # the job holds its submission's lock while it lives: no decision is written meanwhile (job_fence)
            lock = hold_for_job(job.workdir)
            self._process = StreamedProcess(
                self.submit_argv(gate_job_script(), job.argv(), scratch, job.name, properties_file),
                env=self.environment(), cwd=self.cwd, log=self.log,
                label=f"gate job {job.steps} (local spark-submit)", handed_fds=(lock,),
            )
            self._process.run()
        return job.read_result()

    def on_kill(self) -> None:
        if self._process is not None:
            self._process.kill()
        if self._credentials is not None:
            self._credentials.remove()
