"""One local Spark session with Delta for the gate-step tests (starting a JVM costs seconds),
and plans compiled from the example contracts with every table moved under a test folder."""

from __future__ import annotations

import pytest

from spark_jobs.session import get_session


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "reliability: kill -9 fault-injection trials (each starts a Spark JVM)"
    )


@pytest.fixture(scope="session")
def spark():
    session = get_session(
        "contract-gate-gate-steps",
        {
            "spark.master": "local[2]",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
        },
    )
    yield session
    session.stop()
