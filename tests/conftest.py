"""The one local Spark session (with Delta) of the whole suite: a JVM start costs seconds, a test
milliseconds. Session-scoped, so every suite that asks for ``spark`` shares it; two cores, two
shuffle partitions (tiny group-bys stay tiny), no UI, catalog tables in a temporary warehouse.
Under pytest-xdist (``scripts/test.sh``) each worker has its own session, and the suite is
spread in units of whole files (below)."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import pytest

# py4j says goodbye at INFO from a finalizer, after pytest has closed the stream it would log to
logging.getLogger("py4j").setLevel(logging.WARNING)


CONNECT_FIXTURES = ("spark_connect_server", "connect_gate_world", "gates_over_connect")
CONNECT_UNIT = "the Spark Connect server's tests"


@functools.cache
def _unit(test_file: Path) -> str:
    """The unit of work a test file belongs to under pytest-xdist's ``--dist loadfile``: the
    file itself, so its module fixtures are built once, or, for a file that names a fixture of
    the session's Spark Connect server, one unit of all of those, so one worker starts one
    server (and builds one ``connect_gate_world``)."""
    source = test_file.read_text(encoding="utf-8")
    return CONNECT_UNIT if any(name in source for name in CONNECT_FIXTURES) else str(test_file)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (``scripts/test.sh``) with the units of ``_unit``, taken in the
    order of the collection (``pytest_collection_modifyitems``). The workers alone collect, so
    a unit is told from the test's file, not from its fixtures."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(config.rootpath / nodeid.split("::", 1)[0])

    return UnitScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """The units that take longest first (the Spark Connect unit, then files with slow tests),
    so that no worker is left with a long one at the end; without xdist, only the order
    changes."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item) -> int:
        if _unit(item.path) == CONNECT_UNIT:
            return 0
        return 1 if item.path in slow_files else 2

    items.sort(key=rank)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from contract_gate_spark.runtime.session import get_session

    session = get_session(
        "contract-gate-tests",
        {
            "spark.master": "local[2]",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
            # Interpreted evaluation, as Spark's own test suites run it besides generated code:
            # compiling each of thousands of tiny queries cost this session a quarter of its CPU,
            # on a suite that is CPU-bound. The gate's jobs and Spark Connect servers in the
            # end-to-end tests keep generated code, as production runs it.
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_connect_server(tmp_path_factory):
    """One real Spark Connect server with Delta for the session (``tests/connect_server.py``):
    127.0.0.1, a free port, detached from the test's process, stopped at the end."""
    from connect_server import ConnectServer

    server = ConnectServer(tmp_path_factory.mktemp("spark-connect")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def connect_gate_world(spark_connect_server, tmp_path_factory):
    """Four real gates over the Spark Connect server in a child Airflow world, with StatsD and
    OpenLineage on (``tests/connect_gate_world.py``): what they decided, emitted and started."""
    from connect_gate_world import build

    return build(spark_connect_server, tmp_path_factory.mktemp("connect_gate_world"))
