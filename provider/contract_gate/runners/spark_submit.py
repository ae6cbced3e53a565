"""``spark_submit``: any Spark cluster (standalone, YARN, Kubernetes) through the apache-spark
provider's ``SparkSubmitHook`` and its connection (default ``spark_default``).

The Spark side is shipped as a zip of the ``contract_gate_spark`` and ``contract_gate_plan`` packages and
sqlglot (``--py-files``), so the cluster needs nothing of ours installed (only Python with
pyspark, named by ``spark.pyspark.python`` when it is not the cluster's ``python3``). Delta comes
from ``--packages`` unless the cluster configuration already provides it (pass
``packages=None``).

Deploy mode is the connection's ``deploy-mode`` extra (or the ``deploy_mode`` runner option):

- ``client`` (default): the driver runs here, in the task, and blocks it; executors run on the
  cluster. The result JSON is written by the driver, so here. As a ``local`` job does, the driver
  holds its submission's job lock while it lives (``contract_gate.work_folders.job_fence``), so no
  decision is written meanwhile, and ends itself, with its whole process group, once its task is
  gone (``contract_gate_spark.runtime.task_watch``): a task killed with SIGKILL leaves no driver
  that commits after the decision.
- ``cluster`` on a standalone master (``spark://``): ``spark-submit`` refuses Python
  applications there, even in Spark 4.2, so the driver is launched through the master's REST
  submission server (:mod:`contract_gate.hooks.spark_standalone`; the connection's
  ``rest-port``/``rest-scheme`` extras, default ``http`` and 6066). The task then defers on
  :class:`~contract_gate.triggers.spark_driver.SparkDriverStatusTrigger` (no worker slot held)
  and reads the result file when the driver has ended. The plan, report, result, script and
  zip travel through the work folder, and relative table addresses resolve against the gate
  home (``CONTRACT_GATE_HOME``, passed to the driver): both must be storage the cluster's
  workers read and write at the same path (a shared mount).
  Each driver is written down in the work folder as it is launched (``<steps>.driver.json``): a
  task's next try kills its earlier try's driver still running before it launches its own, and
  the record task kills every driver of the submission still running, and waits for its end,
  before it writes the decision (:meth:`SparkSubmitRunner.end_orphaned_jobs`): a driver whose
  worker was lost without a word never commits after the decision.
- ``cluster`` on YARN or Kubernetes: ``SparkSubmitHook`` submits and tracks the driver, blocking.
  A driver whose task's worker was lost goes on to its time budget.

In client mode the driver's Spark scratch files (shuffle, spill and broadcast blocks, the rows
PySpark hands the JVM: rows of the batch) go to a 0700 folder of the job's own in the
submission's owner-only work folder, as ``spark.local.dir``, removed when the job ends; not
``/tmp``. The executors are unaffected: every cluster manager gives them its own local
directories (the standalone worker's, YARN's container dirs, Kubernetes' volumes), and a
``SPARK_LOCAL_DIRS`` set on this worker or a ``spark.local.dir`` in the settings or this
worker's ``spark-defaults.conf`` wins.

A plan with S3 tables brings the S3A connector's jars (``spark.jars``; in standalone cluster mode
through the shared storage, on the class paths) and its buckets' credentials, which travel in an
owner-only file, never on a command line (:mod:`contract_gate.runners.job_credentials`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import httpx
import sqlglot
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk import BaseHook
from contract_gate.airflow_compat import AirflowNotFoundException, default_deferrable

import contract_gate_plan
from contract_gate.config import gate_home
from contract_gate.hooks.spark_standalone import SparkStandaloneError, SparkStandaloneRestHook
from contract_gate.runners.base import END_WAIT, Deferral, GateJob, GateJobError, GateRunner
from contract_gate.runners.job_credentials import (PropertiesFile, driver_settings_file, spark_defaults,
                                                   write_driver_settings)
from contract_gate.local_spark.installation import delta_jars_on_disk, gate_job_script
from contract_gate.triggers.spark_driver import SparkDriverStatusTrigger
from contract_gate.work_folders.job_fence import hold_for_job
from contract_gate_spark.runtime.task_watch import TASK_PID_ENV
from contract_gate_plan.addresses import HOME_ENV
from contract_gate_plan.restricted import write_private_text

DEFAULT_CONN_ID = "spark_default"


def package_spark_side(folder: Path) -> Path:
    """A zip of the ``contract_gate_spark`` and ``contract_gate_plan`` packages for ``--py-files`` (sources
    only), with sqlglot, their one dependency beyond pyspark and delta-spark (pure Python: the
    allow-list of contract SQL)."""
    archive = folder / "contract_gate_spark.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in (gate_job_script().parents[1], Path(contract_gate_plan.__file__).parent, Path(sqlglot.__file__).parent):
            for path in sorted(package.rglob("*.py")):
                zf.write(path, Path(package.name) / path.relative_to(package))
    return archive


def driver_record(workdir: Path, steps: str) -> Path:
    """Where the driver of a standalone cluster-mode job of ``steps`` is written down: its id, its
    master's REST server and the job's name."""
    return workdir / f"{steps.replace('+', '_')}.driver.json"


class SparkSubmitRunner(GateRunner):
    """spark-submit to the cluster in the connection.

    :param packages: Maven coordinates to add (default: Delta Lake matching pyspark 4.2).
    :param deploy_mode: ``client`` or ``cluster``; default the connection's ``deploy-mode`` extra.
    :param polling_period_seconds: how often a standalone cluster-mode driver's status is read
        (default 10 s).
    :param deferrable: in standalone cluster mode, defer while the driver runs, else wait in the
        worker; default Airflow's ``[operators] default_deferrable``.

    The last two also come from the ``contract_gate`` key of the connection's extra (so
    generated DAGs need no code), e.g. ``{"deploy-mode": "cluster", "rest-port": 6066,
    "contract_gate": {"polling_period_seconds": 5}}``; runner options win. So do Spark settings
    for every job on that cluster, under ``spark_conf`` (``{"spark_conf":
    {"spark.sql.shuffle.partitions": "8"}}``), below the task's own ``spark_conf``.
    """

    mode = "spark_submit"
    conn_id: str  # the mode's default connection when none is given

    def __init__(self, *, packages: str | None = "default", deploy_mode: str | None = None,
                 polling_period_seconds: float | None = None, deferrable: bool | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.conn_id = self.conn_id or DEFAULT_CONN_ID
        self.packages = packages
        self.deploy_mode = deploy_mode
        given = {"polling_period_seconds": polling_period_seconds, "deferrable": deferrable}
        extra = self.connection_extra()
        # as SparkSubmitHook resolves it: the driver runs here unless this says cluster
        self.driver_here = (deploy_mode or extra.get("deploy-mode")) != "cluster"
        connection = dict(extra.get("contract_gate") or {})
        options = {**connection, **{k: v for k, v in given.items() if v is not None}}
        self.polling_period_seconds = float(options.get("polling_period_seconds", 10))
        self.deferrable = bool(options.get("deferrable", default_deferrable()))
        self.spark_conf = {**self.connection_spark_conf(connection), **self.spark_conf}
        self._hook: SparkSubmitHook | None = None
        self._credentials: PropertiesFile | None = None
        self._driver_settings: Path | None = None  # a standalone driver's secret settings, until it ends
        self._driver: tuple[SparkStandaloneRestHook, str] | None = None  # (REST server, driver id) in standalone cluster mode

    def connection_extra(self) -> dict:
        """The connection's extra; none without the connection (``SparkSubmitHook`` then falls
        back to its default master, as it always has)."""
        try:
            return dict(BaseHook.get_connection(self.conn_id).extra_dejson)
        except AirflowNotFoundException:
            return {}

    def connection_spark_conf(self, options: dict) -> dict[str, str]:
        """The connection's ``spark_conf``: a mapping of setting names to plain values."""
        settings = options.get("spark_conf") or {}
        if not isinstance(settings, dict) or not all(
                isinstance(value, (str, int, float, bool)) for value in settings.values()):
            raise ValueError(f"connection {self.conn_id!r}: extra contract_gate.spark_conf must map Spark"
                             " setting names to strings, numbers or booleans")
        return {str(key): str(value).lower() if isinstance(value, bool) else str(value)
                for key, value in settings.items()}

    def job_conf(self) -> tuple[str | None, dict[str, str]]:
        """The Maven packages and Spark settings of every job: Delta's unless told otherwise."""
        if self.packages == "default":
            from contract_gate_spark.runtime.session import DELTA_CONF, DELTA_PACKAGE  # pyspark: the job runs elsewhere

            return DELTA_PACKAGE, {**DELTA_CONF, **self.spark_conf}
        return self.packages, dict(self.spark_conf)

    def start(self, job: GateJob) -> dict | Deferral:
        packages, conf = self.job_conf()
        with job.scratch() if self.needs_driver_scratch(conf) else nullcontext() as scratch:
            return self.submit(job, packages, {**conf, "spark.local.dir": str(scratch)} if scratch else conf)

    def needs_driver_scratch(self, conf: dict[str, str]) -> bool:
        """Whether the driver runs here (client mode) with no local directories chosen for it
        (``SPARK_LOCAL_DIRS`` on this worker, ``spark.local.dir`` in the settings or in this
        worker's ``spark-defaults.conf``): then it gets the job's scratch folder."""
        defaults = spark_defaults(os.environ.get("SPARK_HOME"))
        return self.driver_here and not (os.environ.get("SPARK_LOCAL_DIRS") or "spark.local.dir" in conf
                                         or re.search(r"^\s*spark\.local\.dir[\s=:]", defaults, re.MULTILINE))

    def submit(self, job: GateJob, packages: str | None, conf: dict[str, str]) -> dict | Deferral:
        # read by spark-submit on this worker: the SPARK_HOME its defaults come from is this one's
        self._credentials = PropertiesFile(self.credentials, os.environ.get("SPARK_HOME"))
        with self._credentials as properties_file:
            self._hook = hook = SparkSubmitHook(
                conn_id=self.conn_id,
                conf=conf,
                packages=packages,
                py_files=str(package_spark_side(job.workdir)),
                name=job.name,
                application_args=job.argv(),
                deploy_mode=self.deploy_mode,
                # The driver runs here in client mode: it must use this interpreter (it has pyspark),
                # and it watches this task's process (contract_gate_spark.runtime.task_watch).
                env_vars={"PYSPARK_DRIVER_PYTHON": sys.executable,
                          **({TASK_PID_ENV: str(os.getpid())} if self.driver_here else {})},
                properties_file=str(properties_file) if properties_file else None,
            )
            # The hook resolves the connection (master, deploy mode, REST endpoint) on construction;
            # it sets rest_endpoint exactly for a single standalone master in cluster deploy mode.
            connection = hook._connection
            if connection.get("rest_endpoint"):
                return self.start_on_standalone(job, connection["master"], connection["rest_endpoint"], conf)
            if connection["master"].startswith("spark://") and connection.get("deploy_mode") == "cluster":
                raise GateJobError(
                    f"connection {self.conn_id!r}: cluster deploy mode on the standalone masters "
                    f"{connection['master']} needs one master (spark-submit refuses Python applications in cluster "
                    "mode on a standalone cluster, so the driver goes through one master's REST submission server); "
                    "name one master in the connection")
            self.log.info("gate job %s: spark-submit to %s (%s deploy mode) through connection %r", job.steps,
                          connection["master"], connection.get("deploy_mode") or "client", self.conn_id)
            with self.driver_fence(job) as process_options:
                hook.submit(application=str(gate_job_script()), **process_options)
        return job.read_result()

    @contextmanager
    def driver_fence(self, job: GateJob) -> Iterator[dict]:
        """The options of spark-submit's process: a driver that runs here (client mode) holds the
        job lock while it lives, in a process group of its own that it ends once this task is gone
        (as a ``local`` job does); nothing for a driver on the cluster."""
        if not self.driver_here:
            yield {}
            return
        lock = hold_for_job(job.workdir)
        try:
            yield {"pass_fds": (lock,), "start_new_session": True}
        finally:
            os.close(lock)

    def start_on_standalone(self, job: GateJob, master: str, rest_endpoint: str,
                            conf: dict[str, str]) -> dict | Deferral:
        """Cluster deploy mode on a standalone master: a driver launched through its REST server."""
        record = driver_record(job.workdir, job.steps)
        # before this try's settings replace its earlier try's, which that driver may still read
        self.end_drivers([record], "an earlier try's driver of this job still runs")
        # The driver reads its script and zip from the work folder (shared storage), not from
        # this worker's installation.
        script = job.workdir / "gate_job.py"
        shutil.copyfile(gate_job_script(), script)
        properties = {**{key: value for key, value in conf.items() if key != "spark.jars"},
                      "spark.master": master, "spark.app.name": job.name, **self.cluster_jars(job, conf)}
        # The plan's relative addresses resolve against the gate home, not the driver's folder on
        # the worker: the shared storage is mounted at the same path on both sides.
        environment = {HOME_ENV: str(gate_home()), **write_driver_settings(job.workdir, job.steps, self.credentials)}
        hook = SparkStandaloneRestHook(rest_endpoint)
        try:
            driver_id = hook.create_python_driver(script, [job.workdir / "contract_gate_spark.zip"], job.argv(), properties,
                                                  environment)
        except SparkStandaloneError as exc:
            driver_settings_file(job.workdir, job.steps).unlink(missing_ok=True)
            raise GateJobError(str(exc)) from exc
        self._driver = (hook, driver_id)
        partial = record.with_name(f".{record.name}")
        write_private_text(partial, json.dumps({"driver_id": driver_id, "rest_endpoint": rest_endpoint, "name": job.name}))
        os.replace(partial, record)  # whole or not there: a worker lost mid-write leaves no half record
        self._driver_settings = driver_settings_file(job.workdir, job.steps)
        self.log.info("gate job %s: driver %s launched on %s through its REST server %s", job.steps, driver_id,
                      master, rest_endpoint)
        if self.deferrable:
            settings = str(self._driver_settings) if self.credentials else None
            return Deferral(trigger=SparkDriverStatusTrigger(rest_endpoint, driver_id, self.polling_period_seconds,
                                                             settings))
        return self.finish(job, hook.wait_for_driver(driver_id, self.polling_period_seconds))

    def cluster_jars(self, job: GateJob, conf: dict[str, str]) -> dict[str, str]:
        """The jar settings of a standalone cluster-mode driver: every jar on this worker goes
        through the shared storage, like the script (the runs folder's ``_jars/``, copied once).

        Delta's jars go as ``spark.jars``. The jars ``conf`` lists in ``spark.jars`` that are on this
        worker (the S3A connector of a plan with S3 tables) go on the driver's and executors' class
        paths instead: Hadoop finds a file system's class there, and no executor fetches the AWS
        SDK bundle from the driver for every job. A listed jar not on this worker is left for the
        cluster to find.

        ``spark.jars.packages`` does not do here: the standalone driver's launcher resolves it
        onto the driver's class path only and never ships it to the executors (Delta's UDFs
        then fail to deserialize there), so Maven coordinates are refused rather than half used."""
        named = [jar for jar in (conf.get("spark.jars") or "").split(",") if jar]
        local = self.ship_jars(job, [Path(jar) for jar in named if Path(jar).is_file()])
        jars = [*map(str, self.ship_jars(job, self.delta_jars())), *(jar for jar in named if not Path(jar).is_file())]
        settings = {"spark.jars": ",".join(jars)} if jars else {}
        for side in ("driver", "executor") if local else ():
            key = f"spark.{side}.extraClassPath"
            settings[key] = os.pathsep.join(filter(None, (conf.get(key), *map(str, local))))
        return settings

    def delta_jars(self) -> list[Path]:
        """Delta's jars on this worker, to ship; none with ``packages=None`` (the cluster has them)."""
        if self.packages is None:
            return []
        if self.packages != "default":
            raise GateJobError(
                f"packages={self.packages!r} cannot be used in cluster deploy mode on a standalone master: Spark "
                "resolves them for the driver only, not its executors. Install the jars in the cluster's "
                "configuration (spark.jars) and pass packages=None")
        found = [Path(jar) for jar in delta_jars_on_disk()]
        if not found:
            raise GateJobError(
                "Delta's jars are not on this worker to ship to the cluster: run `python -m contract_gate_spark.runtime.jars` "
                "once here, or install Delta in the cluster's configuration and pass packages=None")
        return found

    @staticmethod
    def ship_jars(job: GateJob, jars: list[Path]) -> list[Path]:
        """``jars`` in the runs folder's ``_jars/``, linked where the storage allows, else copied."""
        folder = job.workdir.parent.parent / "_jars"
        folder.mkdir(exist_ok=True)
        shipped = []
        for jar in jars:
            target = folder / jar.name
            if not target.is_file() or target.stat().st_size != jar.stat().st_size:
                partial = folder / f".{jar.name}.{os.getpid()}"
                partial.unlink(missing_ok=True)
                try:
                    os.link(jar, partial)  # the AWS SDK bundle is large: no copy on the same file system
                except OSError:
                    shutil.copyfile(jar, partial)
                os.replace(partial, target)  # a concurrent job never reads a half-copied jar
            shipped.append(target)
        return shipped

    def finish(self, job: GateJob, event: dict) -> dict:
        """The driver has ended: its result file, or why it failed (its log stays on the worker)."""
        driver_settings_file(job.workdir, job.steps).unlink(missing_ok=True)
        if event["driver_state"] != "FINISHED":
            where = f" on worker {event['worker']}" if event.get("worker") else ""
            raise GateJobError(
                f"Spark driver {event['driver_id']} of gate job {job.steps} ended {event['driver_state']}{where}"
                + (f": {event['message']}" if event.get("message") else "")
                + f"; its output is the stderr file in {event['driver_id']}/ of the worker's work directory")
        return job.read_result()

    def end_orphaned_jobs(self, contract_id: str, submission_id: str, folder: Path) -> list[str]:
        """Kill the standalone cluster-mode drivers of the submission still running (their task's
        worker was lost) and wait for their end; the names of those it ended."""
        return self.end_drivers(sorted(folder.glob("*.driver.json")), "outlived its task")

    def end_drivers(self, records: list[Path], why: str) -> list[str]:
        """Kill each driver written down in ``records`` that its master says still runs, and wait
        until it has ended; the names of the jobs it ended. A driver its master does not know
        (a master restarted without recovery) runs no more there."""
        ended = []
        for record in records:
            try:
                driver = json.loads(record.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue
            hook, driver_id = SparkStandaloneRestHook(driver["rest_endpoint"]), driver["driver_id"]
            try:
                if hook.driver_event(driver_id) is not None:
                    continue
                self.log.warning("Spark driver %s (%s): %s; killing it and waiting for its end: %s", driver_id,
                                 driver["name"], why, hook.kill(driver_id))
                hook.wait_for_driver(driver_id, 1, END_WAIT.total_seconds())
            except TimeoutError as exc:
                raise GateJobError(f"Spark driver {driver_id} ({driver['name']}) still runs {END_WAIT} after its kill: "
                                   "nothing is decided while it may commit; retry the task once it has ended") from exc
            except (httpx.HTTPError, ValueError) as exc:  # no answer, or not one in JSON
                raise GateJobError(f"Spark driver {driver_id} ({driver['name']}) may still run, and its master's REST "
                                   f"server {driver['rest_endpoint']} does not tell ({exc}): nothing is decided "
                                   "while it may commit; retry the task once the master answers") from exc
            ended.append(driver["name"])
        return ended

    def on_kill(self) -> None:
        if self._driver is not None:
            hook, driver_id = self._driver
            self.log.info("killing Spark driver %s: %s", driver_id, hook.kill(driver_id))
        elif self._hook is not None:
            self._hook.on_kill()
        if self._credentials is not None:
            self._credentials.remove()
        if self._driver_settings is not None:
            self._driver_settings.unlink(missing_ok=True)
