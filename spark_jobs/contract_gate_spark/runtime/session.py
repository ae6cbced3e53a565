"""The one place a SparkSession comes from.

The gate runs in four places (a notebook, Databricks, Spark Connect, spark-submit or plain local
mode on an Airflow worker) and must never start a second session next to one that already
exists: a second SparkContext in one JVM is an error, and a second Connect session would
silently read other tables. So we reuse whatever is active and only build a local session,
with Delta Lake wired in, when nothing exists yet.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, cast

from delta import configure_spark_with_delta_pip
from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from contract_gate_spark.runtime.errors import keep_connect_causes
from contract_gate_spark.runtime.job_start import CONNECT_MODE_ENV
from contract_gate_spark.runtime.private_settings import read_private_settings

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession as ConnectSession

DELTA_PACKAGE = f"io.delta:delta-spark_4.2_2.13:{version('delta-spark')}"
"""The Maven coordinate of the installed delta-spark's jars, built for Spark 4.2 (pyproject.toml keeps
pyspark at 4.2.x and delta-spark at 4.4.x, the pair delta-spark's own metadata allows)."""

JARS_DIR_ENV = "CONTRACT_GATE_JARS"
"""Overrides where ``python -m contract_gate_spark.runtime.jars`` keeps jars copied with Maven."""

# Spark replaces ${...} in SQL text (${env:NAME}, ${system:...}) before parsing it; the gate's
# SQL carries names, paths and literals from contracts: nothing is substituted, in any mode.
NO_SUBSTITUTION = {"spark.sql.variable.substitute": "false"}
USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"
COMMIT_TAGS = (USER_METADATA, TXN_APP_ID, TXN_VERSION_CONF)
"""The session conf Delta copies into every commit the session makes. A submission's commits carry
them from a child session (``contract_gate_spark.steps.commits.tagged_session``); the session the
gate is given must carry none, or its untagged DDL (a table's creation, a migration) would read as
that tag's publish to recovery and ``contract-gate audit`` (a cluster default, a notebook's
setting, or an earlier caller's tagged child left active in this thread)."""

DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def jars_dir() -> Path:
    """The folder of locally copied Delta jars (the Maven fallback of ``contract_gate_spark.runtime.jars``)."""
    configured = os.environ.get(JARS_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent.parent / ".jars"


def local_jars() -> list[str]:
    """Jars copied by the Maven fallback, or ``[]`` when Ivy resolution is used instead."""
    folder = jars_dir()
    if not folder.is_dir():
        return []
    return sorted(str(p) for p in folder.glob("*.jar"))


def submit_arguments() -> list[str]:
    """``spark-submit`` arguments that put Delta Lake on a submitted job's classpath.

    Jars cannot be added once a JVM runs, so a runner launching ``gate_job.py`` passes
    these: the Maven-copied jars when ``.jars/`` has them, else the Ivy package.
    """
    jars = local_jars()
    if jars:
        return ["--jars", ",".join(jars)]
    return ["--packages", DELTA_PACKAGE]


def local_defaults(cores: int | None = None) -> dict[str, str]:
    """Settings for local mode on a small worker.

    Shuffle partitions follow the core count: the default 200 makes every group-by on a
    laptop-sized batch schedule 200 near-empty tasks. Delta's snapshot partitions are kept
    small for the same reason (the default is 50). DataFrame debugging is off: with it, every
    ``pyspark.sql.functions`` call walks the Python stack and makes JVM round trips to record
    its call site for error messages, and the engine builds a column per rule. The gate names
    only an error's condition anyway (``contract_gate_spark.runtime.errors``).
    """
    cores = cores or os.cpu_count() or 1
    return {
        "spark.master": f"local[{cores}]",
        "spark.sql.shuffle.partitions": str(max(2, 2 * cores)),
        "spark.databricks.delta.snapshotPartitions": str(max(2, cores)),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        **NO_SUBSTITUTION,
        **DELTA_CONF,
    }


JAR_SETTINGS = {"spark.driver.extraClassPath", "spark.jars", "spark.jars.packages"}
"""Settings by which a caller of :func:`get_session` brings Delta's jars itself."""


_GIVEN: ContextVar[SparkSession | None] = ContextVar("contract_gate_session", default=None)


@contextlib.contextmanager
def using(session: SparkSession) -> Iterator[SparkSession]:
    """Make ``session`` the one :func:`get_session` returns, in this context only (this thread or
    task): the ``spark_connect`` runner runs the gate job's steps in-process over its own Connect
    session, and two such jobs may share a worker process."""
    token = _GIVEN.set(session)
    try:
        yield session
    finally:
        _GIVEN.reset(token)


_CONNECTED = False  # set for good once this process (or the parent it was forked from) connected


def has_connected() -> bool:
    """True once :func:`connect` has opened a gRPC channel in this process or in the process it
    was forked from: gRPC then runs threads of its own, which a ``fork`` does not copy, so a
    forked child must not use gRPC (``contract_gate.runners.connect_fence``)."""
    return _CONNECTED


def connect(url: str) -> SparkSession:
    """A new Spark Connect session on the server at ``url`` (``sc://host:port/;token=...``).

    A new session each time, never the process's default one: its SQL conf and temporary views
    are its own on the server, so nothing one gate job sets reaches another's commits. The
    server owns the configuration (Delta included); only the gate's no-substitution setting is
    added. Its executions are not reattachable: none is kept for a client that is gone."""
    if SparkContext._active_spark_context is not None:
        raise RuntimeError("this process already runs a local Spark (a JVM); a Spark Connect client"
                           " cannot share it: run the spark_connect mode in its own worker process")
    os.environ[CONNECT_MODE_ENV] = "1"
    # the Connect client (grpcio, pandas, pyarrow) only for a Connect session: a classic driver may lack it
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    keep_connect_causes()
    global _CONNECTED
    _CONNECTED = True
    session = ConnectSession.builder.remote(url).create()
    # A reattachable execution outlives its stream on the server (a client that died is waited
    # for minutes, spark.connect.execute.manager.detachedTimeout). Neither kind is interrupted
    # when its client dies while a query runs (Spark Connect 4.2 delivers the stream's
    # cancellation only after the execution ends): the spark_connect runner's fence ends a dead
    # worker's sessions (contract_gate.runners.connect_fence). Clones inherit the choice.
    session.client.disable_reattachable_execute()
    for key, value in NO_SUBSTITUTION.items():
        session.conf.set(key, value)
    return _as_shared(session)


def is_connect(spark: SparkSession) -> bool:
    """True for a Spark Connect session (no JVM in this process, no ``sparkContext``)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _as_shared(session: ConnectSession) -> SparkSession:
    """A Connect session as the ``SparkSession`` every step takes: it has the same DataFrame API,
    and pyspark's own builder hands out its Connect sessions as that type too."""
    return cast(SparkSession, session)


def _as_connect(spark: SparkSession) -> ConnectSession:
    """``spark`` as the Connect session it is, for the Connect-only API (``session_id``, ``cloneSession``)."""
    # the Connect client, as in connect(): loaded already when spark is one of its sessions
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    if not isinstance(spark, ConnectSession):
        raise TypeError(f"not a Spark Connect session: {type(spark).__module__}.{type(spark).__qualname__}")
    return spark


_CLONES: dict[str, list[ConnectSession]] = {}
"""Connect sessions cloned by :func:`child_session`, by their parent's session id, until
:func:`release_children` (or this process's exit) closes them."""

_CLONE_WATCHERS: dict[str, Callable[[str], None]] = {}
"""Who is told the session id of each session cloned from a Connect session, by the parent's id
(:func:`watch_sessions`)."""


def watch_sessions(spark: SparkSession, watcher: Callable[[str], None] | None) -> None:
    """Tell ``watcher`` the server session id of the Connect session ``spark`` now, and of every
    session :func:`child_session` clones from it from now on (None: stop telling): the
    ``spark_connect`` runner's fence ends a lost worker's sessions on the server, clones included."""
    session_id = _as_connect(spark).session_id
    if watcher is None:
        _CLONE_WATCHERS.pop(session_id, None)
        return
    _CLONE_WATCHERS[session_id] = watcher
    watcher(session_id)


def child_session(spark: SparkSession) -> SparkSession:
    """A session on the same engine with its own SQL conf and temporary views, for settings that
    must not reach the caller's session (a commit's tags). Classic: ``newSession`` (same
    SparkContext). Spark Connect has no ``newSession``: its ``cloneSession`` makes a new session
    on the server, with the caller's conf copied, and a gRPC channel of its own, which is closed
    by :func:`release_children` (else at exit: a channel left to the garbage collector at
    interpreter shutdown can wait forever for its calls to drain). A Connect child carries the
    caller's tags (this thread's, ``contract_gate_spark.runtime.tags``), so what stops the caller's queries
    by tag stops its child's too; a classic one shares the thread's job tags already."""
    if not is_connect(spark):
        return spark.newSession()
    parent = _as_connect(spark)
    clone = parent.cloneSession()
    if not _CLONES:
        atexit.register(_release_all)
    _CLONES.setdefault(parent.session_id, []).append(clone)
    watcher = _CLONE_WATCHERS.get(parent.session_id)
    if watcher is not None:
        watcher(clone.session_id)
    for tag in parent.getTags():
        clone.addTag(tag)
    return _as_shared(clone)


def interrupt_connect_tag(spark: SparkSession, tag: str) -> None:
    """Interrupt the queries tagged ``tag`` of the Connect session ``spark`` and of the sessions
    cloned from it (:func:`child_session`): a session's interrupt reaches its own queries only."""
    parent = _as_connect(spark)
    for session in (parent, *_CLONES.get(parent.session_id, [])):
        session.interruptTag(tag)


def release_children(spark: SparkSession) -> None:
    """Release the server sessions :func:`child_session` cloned from ``spark`` and close their
    channels (Connect only; a classic child session holds nothing of its own)."""
    if not is_connect(spark):
        return
    for clone in _CLONES.pop(_as_connect(spark).session_id, []):
        try:
            clone.client.release_session()
        finally:
            clone.client.close()


def _release_all() -> None:
    for parent in list(_CLONES):
        for clone in _CLONES.pop(parent, []):
            clone.client.close()


def active_session() -> SparkSession | None:
    """The session given to this context (:func:`using`), else the one already running in this
    process (notebook, Databricks, Connect), if any."""
    session = _GIVEN.get()
    if session is not None:
        return session
    session = SparkSession.getActiveSession()
    if session is not None:
        return session
    if SparkContext._active_spark_context is not None:  # a context without an active session
        return SparkSession.builder.getOrCreate()
    if os.environ.get("SPARK_REMOTE") or os.environ.get("SPARK_CONNECT_MODE_ENABLED"):
        # Spark Connect: the server owns the configuration (Delta included).
        keep_connect_causes()
        return SparkSession.builder.getOrCreate()
    return None


def get_session(
    app_name: str = "contract-gate", conf: dict[str, str] | None = None
) -> SparkSession:
    """Reuse the active session, else start one.

    Under ``spark-submit`` the JVM is already launched with the cluster's master and jars
    (``PYSPARK_GATEWAY_PORT`` is set): only Delta's SQL settings are added where the submit
    did not set them. Otherwise a local-mode session with Delta from ``local_defaults`` plus
    ``conf`` is started; unless ``conf`` brings Delta's jars itself (a class path or packages,
    as the local runner's fast start does: ``contract_gate.local_spark.submit.local_start_conf``),
    they come from ``.jars/`` when the Maven fallback filled it, else from Maven Central
    through Ivy (cached after the first start).
    """
    session = active_session()
    if session is not None:  # a cluster's, Databricks' or a Connect server's session
        for key, value in NO_SUBSTITUTION.items():
            session.conf.set(key, value)
        return _untagged(session)
    builder = SparkSession.builder.appName(app_name)
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        submitted = SparkConf()
        for key, value in {**DELTA_CONF, **(conf or {})}.items():
            if not submitted.contains(key):
                builder = builder.config(key, value)
        for key, value in NO_SUBSTITUTION.items():  # never left to the cluster's defaults
            builder = builder.config(key, value)
        for key, value in read_private_settings().items():  # kept off the driver's command line
            builder = builder.config(key, value)
        return _untagged(builder.getOrCreate())
    for key, value in {**local_defaults(), **(conf or {})}.items():
        builder = builder.config(key, value)
    if JAR_SETTINGS.isdisjoint(conf or {}):  # else the caller brings Delta's jars itself
        jars = local_jars()
        if jars:
            builder = builder.config("spark.jars", ",".join(jars))
        else:
            builder = configure_spark_with_delta_pip(builder)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("CONTRACT_GATE_SPARK_LOG_LEVEL", "WARN"))
    return _untagged(session)


def _untagged(session: SparkSession) -> SparkSession:
    for key in COMMIT_TAGS:
        session.conf.unset(key)
    return session
