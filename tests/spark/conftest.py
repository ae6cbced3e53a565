"""One local Spark session with Delta for the whole suite: starting a JVM costs seconds,
a test costs milliseconds. Shuffle partitions stay at 2 so tiny group-bys stay tiny."""

from __future__ import annotations

import pytest

from spark_jobs.session import get_session


@pytest.fixture(scope="session")
def spark():
    session = get_session(
        "contract-gate-tests",
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


@pytest.fixture
def as_delta(spark, tmp_path):
    """Write a DataFrame as a real Delta table and open it as a pinned candidate."""
    from spark_jobs.candidate import read_candidate

    def write(df, name="candidate"):
        path = str(tmp_path / name)
        df.write.format("delta").save(path)
        return read_candidate(spark, path, format="delta")

    return write
