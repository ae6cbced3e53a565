"""``local`` (the default): spark-submit in local mode, in a subprocess of the Airflow worker.

Nothing to install beyond ``pip``: spark-submit comes with pyspark, and Delta's jars are the
ones ``python -m spark_jobs.runtime.jars`` put in the Ivy cache (or ``.jars/``). When they are on disk
they go on the driver's class path, which skips Ivy's resolution (a few seconds per JVM start)
and lets the class archive hold Delta's classes too (in local mode the driver runs every
task, so its class path is the job's); ``--packages`` is the fallback. Spark's own logging is
set to WARN so the task log shows the gate's lines and real problems, not thousands of INFO
lines, and the JVM is tuned for a short job (``SHORT_JOB_JVM_OPTIONS``, and the class archive
of :mod:`contract_gate.runners.class_archive` when it has been built); the job loads the Delta
snapshots its steps will read on a second thread (``spark_jobs.runtime.warm_up``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from contract_gate.runners.class_archive import java_options as class_archive_options
from contract_gate.runners.base import GateJob, GateRunner
from contract_gate.runners.process import StreamedProcess
from contract_plan.restricted import write_private_text

SHORT_JOB_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""A gate job is a short-lived JVM on a small worker: the C2 compiler and parallel GC threads
compete with the job for its few cores and rarely pay off before it ends. Override with
``-XX:TieredStopAtLevel=4 -XX:+UseG1GC`` in ``spark.driver.extraJavaOptions`` for long jobs."""

LOG4J2_PROPERTIES = r"""rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.alwaysWriteExceptions = false
appender.console.layout.pattern = spark %p %c{1}: %replace{%m%n%ex}{(violated by row with values:)(\\R - [^\\r\\n]*)+}{$1 (withheld)}
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.additivity = false
logger.executor.appenderRef.tasks.ref = tasks
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.additivity = false
logger.tasks.appenderRef.tasks.ref = tasks
appender.tasks.type = Console
appender.tasks.name = tasks
appender.tasks.target = SYSTEM_ERR
appender.tasks.layout.type = PatternLayout
appender.tasks.layout.alwaysWriteExceptions = false
appender.tasks.layout.pattern = spark %p %c{1}: %replace{%m}{(?s)[)]: .*}{): (the error is withheld: Spark's message may quote a value)}%n
"""
"""Spark's own log, quiet and without row values: Delta's CHECK/NOT NULL violation message lists
the offending row's values (``violated by row with values: - col : value``), which may be
classified; they are cut out of every line and stack trace before the task log sees them. A
failed task's error is left out altogether (Spark quotes the value in ``CAST_INVALID_INPUT``,
``CANNOT_PARSE_TIMESTAMP``...): the job reports its error condition."""


def spark_home() -> Path:
    """``SPARK_HOME``, else the pyspark package (found without importing it)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed: pip install 'airflow-provider-contract-gate[spark]'")
    return Path(spec.submodule_search_locations[0])


def gate_job_script() -> Path:
    spec = importlib.util.find_spec("spark_jobs")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the spark_jobs package is not installed next to contract_gate")
    return Path(spec.submodule_search_locations[0]) / "commands" / "gate_job.py"


def delta_jars_on_disk() -> list[str]:
    """Delta's jars from ``.jars/`` or the Ivy cache, or ``[]`` when Ivy has to resolve them."""
    from spark_jobs.runtime.session import DELTA_PACKAGE, local_jars

    jars = local_jars()
    if not jars:
        group, artifact, version = DELTA_PACKAGE.split(":")
        ivy_jars = Path(os.environ.get("CONTRACT_GATE_IVY_JARS", Path.home() / ".ivy2.5.2" / "jars"))
        cached = [ivy_jars / f"{group}_{artifact}-{version}.jar", ivy_jars / f"io.delta_delta-storage-{version}.jar"]
        jars = [str(path) for path in cached] if all(path.is_file() for path in cached) else []
    return jars


def local_start_conf(scratch: Path, cores: int | None = None, spark_conf: dict[str, str] | None = None, *,
                     class_archive: bool = True) -> dict[str, str]:
    """The settings of a fast local Spark start, for a job's ``spark-submit`` and for a session
    started in-process (``contract-gate validate``): local mode with Delta's jars from disk on the
    driver's class path (no Ivy resolution; ``spark.jars.packages`` only when they are not on
    disk), the short-job JVM options, the class archive when built, and Spark's quiet log
    configuration written into ``scratch`` (an owner-only folder). ``spark_conf`` comes last."""
    from spark_jobs.runtime.session import DELTA_PACKAGE, local_defaults

    spark_conf = spark_conf or {}
    log_config = Path(scratch) / "log4j2.properties"
    write_private_text(log_config, LOG4J2_PROPERTIES)
    archive = class_archive_options() if class_archive else ""
    java_options = " ".join(filter(None, (SHORT_JOB_JVM_OPTIONS, archive,
                                          f"-Dlog4j2.configurationFile=file:{log_config}")))
    own = spark_conf.get("spark.driver.extraJavaOptions")
    jars = delta_jars_on_disk()
    class_path = os.pathsep.join(filter(None, (*jars, spark_conf.get("spark.driver.extraClassPath"))))
    return {
        **local_defaults(cores),
        "spark.ui.enabled": "false",
        **({} if jars else {"spark.jars.packages": DELTA_PACKAGE}),
        **spark_conf,
        # the caller's options come last: for a repeated -XX flag the JVM takes the last one
        "spark.driver.extraJavaOptions": f"{java_options} {own}" if own else java_options,
        **({"spark.driver.extraClassPath": class_path} if class_path else {}),
    }


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

    def command(self, job: GateJob) -> list[str]:
        return self.submit_argv(gate_job_script(), job.argv(), job.workdir, job.name)

    def submit_argv(self, script: Path | str, arguments: list[str], scratch: Path, name: str) -> list[str]:
        """``spark-submit`` in local mode with Delta, quiet logging and this runner's settings."""
        conf = local_start_conf(scratch, self.cores, self.spark_conf, class_archive=self.class_archive)
        argv = [str(spark_home() / "bin" / "spark-submit"), "--name", name]
        for key, value in conf.items():
            argv += ["--conf", f"{key}={value}"]
        return [*argv, str(script), *arguments]

    def environment(self) -> dict[str, str]:
        from spark_jobs.runtime.job_start import CONNECT_MODE_ENV, LOCAL_START_ENV

        python = sys.executable
        env = dict(os.environ)
        # left set by a spark_connect job that ran in this process (dag.test(), contract-gate run):
        # the child would take itself for a Connect client and find no server
        env.pop(CONNECT_MODE_ENV, None)
        env.update(
            SPARK_HOME=str(spark_home()),
            PYSPARK_PYTHON=python,
            PYSPARK_DRIVER_PYTHON=python,
            PATH=os.pathsep.join([str(Path(python).parent), env.get("PATH", "")]),
            PYTHONUNBUFFERED="1",
            **{LOCAL_START_ENV: "1"},
        )
        return env

    def start(self, job: GateJob) -> dict:
        self._process = StreamedProcess(
            self.command(job), env=self.environment(), cwd=self.cwd, log=self.log,
            label=f"gate job {job.steps} (local spark-submit)",
        )
        self._process.run()
        return job.read_result()

    def on_kill(self) -> None:
        if self._process is not None:
            self._process.kill()
