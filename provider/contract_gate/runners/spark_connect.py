"""``spark_connect``: a Spark Connect server that is already up; the task is a thin client.

The gate job's steps run in this task's process, the same sub-command functions as
``spark_jobs/contract_gate_spark/commands/gate_job.py`` under spark-submit, over a Spark Connect session made from
the apache-spark provider's connection (default ``spark_connect_default``: host, port, user id,
token and ``use_ssl`` extra, as ``SparkConnectHook.get_connection_url`` builds the ``sc://`` URL).
No JVM starts on the worker: the server plans and runs every query, Delta included (the server
must have Delta's jars and SQL extension, see the README), and reads and writes the tables; the
worker writes only the job's plan, report and result files.

Each job has its own Connect session on the server, given to the steps explicitly
(``contract_gate_spark.runtime.session.using``), so two gate jobs in one worker process, or two workers on
one server, never share a SQL setting: each commit carries only its own submission's tags.
pyspark is imported when a job starts, never while a DAG file is parsed.

The server runs a query on after its client stopped waiting, so a stopped task stops its work
there: every query of the job carries the submission's tag (``GateJob.tag``), and a kill of the
task (``on_kill``), or a timeout or signal raised while the job runs, interrupts that tag on the
job's sessions before they are released. Airflow's SIGTERM only calls ``on_kill`` and lets the
task run on, so the job ends :class:`~contract_gate.runners.base.GateJobStopped` whatever its steps
made of their cancelled query (the validation itself stops, ``contract_gate_spark.runtime.budget``):
a stopped job never hands on a result to judge by. A worker lost without a word (SIGKILL, the OOM
killer) interrupts nothing itself, and the server does not notice its client died while a query
runs: the job's fence (``contract_gate.runners.connect_fence``), a watcher process holding a pipe
from the worker, interrupts and releases the job's server sessions when the pipe closes without
the job's end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

from contract_gate.runners.base import GateJob, GateJobError, GateJobStopped, GateRunner
from contract_gate.runners.connect_fence import ConnectFence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_CONN_ID = "spark_connect_default"


class SparkConnectRunner(GateRunner):
    """Runs the gate job in-process over a new Spark Connect session; blocks while it runs.

    :param url: an ``sc://`` address to use instead of the connection (tests, the CLI).
    ``spark_conf`` holds SQL settings for the job's session (the server owns the rest).
    """

    mode = "spark_connect"
    conn_id: str  # the Spark Connect connection: ``spark_connect_default`` unless one is given

    def __init__(self, *, url: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.conn_id = self.conn_id or DEFAULT_CONN_ID
        self.url = url
        self._session: SparkSession | None = None  # the job's Connect session while it runs
        self._tag: str | None = None
        self._stopped = False  # on_kill was called while the job ran

    def connection_url(self) -> str:
        if self.url:
            return self.url
        return SparkConnectHook(conn_id=self.conn_id).get_connection_url()

    def start(self, job: GateJob) -> dict:
        # pyspark and the Spark side only when a job starts: no runner module imports pyspark at import
        # (the runners' rule in docs/architecture.md)
        from contract_gate_spark.commands import gate_job
        from contract_gate_spark.runtime.session import connect, release_children, using, watch_sessions

        url = self.connection_url()
        # the address only: its parameters may hold a token
        self.log.info("gate job %s: Spark Connect through connection %r (%s)", job.steps, self.conn_id,
                      url.split("/;", 1)[0])
        # if this worker dies, the server ends the job's sessions; made before the job's gRPC
        # channel, so the watcher can be forked (connect_fence)
        fence = ConnectFence(url)
        try:
            session = self._session = connect(url)
        except BaseException:
            fence.close()
            raise
        self._tag = job.tag
        self._stopped = False
        try:
            watch_sessions(session, fence.watch)
            session.addTag(job.tag)
            for key, value in self.spark_conf.items():
                session.conf.set(key, value)
            with using(session):
                try:
                    code = gate_job.main(job.argv())
                except SystemExit as exc:  # argparse's exit on bad arguments
                    code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # Airflow's timeout or a signal, raised in the middle of a query
            self.on_kill()
            raise
        finally:
            self._session = None
            try:
                watch_sessions(session, None)
                release_children(session)  # the steps' tagged child sessions
            finally:
                try:
                    session.stop()
                finally:
                    fence.close()
        if self._stopped:
            raise GateJobStopped(f"gate job {job.steps} over Spark Connect was stopped: its task was killed")
        if code != 0:
            raise GateJobError(f"gate job {job.steps} over Spark Connect failed (exit code {code}); see the log above")
        return job.read_result()

    def on_kill(self) -> None:
        from contract_gate_spark.runtime.session import interrupt_connect_tag  # pyspark: as in start()

        session, tag = self._session, self._tag
        if session is not None and tag is not None:  # the server stops the job's running queries
            self._stopped = True
            interrupt_connect_tag(session, tag)
