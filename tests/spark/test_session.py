"""The session factory reuses what runs, and tells spark-submit where Delta's jars are."""

from __future__ import annotations

import pytest
from pyspark.errors.utils import is_debugging_enabled
from pyspark.sql import SparkSession

from contract_gate_spark.runtime.session import DELTA_PACKAGE, get_session, local_defaults, submit_arguments


@pytest.fixture(autouse=True)
def _the_suites_session_is_the_active_one(spark):
    """These tests are about the session running in the process. An earlier test file of the same
    worker may have left another session of the same SparkContext active on this thread (a
    step's child session), so the suite's session is made the active one first."""
    SparkSession._activeSession = spark
    spark._jvm.org.apache.spark.sql.classic.SparkSession.setActiveSession(spark._jsparkSession)


def test_an_active_session_is_reused_never_a_second_one(spark):
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    assert get_session("another-name", {"spark.sql.shuffle.partitions": "99"}) is spark
    assert spark.conf.get("spark.sql.shuffle.partitions") == partitions
    assert spark.conf.get("spark.sql.extensions") == "io.delta.sql.DeltaSparkSessionExtension"


def test_local_defaults_scale_with_cores():
    assert local_defaults(8)["spark.master"] == "local[8]"
    assert local_defaults(8)["spark.sql.shuffle.partitions"] == "16"
    assert local_defaults(1)["spark.sql.shuffle.partitions"] == "2"


def test_spark_submit_gets_the_maven_copied_jars_when_there_are_any(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_JARS", str(tmp_path / "none"))
    assert submit_arguments() == ["--packages", DELTA_PACKAGE]
    (tmp_path / "delta-storage-4.4.0.jar").write_bytes(b"")
    (tmp_path / "delta-spark_4.2_2.13-4.4.0.jar").write_bytes(b"")
    monkeypatch.setenv("CONTRACT_GATE_JARS", str(tmp_path))
    assert submit_arguments() == [
        "--jars", f"{tmp_path}/delta-spark_4.2_2.13-4.4.0.jar,{tmp_path}/delta-storage-4.4.0.jar",
    ]


def test_a_running_session_stops_substituting_variables_into_gate_sql(spark):
    """A cluster's or Connect server's session may substitute ``${...}`` (its settings,
    ``${env:NAME}``, ``${system:...}``) into SQL text, even inside string literals; the gate's
    session never does, whoever started it."""
    spark.conf.set("contract_gate.substitution_probe", "leaked")
    spark.conf.set("spark.sql.variable.substitute", "true")
    assert spark.sql("SELECT '${contract_gate.substitution_probe}' AS v").first().v == "leaked"
    assert get_session() is spark
    assert spark.sql("SELECT '${contract_gate.substitution_probe}' AS v").first().v == (
        "${contract_gate.substitution_probe}")


def test_a_local_session_records_no_python_call_sites(spark):
    """DataFrame debugging makes every ``pyspark.sql.functions`` call walk the Python stack and
    call the JVM to record its call site; the engine builds a column per rule, so a local
    session starts with it off (a static setting: it can only be given at start)."""
    assert local_defaults(2)["spark.python.sql.dataFrameDebugging.enabled"] == "false"
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"
    assert is_debugging_enabled() is False


def test_a_running_session_that_tags_its_commits_gives_the_gate_untagged_ddl(spark, tmp_path):
    """A cluster default, a notebook's setting, or a submission's child session left active on this
    thread can carry Delta's commit tags. The gate's own DDL (a table's creation) must not carry
    them: recovery and ``contract-gate audit`` read a tagged commit as that submission's publish."""
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", "s1")
    spark.conf.set("spark.databricks.delta.write.txnAppId", "someone-else")
    spark.conf.set("spark.databricks.delta.write.txnVersion", "7")

    session = get_session()

    assert session is spark
    table = tmp_path / "created"
    session.sql(f"CREATE TABLE delta.`{table}` (k STRING) USING DELTA")
    session.createDataFrame([("a",)], "k string").write.format("delta").mode("append").save(str(table))
    history = session.sql(f"DESCRIBE HISTORY delta.`{table}`").orderBy("version").collect()
    assert [(h["version"], h["operation"], h["userMetadata"]) for h in history] == [
        (0, "CREATE TABLE", None), (1, "WRITE", None)]
