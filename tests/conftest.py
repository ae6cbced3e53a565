"""The one local Spark session (with Delta) of the whole suite: a JVM start costs seconds, a test
milliseconds. Session-scoped, so every suite that asks for ``spark`` shares it; two cores, two
shuffle partitions (tiny group-bys stay tiny), no UI, catalog tables in a temporary warehouse."""

from __future__ import annotations

import logging

import pytest

# py4j says goodbye at INFO from a finalizer, after pytest has closed the stream it would log to
logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from spark_jobs.runtime.session import get_session

    session = get_session(
        "contract-gate-tests",
        {
            "spark.master": "local[2]",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
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
