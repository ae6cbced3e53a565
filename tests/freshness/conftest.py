"""Fixtures: one local Spark session with Delta for the freshness tests (a JVM start costs
seconds), and a fresh lakehouse home per test."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[1]")
        .appName("contract-gate-freshness-tests")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
    )
    session = configure_spark_with_delta_pip(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh lakehouse home: plan paths (``lakehouse/...``) resolve under it."""
    monkeypatch.setenv("CONTRACT_GATE_HOME", str(tmp_path))
    monkeypatch.delenv("CONTRACT_GATE_STATUS_DIR", raising=False)
    return tmp_path
