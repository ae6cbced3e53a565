"""The one ``spark-submit`` command line of a Spark job on this machine: local mode, Delta's jars
from disk, the short-job JVM options, the class archive when built, and Spark's quiet log
configuration. The ``local`` runner, the class archive's build, the local Connect server (its
own class) and ``contract-gate validate`` (in-process, the same settings) start Spark from here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from contract_gate.local_spark.installation import delta_jars_on_disk, spark_home
from contract_gate_plan.restricted import write_private_text
from contract_gate_spark.runtime.job_start import CONNECT_MODE_ENV, LOCAL_START_ENV

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


def local_start_conf(scratch: Path, cores: int | None = None, spark_conf: dict[str, str] | None = None, *,
                     archive_options: str = "") -> dict[str, str]:
    """The settings of a fast local Spark start, for a job's ``spark-submit`` and for a session
    started in-process (``contract-gate validate``): local mode with Delta's jars from disk on the
    driver's class path (no Ivy resolution; ``spark.jars.packages`` only when they are not on
    disk), the short-job JVM options, ``archive_options`` (the class archive's,
    :func:`~contract_gate.local_spark.class_archive.java_options`), Spark's quiet log
    configuration written into ``scratch`` (an owner-only folder), and ``scratch`` as Spark's
    local directory, the JVM's temporary folder and Hadoop's. ``spark_conf`` comes last.

    Spark's local directory holds its shuffle, spill and broadcast files: rows of the batch.
    Under ``/tmp`` (Spark's default) they are readable by every user of the machine, and a JVM
    killed with SIGKILL (its task killed: the job follows it, ``task_watch``) leaves them there
    for good; in ``scratch`` they are owner-only and go with it. So do the JVM's own temporary
    files (the native libraries snappy and lz4 unpack, Spark's temporary folders) and Hadoop's
    (S3A buffers the blocks it uploads there: rows again; Hadoop's default is
    ``/tmp/hadoop-<user>``, world-readable)."""
    from contract_gate_spark.runtime.session import DELTA_PACKAGE, local_defaults  # imports pyspark: not at import time

    spark_conf = spark_conf or {}
    log_config = Path(scratch) / "log4j2.properties"
    write_private_text(log_config, LOG4J2_PROPERTIES)
    java_options = " ".join(filter(None, (SHORT_JOB_JVM_OPTIONS, archive_options,
                                          f"-Dlog4j2.configurationFile=file:{log_config}",
                                          f"-Djava.io.tmpdir={scratch}")))
    own = spark_conf.get("spark.driver.extraJavaOptions")
    jars = delta_jars_on_disk()
    class_path = os.pathsep.join(filter(None, (*jars, spark_conf.get("spark.driver.extraClassPath"))))
    return {
        **local_defaults(cores),
        "spark.ui.enabled": "false",
        "spark.local.dir": str(scratch),
        "spark.hadoop.hadoop.tmp.dir": str(scratch),  # S3A's upload buffers (rows) are under it
        **({} if jars else {"spark.jars.packages": DELTA_PACKAGE}),
        **spark_conf,
        # the caller's options come last: for a repeated -XX flag the JVM takes the last one
        "spark.driver.extraJavaOptions": f"{java_options} {own}" if own else java_options,
        **({"spark.driver.extraClassPath": class_path} if class_path else {}),
    }


def submit_argv(application: Path | str, arguments: list[str], conf: dict[str, str], name: str, *,
                main_class: str | None = None, properties_file: Path | None = None) -> list[str]:
    """``spark-submit`` of ``application`` (a script, or ``spark-internal`` with ``main_class``);
    ``properties_file`` holds the settings that must stay off the command line
    (:class:`contract_gate.runners.job_credentials.PropertiesFile`)."""
    argv = [str(spark_home() / "bin" / "spark-submit"), *(["--class", main_class] if main_class else []),
            *(["--properties-file", str(properties_file)] if properties_file else []), "--name", name]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return [*argv, str(application), *arguments]


def submit_environment() -> dict[str, str]:
    """The environment of a local job: this interpreter's pyspark, on this machine's Spark."""
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
