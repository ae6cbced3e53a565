"""What a gate job gets for tables in S3, without Spark: Hadoop S3A's per-bucket settings from the
Airflow connection (local and spark_submit only), delta-rs storage options, one connection per
bucket, bucket names checked, the connector jars at pyspark's own Hadoop version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract_gate.object_storage import (
    ObjectStorageError,
    SparkJobStorage,
    bucket_connections,
    spark_job_storage,
    storage_options,
)
from contract_gate_spark.runtime import s3a_jars

KEY, SECRET, ENDPOINT = "AKIDEXAMPLE", "s3cr3t-value", "http://127.0.0.1:9"


def tables(**overrides) -> dict:
    """A plan's addresses: landing, target and quarantine in bucket ``lake`` through ``lake_s3``,
    the candidates and the decision log under the root in the same bucket."""
    found = {
        "landing": {"kind": "path", "path": "s3a://lake/drops/orders", "format": "csv", "connection": "lake_s3"},
        "candidate_schema": {"kind": "path", "path": "s3a://lake/root/_candidates", "format": "delta"},
        "target": {"kind": "path", "path": "s3a://lake/root/orders", "format": "delta", "connection": "lake_s3"},
        "quarantine": {"kind": "path", "path": "s3a://lake/root/orders_q", "format": "delta", "connection": "lake_s3"},
        "decisions": {"kind": "path", "path": "s3a://lake/root/contract_gate_decisions", "format": "delta"},
    }
    found.update(overrides)
    return found


@pytest.fixture
def connection(monkeypatch, tmp_path):
    monkeypatch.setenv("AIRFLOW_CONN_LAKE_S3", json.dumps(
        {"conn_type": "aws", "login": KEY, "password": SECRET,
         "extra": {"endpoint_url": ENDPOINT, "region_name": "eu-west-1"}}))
    jars = tmp_path / "jars"
    folder = s3a_jars.maven_dir(jars)
    folder.mkdir(parents=True)
    for name in s3a_jars.MAVEN_JARS:
        (folder / name).write_bytes(b"")
    return jars


def test_local_jobs_get_the_buckets_credentials_and_the_connector_on_the_drivers_class_path(connection):
    storage = spark_job_storage(tables(), "local", jars_dir=connection)
    conf, prefix = storage.conf, "spark.hadoop.fs.s3a.bucket.lake."
    assert not [key for key in conf if key.startswith(prefix)]  # settings fit for a command line only
    assert storage.credentials == {
        prefix + "access.key": KEY, prefix + "secret.key": SECRET, prefix + "endpoint": ENDPOINT,
        prefix + "path.style.access": "true", prefix + "connection.ssl.enabled": "false",
        prefix + "endpoint.region": "eu-west-1"}
    assert conf["spark.delta.logStore.s3a.impl"] == "io.delta.storage.S3SingleDriverLogStore"
    assert conf["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert [Path(jar).name for jar in conf["spark.driver.extraClassPath"].split(":")] == list(s3a_jars.MAVEN_JARS)
    assert "spark.jars" not in conf


def test_spark_submit_ships_the_connector_and_the_other_modes_get_nothing(connection):
    storage = spark_job_storage(tables(), "spark_submit", jars_dir=connection)
    conf = storage.conf
    assert storage.credentials["spark.hadoop.fs.s3a.bucket.lake.secret.key"] == SECRET
    assert SECRET not in repr(conf)
    assert [Path(jar).name for jar in conf["spark.jars"].split(",")] == list(s3a_jars.MAVEN_JARS)
    # the cluster or the Connect server owns its storage access: the URIs reach it as they are
    for mode in ("databricks", "spark_connect"):
        assert spark_job_storage(tables(), mode, jars_dir=connection) == SparkJobStorage({}, {})


def test_a_gate_without_s3_tables_pays_nothing(connection, tmp_path):
    local = {role: {"kind": "path", "path": f"/lake/{role}", "format": "delta"} for role in tables()}
    assert spark_job_storage(local, "local", jars_dir=tmp_path / "no-jars") == SparkJobStorage({}, {})
    assert storage_options(local, local["decisions"]) is None


def test_without_the_connector_jars_the_error_says_how_to_fetch_them(connection, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTRACT_GATE_IVY_JARS", str(tmp_path / "empty-ivy"))
    with pytest.raises(ObjectStorageError, match=r"python -m contract_gate_spark.runtime.jars --s3a"):
        spark_job_storage(tables(), "local", jars_dir=tmp_path / "no-jars")


def test_delta_rs_reaches_the_decision_log_with_its_buckets_connection(connection):
    options = storage_options(tables(), tables()["decisions"])
    assert options == {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "eu-west-1",
                       "AWS_ENDPOINT_URL": ENDPOINT, "AWS_ALLOW_HTTP": "true"}
    elsewhere = {"kind": "path", "path": "s3a://other-bucket/decisions", "format": "delta"}
    assert storage_options(tables(decisions=elsewhere), elsewhere) is None  # the default chain


def test_one_bucket_has_one_connection_and_a_bucket_name_is_checked():
    two = tables(quarantine={"kind": "path", "path": "s3a://lake/root/q", "format": "delta", "connection": "other"})
    with pytest.raises(ObjectStorageError, match="bucket 'lake' is named with connection 'lake_s3' and with 'other'"):
        bucket_connections(two, ("landing", "target", "quarantine"))
    for bucket in ("Lake", "a", "lake=x", "la..ke"):
        bad = tables(target={"kind": "path", "path": f"s3a://{bucket}/t", "format": "delta"})
        with pytest.raises(ObjectStorageError, match="is not an S3 bucket name"):
            bucket_connections(bad, ("target",))


def test_the_connector_is_the_hadoop_version_inside_pyspark():
    import pyspark

    shipped = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    assert shipped == [f"hadoop-client-api-{s3a_jars.HADOOP_VERSION}.jar"]


def test_the_plan_gives_an_address_without_a_connection_its_buckets_one():
    from contract_gate.contract.environments import resolve_tables
    from contract_gate.contract.settings import GateSettings

    settings = GateSettings.model_validate({
        "landing": {"path": "s3://lake/drops/orders", "format": "csv", "connection": "lake_s3"},
        "target": {"path": "s3a://lake/root/orders"},
        "decisions": {"path": "s3a://lake/root/contract_gate_decisions"},
        "quarantine": {"path": "s3a://other-bucket/orders_q"},
    })
    resolved = resolve_tables(settings, None, "orders")
    assert resolved["target"]["connection"] == resolved["decisions"]["connection"] == "lake_s3"
    assert "connection" not in resolved["quarantine"] and "connection" not in resolved["candidate_schema"]
    assert resolved["target"]["path"] == "s3a://lake/root/orders"  # the URI as given
